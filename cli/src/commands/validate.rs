//! `harmonia validate --trace F --answer F`: exit 0 accepted, 1 rejected,
//! 2 unreadable or malformed files.

use crate::setup::{UsageError, load_skills, read_text};
use anyhow::Result;
use harmonia_host::liaison::trace::Trace;
use harmonia_host::liaison::validator::{Mode, validate};
use serde_json::Value;
use std::path::Path;
use std::process::ExitCode;

fn read_json(path: &Path, what: &str) -> Result<Value> {
    let text = read_text(path, what)?;
    serde_json::from_str(&text)
        .map_err(|error| UsageError(format!("{what} {} is not JSON: {error}", path.display())).into())
}

pub fn run(
    trace: &Path,
    answer: &Path,
    submission: bool,
    json: bool,
    skills: Option<&Path>,
) -> Result<ExitCode> {
    let trace_value = read_json(trace, "trace")?;
    let trace =
        Trace::parse(&trace_value).map_err(|error| UsageError(format!("{}: {error}", trace.display())))?;
    let answer = read_json(answer, "answer")?;
    let skills = load_skills(skills)?;
    let mode = if submission { Mode::Submission } else { Mode::Review };
    let verdict = validate(&trace, &answer, &skills, mode);
    if json {
        println!("{}", serde_json::to_string(&verdict)?);
    } else if verdict.accepted {
        println!("accepted");
    } else {
        let rule = verdict.rule.map(|rule| rule.as_str()).unwrap_or_default();
        println!("rejected: {rule}: {}", verdict.reason.as_deref().unwrap_or_default());
    }
    Ok(if verdict.accepted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
