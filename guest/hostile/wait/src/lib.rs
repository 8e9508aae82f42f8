//! Hostile test guest: waits inside WASI far past its 1 s deadline, in the
//! way `{"how": ...}` names: `sleep` (Rust's `std::thread::sleep`), `block`
//! (`pollable.block` on a one-hour timer), `poll` (`poll` on two one-hour
//! timers) or `busy` (calls `pollable.ready` in a loop). The host must end
//! each as `tool_timeout` at the deadline.

// Only a component: the waits are WASI's own.
#![cfg(target_arch = "wasm32")]

use harmonia_guest_sdk::input::Text;
use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};
use serde::Deserialize;
use std::time::Duration;
use wasip2::clocks::monotonic_clock::subscribe_duration;

const HOUR_NS: u64 = 3_600_000_000_000;

/// How to wait.
#[derive(Deserialize)]
pub struct Wait {
    how: Text<10>,
}

/// The contract.
pub fn descriptor() -> Descriptor {
    let input_schema = serde_json::json!({"type": "object", "properties": {"how": {"type": "string"}}});
    testing::reading(input_schema, testing::descriptor("hostile_wait", 1000))
}

/// Wait the way the input names.
pub fn run(input: Wait) -> Result<Output, ToolError> {
    match &*input.how {
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

harmonia_guest_sdk::export!(descriptor, run);
