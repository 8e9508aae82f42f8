//! `get_job_status`: the live state of one job, redacted.
//!
//! Input `{"job_id": "..."}`: trimmed, not empty (`invalid_job_id`), at most
//! 200 characters (`invalid_input`). Data `{found: true, job: summary}`.
//! The summary holds only `id, title, sourceKind, stage, status, error,
//! createdAt, updatedAt, strategyApprovalState, draftCount, actions: [{id,
//! type, state, approvalState, requiresApproval, risk}],
//! verificationSummary: [{actionId, verified}], receiptCount`; draft text,
//! transcripts, prompts, tokens and every other field stay behind.
//!
//! Decisions: text fields keep strings only (anything else reads as null);
//! `error` keeps a string, or the `code` string of an error object, at most
//! 500 characters; `draftCount` counts `drafts` (or reads `draftCount`);
//! `verificationSummary` comes from `verifications` (or
//! `verificationSummary`); `receiptCount` counts `receipts` (or reads
//! `receiptCount`). Evidence: `harmonia_job` with the job id.

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INVALID_INPUT, INVALID_JOB_ID, JOB_NOT_FOUND};
use harmonia_guest_sdk::{Descriptor, Evidence, Input, Output, ReadError, Scope, ToolError, Workspace};
use serde_json::{Map, Value, json};

/// Longest job id accepted, in characters.
pub const MAX_JOB_ID_CHARS: usize = 200;
/// Longest job error text kept, in characters.
pub const MAX_ERROR_CHARS: usize = 500;

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "get_job_status",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Read the live, redacted state of one job in the caller's workspace by its id.",
        input_schema: json!({
            "type": "object",
            "properties": {"job_id": {"type": "string", "minLength": 1, "maxLength": MAX_JOB_ID_CHARS, "description": "The job id; trimmed, must not be empty."}},
            "required": ["job_id"],
            "additionalProperties": false
        }),
        errors: Descriptor::errors_with_runtime(&[
            INVALID_INPUT,
            INVALID_JOB_ID,
            JOB_NOT_FOUND,
            AUTHORIZATION_FAILED,
        ]),
        scope: Scope::Workspace,
        deadline_ms: 30_000,
        skills: vec!["job-status"],
    }
}

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

/// Run the tool on `input` against `workspace`.
pub fn run(workspace: &impl Workspace, input: &str) -> Result<Output, ToolError> {
    let input = Input::parse(input, &["job_id"])?;
    let job_id = input.required_string("job_id", MAX_JOB_ID_CHARS)?.trim();
    if job_id.is_empty() {
        return Err(ToolError::invalid_job_id());
    }
    let document = workspace.job(job_id).map_err(|error| match error {
        ReadError::NotFound => ToolError::job_not_found(),
        other => ToolError::from_read(other),
    })?;
    let job: Value = serde_json::from_str(&document).map_err(|_| ToolError::dependency_unavailable())?;
    let job = job.as_object().ok_or_else(ToolError::dependency_unavailable)?;
    Ok(Output::new(
        json!({"found": true, "job": summary(job)}),
        vec![Evidence::record("harmonia_job", job_id)],
    ))
}

harmonia_guest_sdk::export_logic!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    const JOB: &str = r#"{"id": "job-42", "title": "T", "sourceKind": "trend_signal", "stage": "drafting",
        "status": "waiting_approval", "error": {"code": "rate_limited", "body": "PROVIDER BODY"},
        "createdAt": "2026-11-28T08:00:00Z", "updatedAt": "2026-11-30T08:45:00Z", "strategyApprovalState": "approved",
        "drafts": [{"text": "DRAFT TEXT"}], "transcript": "TRANSCRIPT", "prompt": "PROMPT", "accessToken": "TOKEN",
        "actions": [{"id": "a1", "type": "publish_post", "state": "pending", "approvalState": "awaiting",
                     "requiresApproval": true, "risk": "medium", "payload": {"text": "DRAFT TEXT"}}],
        "verifications": [{"actionId": "a1", "verified": false, "notes": "internal"}], "receipts": [{}, {}]}"#;

    fn workspace() -> FakeWorkspace {
        FakeWorkspace { jobs: vec![("job-42".into(), JOB.into())], ..Default::default() }
    }

    #[test]
    fn returns_only_the_summary_fields() {
        let output = run(&workspace(), r#"{"job_id": "  job-42 "}"#).unwrap();
        assert_eq!(
            Value::Object(output.data.clone()),
            json!({"found": true, "job": {
                "id": "job-42", "title": "T", "sourceKind": "trend_signal", "stage": "drafting",
                "status": "waiting_approval", "error": "rate_limited", "createdAt": "2026-11-28T08:00:00Z",
                "updatedAt": "2026-11-30T08:45:00Z", "strategyApprovalState": "approved", "draftCount": 1,
                "actions": [{"id": "a1", "type": "publish_post", "state": "pending", "approvalState": "awaiting",
                             "requiresApproval": true, "risk": "medium"}],
                "verificationSummary": [{"actionId": "a1", "verified": false}], "receiptCount": 2}})
        );
        let text = Value::Object(output.data).to_string();
        for secret in ["DRAFT TEXT", "TRANSCRIPT", "PROMPT", "TOKEN", "PROVIDER BODY", "internal"] {
            assert!(!text.contains(secret), "{secret} leaked");
        }
        assert_eq!(output.evidence, vec![Evidence::record("harmonia_job", "job-42")]);
    }

    #[test]
    fn maps_ids_and_read_errors() {
        assert_eq!(run(&workspace(), r#"{"job_id": " "}"#), Err(ToolError::invalid_job_id()));
        assert_eq!(run(&workspace(), r#"{"job_id": 3}"#), Err(ToolError::invalid_input()));
        assert_eq!(run(&workspace(), r#"{}"#), Err(ToolError::invalid_input()));
        assert_eq!(run(&workspace(), r#"{"job_id": "nope"}"#), Err(ToolError::job_not_found()));
        let unauthorized = FakeWorkspace { failure: Some(ReadError::Unauthorized), ..Default::default() };
        assert_eq!(run(&unauthorized, r#"{"job_id": "job-42"}"#), Err(ToolError::authorization_failed()));
        let broken = FakeWorkspace { jobs: vec![("j".into(), "[1]".into())], ..Default::default() };
        assert_eq!(run(&broken, r#"{"job_id": "j"}"#), Err(ToolError::dependency_unavailable()));
    }
}
