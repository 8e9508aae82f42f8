//! Hostile test guest: Returns an error code it never declared.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Err(ToolError {
        code: "made_up_code".into(),
        category: harmonia_guest_sdk::Category::Dependency,
        message: "Leaked: Bearer SECRET-TOKEN".into(),
        retryable: true,
    })
}

harmonia_guest_sdk::export!(
    || harmonia_guest_sdk::testing::descriptor("hostile_undeclared_error", 5000),
    run
);
