//! Hostile test guest: Keeps a static call counter: with a fresh instance per call it always reads 1.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};
use std::sync::atomic::{AtomicU64, Ordering};

static CALLS: AtomicU64 = AtomicU64::new(0);

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let count = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(Output::new(serde_json::json!({"count": count}), Vec::new()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_counter", 5000), run);
