//! Test guest: a third-party workspace plugin that hands back whatever the
//! host's `job` read gave it, untouched, as `{"received": "<text>"}` (or
//! `{"readError": "<name>"}`). Tests use it to check what any workspace
//! plugin can see of a stored job.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Input, Output, ReadError, Scope, ToolError, Workspace};
use serde_json::json;

fn descriptor() -> Descriptor {
    Descriptor {
        name: "testing_job_echo",
        version: "0.1.0",
        purpose: "Test guest: returns exactly what the workspace's job read gave it, to test redaction.",
        input_schema: json!({"type": "object", "properties": {"job_id": {"type": "string"}}, "required": ["job_id"]}),
        errors: Descriptor::errors_with_runtime(&[harmonia_guest_sdk::error::INVALID_INPUT]),
        scope: Scope::Workspace,
        deadline_ms: 5_000,
        skills: vec!["job-status"],
    }
}

fn run(workspace: &impl Workspace, input: &str) -> Result<Output, ToolError> {
    let input = Input::parse(input, &["job_id"])?;
    let id = input.required_string("job_id", 4000)?;
    let data = match workspace.job(id) {
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

harmonia_guest_sdk::export_logic!(descriptor, run, harmonia_guest_sdk::HostWorkspace);
