//! Hostile test guest: Returns a declared contract code with a message full of secrets.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Err(ToolError {
        code: "dependency_unavailable".into(),
        category: harmonia_guest_sdk::Category::Dependency,
        message: "upstream said: Authorization: Bearer SECRET-TOKEN body=SECRET-BODY".into(),
        retryable: true,
    })
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_leaky_message", 5000), run);
