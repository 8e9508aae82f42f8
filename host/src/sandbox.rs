//! One call in the sandbox: a fresh store, the limits, the guest's answer,
//! and the envelope the host makes of it.
//!
//! Nothing survives between calls: every call instantiates the plugin in a
//! new `Store` (a store that trapped is poisoned anyway). The envelope is
//! built here and only here:
//! - a deadline passed (in the guest, waiting on a capability or inside
//!   `wasi:io`) is `tool_timeout`;
//! - a deadline that passed while every call slot was taken is the
//!   retryable `dependency_unavailable`: the call never ran, so the
//!   caller may retry it as it is;
//! - a trap, panic, stack overflow, memory limit or exhausted fuel is
//!   `tool_execution_failed` with a fixed message per cause (the raw trap
//!   text goes to the log only);
//! - data that is not a JSON object of at most 1 MiB, more than 100
//!   evidence items, or an error the descriptor does not declare (code,
//!   category or retryability) is `tool_execution_failed`;
//! - errors with one of the contract's codes carry the contract's fixed
//!   message, whatever text the guest sent, so a guest cannot leak data
//!   through them;
//! - evidence ids and provenance are minted here: provenance is `mock`
//!   when the host runs in mock mode or any data the call read came from
//!   fixtures;
//! - evidence from a call that made no successful capability read, or
//!   naming a source reserved for the other scope, is
//!   `tool_execution_failed`: a plugin cannot cite what it did not read;
//! - a guest past its capability use limits is `tool_execution_failed`.
//!
//! Every refusal and failure also gets a diagnostic ([`CallRun::diagnostic`]):
//! one line naming the rule the guest broke and where ("data must be a JSON
//! object, got an array", "error code `x` is not declared; declared: ..."),
//! for the debug log and the conformance report. It never reaches the
//! envelope, whose messages stay fixed and safe for agents.

use crate::bindings::ToolHostPre;
use crate::bindings::harmonia::tools::types;
use crate::call_state::{CallBinding, CallState};
use crate::capability::Receipt;
use crate::config::LimitsConfig;
use crate::contract::{self, Category, ExecutionFailure, StableCode, stable_code};
use crate::descriptor::Descriptor;
use crate::engine::Runtime;
use crate::envelope::{Envelope, ErrorObject, EvidenceItem, MAX_DATA_BYTES, MAX_EVIDENCE, Provenance};
use crate::limits::ComponentLimits;
use crate::metrics::{Bound, Metrics};
use std::time::{Duration, Instant};
use wasmtime::{Store, Trap, UpdateDeadline};

/// Deadline of `describe` at load.
pub use crate::limits::DESCRIBE_DEADLINE;
use crate::limits::{HOSTCALL_FUEL, MAX_CAPABILITY_USES, MAX_RECEIPT_BYTES};

/// Limits applied to every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// Linear memory per memory, bytes.
    pub memory_bytes: usize,
    /// Fuel per call, when fuel is on.
    pub fuel: Option<u64>,
    /// Instances, memories and tables per component.
    pub component: ComponentLimits,
}

impl From<&LimitsConfig> for CallLimits {
    fn from(limits: &LimitsConfig) -> Self {
        Self {
            memory_bytes: limits.memory_mib as usize * 1024 * 1024,
            fuel: limits.fuel,
            component: ComponentLimits::from(limits),
        }
    }
}

/// How a guest's run ended, before the envelope is made.
#[derive(Debug)]
pub enum Outcome {
    /// `invoke` returned an output.
    Output(types::Output),
    /// `invoke` returned a tool error.
    ToolError(types::ToolError),
    /// The guest failed.
    Failed(ExecutionFailure),
    /// The deadline passed.
    TimedOut,
}

/// Everything one call produced.
#[derive(Debug)]
pub struct CallRun {
    /// The envelope.
    pub envelope: Envelope,
    /// Capability receipts, in order.
    pub receipts: Vec<Receipt>,
    /// Captured stdout and bytes dropped past the cap.
    pub stdout: (String, usize),
    /// Captured stderr and bytes dropped past the cap.
    pub stderr: (String, usize),
    /// The raw trap text, for the log only.
    pub trap: Option<String>,
    /// The rule the guest's answer broke, or how the guest failed, in one
    /// line; for the log and the conformance report, never the envelope.
    pub diagnostic: Option<String>,
    /// The largest linear memory the guest held, in bytes.
    pub peak_memory_bytes: usize,
}

