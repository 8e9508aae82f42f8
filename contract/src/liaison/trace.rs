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
//!
//! A session emits its trace signed, as a [`TraceDocument`]:
//! `{"entries": [<the array above>], "seal": {<see seal>}}`. Parsing
//! reads either form, caps a trace at [`MAX_ENTRIES`] entries, and names
//! a malformed entry by its 1-based position, as the validator does.

use super::seal::{self, PublicKey, Seal, Unverified};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Read;

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
    /// `sha256:<hex>` of the component bytes that answered (`tool_call`;
    /// absent in traces written before provenance was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_digest: Option<String>,
    /// The locked OCI manifest digest the component was pulled by
    /// (`tool_call`, registry plugins only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_digest: Option<String>,
    /// The key whose signature over `manifestDigest` verified before the
    /// component was compiled, `key:sha256:<hex>` (`tool_call`, signed
    /// registry plugins only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// Most entries a trace may hold; a longer document is refused while it
/// is parsed. A session records one activation, at most two tool calls and
/// its refusals, so real traces stay far below this.
pub const MAX_ENTRIES: usize = 4096;

/// A whole trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Trace {
    /// Entries in order.
    pub entries: Vec<TraceEntry>,
}

/// A trace as written to a file or sent by a session: the entries and,
/// when the host signed them, their [`Seal`]. In JSON,
/// `{"entries": [...], "seal": {...}}`; a bare array of entries is read as
/// an unsigned trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceDocument {
    /// The entries.
    pub trace: Trace,
    /// The host's signature over them, if any.
    pub seal: Option<Seal>,
}

/// Why a trace document is not a trace at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed trace: {0}")]
pub struct TraceError(pub String);

/// Reads a list of entries, refusing the one past [`MAX_ENTRIES`] and
/// naming the entry (from 1) a field error is in.
struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Vec<TraceEntry>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a list of trace entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        loop {
            let position = entries.len() + 1;
            if position > MAX_ENTRIES {
                // Refuse before reading the entry past the cap.
                return match seq.next_element::<IgnoredAny>()? {
                    None => Ok(entries),
                    Some(_) => Err(de::Error::custom(format!("more than {MAX_ENTRIES} entries"))),
                };
            }
            match seq.next_element::<TraceEntry>() {
                Ok(Some(entry)) => entries.push(entry),
                Ok(None) => return Ok(entries),
                Err(error) => return Err(de::Error::custom(format!("entry {position}: {error}"))),
            }
        }
    }
}

impl<'de> Deserialize<'de> for Trace {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self { entries: deserializer.deserialize_seq(EntriesVisitor)? })
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = TraceDocument;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a list of trace entries or {\"entries\": [...], \"seal\": {...}}")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(TraceDocument { trace: Trace { entries: EntriesVisitor.visit_seq(seq)? }, seal: None })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut trace: Option<Trace> = None;
        let mut seal: Option<Seal> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "entries" if trace.is_none() => trace = Some(map.next_value()?),
                "seal" if seal.is_none() => {
                    seal =
                        Some(map.next_value().map_err(|error| de::Error::custom(format!("seal: {error}")))?)
                }
                "entries" | "seal" => return Err(de::Error::custom(format!("duplicate field `{key}`"))),
                other => return Err(de::Error::custom(format!("unknown field `{other}`"))),
            }
        }
        let trace = trace.ok_or_else(|| de::Error::custom("missing field `entries`"))?;
        Ok(TraceDocument { trace, seal })
    }
}

