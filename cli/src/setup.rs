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

/// The config from `--config`, else `$HARMONIA_CONFIG`, else defaults.
pub fn load_config(path: Option<&Path>) -> Result<HostConfig> {
    let path: Option<PathBuf> =
        path.map(Path::to_owned).or_else(|| std::env::var_os("HARMONIA_CONFIG").map(PathBuf::from));
    match path {
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
    build_host_with(args, None, 0)
}

/// A host from the shared options, counting into `metrics` when given.
pub fn build_host_with(
    args: &HostArgs,
    metrics: Option<harmonia_host::metrics::Metrics>,
    calls_at_least: u32,
) -> Result<Host> {
    let mut config = load_config(args.config.as_deref())?;
    config.mock |= args.mock;
    raise_call_slots(&mut config, calls_at_least);
    let mut builder = Host::builder(config).log(Arc::new(StderrLog { min_level: log_level() }));
    if let Some(progress) = crate::progress::CompileSpinner::unless_quiet(args.quiet) {
        builder = builder.compile_progress(progress);
    }
    if let Some(metrics) = metrics {
        builder = builder.metrics(metrics);
    }
    for path in &args.plugins {
        builder = builder.component_file(path)?;
    }
    builder.build().context("cannot start the host")
}

/// Raise `limits.max_calls` to `at_least` (the server's in-flight
/// bound), never lower it.
fn raise_call_slots(config: &mut HostConfig, at_least: u32) {
    if config.limits.max_calls < at_least {
        tracing::info!(
            from = config.limits.max_calls,
            to = at_least,
            "limits.max_calls raised to the server's max_in_flight_calls"
        );
        config.limits.max_calls = at_least;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_in_flight_bound_raises_the_call_slots_never_lowers_them() {
        let mut config = HostConfig::default();
        config.limits.max_calls = 8;
        raise_call_slots(&mut config, 1024);
        assert_eq!(config.limits.max_calls, 1024);
        raise_call_slots(&mut config, 16);
        assert_eq!(config.limits.max_calls, 1024);
        raise_call_slots(&mut config, 0);
        assert_eq!(config.limits.max_calls, 1024);
    }
}
