//! Hostile test guest: Spins forever: the host must stop it at its deadline as `tool_timeout`.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let mut counter: u64 = 0;
    loop {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_loop", 1000), run);
