//! [`Host`]: the public entry point. Built once from a config, shared by
//! any number of threads and tasks, one sandboxed call per
//! [`Host::call_async`] (a future), or per [`Host::call`], a blocking
//! façade that polls the same future on the caller's thread.

use crate::call_state::CallBinding;
use crate::capability::Receipt;
use crate::capability::public_web::{PublicWeb, PublicWebSource};
use crate::capability::set::{Overrides, Sources};
use crate::capability::unit::Caller;
use crate::capability::workspace::WorkspaceSource;
use crate::config::{ConfigError, HostConfig};
use crate::contract;
use crate::descriptor::Descriptor;
use crate::engine::Runtime;
use crate::envelope::Envelope;
use crate::log::{Level, LogSink, Logger, NullLog};
use crate::metrics::Metrics;
use crate::plugin::{self, LoadError, Plugin, PluginInfo, PluginOrigin};
use crate::policy::{ImportPolicy, World};
use crate::sandbox::{self, CallLimits};
use crate::slots::CallSlots;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The config is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The engine could not be built.
    #[error("cannot start the wasm engine: {0}")]
    Engine(String),
    /// A plugin was refused.
    #[error("plugin refused: {0}")]
    Load(#[from] LoadError),
}

/// Why a call was not dispatched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No loaded plugin has this name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// [`Host::call_async`] was polled outside a tokio runtime, which its
    /// deadlines and capabilities need.
    #[error("Host::call_async needs a tokio runtime (with its time and I/O drivers)")]
    NoAsyncRuntime,
}

/// Who is calling: bound to the call by the host, never chosen by a tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The caller's workspace; workspace reads without one are unauthorized.
    pub workspace: Option<String>,
    /// An id carried into the log records of this call.
    pub trace_id: Option<String>,
}

impl CallContext {
    /// A context for `workspace`.
    pub fn for_workspace(workspace: impl Into<String>) -> Self {
        Self { workspace: Some(workspace.into()), trace_id: None }
    }
}

/// A call's envelope with what the host observed.
#[derive(Clone, Debug)]
pub struct CallRecord {
    /// The envelope.
    pub envelope: Envelope,
    /// Capability uses, in order.
    pub receipts: Vec<Receipt>,
    /// Wall-clock time of the whole call.
    pub duration: Duration,
    /// When the call started, read on the same clock as each receipt's
    /// `started_at`, so that the call's span (`started_at` to
    /// `started_at + duration`) holds its capability uses' however late
    /// it is recorded.
    pub started_at: SystemTime,
    /// The largest linear memory the guest held, in bytes.
    pub peak_memory_bytes: usize,
    /// What the debug log explains about this call, one line each: the
    /// rule the guest's answer broke or how it failed, and what it wrote
    /// to stdout and stderr. Never part of the envelope.
    pub diagnostics: Vec<String>,
}

/// When a call started, on both clocks: the monotonic one times it, the
/// wall clock places it. The wall clock is read second, before anything
/// of the call runs, so every receipt (whose start is its wall clock less
/// its monotonic time spent) starts no earlier and ends no later than the
/// call: a span tree that holds whatever the scheduler does between the
/// call's end and its recording.
#[derive(Clone, Copy)]
struct CallStart {
    instant: Instant,
    wall: SystemTime,
}

impl CallStart {
    fn now() -> Self {
        let instant = Instant::now();
        Self { instant, wall: SystemTime::now() }
    }
}

/// What the debug log holds about one run, one line each (see
/// [`CallRecord::diagnostics`]).
fn diagnostics(run: &sandbox::CallRun) -> Vec<String> {
    let mut lines: Vec<String> = run.diagnostic.iter().cloned().collect();
    for (stream, (text, dropped)) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        let bytes = text.len() + dropped;
        if bytes == 0 {
            continue;
        }
        let why = if stream == "stdout" {
            "a tool answers only through its return value; stdout goes to the debug log"
        } else {
            "in the debug log"
        };
        lines.push(format!("the tool wrote {bytes} bytes to {stream} ({why})"));
    }
    lines
}

