//! The process's wasmtime engine, its epoch ticker, the shared linker, the
//! call slots that bound concurrency, and the runtime behind the blocking
//! façade.
//!
//! - Epoch interruption, ticked every [`EPOCH_TICK`] by a thread holding
//!   only a weak reference to the engine; each store checks the wall clock
//!   against its own deadline on every tick, so deadlines are exact to
//!   about a tick whatever the ticker's drift.
//! - The pooling allocator (with copy-on-write memory images), sized from
//!   the limits; memory reservations match the memory limit instead of the
//!   default 4 GiB per slot. A slot is reset when its instance is dropped,
//!   before any other call (another tenant's, or another plugin's) can get
//!   it, as `limits.slot_reset` resolves ([`crate::slot_reset`]): the low
//!   [`KEEP_RESIDENT`] bytes rewritten (zeroes, or the memory image) and
//!   the rest returned to the kernel; or, where this process's memory
//!   cannot be swapped out, only the pages the call wrote rewritten
//!   (wasmtime's `PAGEMAP_SCAN` reset, which skips swapped-out pages: a
//!   page written and swapped out would keep the last call's data for the
//!   next one). The epoch ticker watches that it stays so.
//! - The pool's per-component counts are the configured
//!   [`ComponentLimits`], the same the store's limiter and the pre-compile
//!   shape check use; its table slots hold [`MAX_TABLE_ELEMENTS`].
//! - One call path: every import is async and every call a future on a
//!   fiber, bounded by one semaphore of `limits.max_calls` slots, whether
//!   an async embedder awaits it or [`crate::Host::call`] polls it on the
//!   caller's thread ([`Facade`]). The pool holds an instance and a fiber
//!   stack per slot; a fiber stack is the wasm stack plus
//!   [`ASYNC_HOST_STACK`] for the host's frames, and is not zeroed between
//!   calls: wasm cannot address the native stack, so nothing a call left
//!   there is readable by the next.
//! - Fuel only when the config asks for it (epochs cost ~1%, fuel ~28%).

use crate::cache::ComponentCache;
use crate::call_state::CallState;
use crate::config::LimitsConfig;
use crate::limits::{ASYNC_HOST_STACK, ComponentLimits, KEEP_RESIDENT, MAX_TABLE_ELEMENTS, SPARE_INSTANCES};
use crate::slot_reset::{Resolved, SwapProbe, WATCH_EVERY, Watch};
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::component::Linker;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Interval between epoch ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// The wasmtime configuration for these limits, slots reset as `reset`.
pub fn engine_config(limits: &LimitsConfig, reset: Resolved) -> Config {
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
        let instances = limits.max_calls + SPARE_INSTANCES;
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
            .total_stacks(instances)
            .max_memory_size(memory_bytes as usize)
            .max_unused_warm_slots(instances)
            // The scan skips swapped-out pages, which are then neither reset
            // nor released: only where nothing can be swapped out (`Auto`
            // falls back to the window where the kernel lacks the scan).
            .pagemap_scan(match reset {
                Resolved::Written => Enabled::Auto,
                Resolved::Window => Enabled::No,
            })
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
    /// Tick `engine`, and ask `watch` again every [`WATCH_EVERY`] what
    /// `probe` finds (a host resetting only written pages has one).
    fn start(engine: &Engine, watch: Arc<Watch>, mut probe: Option<SwapProbe>) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let weak = engine.weak();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("harmonia-epoch".into()).spawn(move || {
            let mut watched = std::time::Instant::now();
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
                if let Some(probe) = probe.as_mut()
                    && watched.elapsed() >= WATCH_EVERY
                {
                    watched = std::time::Instant::now();
                    watch.check(|| probe.swap_possible());
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

/// The blocking façade: [`crate::Host::call`] and plugin loading poll the
/// same future an async call is, on the caller's thread, with a plain
/// executor (tokio's own `block_on` refuses to run inside a runtime, and a
/// blocking call must work from any thread). A small tokio runtime owned by
/// the host (one worker, started with the host) drives the timers and
/// sockets that future waits on and runs blocking reads on its pool, so a
/// blocking caller needs no runtime of its own.
#[derive(Debug)]
pub struct Facade {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Facade {
    fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("harmonia-io")
            .enable_all()
            .build()?;
        Ok(Self { runtime: Some(runtime) })
    }

    /// Poll `future` to its end on this thread, inside the façade's runtime.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let _context = self.runtime.as_ref().map(tokio::runtime::Runtime::enter);
        futures_executor::block_on(future)
    }
}

impl Drop for Facade {
    /// A host may be dropped on an async task, where a runtime may not
    /// block to shut down: its threads are let go in the background.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Engine, linker, ticker, slots and façade: one per [`crate::Host`].
pub struct Runtime {
    /// The engine.
    pub engine: Engine,
    /// WASI runtime interfaces and both capabilities.
    pub linker: Linker<CallState>,
    /// Calls in flight (`limits.max_calls`), perhaps shared with other
    /// hosts.
    pub slots: crate::slots::CallSlots,
    /// Runs blocking calls and loads.
    pub facade: Facade,
    /// Precompiled components, when the cache is on and usable.
    pub cache: Option<ComponentCache>,
    /// Told when a component is compiled rather than mapped from the cache.
    pub compile_progress: Option<Arc<dyn crate::origin::CompileProgress>>,
    /// Where slot waits and running calls are counted, when anywhere.
    pub metrics: Option<crate::metrics::Metrics>,
    /// How slots are reset, and whether calls are refused because that
    /// reset can no longer be trusted.
    pub reset: Arc<Watch>,
    _ticker: EpochTicker,
}

impl Runtime {
    /// Build the engine and linker for these limits.
    pub fn new(
        limits: &LimitsConfig,
        inert_filesystem_and_sockets: bool,
        cache_dir: Option<&Path>,
    ) -> wasmtime::Result<Self> {
        let mut probe = SwapProbe::open();
        let reset = crate::slot_reset::resolve(limits.slot_reset, limits.pooling, probe.swap_possible())
            .map_err(wasmtime::Error::msg)?;
        let engine = Engine::new(&engine_config(limits, reset))?;
        let mut linker = Linker::new(&engine);
        crate::wasi::add_to_linker(&mut linker, inert_filesystem_and_sockets)?;
        // The shared types carry no functions; each capability links its
        // own import, and the loader's policy decides which one a plugin
        // may import.
        crate::bindings::types::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |state| {
            state
        })?;
        crate::capability::set::add_to_linker(&mut linker)?;
        let reset = Arc::new(Watch::new(reset));
        // Its files stay open only where they are watched.
        let probe = (reset.resolved() == Resolved::Written).then_some(probe);
        let ticker = EpochTicker::start(&engine, Arc::clone(&reset), probe)?;
        let facade = Facade::new()?;
        let cache = cache_dir.and_then(|dir| ComponentCache::open(dir, &engine));
        Ok(Self {
            cache,
            compile_progress: None,
            engine,
            linker,
            slots: crate::slots::CallSlots::new(limits.max_calls),
            facade,
            metrics: None,
            reset,
            _ticker: ticker,
        })
    }
}
