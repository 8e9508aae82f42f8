//! Test guest: GETs `{"url": "..."}` through `public-web` and answers with
//! the status and body size, or the fetch error's name, as data.

use harmonia_guest_sdk::input::Text;
use harmonia_guest_sdk::{Descriptor, FetchError, Output, PublicWeb, ToolError, testing};
use serde::Deserialize;
use serde_json::json;

/// The URL to fetch.
#[derive(Deserialize)]
pub struct Fetch {
    url: Text<4000>,
}

/// The contract.
pub fn descriptor() -> Descriptor {
    let purpose = "Test guest: fetches any URL it is given, to test the public-web policy.";
    testing::reading(
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        Descriptor { purpose, ..testing::descriptor("testing_fetch_url", 5_000) },
    )
}

/// Fetch the URL and report what came back.
pub fn run(web: &impl PublicWeb, input: Fetch) -> Result<Output, ToolError> {
    let data = match web.get(&input.url) {
        Ok(response) => json!({"status": response.status, "bytes": response.body.len()}),
        Err(error) => json!({"fetchError": match error {
            FetchError::Denied => "denied",
            FetchError::InvalidUrl => "invalid_url",
            FetchError::TimedOut => "timed_out",
            FetchError::TooLarge => "too_large",
            FetchError::Unavailable => "unavailable",
        }}),
    };
    Ok(Output::new(data, Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);
