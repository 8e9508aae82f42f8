//! The envelope every tool call returns (docs/contract.md §1).
//!
//! `Envelope` serialises with every key written out (nulls included) and is
//! parsed strictly: unknown keys anywhere, omitted keys, wrong types and
//! impossible states are rejected, and every evidence id is recomputed.
//! The same [`Envelope::validate`] runs on every envelope the host emits
//! and every envelope it parses.

use crate::codes::{Category, StableCode, is_valid_code};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// Most evidence items an envelope may carry.
pub const MAX_EVIDENCE: usize = 100;
/// Largest `data` object, in bytes of compact JSON.
pub const MAX_DATA_BYTES: usize = 1024 * 1024;
/// Longest evidence `source`, in characters.
pub const MAX_SOURCE_CHARS: usize = 120;
/// Longest evidence `reference`, in characters.
pub const MAX_REFERENCE_CHARS: usize = 2000;
/// Longest error `message`, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// `success` or `error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The call produced data.
    Success,
    /// The call produced one typed error.
    Error,
}

/// Where the data behind an evidence item came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// A real source.
    Live,
    /// Built-in fixtures.
    Mock,
}

impl Provenance {
    /// Both provenances.
    pub const ALL: [Self; 2] = [Self::Live, Self::Mock];

    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Mock => "mock",
        }
    }
}

/// The envelope's error object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorObject {
    /// Stable code.
    pub code: String,
    /// Category.
    pub category: Category,
    /// Safe, fixed text.
    pub message: String,
    /// Whether one more attempt may succeed.
    pub retryable: bool,
}

impl ErrorObject {
    /// The error object of one of the contract's stable codes.
    pub fn stable(code: &StableCode) -> Self {
        Self::with_message(code, code.message)
    }

    /// A stable code with a message of its own (still fixed and safe).
    pub fn with_message(code: &StableCode, message: &str) -> Self {
        Self {
            code: code.code.to_owned(),
            category: code.category,
            message: message.to_owned(),
            retryable: code.retryable,
        }
    }
}

/// One evidence item, with the id and provenance minted by the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EvidenceItem {
    /// `ev-` and 16 hex digits of SHA-256 over `source|provenance|reference`.
    #[serde(rename = "evidenceId")]
    pub evidence_id: String,
    /// The data source.
    pub source: String,
    /// Live or mock.
    pub provenance: Provenance,
    /// The record's identifier, or `None` for dataset-level evidence.
    pub reference: Option<String>,
}

impl EvidenceItem {
    /// An item with its id computed from the formula.
    pub fn new(source: &str, provenance: Provenance, reference: Option<&str>) -> Self {
        Self {
            evidence_id: evidence_id(source, provenance, reference),
            source: source.to_owned(),
            provenance,
            reference: reference.map(str::to_owned),
        }
    }

    /// True for record-level evidence (it names a record).
    pub fn is_record_level(&self) -> bool {
        self.reference.is_some()
    }
}