impl<'de> Deserialize<'de> for TraceDocument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocumentVisitor)
    }
}

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
            component_digest: None,
            manifest_digest: None,
            signer: None,
        }
    }

    /// `position` is the entry's 1-based place in the trace, as in the
    /// validator's reasons.
    fn check_shape(&self, position: usize) -> Result<(), TraceError> {
        let at = |what: &str| TraceError(format!("entry {position}: {what}"));
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
                    (self.component_digest.is_some(), "componentDigest"),
                    (self.manifest_digest.is_some(), "manifestDigest"),
                    (self.signer.is_some(), "signer"),
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
                    absent(self.component_digest.is_some(), "componentDigest")?;
                    absent(self.manifest_digest.is_some(), "manifestDigest")?;
                    absent(self.signer.is_some(), "signer")?;
                }
                if (self.signer.is_some() || self.manifest_digest.is_some())
                    && self.component_digest.is_none()
                {
                    return Err(at("`signer` and `manifestDigest` need `componentDigest`"));
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
    /// Parse a trace document (a JSON array of entries, or a signed
    /// `{"entries", "seal"}` object whose seal is ignored here) and check
    /// each entry has the fields its kind needs. Contract violations inside
    /// a well-formed trace (a bad sequence, an invalid envelope) are left to
    /// the validator, which reports them as rule failures.
    pub fn parse(value: &Value) -> Result<Self, TraceError> {
        TraceDocument::parse(value).map(|document| document.trace)
    }

    /// Parse trace JSON text, as [`Trace::parse`].
    pub fn parse_str(text: &str) -> Result<Self, TraceError> {
        TraceDocument::parse_str(text).map(|document| document.trace)
    }

    fn check_shapes(&self) -> Result<(), TraceError> {
        for (index, entry) in self.entries.iter().enumerate() {
            entry.check_shape(index + 1)?;
        }
        Ok(())
    }

    /// The trace as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The first `tool_call` entry whose component was not verified as
    /// signed by `signer` (`key:sha256:…` or `identity:<issuer>#<subject>`,
    /// compared exactly) before it ran: its 1-based
    /// position and why. Only meaningful on a trace whose seal verified:
    /// the seal is what makes `signer` the host's record.
    pub fn first_call_not_signed_by(&self, signer: &str) -> Option<(usize, String)> {
        self.entries.iter().enumerate().filter(|(_, entry)| entry.kind == EntryKind::ToolCall).find_map(
            |(index, entry)| {
                let tool = entry.name.as_deref().unwrap_or_default();
                let why = match (&entry.signer, &entry.component_digest) {
                    (Some(found), _) if found == signer => return None,
                    (Some(found), _) => format!("was made by a component signed by {found}"),
                    (None, Some(digest)) => {
                        format!("was made by component {digest}, which no trusted signer signed")
                    }
                    (None, None) => {
                        "names no component digest (a trace from before provenance was recorded)".into()
                    }
                };
                Some((index + 1, format!("entry {} (tool `{tool}`) {why}, not by {signer}", index + 1)))
            },
        )
    }
}

/// Text that is not JSON says so; JSON of the wrong shape says what is wrong.
fn json_error(error: serde_json::Error) -> TraceError {
    match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            TraceError(format!("not JSON: {error}"))
        }
        _ => TraceError(error.to_string()),
    }
}

impl TraceDocument {
    fn checked(self) -> Result<Self, TraceError> {
        self.trace.check_shapes()?;
        Ok(self)
    }

    /// From a parsed JSON value, read in place (no copy of the value).
    pub fn parse(value: &Value) -> Result<Self, TraceError> {
        Self::deserialize(value).map_err(|error| TraceError(error.to_string()))?.checked()
    }

    /// From JSON text.
    pub fn parse_str(text: &str) -> Result<Self, TraceError> {
        serde_json::from_str::<Self>(text).map_err(json_error)?.checked()
    }

    /// Straight from a reader, without holding the text or an intermediate
    /// JSON value. Bound the reader: this reads until the document ends
    /// (a reader's error ends the parse with that error's text).
    pub fn from_reader(reader: impl Read) -> Result<Self, TraceError> {
        serde_json::from_reader::<_, Self>(reader).map_err(json_error)?.checked()
    }

    /// Check the seal signs exactly these entries with `trusted`.
    pub fn verify(&self, trusted: &PublicKey) -> Result<(), Unverified> {
        seal::verify(&self.trace, self.seal.as_ref(), trusted)
    }

