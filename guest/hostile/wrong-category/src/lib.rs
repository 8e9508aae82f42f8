//! Hostile test guest: Returns a declared code with the wrong category and retryability.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Err(ToolError {
        code: "dependency_unavailable".into(),
        category: harmonia_guest_sdk::Category::Validation,
        message: "The data source is unavailable right now.".into(),
        retryable: false,
    })
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_wrong_category", 5000), run);