/// The evidence id of docs/contract.md §1.3.
pub fn evidence_id(source: &str, provenance: Provenance, reference: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(source.as_bytes());
    hasher.update(b"|");
    hasher.update(provenance.as_str().as_bytes());
    hasher.update(b"|");
    hasher.update(reference.unwrap_or("").as_bytes());
    let digest = hasher.finalize();
    let mut id = String::with_capacity(19);
    id.push_str("ev-");
    for byte in &digest[..8] {
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// One tool call's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Envelope {
    /// Success or error.
    pub status: Status,
    /// The data object on success, `None` (written as `null`) on error.
    pub data: Option<Map<String, Value>>,
    /// The error on error, `None` (written as `null`) on success.
    pub error: Option<ErrorObject>,
    /// Evidence; always empty on error.
    pub evidence: Vec<EvidenceItem>,
}

/// Why an envelope (emitted or parsed) breaks the contract.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// The text is not JSON.
    #[error("envelope is not valid JSON")]
    NotJson,
    /// A value has the wrong JSON type.
    #[error("`{path}` must be {expected}")]
    WrongType {
        /// Where.
        path: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A required key is omitted.
    #[error("`{path}` is missing (nulls are written out, never omitted)")]
    MissingKey {
        /// Where.
        path: String,
    },
    /// A key the contract does not define.
    #[error("unknown key `{path}`")]
    UnknownKey {
        /// Where.
        path: String,
    },
    /// Status, data, error and evidence disagree.
    #[error("impossible state: {0}")]
    ImpossibleState(&'static str),
    /// A value breaks its rule.
    #[error("`{path}` {rule}")]
    Invalid {
        /// Where.
        path: String,
        /// The rule it breaks.
        rule: &'static str,
    },
}

fn invalid(path: impl Into<String>, rule: &'static str) -> EnvelopeError {
    EnvelopeError::Invalid { path: path.into(), rule }
}

fn wrong_type(path: impl Into<String>, expected: &'static str) -> EnvelopeError {
    EnvelopeError::WrongType { path: path.into(), expected }
}

/// Checks that `object` has exactly `keys`, naming the first stray or
/// missing key.
fn exact_keys(object: &Map<String, Value>, keys: &[&str], at: &str) -> Result<(), EnvelopeError> {
    if let Some(stray) = object.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(EnvelopeError::UnknownKey { path: format!("{at}{stray}") });
    }
    if let Some(missing) = keys.iter().find(|key| !object.contains_key(**key)) {
        return Err(EnvelopeError::MissingKey { path: format!("{at}{missing}") });
    }
    Ok(())
}

fn as_object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, EnvelopeError> {
    value.as_object().ok_or_else(|| wrong_type(path, "an object"))
}

fn as_str<'v>(value: &'v Value, path: &str) -> Result<&'v str, EnvelopeError> {
    value.as_str().ok_or_else(|| wrong_type(path, "a string"))
}

fn char_len_in(text: &str, min: usize, max: usize) -> bool {
    let len = text.chars().count();
    (min..=max).contains(&len)
}

impl Envelope {
    /// A success envelope. Call [`Envelope::validate`] before emitting it.
    pub fn success(data: Map<String, Value>, evidence: Vec<EvidenceItem>) -> Self {
        Self { status: Status::Success, data: Some(data), error: None, evidence }
    }

    /// An error envelope.
    pub fn failure(error: ErrorObject) -> Self {
        Self { status: Status::Error, data: None, error: Some(error), evidence: Vec::new() }
    }

    /// An error envelope for one of the contract's stable codes.
    pub fn stable_error(code: &StableCode) -> Self {
        Self::failure(ErrorObject::stable(code))
    }

