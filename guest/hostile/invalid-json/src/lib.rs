//! Hostile test guest: Returns data that is not JSON at all.

use harmonia_guest_sdk::ToolError;
use harmonia_guest_sdk::testing::{RawData, RawInput};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<RawData, ToolError> {
    Ok(RawData("{not json".to_owned()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_invalid_json", 5000), run);
