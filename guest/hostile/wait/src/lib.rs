//! Hostile test guest: waits inside WASI far past its 1 s deadline, in the
//! way `{"how": ...}` names: `sleep` (Rust's `std::thread::sleep`), `block`
//! (`pollable.block` on a one-hour timer), `poll` (`poll` on two one-hour
//! timers) or `busy` (calls `pollable.ready` in a loop). The host must end
//! each as `tool_timeout` at the deadline.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Input, Output, Scope, Tool, ToolError};
use std::time::Duration;

const HOUR_NS: u64 = 3_600_000_000_000;

struct Guest;

impl Tool for Guest {
    fn descriptor() -> Descriptor {
        Descriptor {
            name: "hostile_wait",
            version: "0.1.0",
            purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
            input_schema: serde_json::json!({"type": "object", "properties": {"how": {"type": "string"}}}),
            errors: Descriptor::errors_with_runtime(&[harmonia_guest_sdk::error::INVALID_INPUT]),
            scope: Scope::Public,
            deadline_ms: 1000,
            skills: vec!["trend-scan"],
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn invoke(input: &str) -> Result<Output, ToolError> {
        use wasip2::clocks::monotonic_clock::subscribe_duration;
        let input = Input::parse(input, &["how"])?;
        match input.required_string("how", 10)? {
            "sleep" => std::thread::sleep(Duration::from_secs(3600)),
            "block" => subscribe_duration(HOUR_NS).block(),
            "poll" => {
                let (first, second) = (subscribe_duration(HOUR_NS), subscribe_duration(HOUR_NS));
                let _ = wasip2::io::poll::poll(&[&first, &second]);
            }
            _ => {
                let timer = subscribe_duration(HOUR_NS);
                while !timer.ready() {}
            }
        }
        Ok(Output::new(serde_json::json!({"woke": true}), Vec::new()))
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Err(ToolError::dependency_unavailable())
    }
}

harmonia_guest_sdk::export_tool!(Guest);