/// A store for one run of a guest: the call's limits, and an epoch
/// callback that interrupts the guest once `deadline` has passed and
/// otherwise yields to the executor at every tick, so a guest spinning on
/// the CPU neither holds a worker thread nor outlives the timeout around
/// it.
fn new_store(
    runtime: &Runtime,
    limits: CallLimits,
    deadline: Instant,
    binding: CallBinding,
) -> Store<CallState> {
    let mut store =
        Store::new(&runtime.engine, CallState::new(limits.memory_bytes, limits.component, deadline, binding));
    store.limiter(|state| &mut state.limiter);
    store.epoch_deadline_callback(move |context| {
        Ok(if Instant::now() >= context.data().uses.deadline {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Yield(1)
        })
    });
    store.set_epoch_deadline(1);
    if let Some(fuel) = limits.fuel {
        // Fuel is enabled in the engine whenever `limits.fuel` is set.
        let _ = store.set_fuel(fuel);
    }
    store.set_hostcall_fuel(HOSTCALL_FUEL);
    store
}

/// Wasmtime's text for a guest handing the host more than its hostcall fuel.
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

fn classify(error: &wasmtime::Error, state: &CallState) -> Outcome {
    if state.uses.timed_out || Instant::now() >= state.uses.deadline {
        return Outcome::TimedOut;
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Outcome::TimedOut,
        Some(Trap::StackOverflow) => Outcome::Failed(ExecutionFailure::StackOverflow),
        Some(Trap::OutOfFuel) => Outcome::Failed(ExecutionFailure::FuelExhausted),
        _ if state.uses.capability_limit => Outcome::Failed(ExecutionFailure::CapabilityLimit),
        _ if state.limiter.memory_refused() => Outcome::Failed(ExecutionFailure::MemoryLimit),
        // Wasmtime's hostcall-fuel error type is private; its text is the
        // only way to tell "the guest tried to hand over too much".
        None if error.to_string().contains(HOSTCALL_FUEL_EXHAUSTED) => {
            Outcome::Failed(ExecutionFailure::InvalidOutput)
        }
        _ => Outcome::Failed(ExecutionFailure::Trapped),
    }
}

/// The run of a call that never got a slot: the retryable
/// `dependency_unavailable`.
fn no_slot() -> CallRun {
    not_run("every call slot stayed taken until the call's deadline".into())
}

/// A call that never took a slot: `dependency_unavailable`, and why.
fn not_run(diagnostic: String) -> CallRun {
    CallRun {
        envelope: Envelope::stable_error(&contract::DEPENDENCY_UNAVAILABLE),
        receipts: Vec::new(),
        stdout: Default::default(),
        stderr: Default::default(),
        trap: None,
        diagnostic: Some(diagnostic),
        peak_memory_bytes: 0,
    }
}

/// The outcome of `invoke`'s result, and the raw trap text for the log.
fn invoked(
    result: wasmtime::Result<Result<types::Output, types::ToolError>>,
    state: &CallState,
) -> (Outcome, Option<String>) {
    match result {
        Ok(Ok(output)) => (Outcome::Output(output), None),
        Ok(Err(error)) => (Outcome::ToolError(error), None),
        Err(error) => (classify(&error, state), Some(format!("{error:?}"))),
    }
}

/// The outcome of a failed instantiation, and the raw trap text.
fn not_instantiated(error: &wasmtime::Error, state: &CallState) -> (Outcome, Option<String>) {
    let outcome = match classify(error, state) {
        Outcome::Failed(ExecutionFailure::Trapped) => Outcome::Failed(ExecutionFailure::Instantiation),
        other => other,
    };
    (outcome, Some(format!("instantiation: {error:?}")))
}

/// Everything the call produced, once its store is done.
fn finished(
    descriptor: &Descriptor,
    store: &mut Store<CallState>,
    outcome: Outcome,
    trap: Option<String>,
    limits: &Limits,
) -> CallRun {
    let state = store.data_mut();
    let late = state.uses.timed_out || Instant::now() > state.uses.deadline;
    let outcome = if late { Outcome::TimedOut } else { outcome };
    let provenance = if state.uses.mock_provenance() { Provenance::Mock } else { Provenance::Live };
    let grounding = Grounding { provenance, successful_reads: state.uses.successful_reads };
    let failure_rule = match &outcome {
        Outcome::TimedOut => Some(timed_out_rule(limits.deadline, state)),
        Outcome::Failed(failure) => Some(failure_rule(*failure, trap.as_deref(), limits)),
        Outcome::Output(_) | Outcome::ToolError(_) => None,
    };
    let (envelope, rule) = judged(descriptor, outcome, grounding);
    let (stdout, stderr) = state.take_stdio();
    CallRun {
        envelope,
        receipts: std::mem::take(&mut state.uses.receipts),
        stdout,
        stderr,
        trap,
        diagnostic: failure_rule.or(rule),
        peak_memory_bytes: state.limiter.peak_memory(),
    }
}

