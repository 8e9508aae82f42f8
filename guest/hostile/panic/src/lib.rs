//! Hostile test guest: Panics with a message that must never reach an envelope.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    panic!("SECRET-PANIC-TEXT: provider body and token would be here");
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_panic", 5000), run);
