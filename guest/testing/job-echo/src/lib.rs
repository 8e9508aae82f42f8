//! Test guest: a third-party workspace plugin that hands back whatever the
//! host's `job` read gave it, untouched, as `{"received": "<text>"}` (or
//! `{"readError": "<name>"}`). Tests use it to check what any workspace
//! plugin can see of a stored job.

use harmonia_guest_sdk::input::Text;
use harmonia_guest_sdk::{Descriptor, Output, ReadError, Scope, ToolError, Workspace, testing};
use serde::Deserialize;
use serde_json::json;

/// The job to read.
#[derive(Deserialize)]
pub struct Job {
    job_id: Text<4000>,
}

/// The contract.
pub fn descriptor() -> Descriptor {
    let purpose = "Test guest: returns exactly what the workspace's job read gave it, to test redaction.";
    let descriptor = testing::descriptor("testing_job_echo", 5_000);
    testing::reading(
        json!({"type": "object", "properties": {"job_id": {"type": "string"}}, "required": ["job_id"]}),
        Descriptor { purpose, scope: Scope::Workspace, skills: vec!["job-status"], ..descriptor },
    )
}

/// Read the job and hand back what came.
pub fn run(workspace: &impl Workspace, input: Job) -> Result<Output, ToolError> {
    let data = match workspace.job(&input.job_id) {
        Ok(text) => json!({"received": text}),
        Err(error) => json!({"readError": match error {
            ReadError::Unauthorized => "unauthorized",
            ReadError::NotFound => "not_found",
            ReadError::Rejected => "rejected",
            ReadError::Unavailable => "unavailable",
            ReadError::TimedOut => "timed_out",
        }}),
    };
    Ok(Output::new(data, Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);