/// What a diagnostic needs to name the limit a call ran into.
struct Limits {
    deadline: Duration,
    memory_bytes: usize,
    fuel: Option<u64>,
}

/// Why a call ran out of time: waiting on a capability, or running.
fn timed_out_rule(deadline: Duration, state: &CallState) -> String {
    let waited = state.uses.receipts.iter().any(|receipt| receipt.status == "timed_out");
    let doing = if waited {
        "waiting on its capability"
    } else {
        "still running (an endless loop, a wait inside WASI, or more work than the deadline allows)"
    };
    format!("the call passed its {} ms deadline with the tool {doing}", deadline.as_millis())
}

/// How a guest failed, naming the limit or the trap.
fn failure_rule(failure: ExecutionFailure, trap: Option<&str>, limits: &Limits) -> String {
    // The trap's last line is its cause (`wasm trap: ...`, a host error);
    // the lines before it are the backtrace, which the debug log keeps.
    let cause = trap
        .and_then(|text| text.lines().map(str::trim).rfind(|line| !line.is_empty()))
        .unwrap_or("no trap text");
    match failure {
        ExecutionFailure::Trapped => format!("the tool trapped: {cause}"),
        ExecutionFailure::StackOverflow => {
            "the tool overflowed its wasm stack (limits.wasm_stack_kib; deep recursion?)".into()
        }
        ExecutionFailure::MemoryLimit => format!(
            "the tool asked for more than its {} MiB of linear memory (limits.memory_mib)",
            limits.memory_bytes / (1024 * 1024)
        ),
        ExecutionFailure::FuelExhausted => {
            format!("the tool used up its {} units of fuel (limits.fuel)", limits.fuel.unwrap_or_default())
        }
        ExecutionFailure::CapabilityLimit => format!(
            "the tool used its capability more than {MAX_CAPABILITY_USES} times, or with more than \
             {} KiB of URL and read text, in one call",
            MAX_RECEIPT_BYTES / 1024
        ),
        ExecutionFailure::InvalidOutput => {
            "the tool's answer is too large to copy out of the sandbox (its hostcall fuel ran out)".into()
        }
        ExecutionFailure::Instantiation => format!("the component could not be instantiated: {cause}"),
        ExecutionFailure::UndeclaredError | ExecutionFailure::UngroundedEvidence => cause.to_owned(),
    }
}

fn count_slot_wait(metrics: Option<&Metrics>, bound: Bound, waited: Option<Duration>, acquired: bool) {
    if let (Some(metrics), Some(waited)) = (metrics, waited) {
        metrics.slot_wait(bound, waited, acquired);
    }
}

/// One call ready to run: everything the sandbox needs but the plugin's
/// pre-instance.
pub struct Invocation<'a> {
    /// The engine, linkers and slots.
    pub runtime: &'a Runtime,
    /// The plugin's descriptor, which its answer is checked against.
    pub descriptor: &'a Descriptor,
    /// The call's deadline, from now.
    pub deadline: Duration,
    /// The limits it runs under.
    pub limits: CallLimits,
    /// The capabilities bound to it.
    pub binding: CallBinding,
    /// Its input text.
    pub input: &'a str,
}

