//! `get_job_status`: the live state of one job, redacted.
//!
//! Input `{"job_id": "..."}`: trimmed, not empty and not `.` or `..`
//! (`invalid_job_id`; such ids could not name one path segment of the
//! internal API), at most 200 characters (`invalid_input`). Data `{found:
//! true, job: summary}`, the summary of [`harmonia_tool_common::job`]: the
//! host hands guests only that summary, and the tool summarises again so it
//! stays redacted whatever workspace it is given (a summary summarised
//! again is unchanged). Evidence: `harmonia_job` with the job id.

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INVALID_INPUT, INVALID_JOB_ID, JOB_NOT_FOUND};
use harmonia_guest_sdk::input::{Text, object_schema};
use harmonia_guest_sdk::{Descriptor, Evidence, Output, ReadError, Scope, ToolError, Workspace};
use harmonia_tool_common::job::summary;
use serde::Deserialize;
use serde_json::{Value, json};

/// The job id, at most 200 characters.
pub type JobId = Text<200>;
/// Longest job id accepted, in characters.
pub const MAX_JOB_ID_CHARS: usize = JobId::MAX_CHARS;

/// The tool's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobInput {
    /// The job id, trimmed before use.
    pub job_id: JobId,
}

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "get_job_status",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Read the live, redacted state of one job in the caller's workspace by its id.",
        input_schema: object_schema(
            json!({"job_id": JobId::schema("The job id; trimmed, must not be empty, `.` or `..`.")}),
            &["job_id"],
        ),
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

/// Run the tool on `input` against `workspace`.
pub fn run(workspace: &impl Workspace, input: JobInput) -> Result<Output, ToolError> {
    let job_id = input.job_id.trim();
    if job_id.is_empty() {
        return Err(ToolError::invalid_job_id());
    }
    if job_id == "." || job_id == ".." {
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

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    const JOB: &str = harmonia_tool_common::job::EXAMPLE_JOB;

    fn call(workspace: &FakeWorkspace, input: &str) -> Result<Output, ToolError> {
        harmonia_guest_sdk::invoke(input, |input| run(workspace, input))
    }

    fn workspace() -> FakeWorkspace {
        FakeWorkspace { jobs: vec![("job-42".into(), JOB.into())], ..Default::default() }
    }

    #[test]
    fn returns_only_the_summary_fields() {
        let output = call(&workspace(), r#"{"job_id": "  job-42 "}"#).unwrap();
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
        assert_eq!(call(&workspace(), r#"{"job_id": " "}"#), Err(ToolError::invalid_job_id()));
        for id in [".", " .. "] {
            let input = json!({"job_id": id}).to_string();
            assert_eq!(call(&workspace(), &input), Err(ToolError::invalid_job_id()));
        }
        assert_eq!(call(&workspace(), r#"{"job_id": 3}"#), Err(ToolError::invalid_input()));
        assert_eq!(call(&workspace(), r#"{}"#), Err(ToolError::invalid_input()));
        assert_eq!(call(&workspace(), r#"{"job_id": "nope"}"#), Err(ToolError::job_not_found()));
        let unauthorized = FakeWorkspace { failure: Some(ReadError::Unauthorized), ..Default::default() };
        assert_eq!(call(&unauthorized, r#"{"job_id": "job-42"}"#), Err(ToolError::authorization_failed()));
        let broken = FakeWorkspace { jobs: vec![("j".into(), "[1]".into())], ..Default::default() };
        assert_eq!(call(&broken, r#"{"job_id": "j"}"#), Err(ToolError::dependency_unavailable()));
    }
}
