//! Hostile test guest: Recurses without end: the host must report the stack overflow.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

/// A function pointer passed by value from frame to frame.
#[derive(Clone, Copy)]
struct Dive(fn(Dive, u64) -> u64);

/// Calls itself through a function pointer the optimiser cannot see
/// through (laundered once, then passed along in a register), so every
/// level is a real wasm call frame and none touches the guest's shadow
/// stack in linear memory: the host's wasm stack limit is what overflows.
#[inline(never)]
fn dive(next: Dive, depth: u64) -> u64 {
    (next.0)(next, depth + 1).wrapping_mul(3).wrapping_add(depth)
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
        let next = Dive(std::hint::black_box(dive as fn(Dive, u64) -> u64));
        let depth = dive(next, std::hint::black_box(input.len() as u64));
        Ok(Output::new(serde_json::json!({"depth": depth}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
