//! Per-call resource limits: memory, tables and instances, with the refused
//! memory growth remembered so a Rust guest's abort after an allocation
//! failure is reported as the memory limit it was.
//!
//! [`ComponentLimits`] (from `limits.max_core_instances_per_component`,
//! `limits.max_memories_per_component` and `limits.max_tables_per_component`)
//! is the one source for three places that must agree: the check of a
//! component's shape before it is compiled (`crate::component_shape`), the
//! pooling allocator's per-component counts (`crate::engine`), and the
//! store's [`CallLimiter`].

use crate::config::LimitsConfig;
use wasmtime::ResourceLimiter;

/// Most elements one table may grow to (also the pooling allocator's
/// per-table reservation).
pub const MAX_TABLE_ELEMENTS: usize = 100_000;
/// Most capability uses (public-web gets and workspace reads, refused ones
/// included) one call may make; the next use ends the call as
/// `tool_execution_failed`. The built-in tools make at most two.
pub const MAX_CAPABILITY_USES: usize = 256;
/// Most bytes of receipt targets (the URLs and reads as the guest named
/// them) one call may accumulate; past it the call ends likewise.
pub const MAX_RECEIPT_BYTES: usize = 256 * 1024;

/// How many core instances, memories and tables one component may create.
///
/// The defaults fit language runtimes: a componentize-py (CPython)
/// component creates 14 core instances (38 when built with `--stub-wasi`,
/// which imports no WASI at all); a componentize-js (SpiderMonkey)
/// component creates 3, as a Rust tool does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentLimits {
    /// Core module instances.
    pub core_instances: u32,
    /// Linear memories.
    pub memories: u32,
    /// Tables.
    pub tables: u32,
}

impl From<&LimitsConfig> for ComponentLimits {
    fn from(limits: &LimitsConfig) -> Self {
        Self {
            core_instances: limits.max_core_instances_per_component,
            memories: limits.max_memories_per_component,
            tables: limits.max_tables_per_component,
        }
    }
}

/// The limiter installed in every call's store.
#[derive(Debug)]
pub struct CallLimiter {
    memory_bytes: usize,
    component: ComponentLimits,
    memory_refused: bool,
    peak_memory: usize,
}

impl CallLimiter {
    /// A limiter allowing `memory_bytes` of linear memory per memory and
    /// `component`'s counts.
    pub fn new(memory_bytes: usize, component: ComponentLimits) -> Self {
        Self { memory_bytes, component, memory_refused: false, peak_memory: 0 }
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
        self.component.core_instances as usize
    }

    fn tables(&self) -> usize {
        self.component.tables as usize
    }

    fn memories(&self) -> usize {
        self.component.memories as usize
    }
}
