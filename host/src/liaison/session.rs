//! A guarded session: one agent invocation.
//!
//! [`Liaison`] holds a host and the skills, checked against each other
//! once. Each [`Session`] then records one invocation:
//! - [`Session::activate`] must come first; it records the skill's name and
//!   the SHA-256 of its file.
//! - [`Session::call`] is a pre-dispatch guard. A call is refused, before
//!   anything runs, when no skill is active, when the skill does not allow
//!   the tool, when an earlier attempt used another tool, on a third
//!   attempt, when it would retry after anything but an error with
//!   `retryable: true`, or when a retry changes the arguments (the rule is
//!   [`super::attempts`], shared with the validator). A refusal is answered
//!   with a `call_refused` error envelope (category `authorization`, not
//!   retryable) and recorded as a `tool_refused` entry whose `reason` is
//!   the validator rule it would break. Allowed calls run in the sandbox and
//!   are recorded with their exact envelope, duration and receipts.
//! - [`Session::trace`] is the record; [`Session::signed_trace`] is the
//!   record as the session emits it, sealed with the liaison's trace key
//!   (see [`super::signing`]); [`Session::validate`] runs the answer
//!   validator on it.
//!
//! A session is bounded ([`SessionLimits`]): attempts, refused attempts
//! and the bytes of arguments recorded. A call that would pass a bound is
//! not recorded; it ends the session with [`SessionError::LimitReached`],
//! and every later call or activation gets the same error. The guard keeps
//! counters, so a call costs the same however long the session has run.

use super::attempts::{Attempts, Outcome};
use super::signing::{KeyError, PublicKey, TraceSigner};
use super::skills::{Skill, SkillError, SkillSet};
use super::trace::{EntryKind, Trace, TraceDocument, TraceEntry};
use super::validator::{self, Mode, RuleCode, Verdict};
use crate::contract::Category;
use crate::envelope::{Envelope, ErrorObject};
use crate::host::{CallContext, CallError, CallRecord, Host};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The code of a refused call.
pub const CALL_REFUSED: &str = "call_refused";

/// A host and the skills that gate it, checked to agree.
#[derive(Clone, Debug)]
pub struct Liaison {
    host: Host,
    skills: Arc<SkillSet>,
    signer: Arc<OnceLock<TraceSigner>>,
}

/// Why a trace cannot be carried on by [`Liaison::resume`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// The first entry is not the activation of a skill this liaison has.
    #[error("the trace does not begin with the activation of a known skill")]
    NoActivation,
    /// The skill's file changed since the session activated it.
    #[error("skill `{0}` changed since the session activated it")]
    SkillChanged(String),
    /// An entry no session records at that place.
    #[error("entry {0} is not one a session records there")]
    BadEntry(u64),
}

/// Why a session operation failed (not a tool call: those always answer
/// with an envelope).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// No such skill.
    #[error("unknown skill `{0}`")]
    UnknownSkill(String),
    /// A skill is already active in this session.
    #[error("skill `{0}` is already active; a session loads exactly one skill")]
    AlreadyActivated(String),
    /// [`Session::call_recorded_async`] was polled outside a tokio runtime;
    /// nothing was recorded.
    #[error("Session::call_recorded_async needs a tokio runtime (with its time and I/O drivers)")]
    NoAsyncRuntime,
    /// A call would pass one of the session's bounds; the session has ended.
    #[error("the session has ended: {limit} (at most {bound})")]
    LimitReached {
        /// Which bound.
        limit: Limit,
        /// Its value.
        bound: u64,
    },
}

/// One of a session's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Limit {
    /// Attempts, refused ones included.
    #[error("too many attempts")]
    Attempts,
    /// Refused attempts.
    #[error("too many refused calls")]
    Refusals,
    /// Bytes of tool names and arguments recorded.
    #[error("too many bytes of arguments recorded")]
    RecordedBytes,
}

impl SessionError {
    /// The stable code of the error, for a wire answer.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownSkill(_) | Self::AlreadyActivated(_) => "activation_refused",
            Self::LimitReached { .. } => "session_limit",
            Self::NoAsyncRuntime => "no_async_runtime",
        }
    }
}

/// A session's bounds. The guard allows at most two attempts to run, so
/// the bounds only ever stop a client that keeps calling after refusals.
/// Responses are not counted: at most two calls run, and the host caps
/// each envelope (1 MiB of data, 100 evidence items).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most attempts, refused ones included.
    pub max_attempts: u32,
    /// Most refused attempts.
    pub max_refusals: u32,
    /// Most bytes of tool names and serialised arguments recorded.
    pub max_recorded_bytes: u64,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { max_attempts: 32, max_refusals: 16, max_recorded_bytes: 8 * 1024 * 1024 }
    }
}

