//! Typed, read-only reads of the caller's own workspace.
//!
//! The host binds the workspace id for each call; a guest cannot name one.
//! Guests read through [`guest_read`], never a source directly, so a job
//! read hands the guest only the job's redacted summary.
//!
//! Parts (this file only declares and re-exports them):
//! - [`config`]: [`WorkspaceConfig`], the `[workspace]` table, its
//!   defaults and checks;
//! - [`source`]: a read, its answer and receipt, the [`WorkspaceSource`]
//!   trait and [`guest_read`];
//! - the sources: [`sqlite`], the embedded store, opened read-only (the
//!   default); [`http`], the Harmonia web internal API, with a bearer token
//!   from the environment; [`memory`], any document held in memory;
//!   [`mock`], built-in fixtures (a memory source), stamped
//!   `provenance: mock`;
//! - [`sources`]: the source the config names;
//! - `guest`: the unit ([`WorkspaceCapability`]): its per-call state (the
//!   source and the caller's workspace), the WIT `workspace` import as
//!   guests see it (use counting, receipts, error mapping) and its linker
//!   wiring.
//!
//! The workspace JSON document that `harmonia workspace import` loads and
//! the mock source serves is the contract crate's
//! (`harmonia_contract::workspace_document`).

pub mod config;
pub(crate) mod guest;
pub mod http;
pub mod memory;
pub mod mock;
pub mod source;
pub mod sources;
pub mod sqlite;

pub use config::{WorkspaceConfig, WorkspaceSourceKind};
pub use guest::WorkspaceCapability;
pub use harmonia_contract::workspace_document::is_reserved_job_id;
pub use source::{
    Answer, OwnedRead, ReadFailure, Reading, SourceDocument, WorkspaceRead, WorkspaceSource, answered,
    guest_read, on_blocking_pool, read_receipt,
};
pub use sources::from_config;
