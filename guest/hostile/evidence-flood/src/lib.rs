//! Hostile test guest: Returns 1,000 evidence items: over the envelope's 100.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Evidence, Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let evidence = (0..1000).map(|i| Evidence::record("flood", format!("item-{i}"))).collect();
    Ok(Output::new(serde_json::json!({"items": 1000}), evidence))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_evidence_flood", 5000), run);