/// What [`Host::admit`] decided.
enum Admitted<'a> {
    /// Run this plugin's call.
    Run(&'a Plugin, sandbox::Invocation<'a>),
    /// Answered without running.
    Answered(CallRecord),
}

/// Largest input text, bytes; larger inputs are `invalid_input` unread.
pub use crate::limits::MAX_INPUT_BYTES;

struct Inner {
    runtime: Runtime,
    plugins: Vec<Plugin>,
    by_name: HashMap<String, usize>,
    /// Each capability's source, bound to the calls its world grants.
    sources: Sources,
    limits: CallLimits,
    max_deadline: Option<Duration>,
    /// `mock = true`: every call's evidence is stamped `mock`.
    mock: bool,
    logger: Logger,
    metrics: Option<Metrics>,
}

/// The sandboxed tool host. Cheap to clone; usable from many threads.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").field("tools", &self.inner.by_name.keys().collect::<Vec<_>>()).finish()
    }
}

/// Builds a [`Host`]: the config plus what only code can supply.
pub struct HostBuilder {
    config: HostConfig,
    log: Arc<dyn LogSink>,
    components: Vec<(PluginOrigin, Vec<u8>)>,
    /// Capability sources given instead of the configured ones.
    sources: Overrides,
    public_web_mock: Option<bool>,
    metrics: Option<Metrics>,
    compile_progress: Option<Arc<dyn plugin::CompileProgress>>,
    slots: Option<CallSlots>,
}

impl HostBuilder {
    /// Run calls on `slots` (another host's, [`Host::call_slots`]) rather
    /// than on slots of this host's own: the calls of both hosts draw from
    /// one bound, and either's [`Host::drained`] waits for both. The
    /// host's `limits.max_calls` becomes the slots' size (its instance
    /// pool follows it).
    pub fn call_slots(mut self, slots: CallSlots) -> Self {
        self.slots = Some(slots);
        self
    }

    /// Tell `progress` when a plugin is compiled rather than mapped from
    /// the cache (default: nobody is told).
    pub fn compile_progress(mut self, progress: Arc<dyn plugin::CompileProgress>) -> Self {
        self.compile_progress = Some(progress);
        self
    }

    /// Count calls, slot waits, capability uses and loads in `metrics`
    /// (default: not counted). Several hosts may share one handle.
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Send log records to `sink` (default: discarded).
    pub fn log(mut self, sink: Arc<dyn LogSink>) -> Self {
        self.log = sink;
        self
    }

    /// Load a component from memory, after the configured plugins.
    pub fn component(mut self, name: impl Into<String>, bytes: Vec<u8>) -> Self {
        self.components.push((PluginOrigin::Builtin(name.into()), bytes));
        self
    }

    /// Load a component already read from `path`, after the configured
    /// plugins.
    pub fn component_from(mut self, path: &std::path::Path, bytes: Vec<u8>) -> Self {
        self.components.push((PluginOrigin::File(path.to_owned()), bytes));
        self
    }

    /// Load a component file, after the configured plugins.
    pub fn component_file(self, path: &std::path::Path) -> Result<Self, LoadError> {
        let bytes = plugin::read_file(path)?;
        Ok(self.component_from(path, bytes))
    }

    /// Use this workspace source instead of the configured one.
    pub fn workspace_source(mut self, source: Arc<dyn WorkspaceSource>) -> Self {
        self.sources.workspace = Some(source);
        self
    }

    /// Answer public web requests from `source` instead of the HTTP client.
    pub fn public_web_source(mut self, source: Arc<dyn PublicWebSource>) -> Self {
        self.sources.public_web = Some(source);
        self
    }

    /// Serve the public web from fixtures (or not), whatever `mock` says.
    pub fn public_web_mock(mut self, mock: bool) -> Self {
        self.public_web_mock = Some(mock);
        self
    }

