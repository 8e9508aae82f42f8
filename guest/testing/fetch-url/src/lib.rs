//! Test guest: GETs `{"url": "..."}` through `public-web` and answers with
//! the status and body size, or the fetch error's name, as data.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, FetchError, Input, Output, PublicWeb, Scope, Tool, ToolError};
use serde_json::json;

fn fetch(web: &impl PublicWeb, input: &str) -> Result<Output, ToolError> {
    let input = Input::parse(input, &["url"])?;
    let url = input.required_string("url", 4000)?;
    let data = match web.get(url) {
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

struct FetchUrl;

impl Tool for FetchUrl {
    fn descriptor() -> Descriptor {
        Descriptor {
            name: "testing_fetch_url",
            version: "0.1.0",
            purpose: "Test guest: fetches any URL it is given, to test the public-web policy.",
            input_schema: json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
            errors: Descriptor::errors_with_runtime(&[harmonia_guest_sdk::error::INVALID_INPUT]),
            scope: Scope::Public,
            deadline_ms: 5_000,
            skills: vec!["trend-scan"],
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn invoke(input: &str) -> Result<Output, ToolError> {
        fetch(&harmonia_guest_sdk::HostPublicWeb, input)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Err(ToolError::dependency_unavailable())
    }
}

harmonia_guest_sdk::export_tool!(FetchUrl);
