//! Config, logging and host construction shared by the subcommands.

use crate::args::HostArgs;
use anyhow::{Context, Result};
use harmonia_host::log::{Level, StderrLog};
use harmonia_host::{Host, HostConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A usage problem (exit code 2): an unreadable or malformed input file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The config file: `--config`, else `$HARMONIA_CONFIG`, else none.
pub fn config_path(path: Option<&Path>) -> Option<PathBuf> {
    path.map(Path::to_owned).or_else(|| std::env::var_os("HARMONIA_CONFIG").map(PathBuf::from))
}

/// The config from `--config`, else `$HARMONIA_CONFIG`, else defaults.
pub fn load_config(path: Option<&Path>) -> Result<HostConfig> {
    match config_path(path) {
        Some(path) => Ok(HostConfig::from_file(&path)?),
        None => Ok(HostConfig::default()),
    }
}

/// The log level from `$HARMONIA_LOG` (default `warn`).
pub fn log_level() -> Level {
    std::env::var("HARMONIA_LOG").ok().and_then(|text| Level::parse(&text)).unwrap_or(Level::Warn)
}

/// A host from the shared options.
pub fn build_host(args: &HostArgs) -> Result<Host> {
    let mut config = load_config(args.config.as_deref())?;
    config.mock |= args.mock;
    let mut builder = Host::builder(config).log(Arc::new(StderrLog { min_level: log_level() }));
    if let Some(progress) = crate::progress::CompileSpinner::unless_quiet(args.quiet) {
        builder = builder.compile_progress(progress);
    }
    for path in &args.plugins {
        builder = builder.component_file(path)?;
    }
    builder.build().context("cannot start the host")
}

/// Read a file for a command, as a usage error when it cannot be read.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|error| UsageError(format!("cannot read {what} {}: {error}", path.display())).into())
}

/// The skills from `dir`, or the built-in ones.
pub fn load_skills(dir: Option<&Path>) -> Result<harmonia_host::liaison::skills::SkillSet> {
    match dir {
        Some(dir) => Ok(harmonia_host::liaison::skills::load_dir(dir)?),
        None => Ok(harmonia_host::liaison::skills::SkillSet::builtin()),
    }
}

/// The workspace from `--workspace`, else `$HARMONIA_WORKSPACE`.
pub fn workspace(flag: Option<String>) -> Option<String> {
    flag.or_else(|| std::env::var("HARMONIA_WORKSPACE").ok()).filter(|id| !id.is_empty())
}
