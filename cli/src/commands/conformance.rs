//! `harmonia conformance PATH...`: the contract's checks on any component.

use crate::setup::{UsageError, load_config, read_text};
use anyhow::Result;
use harmonia_host::conformance::{self, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(
    paths: &[PathBuf],
    json: bool,
    config: Option<&Path>,
    web_fixture: Option<&Path>,
    workspace_fixture: Option<&Path>,
    deadline_cap_ms: u32,
) -> Result<ExitCode> {
    let mut options = Options { config: load_config(config)?, deadline_cap_ms, ..Options::default() };
    if let Some(path) = web_fixture {
        options.web_fixture = std::fs::read(path)
            .map_err(|error| UsageError(format!("cannot read {}: {error}", path.display())))?;
    }
    if let Some(path) = workspace_fixture {
        let text = read_text(path, "workspace fixture")?;
        options.workspace_fixture = serde_json::from_str(&text)
            .map_err(|error| UsageError(format!("{} is not JSON: {error}", path.display())))?;
    }
    let mut reports = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|error| UsageError(format!("cannot read {name}: {error}")))?;
        reports.push(conformance::run(&name, bytes, &options));
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        for report in &reports {
            let verdict = if report.passed { "PASS" } else { "FAIL" };
            let tool = report.tool.as_deref().unwrap_or("(not loaded)");
            outln!("{verdict} {} ({tool})", report.plugin);
            let width = report.checks.iter().map(|check| check.id.len()).max().unwrap_or(0);
            for check in &report.checks {
                let mark = if check.passed { "pass" } else { "FAIL" };
                outln!("  {mark}  {:width$}  {}", check.id, check.reason);
            }
            outln!();
        }
        let passed = reports.iter().filter(|report| report.passed).count();
        outln!("{passed} of {} plugins pass every check", reports.len());
    }
    Ok(if reports.iter().all(|report| report.passed) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
