//! The redacted summary of a stored job: the only view of a job that ever
//! leaves the host.
//!
//! The host builds it for every workspace source before a guest sees the
//! job, and `get_job_status` returns it. It holds only `id, title,
//! sourceKind, stage, status, error, createdAt, updatedAt,
//! strategyApprovalState, draftCount, actions: [{id, type, state,
//! approvalState, requiresApproval, risk}], verificationSummary:
//! [{actionId, verified}], receiptCount`; draft text, transcripts, prompts,
//! tokens and every other field stay behind.
//!
//! Decisions: text fields keep strings only (anything else reads as null);
//! `error` keeps a string, or the `code` string of an error object, at most
//! [`MAX_ERROR_CHARS`] characters; `draftCount` counts `drafts` (or reads
//! `draftCount`); `verificationSummary` comes from `verifications` (or
//! `verificationSummary`); `receiptCount` counts `receipts` (or reads
//! `receiptCount`). A summary summarised again is unchanged.

use serde_json::{Map, Value, json};

/// Longest job error text kept, in characters.
pub const MAX_ERROR_CHARS: usize = 500;

fn text(object: &Map<String, Value>, key: &str) -> Value {
    match object.get(key) {
        Some(Value::String(text)) => Value::String(text.clone()),
        _ => Value::Null,
    }
}

fn flag(object: &Map<String, Value>, key: &str) -> Value {
    object.get(key).and_then(Value::as_bool).map_or(Value::Null, Value::Bool)
}

fn objects<'a>(job: &'a Map<String, Value>, keys: &[&str]) -> impl Iterator<Item = &'a Map<String, Value>> {
    keys.iter()
        .find_map(|key| job.get(*key).and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn counted(job: &Map<String, Value>, list: &str, count: &str) -> u64 {
    match job.get(list) {
        Some(Value::Array(items)) => items.len() as u64,
        _ => job.get(count).and_then(Value::as_u64).unwrap_or(0),
    }
}

fn error_text(job: &Map<String, Value>) -> Value {
    let text = match job.get("error") {
        Some(Value::String(text)) => Some(text.as_str()),
        Some(Value::Object(error)) => error.get("code").and_then(Value::as_str),
        _ => None,
    };
    text.map_or(Value::Null, |text| Value::String(text.chars().take(MAX_ERROR_CHARS).collect()))
}

/// The redacted summary of a stored job document.
pub fn summary(job: &Map<String, Value>) -> Value {
    let actions: Vec<Value> = objects(job, &["actions"])
        .map(|action| {
            json!({
                "id": text(action, "id"),
                "type": text(action, "type"),
                "state": text(action, "state"),
                "approvalState": text(action, "approvalState"),
                "requiresApproval": flag(action, "requiresApproval"),
                "risk": text(action, "risk"),
            })
        })
        .collect();
    let verifications: Vec<Value> = objects(job, &["verifications", "verificationSummary"])
        .map(|verification| json!({"actionId": text(verification, "actionId"), "verified": flag(verification, "verified")}))
        .collect();
    json!({
        "id": text(job, "id"),
        "title": text(job, "title"),
        "sourceKind": text(job, "sourceKind"),
        "stage": text(job, "stage"),
        "status": text(job, "status"),
        "error": error_text(job),
        "createdAt": text(job, "createdAt"),
        "updatedAt": text(job, "updatedAt"),
        "strategyApprovalState": text(job, "strategyApprovalState"),
        "draftCount": counted(job, "drafts", "draftCount"),
        "actions": actions,
        "verificationSummary": verifications,
        "receiptCount": counted(job, "receipts", "receiptCount"),
    })
}

/// The summary of a stored job given as JSON text, as JSON text; `None`
/// when the text is not a JSON object.
pub fn summary_json(document: &str) -> Option<String> {
    match serde_json::from_str::<Value>(document).ok()? {
        Value::Object(job) => Some(summary(&job).to_string()),
        _ => None,
    }
}

/// A job document with every field the summary drops (drafts, prompts,
/// tokens, payloads, provider bodies), for the tests of the summary and of
/// the tools that use it.
#[doc(hidden)]
pub const EXAMPLE_JOB: &str = r#"{"id": "job-42", "title": "T", "sourceKind": "trend_signal", "stage": "drafting",
    "status": "waiting_approval", "error": {"code": "rate_limited", "body": "PROVIDER BODY"},
    "createdAt": "2026-11-28T08:00:00Z", "updatedAt": "2026-11-30T08:45:00Z", "strategyApprovalState": "approved",
    "drafts": [{"text": "DRAFT TEXT"}], "transcript": "TRANSCRIPT", "prompt": "PROMPT", "accessToken": "TOKEN",
    "actions": [{"id": "a1", "type": "publish_post", "state": "pending", "approvalState": "awaiting",
                 "requiresApproval": true, "risk": "medium", "payload": {"text": "DRAFT TEXT"}}],
    "verifications": [{"actionId": "a1", "verified": false, "notes": "internal"}], "receipts": [{}, {}]}"#;

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = EXAMPLE_JOB;

    #[test]
    fn keeps_only_the_summary_fields() {
        let summary: Value = serde_json::from_str(&summary_json(JOB).unwrap()).unwrap();
        assert_eq!(
            summary,
            json!({"id": "job-42", "title": "T", "sourceKind": "trend_signal", "stage": "drafting",
                "status": "waiting_approval", "error": "rate_limited", "createdAt": "2026-11-28T08:00:00Z",
                "updatedAt": "2026-11-30T08:45:00Z", "strategyApprovalState": "approved", "draftCount": 1,
                "actions": [{"id": "a1", "type": "publish_post", "state": "pending", "approvalState": "awaiting",
                             "requiresApproval": true, "risk": "medium"}],
                "verificationSummary": [{"actionId": "a1", "verified": false}], "receiptCount": 2})
        );
        let text = summary.to_string();
        for secret in ["DRAFT TEXT", "TRANSCRIPT", "PROMPT", "TOKEN", "PROVIDER BODY", "internal"] {
            assert!(!text.contains(secret), "{secret} leaked");
        }
    }

    #[test]
    fn a_summary_summarised_again_is_unchanged() {
        let long_error = format!(r#"{{"id": "j", "error": "{}", "draftCount": 3}}"#, "e".repeat(900));
        for job in [JOB, long_error.as_str(), "{}"] {
            let once = summary_json(job).unwrap();
            assert_eq!(summary_json(&once).unwrap(), once, "{job}");
        }
    }

    #[test]
    fn only_objects_have_a_summary() {
        for text in ["[1]", "\"job\"", "null", "garbage"] {
            assert_eq!(summary_json(text), None, "{text}");
        }
    }
}
