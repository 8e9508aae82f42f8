//! Workspace documents: never panic; a refusal names a JSON path.
#![no_main]

use harmonia_contract::workspace_document::WorkspaceDocument;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match WorkspaceDocument::parse(&text) {
        Ok(document) => {
            assert!(!document.workspace_id.is_empty());
            let engagement: serde_json::Value =
                serde_json::from_str(&document.engagement_json()).expect("engagement JSON");
            assert_eq!(engagement["posts"].as_array().map(Vec::len), Some(document.measured_posts().count()));
        }
        Err(error) => assert!(error.path.starts_with('$')),
    }
});