    /// Start the engine and load every plugin; any refused plugin fails the
    /// whole start, naming it.
    pub fn build(self) -> Result<Host, HostError> {
        let mut config = self.config;
        if let Some(slots) = &self.slots {
            config.limits.max_calls = slots.size();
        }
        config.check()?;
        let logger = Logger::new(self.log);
        let cache_dir = config.cache_dir();
        let mut runtime =
            Runtime::new(&config.limits, config.wasi.inert_filesystem_and_sockets, cache_dir.as_deref())
                .map_err(|error| HostError::Engine(error.to_string()))?;
        if let (Some(dir), None) = (&cache_dir, &runtime.cache) {
            logger.emit(Level::Warn, "cache.unusable", vec![("dir", dir.display().to_string())]);
        }
        logger.emit(Level::Info, "slots.reset", vec![("reset", runtime.reset.resolved().name().to_owned())]);
        runtime.reset.tell(logger.clone());
        runtime.metrics = self.metrics.clone();
        if let Some(slots) = self.slots {
            runtime.slots = slots;
        }
        runtime.compile_progress = self.compile_progress.clone();
        let policy = ImportPolicy::from(&config.wasi);
        let limits = CallLimits::from(&config.limits);
        let trust = crate::provenance::policy(&config.plugins)?;
        let mut sources: Vec<(PluginOrigin, Vec<u8>)> = Vec::new();
        if config.plugins.builtin {
            for (name, bytes) in harmonia_artifacts::BUILTIN_TOOLS {
                sources.push((PluginOrigin::Builtin((*name).to_owned()), bytes.to_vec()));
            }
        }
        let mut files = Vec::new();
        if let Some(dir) = &config.plugins.dir {
            files.extend(plugin::components_in(dir)?);
        }
        files.extend(config.plugins.files.iter().cloned());
        for path in files {
            let bytes = plugin::read_file(&path)?;
            sources.push((PluginOrigin::File(path), bytes));
        }
        sources.extend(self.components);
        let refused = |error: LoadError| {
            if let Some(metrics) = &self.metrics {
                metrics.load_failed();
            }
            error
        };
        for (origin, _) in &sources {
            crate::provenance::admit_unsigned(&trust, origin).map_err(refused)?;
        }
        let mut provenances = HashMap::new();
        let mut locked_pins = HashMap::new();
        for locked in crate::provenance::locked(&config.plugins, &trust).map_err(refused)? {
            provenances.insert(sources.len(), locked.provenance);
            locked_pins.insert(sources.len(), locked.pin);
            sources.push((locked.origin, locked.bytes));
        }

        let mut plugins: Vec<Plugin> = Vec::new();
        let mut by_name = HashMap::new();
        for (index, (origin, bytes)) in sources.into_iter().enumerate() {
            let pin = match &origin {
                PluginOrigin::File(path) => path
                    .file_name()
                    .and_then(|name| config.plugins.pins.get(name.to_string_lossy().as_ref()))
                    .map(String::as_str),
                PluginOrigin::Builtin(_) => None,
                PluginOrigin::Oci(_) => locked_pins.get(&index).map(String::as_str),
            };
            let started = Instant::now();
            // A locked component's bytes were hashed against its layer
            // digest as the store read them: not hashed again.
            let verified = matches!(origin, PluginOrigin::Oci(_)).then_some(pin).flatten();
            let mut loaded = match verified {
                Some(sha256) => plugin::load_verified(&runtime, policy, limits, &bytes, origin, sha256),
                None => plugin::load(&runtime, policy, limits, &bytes, origin, pin),
            }
            .map_err(refused)?;
            loaded.info.provenance = provenances.remove(&index);
            if let (Some(provenance), Some(lock)) = (&loaded.info.provenance, &config.plugins.lock) {
                let at = harmonia_registry::declared::NameCheck::Lock(lock);
                let declared = &loaded.info.descriptor.name;
                harmonia_registry::declared::check(&provenance.name, &provenance.reference, declared, at)
                    .map_err(|error| LoadError::Unverified {
                        origin: loaded.info.origin.clone(),
                        reason: error.to_string(),
                    })
                    .map_err(refused)?;
            }
            if let Some(metrics) = &self.metrics {
                metrics.component_loaded(loaded.cache);
                metrics.register_tool(&loaded.info.descriptor.name);
            }
            let name = loaded.info.descriptor.name.clone();
            if let Some(&first) = by_name.get(&name) {
                let first: &Plugin = &plugins[first];
                return Err(LoadError::DuplicateName {
                    name,
                    first: first.info.origin.clone(),
                    second: loaded.info.origin,
                }
                .into());
            }
            logger.emit(
                Level::Info,
                "plugin.loaded",
                vec![
                    ("tool", name.clone()),
                    ("origin", loaded.info.origin.to_string()),
                    ("sha256", loaded.info.sha256.clone()),
                    ("load_us", started.elapsed().as_micros().to_string()),
                    ("cache", format!("{:?}", loaded.cache).to_lowercase()),
                ],
            );
            by_name.insert(name, plugins.len());
            plugins.push(loaded);
        }

        let mut overrides = self.sources;
        if let (None, Some(mock)) = (&overrides.public_web, self.public_web_mock) {
            overrides.public_web = Some(Arc::new(PublicWeb::new(&config.public_web, mock)));
        }
        let sources = Sources::build(&config, overrides)?;
        Ok(Host {
            inner: Arc::new(Inner {
                runtime,
                plugins,
                by_name,
                sources,
                limits,
                max_deadline: config.limits.max_deadline_ms.map(|ms| Duration::from_millis(u64::from(ms))),
                mock: config.mock,
                logger,
                metrics: self.metrics,
            }),
        })
    }
}

