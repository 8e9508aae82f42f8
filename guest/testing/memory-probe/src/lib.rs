//! Test guest: writes a secret into its linear memory, or scans its whole
//! memory for one, so tests can check that a pool slot reused by another
//! call (another tenant's, or another plugin's) starts zeroed.

#![cfg(target_arch = "wasm32")]

#[path = "probe.rs"]
mod probe;

harmonia_guest_sdk::export!(|| probe::descriptor("testing_memory_probe"), probe::run);