    /// True for a success envelope.
    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }

    /// The envelope as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The envelope as a JSON value, its data moved in rather than copied
    /// member by member as [`Envelope::to_value`] copies it: the same
    /// value, members in the same order.
    pub fn into_value(mut self) -> Value {
        let data = self.data.take();
        let mut value = self.to_value();
        if let (Some(data), Value::Object(members)) = (data, &mut value) {
            // `data` is already a member (`null`): replaced in its place.
            members.insert("data".to_owned(), Value::Object(data));
        }
        value
    }

    /// The envelope as compact JSON text.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }

    /// Check every rule of docs/contract.md §1.
    pub fn validate(&self) -> Result<(), EnvelopeError> {
        match (self.status, &self.data, &self.error) {
            (Status::Success, Some(_), None) => {}
            (Status::Success, None, _) => return Err(EnvelopeError::ImpossibleState("success without data")),
            (Status::Success, _, Some(_)) => {
                return Err(EnvelopeError::ImpossibleState("success with an error"));
            }
            (Status::Error, None, Some(_)) => {}
            (Status::Error, Some(_), _) => return Err(EnvelopeError::ImpossibleState("error with data")),
            (Status::Error, _, None) => return Err(EnvelopeError::ImpossibleState("error without an error")),
        }
        if self.status == Status::Error && !self.evidence.is_empty() {
            return Err(EnvelopeError::ImpossibleState("error with evidence"));
        }
        if let Some(data) = &self.data
            && crate::json_size::compact_bytes(data, MAX_DATA_BYTES).is_none()
        {
            return Err(invalid("data", "exceeds 1 MiB"));
        }
        if let Some(error) = &self.error {
            if !is_valid_code(&error.code) {
                return Err(invalid("error.code", "must match ^[a-z0-9_]{1,80}$"));
            }
            if !char_len_in(&error.message, 1, MAX_MESSAGE_CHARS) {
                return Err(invalid("error.message", "must be 1 to 500 characters"));
            }
        }
        if self.evidence.len() > MAX_EVIDENCE {
            return Err(invalid("evidence", "holds more than 100 items"));
        }
        for (index, item) in self.evidence.iter().enumerate() {
            let at = |field: &str| format!("evidence[{index}].{field}");
            if !char_len_in(&item.source, 1, MAX_SOURCE_CHARS) {
                return Err(invalid(at("source"), "must be 1 to 120 characters"));
            }
            if item
                .reference
                .as_deref()
                .is_some_and(|reference| !char_len_in(reference, 0, MAX_REFERENCE_CHARS))
            {
                return Err(invalid(at("reference"), "must be at most 2,000 characters"));
            }
            if item.evidence_id != evidence_id(&item.source, item.provenance, item.reference.as_deref()) {
                return Err(invalid(at("evidenceId"), "does not match the evidence id formula"));
            }
        }
        Ok(())
    }

    /// Parse and validate envelope JSON text.
    pub fn parse(text: &str) -> Result<Self, EnvelopeError> {
        let value: Value = serde_json::from_str(text).map_err(|_| EnvelopeError::NotJson)?;
        Self::from_value(&value)
    }

    /// Parse and validate an envelope from a JSON value.
    pub fn from_value(value: &Value) -> Result<Self, EnvelopeError> {
        let object = as_object(value, "envelope")?;
        exact_keys(object, &["status", "data", "error", "evidence"], "")?;
        let status = match as_str(&object["status"], "status")? {
            "success" => Status::Success,
            "error" => Status::Error,
            _ => return Err(invalid("status", "must be \"success\" or \"error\"")),
        };
        let data = match &object["data"] {
            Value::Null => None,
            Value::Object(data) => Some(data.clone()),
            _ => return Err(wrong_type("data", "an object or null")),
        };
        let error = match &object["error"] {
            Value::Null => None,
            other => Some(parse_error(other)?),
        };
        let evidence = object["evidence"]
            .as_array()
            .ok_or_else(|| wrong_type("evidence", "a list"))?
            .iter()
            .enumerate()
            .map(|(index, item)| parse_evidence(item, index))
            .collect::<Result<Vec<_>, _>>()?;
        let envelope = Self { status, data, error, evidence };
        envelope.validate()?;
        Ok(envelope)
    }
}

fn parse_error(value: &Value) -> Result<ErrorObject, EnvelopeError> {
    let object = as_object(value, "error")?;
    exact_keys(object, &["code", "category", "message", "retryable"], "error.")?;
    let category = match as_str(&object["category"], "error.category")? {
        "validation" => Category::Validation,
        "authorization" => Category::Authorization,
        "not_found" => Category::NotFound,
        "dependency" => Category::Dependency,
        "provider_permanent" => Category::ProviderPermanent,
        _ => return Err(invalid("error.category", "is not a contract category")),
    };
    Ok(ErrorObject {
        code: as_str(&object["code"], "error.code")?.to_owned(),
        category,
        message: as_str(&object["message"], "error.message")?.to_owned(),
        retryable: object["retryable"].as_bool().ok_or_else(|| wrong_type("error.retryable", "a boolean"))?,
    })
}