impl Liaison {
    /// Check `skills` against the host's tools and pair them.
    pub fn new(host: Host, skills: SkillSet) -> Result<Self, SkillError> {
        skills.check_against(host.tools().map(|info| &info.descriptor))?;
        Ok(Self { host, skills: Arc::new(skills), signer: Arc::new(OnceLock::new()) })
    }

    /// The same skills and trace signer over `host` (a reloaded plugin
    /// set), checked as [`Liaison::new`] checks them.
    pub fn with_host(&self, host: Host) -> Result<Self, SkillError> {
        self.skills.check_against(host.tools().map(|info| &info.descriptor))?;
        Ok(Self { host, skills: Arc::clone(&self.skills), signer: Arc::clone(&self.signer) })
    }

    /// Sign emitted traces with `signer` (the host key). Without it, a key
    /// generated in memory on first use signs them, verifiable only with
    /// [`Liaison::trace_public_key`].
    pub fn with_signer(mut self, signer: TraceSigner) -> Self {
        self.signer = Arc::new(OnceLock::from(signer));
        self
    }

    fn signer(&self) -> Result<&TraceSigner, KeyError> {
        signer(&self.signer)
    }

    /// The key that verifies this liaison's traces.
    pub fn trace_public_key(&self) -> Result<PublicKey, KeyError> {
        self.signer().map(TraceSigner::public_key)
    }

    /// The host.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The skills.
    pub fn skills(&self) -> &SkillSet {
        &self.skills
    }

    /// A new session for `context` (its workspace binds every call), with
    /// the default bounds.
    pub fn session(&self, context: CallContext) -> Session {
        self.session_with_limits(context, SessionLimits::default())
    }

    /// The session that recorded `trace`, carried on: a session kept in a
    /// store between calls (a stateless MCP session) is paused as its
    /// trace and resumed from it. The guard's counters are rebuilt by
    /// replaying the entries, so the next call is judged exactly as if the
    /// session had never paused. A trace no session of these skills could
    /// have recorded is refused, as is one whose skill file changed since.
    pub fn resume(
        &self,
        context: CallContext,
        trace: Trace,
        limits: SessionLimits,
    ) -> Result<Session, ResumeError> {
        let mut session = self.session_with_limits(context, limits);
        let mut entries = trace.entries.into_iter();
        let activation = entries.next().ok_or(ResumeError::NoActivation)?;
        let skill = match (&activation.kind, &activation.skill, activation.sequence) {
            (EntryKind::SkillActivation, Some(name), 1) => {
                self.skills.get(name).ok_or(ResumeError::NoActivation)?
            }
            _ => return Err(ResumeError::NoActivation),
        };
        if activation.sha256.as_deref() != Some(skill.sha256.as_str()) {
            return Err(ResumeError::SkillChanged(skill.name.clone()));
        }
        session.skill = Some(skill.name.clone());
        session.trace.entries.push(activation);
        for entry in entries {
            let sequence = entry.sequence;
            let (Some(tool), Some(args), Some(response)) = (&entry.name, &entry.args, &entry.response) else {
                return Err(ResumeError::BadEntry(sequence));
            };
            let outcome = match entry.kind {
                EntryKind::ToolCall => Outcome::Called(response),
                EntryKind::ToolRefused => Outcome::Refused,
                EntryKind::SkillActivation => return Err(ResumeError::BadEntry(sequence)),
            };
            let next_sequence = session.next_sequence();
            let attempt = session.attempts_by_tool.entry(tool.clone()).or_insert(0);
            *attempt += 1;
            if sequence != next_sequence || entry.attempt != Some(*attempt) {
                return Err(ResumeError::BadEntry(sequence));
            }
            if matches!(outcome, Outcome::Refused) {
                session.refusals += 1;
            }
            session.recorded_bytes += (tool.len() as u64).saturating_add(json_size(args));
            session.attempts.record(tool, args, outcome);
            session.trace.entries.push(entry);
        }
        Ok(session)
    }

