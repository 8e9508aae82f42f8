//! Hostile test guest: Keeps a static call counter: with a fresh instance per call it always reads 1.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

use std::sync::atomic::{AtomicU64, Ordering};

static CALLS: AtomicU64 = AtomicU64::new(0);

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
        descriptor("hostile_counter", 5000)
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        let count = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Output::new(serde_json::json!({"count": count}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
