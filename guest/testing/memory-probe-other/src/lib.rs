//! Test guest: writes a secret into its linear memory, or scans its whole
//! memory for one, so tests can check that a pool slot reused by another
//! call (another tenant's, or another plugin's) starts zeroed.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

#[cfg(target_arch = "wasm32")]
#[path = "../../memory-probe/src/probe.rs"]
mod probe;

use harmonia_guest_sdk::{Descriptor, Output, Tool, ToolError};

struct Guest;

impl Tool for Guest {
    #[cfg(target_arch = "wasm32")]
    fn descriptor() -> Descriptor {
        probe::descriptor("testing_memory_probe_other")
    }

    #[cfg(target_arch = "wasm32")]
    fn invoke(input: &str) -> Result<Output, ToolError> {
        probe::invoke(input)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn descriptor() -> Descriptor {
        unreachable!("a wasm-only test guest")
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Err(ToolError::dependency_unavailable())
    }
}

harmonia_guest_sdk::export_tool!(Guest);
