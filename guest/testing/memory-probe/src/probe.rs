// Shared by `testing-memory-probe` and `testing-memory-probe-other`: the
// same probe under two names, so two plugins can share pool slots.

use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};
use serde::Deserialize;
use serde_json::json;

/// Where the secret is written: 3 MiB into linear memory, past anything a
/// small guest touches on its own.
const SECRET_AT: usize = 3 * 1024 * 1024;
/// How much memory both modes make sure exists before acting.
const SPAN: usize = 4 * 1024 * 1024;

/// What to do: write (and idle), or scan.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    write: Option<String>,
    idle_ms: Option<u64>,
    scan_reversed: Option<String>,
}

pub fn descriptor(name: &'static str) -> Descriptor {
    let purpose = "Test guest: writes a secret into its linear memory or scans for one, to test slot reuse.";
    testing::reading(
        json!({"type": "object", "properties": {"write": {"type": "string"}, "idleMs": {"type": "integer"}, "scanReversed": {"type": "string"}}}),
        Descriptor { purpose, ..testing::descriptor(name, 10_000) },
    )
}

/// Grow linear memory so that it spans at least `SPAN` bytes.
fn grow_to_span() -> usize {
    let page = 65_536;
    let pages = core::arch::wasm32::memory_size(0);
    let wanted = SPAN.div_ceil(page);
    if pages < wanted {
        core::arch::wasm32::memory_grow(0, wanted - pages);
    }
    core::arch::wasm32::memory_size(0) * page
}

/// `{"write": S, "idleMs": N}` writes S (repeated over a page) at 3 MiB,
/// idles N ms (if given) and returns;
/// `{"scanReversed": R}` reads every byte of linear memory and reports
/// where the reverse of R first occurs, if anywhere.
pub fn run(input: Probe) -> Result<Output, ToolError> {
    let size = grow_to_span();
    if let Some(secret) = input.write {
        let bytes = secret.as_bytes();
        for offset in (0..65_536 - bytes.len()).step_by(bytes.len().max(1)) {
            let at = SECRET_AT + offset;
            // SAFETY: `at..at + len` lies inside linear memory (grown above
            // to `SPAN` bytes) and past the guest's own stack and heap.
            unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
        }
        // Idling lets a test page the process out while the secret is live.
        if let Some(idle) = input.idle_ms {
            std::thread::sleep(std::time::Duration::from_millis(idle));
        }
        return Ok(Output::new(json!({"wrote": true, "memoryBytes": size}), Vec::new()));
    }
    // The scan pattern arrives reversed, so the only copy of the secret in
    // this instance's memory is one left over from an earlier call.
    let reversed = input.scan_reversed.ok_or_else(ToolError::invalid_input)?.into_bytes();
    let len = reversed.len();
    let read = |address: usize| {
        // SAFETY: callers pass addresses in `1..size`, inside linear memory.
        unsafe { core::ptr::read_volatile(address as *const u8) }
    };
    let found = (1..size.saturating_sub(len))
        .find(|&address| len > 0 && (0..len).all(|k| read(address + k) == reversed[len - 1 - k]));
    Ok(Output::new(json!({"found": found, "memoryBytes": size}), Vec::new()))
}
