//! `harmonia conformance PATH...`: the contract's checks on any component.

use crate::setup::{UsageError, load_config, log_level, read_text};
use anyhow::Result;
use harmonia_conformance::{self as conformance, Options};
use harmonia_host::log::{Level, StderrLog};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The fixtures the healthy capabilities serve instead of the defaults.
pub struct Fixtures<'a> {
    /// The body of every healthy public web answer.
    pub web: Option<&'a Path>,
    /// The workspace document.
    pub workspace: Option<&'a Path>,
}

pub fn run(
    paths: &[PathBuf],
    json: bool,
    config: Option<&Path>,
    fixtures: Fixtures<'_>,
    deadline_cap_ms: u32,
    quiet: bool,
) -> Result<ExitCode> {
    let mut options = Options {
        config: load_config(config)?,
        deadline_cap_ms,
        log: Arc::new(StderrLog { min_level: log_level() }),
        compile_progress: crate::progress::CompileSpinner::unless_quiet(quiet),
        ..Options::default()
    };
    let Fixtures { web: web_fixture, workspace: workspace_fixture } = fixtures;
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
    if reports.iter().any(|report| !report.passed) && log_level() < Level::Debug {
        eprintln!(
            "harmonia: hint: run with HARMONIA_LOG=debug to see each call's stdout, stderr, trap and broken rule"
        );
    }
    Ok(if reports.iter().all(|report| report.passed) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
