//! Hostile test guest: sleeps for an hour inside `describe`. Loading it must
//! fail at the describe deadline instead of hanging the host's start.

use harmonia_guest_sdk::testing::{self, RawInput};
use harmonia_guest_sdk::{Descriptor, Output, ToolError};
use std::time::Duration;

/// The contract, an hour late.
pub fn descriptor() -> Descriptor {
    std::thread::sleep(Duration::from_secs(3600));
    testing::descriptor("hostile_wait_describe", 1000)
}

/// Never reached: the load fails first.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Ok(Output::new(serde_json::json!({}), Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run);
