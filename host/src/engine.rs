//! The process's wasmtime engine, its epoch ticker, the shared linker and
//! the call slots that bound concurrency.
//!
//! - Epoch interruption, ticked every [`EPOCH_TICK`] by a thread holding
//!   only a weak reference to the engine; each store checks the wall clock
//!   against its own deadline on every tick, so deadlines are exact to
//!   about a tick whatever the ticker's drift.
//! - The pooling allocator (with copy-on-write memory images), sized from
//!   the limits; memory reservations match the memory limit instead of the
//!   default 4 GiB per slot. A slot is reset when its instance is dropped,
//!   before any other call (another tenant's, or another plugin's) can get
//!   it: the low [`KEEP_RESIDENT`] bytes are rewritten (zeroes, or the
//!   memory image) and the rest is returned to the kernel. Wasmtime's
//!   `PAGEMAP_SCAN` reset is left off: it resets only pages that are
//!   present, so a dirty page swapped out when the call ended kept the last
//!   call's data for the next one.
//! - The pool's per-component counts are the configured
//!   [`ComponentLimits`], the same the store's limiter and the pre-compile
//!   shape check use; its table slots hold [`MAX_TABLE_ELEMENTS`].
//! - One engine for blocking and async calls (wasmtime decides per
//!   instance which API it needs): a component is compiled once, and two
//!   linkers pre-instantiate it, one with blocking imports, one with async
//!   ones. The pool holds instances for both bounds, and fiber stacks for
//!   the async one; a fiber stack is the wasm stack plus
//!   [`ASYNC_HOST_STACK`] for the host's frames, and is not zeroed between
//!   calls: wasm cannot address the native stack, so nothing a call left
//!   there is readable by the next.
//! - Fuel only when the config asks for it (epochs cost ~1%, fuel ~28%).

use crate::cache::ComponentCache;
use crate::call_state::CallState;
use crate::config::LimitsConfig;
use crate::limits::{ASYNC_HOST_STACK, ComponentLimits, KEEP_RESIDENT, MAX_TABLE_ELEMENTS, SPARE_INSTANCES};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wasmtime::component::Linker;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Interval between epoch ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// The wasmtime configuration for these limits.
pub fn engine_config(limits: &LimitsConfig) -> Config {
    let memory_bytes = u64::from(limits.memory_mib) * 1024 * 1024;
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(limits.fuel.is_some())
        .max_wasm_stack(limits.wasm_stack_kib as usize * 1024)
        .memory_reservation(memory_bytes)
        .memory_reservation_for_growth(0)
        .memory_init_cow(true)
        .parallel_compilation(true);
    config.async_stack_size(limits.wasm_stack_kib as usize * 1024 + ASYNC_HOST_STACK);
    if limits.pooling {
        let instances = limits.max_concurrent_calls + limits.max_async_calls + SPARE_INSTANCES;
        let per_component = ComponentLimits::from(limits);
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(instances)
            .total_core_instances(instances * per_component.core_instances)
            .max_core_instances_per_component(per_component.core_instances)
            .total_memories(instances * per_component.memories)
            .max_memories_per_component(per_component.memories)
            .total_tables(instances * per_component.tables)
            .max_tables_per_component(per_component.tables)
            .table_elements(MAX_TABLE_ELEMENTS)
            .total_stacks(limits.max_async_calls + SPARE_INSTANCES)
            .max_memory_size(memory_bytes as usize)
            .max_unused_warm_slots(instances)
            // Never `Enabled::Auto`: the scan skips swapped-out pages, which
            // are then neither reset nor released (see the module doc).
            .pagemap_scan(Enabled::No)
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(KEEP_RESIDENT);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// Ticks the engine's epoch until dropped or the engine is gone.
#[derive(Debug)]
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let weak = engine.weak();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("harmonia-epoch".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })?;
        Ok(Self { stop, thread: Some(thread) })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A counting semaphore: at most `max` calls hold a slot.
#[derive(Debug)]
pub struct CallSlots {
    max: usize,
    in_use: Mutex<usize>,
    freed: Condvar,
}

/// A held slot, released on drop.
#[derive(Debug)]
pub struct Slot<'a>(&'a CallSlots);

impl CallSlots {
    fn new(max: usize) -> Self {
        Self { max, in_use: Mutex::new(0), freed: Condvar::new() }
    }

    /// Wait for a slot until `deadline`. `Ok` holds the slot and how long
    /// the call waited when none was free at once; `Err` is how long it
    /// waited before the deadline passed.
    pub fn acquire(&self, deadline: Instant) -> Result<(Slot<'_>, Option<Duration>), Duration> {
        let started = Instant::now();
        let Ok(mut in_use) = self.in_use.lock() else { return Err(started.elapsed()) };
        let mut waited = false;
        while *in_use >= self.max {
            waited = true;
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Err(started.elapsed());
            };
            in_use = match self.freed.wait_timeout(in_use, left) {
                Ok((in_use, _)) => in_use,
                Err(_) => return Err(started.elapsed()),
            };
        }
        *in_use += 1;
        Ok((Slot(self), waited.then(|| started.elapsed())))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Ok(mut in_use) = self.0.in_use.lock() {
            *in_use -= 1;
        }
        self.0.freed.notify_one();
    }
}

/// Engine, linkers, ticker and slots: one per [`crate::Host`].
pub struct Runtime {
    /// The engine.
    pub engine: Engine,
    /// WASI runtime interfaces and both capabilities, for blocking calls.
    pub linker: Linker<CallState>,
    /// The same with async imports, for async calls.
    pub async_linker: Linker<CallState>,
    /// Concurrency bound of blocking calls.
    pub slots: CallSlots,
    /// Concurrency bound of async calls.
    pub async_slots: tokio::sync::Semaphore,
    /// Precompiled components, when the cache is on and usable.
    pub cache: Option<ComponentCache>,
    /// Told when a component is compiled rather than mapped from the cache.
    pub compile_progress: Option<Arc<dyn crate::plugin::CompileProgress>>,
    /// Where slot waits and running calls are counted, when anywhere.
    pub metrics: Option<crate::metrics::Metrics>,
    _ticker: EpochTicker,
}

impl Runtime {
    /// Build the engine and linker for these limits.
    pub fn new(
        limits: &LimitsConfig,
        inert_filesystem_and_sockets: bool,
        cache_dir: Option<&Path>,
    ) -> wasmtime::Result<Self> {
        let engine = Engine::new(&engine_config(limits))?;
        let mut linker = Linker::new(&engine);
        crate::wasi::add_to_linker(&mut linker, inert_filesystem_and_sockets)?;
        crate::capability::add_to_linker(&mut linker)?;
        let mut async_linker = Linker::new(&engine);
        crate::wasi::add_to_async_linker(&mut async_linker, inert_filesystem_and_sockets)?;
        crate::capability::add_to_async_linker(&mut async_linker)?;
        let ticker = EpochTicker::start(&engine)?;
        let cache = cache_dir.and_then(|dir| ComponentCache::open(dir, &engine));
        Ok(Self {
            cache,
            compile_progress: None,
            engine,
            linker,
            async_linker,
            slots: CallSlots::new(limits.max_concurrent_calls as usize),
            async_slots: tokio::sync::Semaphore::new(limits.max_async_calls as usize),
            metrics: None,
            _ticker: ticker,
        })
    }
}
