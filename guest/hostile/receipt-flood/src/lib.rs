//! Hostile test guest: asks `public-web` for a refused 1,900-character URL
//! forever. Each refusal is cheap for the host, but each used to leave a
//! receipt: the host must end the call at its capability use limit.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, PublicWeb, Scope, Tool, ToolError};

fn flood(web: &impl PublicWeb) -> Result<Output, ToolError> {
    let url = format!("https://refused.example/{}", "a".repeat(1900));
    loop {
        let _ = web.get(&url);
    }
}

struct Guest;

impl Tool for Guest {
    fn descriptor() -> Descriptor {
        Descriptor {
            name: "hostile_receipt_flood",
            version: "0.1.0",
            purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
            input_schema: serde_json::json!({"type": "object"}),
            errors: Descriptor::errors_with_runtime(&[]),
            scope: Scope::Public,
            deadline_ms: 20_000,
            skills: vec!["trend-scan"],
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn invoke(_input: &str) -> Result<Output, ToolError> {
        flood(&harmonia_guest_sdk::HostPublicWeb)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Err(ToolError::dependency_unavailable())
    }
}

harmonia_guest_sdk::export_tool!(Guest);