impl Host {
    /// A host built from `config` with default logging (discarded).
    pub fn new(config: HostConfig) -> Result<Self, HostError> {
        Self::builder(config).build()
    }

    /// A builder starting from `config`.
    pub fn builder(config: HostConfig) -> HostBuilder {
        HostBuilder {
            config,
            log: Arc::new(NullLog),
            components: Vec::new(),
            sources: Overrides::default(),
            public_web_mock: None,
            metrics: None,
            compile_progress: None,
            slots: None,
        }
    }

    /// The metrics this host counts into, when given one.
    pub fn metrics(&self) -> Option<&Metrics> {
        self.inner.metrics.as_ref()
    }

    /// Every loaded plugin, in load order.
    pub fn tools(&self) -> impl Iterator<Item = &PluginInfo> {
        self.inner.plugins.iter().map(|plugin| &plugin.info)
    }

    /// What is known about `tool` (its digest and provenance among it),
    /// if loaded.
    pub fn tool(&self, tool: &str) -> Option<&PluginInfo> {
        self.plugin(tool).map(|plugin| &plugin.info)
    }

    /// The descriptor of `tool`, if loaded.
    pub fn descriptor(&self, tool: &str) -> Option<&Descriptor> {
        self.plugin(tool).map(|plugin| &plugin.info.descriptor)
    }

    fn plugin(&self, tool: &str) -> Option<&Plugin> {
        self.inner.by_name.get(tool).map(|&index| &self.inner.plugins[index])
    }

    /// The deadline a call of `tool` runs under: the descriptor's, lowered
    /// by the config's cap.
    pub fn deadline(&self, tool: &str) -> Option<Duration> {
        self.plugin(tool).map(|plugin| self.deadline_of(plugin))
    }

    fn deadline_of(&self, plugin: &Plugin) -> Duration {
        let declared = plugin.info.descriptor.deadline();
        match self.inner.max_deadline {
            Some(cap) => declared.min(cap),
            None => declared,
        }
    }