    /// A new session for `context` with `limits`.
    pub fn session_with_limits(&self, context: CallContext, limits: SessionLimits) -> Session {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let mut context = context;
        if context.trace_id.is_none() {
            context.trace_id =
                Some(format!("session-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        }
        Session {
            host: self.host.clone(),
            skills: Arc::clone(&self.skills),
            context,
            trace: Trace::default(),
            skill: None,
            limits,
            attempts: Attempts::default(),
            attempts_by_tool: HashMap::new(),
            refusals: 0,
            recorded_bytes: 0,
            ended: None,
            signer: Arc::clone(&self.signer),
        }
    }
}

/// A call the guard has judged, with its trace entry begun.
struct Judged {
    verdict: Result<(), RuleCode>,
    entry: TraceEntry,
}

/// One agent invocation.
#[derive(Debug)]
pub struct Session {
    host: Host,
    skills: Arc<SkillSet>,
    context: CallContext,
    trace: Trace,
    skill: Option<String>,
    limits: SessionLimits,
    attempts: Attempts,
    attempts_by_tool: HashMap<String, u32>,
    refusals: u32,
    recorded_bytes: u64,
    ended: Option<SessionError>,
    signer: Arc<OnceLock<TraceSigner>>,
}

fn signer(slot: &OnceLock<TraceSigner>) -> Result<&TraceSigner, KeyError> {
    if let Some(signer) = slot.get() {
        return Ok(signer);
    }
    let generated = TraceSigner::generate()?;
    // Another thread may have won; either key is only ever this liaison's.
    Ok(slot.get_or_init(|| generated))
}

fn refusal(rule: RuleCode) -> Envelope {
    let message = match rule {
        RuleCode::SkillNotActivated => "Call refused: no skill is active in this session.",
        RuleCode::ToolNotAllowed => "Call refused: the active skill does not allow this tool.",
        RuleCode::MultipleTools => "Call refused: this session already used another tool.",
        RuleCode::RetryCeiling => "Call refused: this tool has had its two attempts.",
        RuleCode::RetryArgumentsChanged => "Call refused: a retry repeats the arguments of the failed call.",
        _ => "Call refused: a retry is allowed only after a retryable error.",
    };
    Envelope::failure(ErrorObject {
        code: CALL_REFUSED.to_owned(),
        category: Category::Authorization,
        message: message.to_owned(),
        retryable: false,
    })
}

/// Bytes `value` takes serialised, counted without building the text.
fn json_size(value: &Value) -> u64 {
    harmonia_contract::json_size::compact_bytes(value, usize::MAX).map_or(u64::MAX, |bytes| bytes as u64)
}

impl Session {
    /// Activate `skill`; it must be the first thing a session does.
    pub fn activate(&mut self, skill: &str) -> Result<&Skill, SessionError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        if let Some(active) = &self.skill {
            return Err(SessionError::AlreadyActivated(active.clone()));
        }
        let found = self.skills.get(skill).ok_or_else(|| SessionError::UnknownSkill(skill.to_owned()))?;
        self.skill = Some(found.name.clone());
        let sequence = self.next_sequence();
        self.trace.entries.push(TraceEntry {
            skill: Some(found.name.clone()),
            sha256: Some(found.sha256.clone()),
            ..TraceEntry::new(sequence, EntryKind::SkillActivation)
        });
        Ok(found)
    }

    /// The active skill.
    pub fn active_skill(&self) -> Option<&Skill> {
        self.skill.as_deref().and_then(|name| self.skills.get(name))
    }

    fn next_sequence(&self) -> u64 {
        self.trace.entries.len() as u64 + 1
    }

    /// The rule calling `tool` with `args` would break, if any.
    fn guard(&self, tool: &str, args: &Value) -> Result<(), RuleCode> {
        let Some(skill) = self.active_skill() else {
            return Err(RuleCode::SkillNotActivated);
        };
        if !skill.allows(tool) {
            return Err(RuleCode::ToolNotAllowed);
        }
        self.attempts.check(tool, args)
    }

    /// The bound recording this attempt would pass, if any.
    fn bound_passed(&self, refused: bool, bytes: u64) -> Option<(Limit, u64)> {
        let limits = &self.limits;
        if self.attempts.count() >= limits.max_attempts {
            return Some((Limit::Attempts, limits.max_attempts.into()));
        }
        if refused && self.refusals >= limits.max_refusals {
            return Some((Limit::Refusals, limits.max_refusals.into()));
        }
        if self.recorded_bytes.saturating_add(bytes) > limits.max_recorded_bytes {
            return Some((Limit::RecordedBytes, limits.max_recorded_bytes));
        }
        None
    }

    /// Call `tool` with `args` through the guard. Every call the session
    /// records answers with an envelope; a call past a bound ends the
    /// session instead.
    pub fn call(&mut self, tool: &str, args: &Value) -> Result<Envelope, SessionError> {
        self.call_recorded(tool, args).map(|(envelope, _)| envelope)
    }

    /// [`Session::call`], with the host's record of the call when the
    /// tool ran (`None` when the guard refused it).
    pub fn call_recorded(
        &mut self,
        tool: &str,
        args: &Value,
    ) -> Result<(Envelope, Option<CallRecord>), SessionError> {
        let judged = self.judge(tool, args)?;
        let ran =
            judged.verdict.is_ok().then(|| self.host.call_recorded(tool, &args.to_string(), &self.context));
        Ok(self.conclude(tool, args, judged, ran))
    }

    /// [`Session::call_recorded`] with the tool run by
    /// [`Host::call_async`]: the same guard, bounds and trace.
    pub async fn call_recorded_async(
        &mut self,
        tool: &str,
        args: &Value,
    ) -> Result<(Envelope, Option<CallRecord>), SessionError> {
        tokio::runtime::Handle::try_current().map_err(|_| SessionError::NoAsyncRuntime)?;
        let judged = self.judge(tool, args)?;
        let ran = match judged.verdict {
            Ok(()) => Some(self.host.call_recorded_async(tool, &args.to_string(), &self.context).await),
            Err(_) => None,
        };
        Ok(self.conclude(tool, args, judged, ran))
    }

    /// The guard's verdict on a call, and its trace entry begun; an error
    /// when the session has ended or this call passes a bound.
    fn judge(&mut self, tool: &str, args: &Value) -> Result<Judged, SessionError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let verdict = self.guard(tool, args);
        let bytes = (tool.len() as u64).saturating_add(json_size(args));
        if let Some((limit, bound)) = self.bound_passed(verdict.is_err(), bytes) {
            let error = SessionError::LimitReached { limit, bound };
            self.ended = Some(error.clone());
            return Err(error);
        }
        self.recorded_bytes += bytes;
        let attempt = match self.attempts_by_tool.get_mut(tool) {
            Some(count) => {
                *count += 1;
                *count
            }
            None => {
                self.attempts_by_tool.insert(tool.to_owned(), 1);
                1
            }
        };
        let entry = TraceEntry {
            name: Some(tool.to_owned()),
            args: Some(args.clone()),
            attempt: Some(attempt),
            ..TraceEntry::new(self.next_sequence(), EntryKind::ToolCall)
        };
        Ok(Judged { verdict, entry })
    }

    /// Record a judged call with what its run returned (`None`: refused,
    /// not run), and answer it.
    fn conclude(
        &mut self,
        tool: &str,
        args: &Value,
        judged: Judged,
        ran: Option<Result<CallRecord, CallError>>,
    ) -> (Envelope, Option<CallRecord>) {
        let Judged { verdict, mut entry } = judged;
        let mut kept = None;
        let envelope = match (verdict, ran) {
            (Err(rule), _) => {
                entry.kind = EntryKind::ToolRefused;
                entry.reason = Some(rule.as_str().to_owned());
                refusal(rule)
            }
            (Ok(()), Some(Ok(record))) => {
                entry.duration_ms = Some((record.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0);
                // Provenance of the component that answered: this host's
                // plugins never change, so the one looked up is the one run.
                if let Some(info) = self.host.tool(tool) {
                    entry.component_digest = Some(format!("sha256:{}", info.sha256));
                    if let Some(provenance) = &info.provenance {
                        entry.manifest_digest = Some(provenance.manifest_digest.clone());
                        entry.signer = provenance.signer.clone();
                    }
                }
                entry.receipts = Some(
                    record
                        .receipts
                        .iter()
                        .map(|receipt| serde_json::to_value(receipt).unwrap_or(Value::Null))
                        .collect(),
                );
                let envelope = record.envelope.clone();
                kept = Some(record);
                envelope
            }
            // The skills were checked against the host, so an allowed tool
            // is always loaded; keep the answer typed regardless.
            (Ok(()), Some(Err(_)) | None) => {
                entry.kind = EntryKind::ToolRefused;
                entry.reason = Some(RuleCode::ToolNotAllowed.as_str().to_owned());
                refusal(RuleCode::ToolNotAllowed)
            }
        };
        let response = envelope.to_value();
        let outcome = match entry.kind {
            EntryKind::ToolCall => Outcome::Called(&response),
            _ => {
                self.refusals += 1;
                Outcome::Refused
            }
        };
        self.attempts.record(tool, args, outcome);
        entry.response = Some(response);
        self.trace.entries.push(entry);
        (envelope, kept)
    }

    /// The record so far.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The record so far as the session emits it: sealed with the
    /// liaison's trace key. It covers the entries up to now; a later call
    /// needs a new one.
    pub fn signed_trace(&self) -> Result<TraceDocument, KeyError> {
        let seal = signer(&self.signer)?.seal(&self.trace);
        Ok(TraceDocument { trace: self.trace.clone(), seal: Some(seal) })
    }

    /// Validate `answer` against this session's trace.
    pub fn validate(&self, answer: &Value, mode: Mode) -> Verdict {
        validator::validate(&self.trace, answer, &self.skills, mode)
    }
}
