//! Hostile test guest: Recurses without end: the host must report the stack overflow.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

#[inline(never)]
#[allow(unconditional_recursion)]
fn dive(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    dive(depth + 1).wrapping_add(frame[depth as usize % 64])
}

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
        descriptor("hostile_recursion", 5000)
    }

    fn invoke(input: &str) -> Result<Output, ToolError> {
        let depth = dive(std::hint::black_box(input.len() as u64));
        Ok(Output::new(serde_json::json!({"depth": depth}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
