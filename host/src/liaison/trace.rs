//! The trace: the host's own record of one agent invocation.
//!
//! A trace is a JSON array of entries, numbered from 1:
//!
//! ```json
//! [{"sequence": 1, "kind": "skill_activation", "skill": "job-status", "sha256": "<hex>"},
//!  {"sequence": 2, "kind": "tool_call", "name": "get_job_status", "args": {"job_id": "job-42"},
//!   "attempt": 1, "durationMs": 1.234, "response": {<envelope>}, "receipts": [{<receipt>}]},
//!  {"sequence": 3, "kind": "tool_refused", "name": "get_operator_feed", "args": {},
//!   "attempt": 1, "reason": "tool_not_allowed", "response": {<call_refused envelope>}}]
//! ```
//!
//! `attempt` counts the attempts of that tool in the invocation, refused
//! ones included. `response` is kept as the exact JSON the caller received,
//! so the validator can check it rather than trust it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A skill was activated.
    SkillActivation,
    /// A tool ran in the sandbox.
    ToolCall,
    /// A call was refused before dispatch.
    ToolRefused,
}

/// One trace entry. Which optional fields are present depends on `kind`
/// (see [`Trace::parse`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceEntry {
    /// 1-based position.
    pub sequence: u64,
    /// What happened.
    pub kind: EntryKind,
    /// Activated skill name (`skill_activation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// SHA-256 hex of the skill file (`skill_activation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Tool name (`tool_call`, `tool_refused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The call's arguments (`tool_call`, `tool_refused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// Attempt number of this tool, from 1 (`tool_call`, `tool_refused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Wall-clock duration in milliseconds (`tool_call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Why the call was refused: a validator rule code (`tool_refused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The exact envelope returned (`tool_call`, `tool_refused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// Capability receipts (`tool_call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipts: Option<Vec<Value>>,
}

/// A whole trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Trace {
    /// Entries in order.
    pub entries: Vec<TraceEntry>,
}

/// Why a trace document is not a trace at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed trace: {0}")]
pub struct TraceError(pub String);

impl TraceEntry {
    /// An entry of `kind` at `sequence` with every optional field empty.
    pub fn new(sequence: u64, kind: EntryKind) -> Self {
        Self {
            sequence,
            kind,
            skill: None,
            sha256: None,
            name: None,
            args: None,
            attempt: None,
            duration_ms: None,
            reason: None,
            response: None,
            receipts: None,
        }
    }

    fn check_shape(&self, index: usize) -> Result<(), TraceError> {
        let at = |what: &str| TraceError(format!("entry {index}: {what}"));
        let has = |present: bool, field: &str| {
            if present { Ok(()) } else { Err(at(&format!("`{field}` is required"))) }
        };
        let absent = |present: bool, field: &str| {
            if present { Err(at(&format!("`{field}` does not belong to this kind"))) } else { Ok(()) }
        };
        match self.kind {
            EntryKind::SkillActivation => {
                has(self.skill.is_some(), "skill")?;
                has(self.sha256.is_some(), "sha256")?;
                for (present, field) in [
                    (self.name.is_some(), "name"),
                    (self.args.is_some(), "args"),
                    (self.attempt.is_some(), "attempt"),
                    (self.duration_ms.is_some(), "durationMs"),
                    (self.reason.is_some(), "reason"),
                    (self.response.is_some(), "response"),
                    (self.receipts.is_some(), "receipts"),
                ] {
                    absent(present, field)?;
                }
            }
            EntryKind::ToolCall | EntryKind::ToolRefused => {
                has(self.name.is_some(), "name")?;
                has(self.args.is_some(), "args")?;
                has(self.attempt.is_some(), "attempt")?;
                has(self.response.is_some(), "response")?;
                absent(self.skill.is_some(), "skill")?;
                absent(self.sha256.is_some(), "sha256")?;
                if self.kind == EntryKind::ToolCall {
                    has(self.duration_ms.is_some(), "durationMs")?;
                    has(self.receipts.is_some(), "receipts")?;
                    absent(self.reason.is_some(), "reason")?;
                } else {
                    has(self.reason.is_some(), "reason")?;
                }
            }
        }
        Ok(())
    }

    /// True for a `tool_call` or `tool_refused` entry.
    pub fn is_attempt(&self) -> bool {
        matches!(self.kind, EntryKind::ToolCall | EntryKind::ToolRefused)
    }
}

impl Trace {
    /// Parse a trace document (a JSON array of entries) and check each
    /// entry has the fields its kind needs. Contract violations inside a
    /// well-formed trace (a bad sequence, an invalid envelope) are left to
    /// the validator, which reports them as rule failures.
    pub fn parse(value: &Value) -> Result<Self, TraceError> {
        let trace: Self =
            serde_json::from_value(value.clone()).map_err(|error| TraceError(error.to_string()))?;
        for (index, entry) in trace.entries.iter().enumerate() {
            entry.check_shape(index)?;
        }
        Ok(trace)
    }

    /// Parse trace JSON text.
    pub fn parse_str(text: &str) -> Result<Self, TraceError> {
        let value: Value = serde_json::from_str(text).map_err(|error| TraceError(error.to_string()))?;
        Self::parse(&value)
    }

    /// The trace as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_and_writes_the_documented_shape() {
        let value = json!([
            {"sequence": 1, "kind": "skill_activation", "skill": "job-status", "sha256": "ab"},
            {"sequence": 2, "kind": "tool_call", "name": "get_job_status", "args": {"job_id": "j"}, "attempt": 1,
             "durationMs": 1.5, "response": {"status": "success"}, "receipts": []},
            {"sequence": 3, "kind": "tool_refused", "name": "get_job_status", "args": {}, "attempt": 2,
             "reason": "retry_without_retryable_error", "response": {}}
        ]);
        let trace = Trace::parse(&value).unwrap();
        assert_eq!(trace.entries.len(), 3);
        assert_eq!(trace.to_value(), value);
    }

    #[test]
    fn refuses_entries_missing_their_fields() {
        for value in [
            json!({"not": "a list"}),
            json!([{"sequence": 1, "kind": "skill_activation"}]),
            json!([{"sequence": 1, "kind": "tool_call", "name": "t", "args": {}, "attempt": 1, "response": {}}]),
            json!([{"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h", "name": "t"}]),
            json!([{"sequence": 1, "kind": "launch", "skill": "s", "sha256": "h"}]),
            json!([{"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h", "extra": 1}]),
        ] {
            assert!(Trace::parse(&value).is_err(), "{value}");
        }
    }
}
