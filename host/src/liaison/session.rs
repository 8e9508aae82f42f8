//! A guarded session: one agent invocation.
//!
//! [`Liaison`] holds a host and the skills, checked against each other
//! once. Each [`Session`] then records one invocation:
//! - [`Session::activate`] must come first; it records the skill's name and
//!   the SHA-256 of its file.
//! - [`Session::call`] is a pre-dispatch guard. A call is refused, before
//!   anything runs, when no skill is active, when the skill does not allow
//!   the tool, when an earlier attempt used another tool, on a third
//!   attempt, or when it would retry after anything but an error with
//!   `retryable: true`. A refusal is answered with a `call_refused` error
//!   envelope (category `authorization`, not retryable) and recorded as a
//!   `tool_refused` entry whose `reason` is the validator rule it would
//!   break. Allowed calls run in the sandbox and are recorded with their
//!   exact envelope, duration and receipts.
//! - [`Session::trace`] is the record; [`Session::signed_trace`] is the
//!   record as the session emits it, sealed with the liaison's trace key
//!   (see [`super::signing`]); [`Session::validate`] runs the answer
//!   validator on it.

use super::signing::{KeyError, PublicKey, TraceSigner};
use super::skills::{Skill, SkillError, SkillSet};
use super::trace::{EntryKind, Trace, TraceDocument, TraceEntry};
use super::validator::{self, Mode, RuleCode, Verdict};
use crate::contract::Category;
use crate::envelope::{Envelope, ErrorObject};
use crate::host::{CallContext, Host};
use serde_json::Value;
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
}

impl Liaison {
    /// Check `skills` against the host's tools and pair them.
    pub fn new(host: Host, skills: SkillSet) -> Result<Self, SkillError> {
        skills.check_against(host.tools().map(|info| &info.descriptor))?;
        Ok(Self { host, skills: Arc::new(skills), signer: Arc::new(OnceLock::new()) })
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

    /// A new session for `context` (its workspace binds every call).
    pub fn session(&self, context: CallContext) -> Session {
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
            signer: Arc::clone(&self.signer),
        }
    }
}

/// One agent invocation.
#[derive(Debug)]
pub struct Session {
    host: Host,
    skills: Arc<SkillSet>,
    context: CallContext,
    trace: Trace,
    skill: Option<String>,
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
        _ => "Call refused: a retry is allowed only after a retryable error.",
    };
    Envelope::failure(ErrorObject {
        code: CALL_REFUSED.to_owned(),
        category: Category::Authorization,
        message: message.to_owned(),
        retryable: false,
    })
}

fn is_retryable_error(response: Option<&Value>) -> bool {
    response
        .and_then(|value| Envelope::from_value(value).ok())
        .is_some_and(|envelope| envelope.error.is_some_and(|error| error.retryable))
}

impl Session {
    /// Activate `skill`; it must be the first thing a session does.
    pub fn activate(&mut self, skill: &str) -> Result<&Skill, SessionError> {
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

    fn attempts(&self) -> impl Iterator<Item = &TraceEntry> {
        self.trace.entries.iter().filter(|entry| entry.is_attempt())
    }

    /// The rule this call would break, if any.
    fn guard(&self, tool: &str) -> Option<RuleCode> {
        let Some(skill) = self.active_skill() else {
            return Some(RuleCode::SkillNotActivated);
        };
        if !skill.allows(tool) {
            return Some(RuleCode::ToolNotAllowed);
        }
        let attempts: Vec<&TraceEntry> = self.attempts().collect();
        if attempts.iter().any(|attempt| attempt.name.as_deref() != Some(tool)) {
            return Some(RuleCode::MultipleTools);
        }
        match attempts.as_slice() {
            [] => None,
            [first] if first.kind == EntryKind::ToolCall && is_retryable_error(first.response.as_ref()) => {
                None
            }
            [_] => Some(RuleCode::RetryWithoutRetryableError),
            _ => Some(RuleCode::RetryCeiling),
        }
    }

    /// Call `tool` with `args` through the guard; always an envelope.
    pub fn call(&mut self, tool: &str, args: &Value) -> Envelope {
        let sequence = self.next_sequence();
        let attempt = self.attempts().filter(|entry| entry.name.as_deref() == Some(tool)).count() as u32 + 1;
        let mut entry = TraceEntry {
            name: Some(tool.to_owned()),
            args: Some(args.clone()),
            attempt: Some(attempt),
            ..TraceEntry::new(sequence, EntryKind::ToolCall)
        };
        let envelope = match self.guard(tool) {
            Some(rule) => {
                entry.kind = EntryKind::ToolRefused;
                entry.reason = Some(rule.as_str().to_owned());
                refusal(rule)
            }
            None => match self.host.call_recorded(tool, &args.to_string(), &self.context) {
                Ok(record) => {
                    entry.duration_ms = Some((record.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0);
                    entry.receipts = Some(
                        record
                            .receipts
                            .iter()
                            .map(|receipt| serde_json::to_value(receipt).unwrap_or(Value::Null))
                            .collect(),
                    );
                    record.envelope
                }
                // The skills were checked against the host, so an allowed
                // tool is always loaded; keep the answer typed regardless.
                Err(_) => {
                    entry.kind = EntryKind::ToolRefused;
                    entry.reason = Some(RuleCode::ToolNotAllowed.as_str().to_owned());
                    refusal(RuleCode::ToolNotAllowed)
                }
            },
        };
        entry.response = Some(envelope.to_value());
        self.trace.entries.push(entry);
        envelope
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
