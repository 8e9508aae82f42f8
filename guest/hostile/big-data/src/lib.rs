//! Hostile test guest: Returns 10 MiB of data: over the envelope's 1 MiB.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let blob = "x".repeat(10 * 1024 * 1024);
    Ok(Output::new(serde_json::json!({"blob": blob}), Vec::new()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_big_data", 10000), run);
