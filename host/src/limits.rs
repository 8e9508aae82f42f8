//! Every limit of the host, in one place: the fixed ones as constants, the
//! configurable ones as the `[limits]` section ([`LimitsConfig`], its
//! defaults, and the ranges its check accepts), and the store's
//! limiter, which remembers a refused memory growth so a Rust guest's abort
//! after an allocation failure is reported as the memory limit it was.
//! (The contract's own bounds, the envelope's data size and evidence
//! count, a message's length, an answer's claims, a trace's entries, are
//! part of the contract: they live in the pure `harmonia-contract` crate
//! beside what they bound, and docs/contract.md lists them.)
//!
//! [`ComponentLimits`] (from `limits.max_core_instances_per_component`,
//! `limits.max_memories_per_component` and `limits.max_tables_per_component`)
//! is the one source for three places that must agree: the check of a
//! component's shape before it is compiled (`crate::component_shape`), the
//! pooling allocator's per-component counts (`crate::engine`), and the
//! store's [`CallLimiter`].

use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;
use std::time::Duration;
use wasmtime::ResourceLimiter;

/// Largest input a call takes, bytes (the envelope's data bound).
pub const MAX_INPUT_BYTES: usize = crate::envelope::MAX_DATA_BYTES;
/// Deadline of `describe` at load.
pub const DESCRIBE_DEADLINE: Duration = Duration::from_secs(5);
/// Deadlines a descriptor may declare, ms (a contract rule, so defined
/// with the descriptor it bounds).
pub use harmonia_contract::descriptor::DEADLINE_RANGE_MS;
/// Most bytes copied between guest and host in one host call or one
/// result (wasmtime's hostcall fuel): room for the largest valid output
/// (1 MiB of data and 100 evidence items), not for more.
pub const HOSTCALL_FUEL: usize = 2 * 1024 * 1024;
/// Most resources (streams, pollables) a guest may hold at once.
pub const MAX_RESOURCES: usize = 1_000;
/// Bytes of stdout and of stderr kept per call.
pub const CAPTURE_CAP: usize = 16 * 1024;
/// Most random bytes one `get-random-bytes` call may ask for (the host
/// allocates them before copying, so an uncapped request costs host memory).
pub const RANDOM_CAP: u64 = 64 * 1024;
/// Bytes of each memory and table rewritten in place (not returned to the
/// kernel) when a pool slot is reset: with `slot_reset` `window`, the low
/// bytes, written or not; with `written`, the first pages the call wrote.
/// The built-in guests put a 128 KiB shadow stack first
/// (`guest/.cargo/config.toml`), so a small call's hot pages (stack top,
/// data, heap start) fall inside the window and take no page fault on the
/// next call; memsetting more costs more than it saves, and a smaller
/// window costs page faults (docs/performance.md, "Stop 58").
pub const KEEP_RESIDENT: usize = 256 * 1024;
/// Component instances the pool keeps beyond the call slots (for
/// `describe` at load).
pub const SPARE_INSTANCES: u32 = 8;

/// Native stack a call's fiber has beyond the wasm stack, for the host
/// functions and futures it polls.
pub const ASYNC_HOST_STACK: usize = 1024 * 1024;

/// `limits.memory_mib`.
pub const MEMORY_MIB: RangeInclusive<u32> = 1..=4096;
/// `limits.max_calls`.
pub const CALLS: RangeInclusive<u32> = 1..=16_384;
/// `limits.wasm_stack_kib`: wasmtime refuses a wasm stack larger than the
/// host stack it reserves for a call (2 MiB). A call runs on a fiber with
/// this much stack plus [`ASYNC_HOST_STACK`].
pub const WASM_STACK_KIB: RangeInclusive<u32> = 64..=2048;
/// `limits.max_core_instances_per_component`.
pub const CORE_INSTANCES_PER_COMPONENT: RangeInclusive<u32> = 1..=1000;
/// `limits.max_memories_per_component`.
pub const MEMORIES_PER_COMPONENT: RangeInclusive<u32> = 1..=100;
/// `limits.max_tables_per_component`.
pub const TABLES_PER_COMPONENT: RangeInclusive<u32> = 1..=1000;

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

/// Per-call limits.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Linear memory per instance, MiB.
    pub memory_mib: u32,
    /// Cap on every tool's deadline, ms (may only lower it).
    pub max_deadline_ms: Option<u32>,
    /// Wasm stack, KiB.
    pub wasm_stack_kib: u32,
    /// Fuel per call; off when absent.
    pub fuel: Option<u64>,
    /// Calls in flight at once, through [`crate::Host::call`] and
    /// [`crate::Host::call_async`] alike; more wait for a slot.
    pub max_calls: u32,
    /// Use the pooling instance allocator.
    pub pooling: bool,
    /// Core module instances one component may create.
    pub max_core_instances_per_component: u32,
    /// Linear memories one component may create.
    pub max_memories_per_component: u32,
    /// Tables one component may create.
    pub max_tables_per_component: u32,
    /// How a pool slot's memory is reset between calls (`auto`: the
    /// cheaper way where nothing can be swapped out; the `slot_reset`
    /// module's doc).
    pub slot_reset: SlotReset,
}

/// `limits.slot_reset`: how a pool slot's memory and tables are reset
/// between calls.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotReset {
    /// `written` where this process's memory cannot be swapped out when
    /// the host starts, `window` otherwise.
    #[default]
    Auto,
    /// The low [`KEEP_RESIDENT`] bytes rewritten, the rest returned to the
    /// kernel: safe everywhere.
    Window,
    /// Only the pages the call wrote rewritten (up to [`KEEP_RESIDENT`]),
    /// the rest returned; the host refuses to start where its memory could
    /// be swapped out.
    Written,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            memory_mib: 64,
            max_deadline_ms: None,
            wasm_stack_kib: 512,
            fuel: None,
            max_calls: 256,
            pooling: true,
            max_core_instances_per_component: 64,
            max_memories_per_component: 4,
            max_tables_per_component: 32,
            slot_reset: SlotReset::Auto,
        }
    }
}

impl LimitsConfig {
    /// The rules serde cannot express (each value in its range); the
    /// message names the key.
    pub fn check(&self) -> Result<(), String> {
        let out_of = |key: &str, range: &RangeInclusive<u32>| {
            Err(format!("limits.{key} must be {} to {}", range.start(), range.end()))
        };
        if !MEMORY_MIB.contains(&self.memory_mib) {
            return out_of("memory_mib", &MEMORY_MIB);
        }
        if self.max_deadline_ms.is_some_and(|ms| ms == 0) {
            return Err("limits.max_deadline_ms must be positive".into());
        }
        if !WASM_STACK_KIB.contains(&self.wasm_stack_kib) {
            return out_of("wasm_stack_kib", &WASM_STACK_KIB);
        }
        if self.fuel == Some(0) {
            return Err("limits.fuel must be positive when set".into());
        }
        for (key, value, range) in [
            ("max_calls", self.max_calls, CALLS),
            (
                "max_core_instances_per_component",
                self.max_core_instances_per_component,
                CORE_INSTANCES_PER_COMPONENT,
            ),
            ("max_memories_per_component", self.max_memories_per_component, MEMORIES_PER_COMPONENT),
            ("max_tables_per_component", self.max_tables_per_component, TABLES_PER_COMPONENT),
        ] {
            if !range.contains(&value) {
                return out_of(key, &range);
            }
        }
        Ok(())
    }
}

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
