//! Hostile test guest: Writes 1 MiB to stdout and stderr: the host captures 16 KiB of each and answers normally.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let line = "SECRET-STDOUT-LINE ".repeat(50);
    for _ in 0..1100 {
        println!("{line}");
        eprintln!("{line}");
    }
    Ok(Output::new(serde_json::json!({"printed": true}), Vec::new()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_chatty", 5000), run);
