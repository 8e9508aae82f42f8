//! Hostile test guest: asks `public-web` for a refused 1,900-character URL
//! forever. Each refusal is cheap for the host, but each used to leave a
//! receipt: the host must end the call at its capability use limit.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, PublicWeb, ToolError};

/// Ask for the refused URL until the host ends the call.
pub fn run(web: &impl PublicWeb, _input: RawInput) -> Result<Output, ToolError> {
    let url = format!("https://refused.example/{}", "a".repeat(1900));
    loop {
        let _ = web.get(&url);
    }
}

harmonia_guest_sdk::export!(
    || harmonia_guest_sdk::testing::descriptor("hostile_receipt_flood", 20_000),
    run,
    harmonia_guest_sdk::HostPublicWeb
);
