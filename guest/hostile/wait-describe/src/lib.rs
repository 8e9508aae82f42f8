//! Hostile test guest: sleeps for an hour inside `describe`. Loading it must
//! fail at the describe deadline instead of hanging the host's start.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};
use std::time::Duration;

struct Guest;

impl Tool for Guest {
    fn descriptor() -> Descriptor {
        std::thread::sleep(Duration::from_secs(3600));
        Descriptor {
            name: "hostile_wait_describe",
            version: "0.1.0",
            purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
            input_schema: serde_json::json!({"type": "object"}),
            errors: Descriptor::errors_with_runtime(&[]),
            scope: Scope::Public,
            deadline_ms: 1000,
            skills: vec!["trend-scan"],
        }
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Ok(Output::new(serde_json::json!({}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
