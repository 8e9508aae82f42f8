//! One call in the sandbox: a fresh store, the limits, the guest's answer,
//! and the envelope the host makes of it.
//!
//! Nothing survives between calls: every call instantiates the plugin in a
//! new `Store` (a store that trapped is poisoned anyway). The envelope is
//! built here and only here:
//! - a deadline passed (in the guest or waiting on a capability) is
//!   `tool_timeout`, for blocking calls ([`invoke`]) and async ones
//!   ([`invoke_async`]) alike;
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

use crate::bindings::ToolHostPre;
use crate::bindings::asynchronous::ToolHostPre as AsyncToolHostPre;
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
use crate::limits::HOSTCALL_FUEL;

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
    /// The largest linear memory the guest held, in bytes.
    pub peak_memory_bytes: usize,
}

/// How a store's guest is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// On the caller's thread, to the end.
    Blocking,
    /// As a future that yields to the executor at every epoch tick, so a
    /// guest spinning on the CPU neither holds a worker thread nor outlives
    /// the timeout around it.
    Yielding,
}

fn new_store(
    runtime: &Runtime,
    limits: CallLimits,
    deadline: Instant,
    binding: CallBinding,
    run: Run,
) -> Store<CallState> {
    let mut store =
        Store::new(&runtime.engine, CallState::new(limits.memory_bytes, limits.component, deadline, binding));
    store.limiter(|state| &mut state.limiter);
    store.epoch_deadline_callback(move |context| {
        Ok(if Instant::now() >= context.data().deadline {
            UpdateDeadline::Interrupt
        } else if run == Run::Yielding {
            UpdateDeadline::Yield(1)
        } else {
            UpdateDeadline::Continue(1)
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

fn classify(error: &wasmtime::Error, state: &CallState) -> Outcome {
    if state.timed_out || Instant::now() >= state.deadline {
        return Outcome::TimedOut;
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Outcome::TimedOut,
        Some(Trap::StackOverflow) => Outcome::Failed(ExecutionFailure::StackOverflow),
        Some(Trap::OutOfFuel) => Outcome::Failed(ExecutionFailure::FuelExhausted),
        _ if state.capability_limit => Outcome::Failed(ExecutionFailure::CapabilityLimit),
        _ if state.limiter.memory_refused() => Outcome::Failed(ExecutionFailure::MemoryLimit),
        // Wasmtime's hostcall-fuel error type is private; its text is the
        // only way to tell "the guest tried to hand over too much".
        None if error.to_string().contains("fuel allocated for hostcalls has been exhausted") => {
            Outcome::Failed(ExecutionFailure::InvalidOutput)
        }
        _ => Outcome::Failed(ExecutionFailure::Trapped),
    }
}

/// The run of a call that never got a slot: the retryable
/// `dependency_unavailable`.
fn no_slot() -> CallRun {
    CallRun {
        envelope: Envelope::stable_error(&contract::DEPENDENCY_UNAVAILABLE),
        receipts: Vec::new(),
        stdout: Default::default(),
        stderr: Default::default(),
        trap: None,
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
    store: Store<CallState>,
    outcome: Outcome,
    trap: Option<String>,
) -> CallRun {
    let state = store.into_data();
    let late = state.timed_out || Instant::now() > state.deadline;
    let outcome = if late { Outcome::TimedOut } else { outcome };
    let provenance = if state.mock_provenance() { Provenance::Mock } else { Provenance::Live };
    let grounding = Grounding { provenance, successful_reads: state.successful_reads };
    CallRun {
        envelope: envelope(descriptor, outcome, grounding),
        receipts: state.receipts,
        stdout: state.stdio.stdout.take(),
        stderr: state.stdio.stderr.take(),
        trap,
        peak_memory_bytes: state.limiter.peak_memory(),
    }
}

fn count_slot_wait(metrics: Option<&Metrics>, bound: Bound, waited: Option<Duration>, acquired: bool) {
    if let (Some(metrics), Some(waited)) = (metrics, waited) {
        metrics.slot_wait(bound, waited, acquired);
    }
}

/// One call ready to run: everything the sandbox needs but the plugin's
/// pre-instance, which differs between blocking and async calls.
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

/// Run `invoke` once, on the caller's thread.
pub fn invoke(call: Invocation<'_>, pre: &ToolHostPre<CallState>) -> CallRun {
    let Invocation { runtime, descriptor, deadline, limits, binding, input } = call;
    let deadline = Instant::now() + deadline;
    let acquired = runtime.slots.acquire(deadline);
    let metrics = runtime.metrics.as_ref();
    match &acquired {
        Ok((_, waited)) => count_slot_wait(metrics, Bound::HostSlots, *waited, true),
        Err(waited) => count_slot_wait(metrics, Bound::HostSlots, Some(*waited), false),
    }
    let Ok((_slot, _)) = acquired else {
        return no_slot();
    };
    let _running = metrics.map(Metrics::running);
    let mut store = new_store(runtime, limits, deadline, binding, Run::Blocking);
    let (outcome, trap) = match pre.instantiate(&mut store) {
        Ok(instance) => {
            let result = instance.harmonia_tools_tool().call_invoke(&mut store, input);
            invoked(result, store.data())
        }
        Err(error) => not_instantiated(&error, store.data()),
    };
    finished(descriptor, store, outcome, trap)
}

/// Run `invoke` once as a future, for async embedders.
///
/// The slot wait, instantiation and the guest's run are one future bounded
/// by the deadline: when it passes, the future is dropped wherever the
/// guest is (spinning, which yields at every epoch tick; waiting on a
/// capability; waiting inside `wasi:io`), wasmtime unwinds the guest's
/// fiber, and the call ends as `tool_timeout` with the receipts it made.
pub async fn invoke_async(call: Invocation<'_>, pre: &AsyncToolHostPre<CallState>) -> CallRun {
    let Invocation { runtime, descriptor, deadline, limits, binding, input } = call;
    let deadline = Instant::now() + deadline;
    let metrics = runtime.metrics.as_ref();
    let slot = match runtime.async_slots.try_acquire() {
        Ok(permit) => Some(permit),
        Err(_) => {
            let waiting = Instant::now();
            let wait = runtime.async_slots.acquire();
            let permit = tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), wait).await;
            let permit = permit.ok().and_then(Result::ok);
            count_slot_wait(metrics, Bound::HostAsyncSlots, Some(waiting.elapsed()), permit.is_some());
            permit
        }
    };
    let Some(_slot) = slot else {
        return no_slot();
    };
    let _running = metrics.map(Metrics::running);
    let mut store = new_store(runtime, limits, deadline, binding, Run::Yielding);
    let run = async {
        match pre.instantiate_async(&mut store).await {
            Ok(instance) => Ok(instance.harmonia_tools_tool().call_invoke(&mut store, input).await),
            Err(error) => Err(error),
        }
    };
    let ran = tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), run).await;
    let (outcome, trap) = match ran {
        Ok(Ok(result)) => invoked(result, store.data()),
        Ok(Err(error)) => not_instantiated(&error, store.data()),
        Err(_) => {
            store.data_mut().timed_out = true;
            (Outcome::TimedOut, Some("the call's deadline passed with the guest suspended".into()))
        }
    };
    finished(descriptor, store, outcome, trap)
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

/// Run `describe` once, with no capability bound.
pub fn describe(
    runtime: &Runtime,
    pre: &ToolHostPre<CallState>,
    limits: CallLimits,
) -> Result<types::Descriptor, DescribeError> {
    let mut store =
        new_store(runtime, limits, Instant::now() + DESCRIBE_DEADLINE, CallBinding::default(), Run::Blocking);
    let instance = pre.instantiate(&mut store).map_err(DescribeError::Instantiate)?;
    instance.harmonia_tools_tool().call_describe(&mut store).map_err(|error| {
        match classify(&error, store.data()) {
            Outcome::TimedOut => DescribeError::TimedOut,
            _ => DescribeError::Trapped(error),
        }
    })
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

/// The envelope for an outcome, checked against the descriptor and §1.
pub fn envelope(descriptor: &Descriptor, outcome: Outcome, grounding: Grounding) -> Envelope {
    let envelope = match outcome {
        Outcome::TimedOut => return Envelope::stable_error(&contract::TOOL_TIMEOUT),
        Outcome::Failed(failure) => return failed(failure),
        Outcome::Output(output) => success(output, descriptor, grounding),
        Outcome::ToolError(error) => tool_error(descriptor, error),
    };
    match envelope {
        Ok(envelope) if envelope.validate().is_ok() => envelope,
        Ok(_) => failed(ExecutionFailure::InvalidOutput),
        Err(failure) => failed(failure),
    }
}

fn success(
    output: types::Output,
    descriptor: &Descriptor,
    grounding: Grounding,
) -> Result<Envelope, ExecutionFailure> {
    if output.evidence.len() > MAX_EVIDENCE || output.data.len() > MAX_DATA_BYTES {
        return Err(ExecutionFailure::InvalidOutput);
    }
    let foreign_source = output.evidence.iter().any(|item| {
        contract::reserved_source_scope(&item.source).is_some_and(|scope| scope != descriptor.scope)
    });
    if foreign_source || (!output.evidence.is_empty() && grounding.successful_reads == 0) {
        return Err(ExecutionFailure::UngroundedEvidence);
    }
    let provenance = grounding.provenance;
    let Ok(serde_json::Value::Object(data)) = serde_json::from_str(&output.data) else {
        return Err(ExecutionFailure::InvalidOutput);
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

fn tool_error(descriptor: &Descriptor, error: types::ToolError) -> Result<Envelope, ExecutionFailure> {
    let category = category(error.category);
    let declared = descriptor
        .declared(&error.code)
        .is_some_and(|spec| spec.category == category && spec.retryable == error.retryable);
    if !declared {
        return Err(ExecutionFailure::UndeclaredError);
    }
    let stable: Option<&StableCode> = stable_code(&error.code);
    let message = match stable {
        Some(stable) => stable.message.to_owned(),
        None if error.message.chars().any(char::is_control) => return Err(ExecutionFailure::InvalidOutput),
        None => error.message,
    };
    Ok(Envelope::failure(ErrorObject { code: error.code, category, message, retryable: error.retryable }))
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
