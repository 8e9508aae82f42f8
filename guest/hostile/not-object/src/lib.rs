//! Hostile test guest: Returns data that is JSON but not an object.

use harmonia_guest_sdk::ToolError;
use harmonia_guest_sdk::testing::{RawData, RawInput};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<RawData, ToolError> {
    Ok(RawData("[1, 2, 3]".to_owned()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_not_object", 5000), run);
