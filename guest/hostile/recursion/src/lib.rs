//! Hostile test guest: Recurses without end: the host must report the stack overflow.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

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

/// The hostile behaviour, on any input.
pub fn run(input: RawInput) -> Result<Output, ToolError> {
    let next = Dive(std::hint::black_box(dive as fn(Dive, u64) -> u64));
    let depth = dive(next, std::hint::black_box(input.0.len() as u64));
    Ok(Output::new(serde_json::json!({"depth": depth}), Vec::new()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_recursion", 5000), run);