    /// `{"entries": [...], "seal": {...}}`, or the bare list when unsigned.
    pub fn to_value(&self) -> Value {
        match &self.seal {
            Some(seal) => serde_json::json!({
                "entries": self.trace.to_value(),
                "seal": serde_json::to_value(seal).unwrap_or(Value::Null),
            }),
            None => self.trace.to_value(),
        }
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
    fn provenance_fields_belong_to_tool_calls_and_old_traces_still_parse() {
        let call = |extra: Value| {
            let mut entry = json!({"sequence": 1, "kind": "tool_call", "name": "t", "args": {}, "attempt": 1,
                "durationMs": 1.0, "response": {}, "receipts": []});
            entry.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!([entry])
        };
        let old = call(json!({}));
        let old_trace = Trace::parse(&old).unwrap();
        assert_eq!(old_trace.to_value(), old, "an old entry is written back byte for byte");
        let key = ed25519_dalek::SigningKey::from_bytes(&[2; 32]);
        let sealed = TraceDocument { seal: Some(seal::seal(&key, &old_trace)), trace: old_trace };
        let public = seal::PublicKey::parse_hex(&sealed.seal.as_ref().unwrap().public_key).unwrap();
        assert_eq!(TraceDocument::parse(&sealed.to_value()).unwrap().verify(&public), Ok(()));

        let full = call(
            json!({"componentDigest": "sha256:ab", "manifestDigest": "sha256:cd", "signer": "key:sha256:ef"}),
        );
        let trace = Trace::parse(&full).unwrap();
        assert_eq!(trace.entries[0].signer.as_deref(), Some("key:sha256:ef"));
        assert_eq!(trace.to_value(), full);
        assert!(Trace::parse(&call(json!({"signer": "key:sha256:ef"}))).is_err());
        let refused = json!([{"sequence": 1, "kind": "tool_refused", "name": "t", "args": {}, "attempt": 1,
            "reason": "r", "response": {}, "componentDigest": "sha256:ab"}]);
        assert!(Trace::parse(&refused).unwrap_err().to_string().contains("componentDigest"));
        let activation =
            json!([{"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h", "signer": "k"}]);
        assert!(Trace::parse(&activation).unwrap_err().to_string().contains("signer"));
    }

    #[test]
    fn the_first_call_not_signed_by_a_key_is_named() {
        let entry = |sequence: u64, signer: Option<&str>, digest: Option<&str>| TraceEntry {
            name: Some("t".into()),
            signer: signer.map(str::to_owned),
            component_digest: digest.map(str::to_owned),
            ..TraceEntry::new(sequence, EntryKind::ToolCall)
        };
        let signed = Trace {
            entries: vec![
                entry(1, Some("key:a"), Some("sha256:1")),
                entry(2, Some("key:a"), Some("sha256:1")),
            ],
        };
        assert_eq!(signed.first_call_not_signed_by("key:a"), None);
        let (position, reason) = signed.first_call_not_signed_by("key:b").unwrap();
        assert_eq!(position, 1);
        assert!(reason.contains("signed by key:a, not by key:b"), "{reason}");
        let mixed = Trace {
            entries: vec![entry(1, Some("key:a"), Some("sha256:1")), entry(2, None, Some("sha256:2"))],
        };
        let (position, reason) = mixed.first_call_not_signed_by("key:a").unwrap();
        assert_eq!(position, 2);
        assert!(reason.contains("sha256:2, which no trusted signer signed"), "{reason}");
        let old = Trace { entries: vec![entry(1, None, None)] };
        assert!(old.first_call_not_signed_by("key:a").unwrap().1.contains("no component digest"));
        assert_eq!(Trace::default().first_call_not_signed_by("key:a"), None);
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

    #[test]
    fn shape_errors_number_entries_from_one() {
        let activation = json!({"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h"});
        let no_duration = json!({"sequence": 2, "kind": "tool_call", "name": "t", "args": {}, "attempt": 1,
            "response": {}, "receipts": []});
        let error = Trace::parse(&json!([activation, no_duration])).unwrap_err().to_string();
        assert!(error.contains("entry 2: `durationMs` is required"), "{error}");
        let unknown_field =
            json!({"sequence": 3, "kind": "skill_activation", "skill": "s", "sha256": "h", "x": 1});
        let error =
            Trace::parse_str(&json!([activation, activation, unknown_field]).to_string()).unwrap_err();
        assert!(error.to_string().contains("entry 3: unknown field `x`"), "{error}");
        let error = Trace::parse(&json!([activation])).map(|trace| trace.entries.len());
        assert_eq!(error, Ok(1));
    }

    #[test]
    fn signed_and_bare_documents_read_alike_and_entries_are_capped() {
        let activation = json!({"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h"});
        let bare = TraceDocument::parse(&json!([activation])).unwrap();
        assert_eq!(bare.seal, None);
        assert_eq!(bare.to_value(), json!([activation]));
        let key = ed25519_dalek::SigningKey::from_bytes(&[1; 32]);
        let signed = TraceDocument { seal: Some(seal::seal(&key, &bare.trace)), ..bare.clone() };
        let reread = TraceDocument::from_reader(signed.to_value().to_string().as_bytes()).unwrap();
        assert_eq!(reread, signed);
        assert_eq!(Trace::parse(&signed.to_value()).unwrap(), bare.trace);
        for (document, needle) in [
            (json!({"entries": [], "extra": 1}), "unknown field `extra`"),
            (json!({"seal": null}), "seal"),
            (json!({}), "missing field `entries`"),
            (json!({"entries": [], "seal": {"algorithm": "ed25519"}}), "seal: missing field"),
        ] {
            let error = TraceDocument::parse(&document).unwrap_err().to_string();
            assert!(error.contains(needle), "{document}: {error}");
        }
        let duplicate = r#"{"entries": [], "entries": []}"#;
        assert!(TraceDocument::parse_str(duplicate).unwrap_err().to_string().contains("duplicate field"));
        let at_cap = Value::Array(vec![activation.clone(); MAX_ENTRIES]);
        assert_eq!(
            TraceDocument::parse(&at_cap).map(|document| document.trace.entries.len()),
            Ok(MAX_ENTRIES)
        );
        let over = Value::Array(vec![activation; MAX_ENTRIES + 1]);
        let error = TraceDocument::from_reader(over.to_string().as_bytes()).unwrap_err().to_string();
        assert!(error.contains(&format!("more than {MAX_ENTRIES} entries")), "{error}");
    }
}