    /// Wait until no call runs (every call slot free, a call of a host
    /// sharing them included), or `timeout` passes; true when idle. Calls
    /// arriving meanwhile wait behind the drain (the slots are fair), so a
    /// server stopping uses this last.
    pub async fn drained(&self, timeout: Duration) -> bool {
        self.inner.runtime.slots.drained(timeout).await
    }

    /// The slots this host's calls run on, to build another host on them
    /// ([`HostBuilder::call_slots`]).
    pub fn call_slots(&self) -> &CallSlots {
        &self.inner.runtime.slots
    }

    /// How pool slots are reset between calls: `limits.slot_reset`, as
    /// resolved when the host started.
    pub fn slot_reset(&self) -> crate::SlotResetInEffect {
        self.inner.runtime.reset.resolved()
    }

    /// Why every call is refused, when swap became possible after this
    /// host started resetting only written pages; a server reports itself
    /// not ready while it is.
    pub fn refusing_calls(&self) -> Option<&str> {
        self.inner.runtime.reset.refusing()
    }

    /// Call `tool` with `input` (JSON text) for `context`, on this thread:
    /// [`Host::call_async`]'s future, polled here to its end. Works from any
    /// thread, inside an async runtime or not; the host's own small runtime
    /// drives the call's timers and sockets.
    pub fn call(&self, tool: &str, input: &str, context: &CallContext) -> Result<Envelope, CallError> {
        self.call_recorded(tool, input, context).map(|record| record.envelope)
    }

    /// [`Host::call`] keeping the receipts and timing.
    pub fn call_recorded(
        &self,
        tool: &str,
        input: &str,
        context: &CallContext,
    ) -> Result<CallRecord, CallError> {
        self.inner.runtime.facade.block_on(self.call_recorded_async(tool, input, context))
    }

    /// Call `tool` as a future, for async embedders (`harmonia serve` is
    /// one): the guest runs on the polling thread, yielding at every epoch
    /// tick, and its capabilities wait without holding a thread, so a call
    /// waiting on a slow upstream costs a task, not a thread. Up to
    /// `limits.max_calls` run at once (blocking calls included); the rest
    /// wait up to their deadline, then end as the retryable
    /// `dependency_unavailable`. Needs a tokio runtime with the time driver
    /// (and the I/O driver for live capabilities); polled outside one it
    /// answers [`CallError::NoAsyncRuntime`].
    pub async fn call_async(
        &self,
        tool: &str,
        input: &str,
        context: &CallContext,
    ) -> Result<Envelope, CallError> {
        self.call_recorded_async(tool, input, context).await.map(|record| record.envelope)
    }

    /// [`Host::call_async`] keeping the receipts and timing.
    pub async fn call_recorded_async(
        &self,
        tool: &str,
        input: &str,
        context: &CallContext,
    ) -> Result<CallRecord, CallError> {
        let started = CallStart::now();
        tokio::runtime::Handle::try_current().map_err(|_| CallError::NoAsyncRuntime)?;
        let (plugin, call) = match self.admit(tool, input, context, started)? {
            Admitted::Run(plugin, call) => (plugin, call),
            Admitted::Answered(record) => return Ok(record),
        };
        let run = sandbox::invoke(call, &plugin.pre).await;
        Ok(self.recorded(tool, context, started, run))
    }