fn parse_evidence(value: &Value, index: usize) -> Result<EvidenceItem, EnvelopeError> {
    let at = |field: &str| format!("evidence[{index}].{field}");
    let object = as_object(value, &format!("evidence[{index}]"))?;
    exact_keys(object, &["evidenceId", "source", "provenance", "reference"], &format!("evidence[{index}]."))?;
    let provenance = match as_str(&object["provenance"], &at("provenance"))? {
        "live" => Provenance::Live,
        "mock" => Provenance::Mock,
        _ => return Err(invalid(at("provenance"), "must be \"live\" or \"mock\"")),
    };
    let reference = match &object["reference"] {
        Value::Null => None,
        Value::String(reference) => Some(reference.clone()),
        _ => return Err(wrong_type(at("reference"), "a string or null")),
    };
    Ok(EvidenceItem {
        evidence_id: as_str(&object["evidenceId"], &at("evidenceId"))?.to_owned(),
        source: as_str(&object["source"], &at("source"))?.to_owned(),
        provenance,
        reference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::{DEPENDENCY_UNAVAILABLE, TOOL_TIMEOUT};
    use serde_json::json;

    fn good_success() -> Value {
        let item = EvidenceItem::new("harmonia_job", Provenance::Live, Some("job-1"));
        json!({"status": "success", "data": {"found": true}, "error": null, "evidence": [item]})
    }

    #[test]
    fn evidence_id_follows_the_formula() {
        let digest = Sha256::digest(b"harmonia_job|live|job-1");
        let expected: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(evidence_id("harmonia_job", Provenance::Live, Some("job-1")), format!("ev-{expected}"));
        let digest = Sha256::digest(b"harmonia_feed|mock|");
        let expected: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(evidence_id("harmonia_feed", Provenance::Mock, None), format!("ev-{expected}"));
    }

    #[test]
    fn into_value_is_to_value_member_for_member() {
        let mut data = Map::new();
        data.insert("zeta".into(), json!({"b": 1, "a": [1, 2.5, "x"]}));
        data.insert("alpha".into(), Value::Null);
        let item = EvidenceItem::new("harmonia_job", Provenance::Mock, Some("job-1"));
        let envelopes = [
            Envelope::success(data, vec![item]),
            Envelope::from_value(&good_success()).unwrap(),
            Envelope::stable_error(&TOOL_TIMEOUT),
        ];
        for envelope in envelopes {
            let (copied, moved) = (envelope.to_value(), envelope.clone().into_value());
            // The same text, so the same members in the same order.
            assert_eq!(moved.to_string(), copied.to_string());
        }
    }

    #[test]
    fn round_trips_and_writes_nulls() {
        let envelope = Envelope::from_value(&good_success()).unwrap();
        assert_eq!(envelope.to_value(), good_success());
        let failure = Envelope::stable_error(&TOOL_TIMEOUT);
        let text = failure.to_json();
        assert_eq!(
            text,
            r#"{"status":"error","data":null,"error":{"code":"tool_timeout","category":"dependency","message":"The tool call passed its deadline.","retryable":true},"evidence":[]}"#
        );
        assert_eq!(Envelope::parse(&text).unwrap(), failure);
    }

    fn rejects(value: Value) -> EnvelopeError {
        Envelope::from_value(&value).unwrap_err()
    }

    #[test]
    fn rejects_extra_and_missing_keys_everywhere() {
        let mut extra = good_success();
        extra["extra"] = json!(1);
        assert_eq!(rejects(extra), EnvelopeError::UnknownKey { path: "extra".into() });
        let mut omitted = good_success();
        omitted.as_object_mut().unwrap().remove("error");
        assert_eq!(rejects(omitted), EnvelopeError::MissingKey { path: "error".into() });
        let mut extra_item = good_success();
        extra_item["evidence"][0]["note"] = json!("x");
        assert_eq!(rejects(extra_item), EnvelopeError::UnknownKey { path: "evidence[0].note".into() });
        let mut error = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        error["error"]["detail"] = json!("x");
        assert_eq!(rejects(error), EnvelopeError::UnknownKey { path: "error.detail".into() });
        let mut error = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        error["error"].as_object_mut().unwrap().remove("retryable");
        assert_eq!(rejects(error), EnvelopeError::MissingKey { path: "error.retryable".into() });
    }

    #[test]
    fn rejects_impossible_states() {
        let error = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        let mut success_with_error = good_success();
        success_with_error["error"] = error["error"].clone();
        assert_eq!(rejects(success_with_error), EnvelopeError::ImpossibleState("success with an error"));
        let mut success_without_data = good_success();
        success_without_data["data"] = Value::Null;
        assert_eq!(rejects(success_without_data), EnvelopeError::ImpossibleState("success without data"));
        let mut error_with_data = error.clone();
        error_with_data["data"] = json!({});
        assert_eq!(rejects(error_with_data), EnvelopeError::ImpossibleState("error with data"));
        let mut error_with_evidence = error.clone();
        error_with_evidence["evidence"] = good_success()["evidence"].clone();
        assert_eq!(rejects(error_with_evidence), EnvelopeError::ImpossibleState("error with evidence"));
        let mut error_without_error = error;
        error_without_error["error"] = Value::Null;
        assert_eq!(rejects(error_without_error), EnvelopeError::ImpossibleState("error without an error"));
    }

    #[test]
    fn rejects_broken_values() {
        let mut value = good_success();
        value["evidence"][0]["evidenceId"] = json!("ev-0000000000000000");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { rule, .. } if rule.contains("formula")));
        let mut value = good_success();
        value["evidence"][0]["provenance"] = json!("cached");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { .. }));
        let mut value = good_success();
        value["status"] = json!("ok");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { .. }));
        let mut value = good_success();
        value["data"] = json!([1]);
        assert!(matches!(rejects(value), EnvelopeError::WrongType { .. }));
        let mut value = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        value["error"]["code"] = json!("Bad-Code");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { .. }));
        let mut value = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        value["error"]["message"] = json!("");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { .. }));
        let mut value = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        value["error"]["category"] = json!("timeout");
        assert!(matches!(rejects(value), EnvelopeError::Invalid { .. }));
        assert_eq!(Envelope::parse("{").unwrap_err(), EnvelopeError::NotJson);
        assert!(matches!(Envelope::parse("[]").unwrap_err(), EnvelopeError::WrongType { .. }));
    }

    #[test]
    fn bounds_evidence_and_data() {
        let item = EvidenceItem::new("s", Provenance::Live, None);
        let mut envelope = Envelope::success(Map::new(), vec![item; MAX_EVIDENCE]);
        assert!(envelope.validate().is_ok());
        envelope.evidence.push(EvidenceItem::new("s", Provenance::Live, None));
        assert!(envelope.validate().is_err());
        let mut data = Map::new();
        data.insert("blob".into(), json!("x".repeat(MAX_DATA_BYTES)));
        assert!(Envelope::success(data, Vec::new()).validate().is_err());
        // The bound is exact: `{"blob":"…"}` is 11 bytes around the text.
        let at_most = |text_len: usize| {
            let mut data = Map::new();
            data.insert("blob".into(), json!("x".repeat(text_len)));
            Envelope::success(data, Vec::new()).validate().is_ok()
        };
        assert!(at_most(MAX_DATA_BYTES - 11) && !at_most(MAX_DATA_BYTES - 10));
        let long = "s".repeat(MAX_SOURCE_CHARS + 1);
        assert!(
            Envelope::success(Map::new(), vec![EvidenceItem::new(&long, Provenance::Live, None)])
                .validate()
                .is_err()
        );
        let long = "r".repeat(MAX_REFERENCE_CHARS + 1);
        let item = EvidenceItem::new("s", Provenance::Live, Some(&long));
        assert!(Envelope::success(Map::new(), vec![item]).validate().is_err());
    }
}