/// Run `invoke` once, as a future.
///
/// The slot wait, instantiation and the guest's run are one future bounded
/// by the deadline: when it passes, the future is dropped wherever the
/// guest is (spinning, which yields at every epoch tick; waiting on a
/// capability; waiting inside `wasi:io`), wasmtime unwinds the guest's
/// fiber, and the call ends as `tool_timeout` with the receipts it made.
pub async fn invoke(call: Invocation<'_>, pre: &ToolHostPre<CallState>) -> CallRun {
    let Invocation { runtime, descriptor, deadline, limits, binding, input } = call;
    let call_deadline = deadline;
    let deadline = Instant::now() + deadline;
    let metrics = runtime.metrics.as_ref();
    // A slot's reset that can no longer be trusted gives no slot to anyone.
    if let Some(reason) = runtime.reset.refusing() {
        return not_run(format!("refused: {reason}"));
    }
    let slot = match runtime.slots.try_acquire() {
        Some(permit) => Some(permit),
        None => match after_retiring(&runtime.slots).await {
            Some(permit) => Some(permit),
            None => {
                let waiting = Instant::now();
                let wait = runtime.slots.acquire();
                let permit = tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), wait).await;
                let permit = permit.ok().flatten();
                count_slot_wait(metrics, Bound::HostSlots, Some(waiting.elapsed()), permit.is_some());
                permit
            }
        },
    };
    let Some(slot) = slot else {
        return no_slot();
    };
    let _running = metrics.map(Metrics::running);
    let mut store = new_store(runtime, limits, deadline, binding);
    let run = async {
        match pre.instantiate_async(&mut store).await {
            Ok(instance) => Ok(instance.harmonia_tools_tool().call_invoke(&mut store, input).await),
            Err(error) => Err(error),
        }
    };
    let (outcome, trap) = match before(deadline, run).await {
        Some(Ok(result)) => invoked(result, store.data()),
        Some(Err(error)) => not_instantiated(&error, store.data()),
        None => {
            store.data_mut().uses.timed_out = true;
            (Outcome::TimedOut, Some("the call's deadline passed with the guest suspended".into()))
        }
    };
    let limits = Limits { deadline: call_deadline, memory_bytes: limits.memory_bytes, fuel: limits.fuel };
    let run = finished(descriptor, &mut store, outcome, trap, &limits);
    retire(store, slot);
    run
}

/// A slot, if one frees when the tasks queued on this worker have run:
/// the slot of a call that the caller's task has just awaited is freed by
/// a task queued behind it ([`retire`]), and a caller that calls again at
/// once, without yielding, would find it taken and count a wait that is
/// only that store's cleanup.
async fn after_retiring(slots: &crate::slots::CallSlots) -> Option<tokio::sync::OwnedSemaphorePermit> {
    tokio::task::yield_now().await;
    slots.try_acquire()
}

/// Drop a finished call's store, and free its slot with it, once its
/// answer is on its way. Dropping the store resets the instance's memory
/// for the next call (5 to 10 µs for a built-in tool, measured). When the
/// call is awaited in a task on a multi-threaded runtime (a request a
/// server serves), that is done by a task of its own: spawned from a
/// worker it waits in that worker's next-task slot, which the worker runs
/// as soon as the awaiting task yields, after it has written its answer.
/// The slot is freed only then, so `limits.max_calls` still bounds the
/// stores alive and a drain still waits for them. Anywhere else (a
/// current-thread runtime, as `Host::call`'s own, or a `block_on` outside
/// the workers) a spawned task could wait for the next poll, or on a
/// sleeping worker, holding its slot while the caller's next call finds
/// it taken: the store is dropped here.
fn retire(store: Store<CallState>, slot: tokio::sync::OwnedSemaphorePermit) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let in_a_worker_task = tokio::task::try_id().is_some();
    match Handle::try_current() {
        Ok(runtime) if in_a_worker_task && runtime.runtime_flavor() == RuntimeFlavor::MultiThread => {
            // A runtime shutting down drops the task unrun, and with it
            // the store and the slot.
            drop(runtime.spawn(async move { drop((store, slot)) }));
        }
        _ => drop((store, slot)),
    }
}

/// `future`'s output, or `None` once `deadline` has passed (the future is
/// then dropped wherever it is). The timer is set only when the future
/// has to wait: a call that finishes at its first poll, as a short guest
/// does, never touches the runtime's timer wheel.
async fn before<F: std::future::Future>(deadline: Instant, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut timer = std::pin::pin!(None::<tokio::time::Sleep>);
    std::future::poll_fn(|context| {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(context) {
            return std::task::Poll::Ready(Some(output));
        }
        if timer.is_none() {
            timer.set(Some(tokio::time::sleep_until(tokio::time::Instant::from_std(deadline))));
        }
        match timer.as_mut().as_pin_mut() {
            Some(timer) => timer.poll(context).map(|()| None),
            None => std::task::Poll::Pending,
        }
    })
    .await
}

