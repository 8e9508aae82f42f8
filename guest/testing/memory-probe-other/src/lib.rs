//! Test guest: writes a secret into its linear memory, or scans its whole
//! memory for one, so tests can check that a pool slot reused by another
//! call (another tenant's, or another plugin's) starts zeroed.

#![cfg(target_arch = "wasm32")]

#[macro_use]
#[path = "../../memory-probe/src/probe.rs"]
mod probe;

memory_probe_tool!("testing_memory_probe_other");
