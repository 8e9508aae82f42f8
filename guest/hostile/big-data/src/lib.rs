//! Hostile test guest: Returns 10 MiB of data: over the envelope's 1 MiB.

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
        descriptor("hostile_big_data", 10000)
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        let blob = "x".repeat(10 * 1024 * 1024);
        Ok(Output::new(serde_json::json!({"blob": blob}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