    /// The checks before a call runs (the tool exists and the input is
    /// not too large to read), then the call bound to its deadline, limits
    /// and capabilities.
    fn admit<'a>(
        &'a self,
        tool: &str,
        input: &'a str,
        context: &CallContext,
        started: CallStart,
    ) -> Result<Admitted<'a>, CallError> {
        let Some(plugin) = self.plugin(tool) else {
            if let Some(metrics) = &self.inner.metrics {
                metrics.call_not_run(tool, "call_refused");
            }
            return Err(CallError::UnknownTool(tool.to_owned()));
        };
        if input.len() <= MAX_INPUT_BYTES {
            let call = sandbox::Invocation {
                runtime: &self.inner.runtime,
                descriptor: &plugin.info.descriptor,
                deadline: self.deadline_of(plugin),
                limits: self.inner.limits,
                binding: self.binding(plugin.info.world, context),
                input,
            };
            return Ok(Admitted::Run(plugin, call));
        }
        let envelope = Envelope::stable_error(&contract::INVALID_INPUT);
        let duration = started.instant.elapsed();
        if let Some(metrics) = &self.inner.metrics {
            metrics.call_finished(tool, &envelope, duration, &[]);
        }
        self.log_call(tool, &envelope, duration, context, 0);
        Ok(Admitted::Answered(CallRecord {
            envelope,
            receipts: Vec::new(),
            duration,
            started_at: started.wall,
            peak_memory_bytes: 0,
            diagnostics: Vec::new(),
        }))
    }

    /// Count and log a finished run, and keep it.
    fn recorded(
        &self,
        tool: &str,
        context: &CallContext,
        started: CallStart,
        run: sandbox::CallRun,
    ) -> CallRecord {
        let duration = started.instant.elapsed();
        if let Some(metrics) = &self.inner.metrics {
            metrics.call_finished(tool, &run.envelope, duration, &run.receipts);
        }
        self.log_guest_output(tool, context, &run);
        self.log_call(tool, &run.envelope, duration, context, run.receipts.len());
        let diagnostics = diagnostics(&run);
        CallRecord {
            envelope: run.envelope,
            receipts: run.receipts,
            duration,
            started_at: started.wall,
            peak_memory_bytes: run.peak_memory_bytes,
            diagnostics,
        }
    }

    fn binding(&self, world: World, context: &CallContext) -> CallBinding {
        let caller = Caller { workspace: context.workspace.as_deref() };
        CallBinding { capabilities: self.inner.sources.bind(world, caller), mock_mode: self.inner.mock }
    }

    fn log_call(
        &self,
        tool: &str,
        envelope: &Envelope,
        duration: Duration,
        context: &CallContext,
        receipts: usize,
    ) {
        if !self.inner.logger.enabled(Level::Info) {
            return;
        }
        let mut fields = vec![
            ("tool", tool.to_owned()),
            ("status", if envelope.is_success() { "success".into() } else { "error".into() }),
            ("duration_us", duration.as_micros().to_string()),
            ("receipts", receipts.to_string()),
        ];
        if let Some(error) = &envelope.error {
            fields.push(("code", error.code.clone()));
            fields.push(("category", error.category.to_string()));
            fields.push(("retryable", error.retryable.to_string()));
        }
        if let Some(trace_id) = &context.trace_id {
            fields.push(("trace_id", trace_id.clone()));
        }
        self.inner.logger.emit(Level::Info, "call.finished", fields);
    }

    fn log_guest_output(&self, tool: &str, context: &CallContext, run: &sandbox::CallRun) {
        if !self.inner.logger.enabled(Level::Debug) {
            return;
        }
        let trace = context.trace_id.clone().unwrap_or_default();
        for (event, (text, dropped)) in [("guest.stdout", &run.stdout), ("guest.stderr", &run.stderr)] {
            if !text.is_empty() || *dropped > 0 {
                let fields = vec![
                    ("tool", tool.to_owned()),
                    ("trace_id", trace.clone()),
                    ("text", text.clone()),
                    ("dropped_bytes", dropped.to_string()),
                ];
                self.inner.logger.emit(Level::Debug, event, fields);
            }
        }
        if let Some(trap) = &run.trap {
            let fields = vec![("tool", tool.to_owned()), ("trace_id", trace.clone()), ("trap", trap.clone())];
            self.inner.logger.emit(Level::Debug, "call.trap", fields);
        }
        if let Some(rule) = &run.diagnostic {
            let fields = vec![("tool", tool.to_owned()), ("trace_id", trace), ("rule", rule.clone())];
            self.inner.logger.emit(Level::Debug, "call.diagnostic", fields);
        }
    }
}
