//! The workspace's built-in fixture for mock mode: the demo workspace,
//! stamped `provenance: mock`. It answers for any workspace id (it is one
//! fixture), and its feed always reads as updated two minutes before the
//! read, so it is `current`. (The public web's fixture is
//! `capability::public_web::mock`.)

use super::memory::MemorySource;
use harmonia_contract::workspace_document::WorkspaceDocument;
use std::sync::OnceLock;

/// The demo workspace document (also what `harmonia demo` imports).
pub const DEMO_WORKSPACE_JSON: &str = include_str!("../../../fixtures/demo_workspace.json");

/// The demo workspace, parsed once.
pub fn demo_workspace() -> &'static WorkspaceDocument {
    static DOCUMENT: OnceLock<WorkspaceDocument> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        WorkspaceDocument::parse(DEMO_WORKSPACE_JSON)
            .unwrap_or_else(|error| panic!("built-in fixture: {error}"))
    })
}

/// The mock workspace source: the demo workspace, stamped mock.
pub fn source() -> MemorySource {
    MemorySource::new(demo_workspace().clone(), true)
}
