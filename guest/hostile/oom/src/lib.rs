//! Hostile test guest: Allocates until refused: the host must report its memory limit.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1024 * 1024]);
        std::hint::black_box(&hoard);
    }
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_oom", 5000), run);
