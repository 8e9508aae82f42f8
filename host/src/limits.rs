//! Per-call resource limits: memory, tables and instances, with the refused
//! memory growth remembered so a Rust guest's abort after an allocation
//! failure is reported as the memory limit it was.

use wasmtime::ResourceLimiter;

/// Most core instances one component instance may create.
pub const MAX_INSTANCES: usize = 32;
/// Most tables one call may create.
pub const MAX_TABLES: usize = 32;
/// Most memories one call may create.
pub const MAX_MEMORIES: usize = 4;
/// Most elements one table may grow to.
pub const MAX_TABLE_ELEMENTS: usize = 100_000;
/// Most capability uses (public-web gets and workspace reads, refused ones
/// included) one call may make; the next use ends the call as
/// `tool_execution_failed`. The built-in tools make at most two.
pub const MAX_CAPABILITY_USES: usize = 256;
/// Most bytes of receipt targets (the URLs and reads as the guest named
/// them) one call may accumulate; past it the call ends likewise.
pub const MAX_RECEIPT_BYTES: usize = 256 * 1024;

/// The limiter installed in every call's store.
#[derive(Debug)]
pub struct CallLimiter {
    memory_bytes: usize,
    memory_refused: bool,
    peak_memory: usize,
}

impl CallLimiter {
    /// A limiter allowing `memory_bytes` of linear memory per memory.
    pub fn new(memory_bytes: usize) -> Self {
        Self { memory_bytes, memory_refused: false, peak_memory: 0 }
    }

    /// The largest linear memory granted so far, in bytes.
    pub fn peak_memory(&self) -> usize {
        self.peak_memory
    }

    /// True once a memory growth past the limit was refused.
    pub fn memory_refused(&self) -> bool {
        self.memory_refused
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.memory_bytes && maximum.is_none_or(|maximum| desired <= maximum);
        if allowed {
            self.peak_memory = self.peak_memory.max(desired);
        } else {
            self.memory_refused = true;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS && maximum.is_none_or(|maximum| desired <= maximum))
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}
