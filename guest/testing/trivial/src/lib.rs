//! Test guest: answers every call with `{}` and no evidence.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};

/// The contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        purpose: "Answers every call with an empty object; measures the sandbox's own cost.",
        ..testing::descriptor("trivial_probe", 5_000)
    }
}

/// `{}`, whatever the input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Ok(Output::new(serde_json::json!({}), Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run);