/// Why `describe` gave no descriptor.
#[derive(Debug, thiserror::Error)]
pub enum DescribeError {
    /// The component could not be instantiated.
    #[error("cannot instantiate: {0}")]
    Instantiate(#[source] wasmtime::Error),
    /// `describe` ran past [`DESCRIBE_DEADLINE`].
    #[error("describe passed its 5 s deadline")]
    TimedOut,
    /// `describe` trapped.
    #[error("describe trapped: {0}")]
    Trapped(#[source] wasmtime::Error),
}

/// Run `describe` once, with no capability bound, as a future ended at
/// [`DESCRIBE_DEADLINE`] wherever the guest is.
pub async fn describe(
    runtime: &Runtime,
    pre: &ToolHostPre<CallState>,
    limits: CallLimits,
) -> Result<types::Descriptor, DescribeError> {
    let deadline = Instant::now() + DESCRIBE_DEADLINE;
    let mut store = new_store(runtime, limits, deadline, CallBinding::default());
    let run = async {
        let instance = pre.instantiate_async(&mut store).await.map_err(DescribeError::Instantiate)?;
        instance.harmonia_tools_tool().call_describe(&mut store).await.map_err(DescribeError::Trapped)
    };
    match before(deadline, run).await {
        Some(Err(DescribeError::Trapped(error))) => match classify(&error, store.data()) {
            Outcome::TimedOut => Err(DescribeError::TimedOut),
            _ => Err(DescribeError::Trapped(error)),
        },
        Some(described) => described,
        None => Err(DescribeError::TimedOut),
    }
}

fn failed(failure: ExecutionFailure) -> Envelope {
    Envelope::failure(ErrorObject::with_message(&contract::TOOL_EXECUTION_FAILED, failure.message()))
}

/// What the call read, which decides the evidence it may cite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grounding {
    /// The provenance every item is stamped with.
    pub provenance: Provenance,
    /// Capability uses that returned data.
    pub successful_reads: usize,
}

/// A guest's answer the host refused, with the rule it broke.
#[derive(Debug)]
struct Refusal {
    failure: ExecutionFailure,
    rule: String,
}

impl Refusal {
    fn new(failure: ExecutionFailure, rule: impl Into<String>) -> Self {
        Self { failure, rule: rule.into() }
    }
}

/// The envelope for an outcome, checked against the descriptor and §1,
/// and the diagnostic of a refused answer (the rule and where it was
/// broken) or of a contract code whose message the host replaced.
fn judged(descriptor: &Descriptor, outcome: Outcome, grounding: Grounding) -> (Envelope, Option<String>) {
    let judged = match outcome {
        Outcome::TimedOut => return (Envelope::stable_error(&contract::TOOL_TIMEOUT), None),
        Outcome::Failed(failure) => return (failed(failure), None),
        Outcome::Output(output) => success(output, descriptor, grounding).map(|envelope| (envelope, None)),
        Outcome::ToolError(error) => tool_error(descriptor, error),
    };
    match judged {
        Ok((envelope, note)) => match envelope.validate() {
            Ok(()) => (envelope, note),
            Err(error) => (
                failed(ExecutionFailure::InvalidOutput),
                Some(format!("the answer breaks the envelope contract: {error}")),
            ),
        },
        Err(refusal) => (failed(refusal.failure), Some(refusal.rule)),
    }
}

/// A JSON value's kind, as a diagnostic names it.
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn success(
    output: types::Output,
    descriptor: &Descriptor,
    grounding: Grounding,
) -> Result<Envelope, Refusal> {
    let invalid = |rule: String| Refusal::new(ExecutionFailure::InvalidOutput, rule);
    if output.evidence.len() > MAX_EVIDENCE {
        return Err(invalid(format!(
            "evidence holds {} items; at most {MAX_EVIDENCE} are allowed",
            output.evidence.len()
        )));
    }
    if output.data.len() > MAX_DATA_BYTES {
        return Err(invalid(format!(
            "data is {} bytes; at most {MAX_DATA_BYTES} (1 MiB) are allowed",
            output.data.len()
        )));
    }
    let foreign = output.evidence.iter().enumerate().find_map(|(index, item)| {
        contract::reserved_source_scope(&item.source)
            .filter(|scope| *scope != descriptor.scope)
            .map(|scope| (index, item, scope))
    });
    if let Some((index, item, scope)) = foreign {
        return Err(Refusal::new(
            ExecutionFailure::UngroundedEvidence,
            format!(
                "evidence[{index}].source `{}` is reserved to {} tools; this tool's scope is {}",
                item.source,
                scope.as_str(),
                descriptor.scope.as_str()
            ),
        ));
    }
    if !output.evidence.is_empty() && grounding.successful_reads == 0 {
        return Err(Refusal::new(
            ExecutionFailure::UngroundedEvidence,
            format!(
                "evidence holds {} items, but the call made no successful capability read: cite only what you read",
                output.evidence.len()
            ),
        ));
    }
    let provenance = grounding.provenance;
    let data = match serde_json::from_str(&output.data) {
        Ok(serde_json::Value::Object(data)) => data,
        Ok(other) => return Err(invalid(format!("data must be a JSON object, got {}", kind(&other)))),
        Err(error) => {
            return Err(invalid(format!("data must be the text of a JSON object; it is not JSON: {error}")));
        }
    };
    let evidence = output
        .evidence
        .iter()
        .map(|item| EvidenceItem::new(&item.source, provenance, item.reference.as_deref()))
        .collect();
    Ok(Envelope::success(data, evidence))
}

fn category(category: types::ErrorCategory) -> Category {
    match category {
        types::ErrorCategory::Validation => Category::Validation,
        types::ErrorCategory::Authorization => Category::Authorization,
        types::ErrorCategory::NotFound => Category::NotFound,
        types::ErrorCategory::Dependency => Category::Dependency,
        types::ErrorCategory::ProviderPermanent => Category::ProviderPermanent,
    }
}

/// The longest guest text a diagnostic quotes, in characters.
const QUOTED_CHARS: usize = 500;

fn tool_error(
    descriptor: &Descriptor,
    error: types::ToolError,
) -> Result<(Envelope, Option<String>), Refusal> {
    let category = category(error.category);
    let undeclared = |rule: String| Refusal::new(ExecutionFailure::UndeclaredError, rule);
    let Some(spec) = descriptor.declared(&error.code) else {
        let declared: Vec<&str> = descriptor.errors.iter().map(|spec| spec.code.as_str()).collect();
        return Err(undeclared(format!(
            "error code `{}` is not declared; declared: {}",
            error.code.chars().take(QUOTED_CHARS).collect::<String>(),
            declared.join(", ")
        )));
    };
    if spec.category != category || spec.retryable != error.retryable {
        return Err(undeclared(format!(
            "error code `{}` is declared with category {}, retryable {}; the tool returned category {category}, \
             retryable {}",
            error.code, spec.category, spec.retryable, error.retryable
        )));
    }
    let stable: Option<&StableCode> = stable_code(&error.code);
    let (message, note) = match stable {
        Some(stable) => {
            // The guest's own text is replaced; the log keeps it, since a
            // tool may say there what went wrong (the JavaScript and Python
            // templates put an uncaught exception there).
            let own = error.message.trim();
            let note = (!own.is_empty() && own != stable.message).then(|| {
                format!(
                    "the tool answered `{}` saying: {} (the envelope carries the contract's message)",
                    error.code,
                    own.chars().take(QUOTED_CHARS).collect::<String>()
                )
            });
            (stable.message.to_owned(), note)
        }
        None => {
            if let Some((at, control)) = error.message.chars().enumerate().find(|(_, c)| c.is_control()) {
                return Err(Refusal::new(
                    ExecutionFailure::InvalidOutput,
                    format!(
                        "error.message of code `{}` holds the control character U+{:04X} at character {at}; \
                         messages are 1 to 500 characters without control characters",
                        error.code, control as u32
                    ),
                ));
            }
            (error.message, None)
        }
    };
    Ok((
        Envelope::failure(ErrorObject { code: error.code, category, message, retryable: error.retryable }),
        note,
    ))
}

/// Convert the guest's descriptor; its input schema must be JSON text.
pub fn descriptor_from_wit(descriptor: types::Descriptor) -> Result<Descriptor, serde_json::Error> {
    let input_schema = serde_json::from_str(&descriptor.input_schema)?;
    Ok(Descriptor {
        name: descriptor.name,
        version: descriptor.version,
        purpose: descriptor.purpose,
        input_schema,
        errors: descriptor
            .errors
            .into_iter()
            .map(|spec| crate::descriptor::ErrorSpec {
                code: spec.code,
                category: category(spec.category),
                retryable: spec.retryable,
            })
            .collect(),
        scope: match descriptor.scope {
            types::Scope::Public => crate::descriptor::Scope::Public,
            types::Scope::Workspace => crate::descriptor::Scope::Workspace,
        },
        deadline_ms: descriptor.deadline_ms,
        skills: descriptor.skills,
    })
}
