//! Hostile test guest: Returns a declared contract code with a message full of secrets.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

fn descriptor(name: &'static str, deadline_ms: u32) -> Descriptor {
    Descriptor {
        name,
        version: "0.1.0",
        purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
        input_schema: serde_json::json!({"type": "object"}),
        errors: Descriptor::errors_with_runtime(&[]),
        scope: Scope::Public,
        deadline_ms,
        skills: vec!["trend-scan"],
    }
}

struct Guest;

impl Tool for Guest {
    fn descriptor() -> Descriptor {
        descriptor("hostile_leaky_message", 5000)
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Err(ToolError {
            code: "dependency_unavailable".into(),
            category: harmonia_guest_sdk::Category::Dependency,
            message: "upstream said: Authorization: Bearer SECRET-TOKEN body=SECRET-BODY".into(),
            retryable: true,
        })
    }
}

harmonia_guest_sdk::export_tool!(Guest);
