//! Building answers from envelopes: what a well-behaved agent would write.

use harmonia_contract::envelope::Envelope;
use serde_json::{Value, json};

/// The id of the evidence item whose reference is `reference`.
pub fn id_for(envelope: &Envelope, reference: &str) -> String {
    envelope
        .evidence
        .iter()
        .find(|item| item.reference.as_deref() == Some(reference))
        .map(|item| item.evidence_id.clone())
        .unwrap_or_default()
}

/// The dataset-level id (the first item without a reference).
pub fn dataset_id(envelope: &Envelope) -> String {
    envelope
        .evidence
        .iter()
        .find(|item| item.reference.is_none())
        .map(|item| item.evidence_id.clone())
        .unwrap_or_default()
}

/// A claim.
pub fn claim(text: &str, kind: &str, ids: &[&str]) -> Value {
    json!({"text": text, "kind": kind, "evidenceIds": ids})
}

/// A success answer.
pub fn success(skill: &str, text: &str, claims: Vec<Value>, uncertainty: &[&str]) -> Value {
    json!({"status": "success", "answer": text, "skillName": skill, "claims": claims, "error": null,
        "uncertainty": uncertainty})
}

/// A no-data answer.
pub fn no_data(skill: &str, text: &str) -> Value {
    json!({"status": "no_data", "answer": text, "skillName": skill, "claims": [], "error": null, "uncertainty": []})
}

/// An error answer repeating `envelope`'s error exactly.
pub fn error(skill: &str, text: &str, envelope: &Envelope) -> Value {
    json!({"status": "error", "answer": text, "skillName": skill, "claims": [],
        "error": envelope.to_value()["error"].clone(), "uncertainty": []})
}
