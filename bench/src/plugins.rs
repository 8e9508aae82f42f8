//! `harmonia bench --plugin PATH`: what one plugin costs, in any language.
//!
//! For each component, with the precompiled cache warm:
//! - loading it into a host, median of several loads, and two parts of a
//!   load (the SHA-256, computed alongside the rest for large components,
//!   and reading the shape);
//! - one mock call once loaded (p50, p99);
//! - a whole `harmonia call TOOL --mock --plugin PATH` process: wall time
//!   (median) and peak resident memory.

use super::{Report, median_ms, time_calls};
use anyhow::{Context, Result};
use harmonia_host::component_shape::ComponentShape;
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much work each plugin figure does.
pub struct PluginEffort {
    /// Loads timed.
    pub loads: usize,
    /// Calls timed.
    pub calls: usize,
    /// Whole processes timed.
    pub processes: usize,
}

fn config() -> HostConfig {
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config.mock = true;
    config
}

fn load(path: &Path, bytes: &[u8]) -> Result<Host> {
    Ok(Host::builder(config()).component_from(path, bytes.to_vec()).build()?)
}

fn timed<T>(work: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let started = Instant::now();
    let value = work()?;
    Ok((value, started.elapsed()))
}

/// Median of `runs` timings of `work`.
fn median_of<T>(runs: usize, mut work: impl FnMut() -> Result<T>) -> Result<f64> {
    let times = (0..runs).map(|_| timed(&mut work).map(|(_, elapsed)| elapsed)).collect::<Result<_>>()?;
    Ok(median_ms(times))
}

/// One `harmonia call` process: wall time and peak resident KiB.
///
/// Linux counts a child's memory before `exec` (a copy of this process)
/// in its peak, so these run before this process loads anything.
fn process(path: &Path, tool: &str) -> Result<(Duration, u64)> {
    let started = Instant::now();
    let child = Command::new(std::env::current_exe()?)
        .args(["call", tool, "--mock", "--plugin"])
        .arg(path)
        .env_remove("HARMONIA_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let (status, peak_kib) = peak::wait(child)?;
    anyhow::ensure!(status == 0, "`harmonia call {tool} --mock --plugin {}` exited {status}", path.display());
    Ok((started.elapsed(), peak_kib))
}

/// Whole processes: median wall time and peak memory, the cache warmed by
/// a first process.
fn processes(path: &Path, tool: &str, effort: &PluginEffort) -> Result<(f64, u64)> {
    process(path, tool)?;
    let mut walls = Vec::new();
    let mut peak_kib = 0;
    for _ in 0..effort.processes {
        let (wall, peak) = process(path, tool)?;
        walls.push(wall);
        peak_kib = peak_kib.max(peak);
    }
    Ok((median_ms(walls), peak_kib))
}

/// The tool a component exports, read without loading it: its descriptor
/// comes from `harmonia inspect --json` in a child process.
fn tool_name(path: &Path) -> Result<String> {
    let output = Command::new(std::env::current_exe()?)
        .args(["inspect", "--json"])
        .arg(path)
        .env_remove("HARMONIA_CONFIG")
        .stderr(Stdio::null())
        .output()?;
    let report: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("`harmonia inspect --json {}` printed no report", path.display()))?;
    report["descriptor"]["name"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("{} does not load: {}", path.display(), report["descriptorError"]))
}

fn one(
    path: &Path,
    tool: &str,
    process: (f64, u64),
    effort: &PluginEffort,
    out: &mut Report,
) -> Result<Value> {
    let (process_ms, peak_kib) = process;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let host = load(path, &bytes)?;
    let context = CallContext::for_workspace("ws_bench");
    let envelope = host.call(tool, "{}", &context)?;
    anyhow::ensure!(envelope.is_success(), "{tool} failed on {{}}: {}", envelope.to_json());

    let hash_ms = median_of(effort.loads, || Ok(harmonia_contract::digest::sha256_hex(&bytes)))?;
    let shape_ms = median_of(effort.loads, || Ok(ComponentShape::read(&bytes)?))?;
    let load_ms = median_of(effort.loads, || load(path, &bytes))?;

    let calls = time_calls(&host, tool, "{}", &context, effort.calls);
    out.say(format!("  {tool} ({}, {:.1} MB):", path.display(), bytes.len() as f64 / 1e6));
    out.say(format!(
        "    load from cache {load_ms:7.1} ms  (of which shape {shape_ms:.1}; the sha-256, {hash_ms:.1}, runs alongside)"
    ));
    out.say(format!("    call once loaded p50 {:9.1} us   p99 {:9.1} us", calls.p50_us(), calls.p99_us()));
    out.say(format!(
        "    whole `harmonia call --mock` process {process_ms:7.1} ms, peak {:.1} MiB",
        peak_kib as f64 / 1024.0
    ));
    Ok(json!({
        "tool": tool,
        "bytes": bytes.len(),
        "load_ms": load_ms,
        "load_hash_ms": hash_ms,
        "load_shape_ms": shape_ms,
        "call_us_p50": calls.p50_us(),
        "call_us_p99": calls.p99_us(),
        "process_ms": process_ms,
        "process_peak_mib": peak_kib as f64 / 1024.0,
    }))
}

/// Every plugin's figures, under `plugins` in the report.
pub fn run(paths: &[PathBuf], effort: &PluginEffort, out: &mut Report) -> Result<()> {
    out.say(format!(
        "plugins, warm cache (medians of {} loads, {} calls, {} processes):",
        effort.loads, effort.calls, effort.processes
    ));
    let mut measured = Vec::new();
    for path in paths {
        let tool = tool_name(path)?;
        let process = processes(path, &tool, effort)?;
        measured.push((path, tool, process));
    }
    let mut figures = Map::new();
    for (path, tool, process) in measured {
        figures.insert(path.display().to_string(), one(path, &tool, process, effort, out)?);
    }
    out.insert("plugins", Value::Object(figures));
    Ok(())
}

/// Waiting for a child with its resource usage.
mod peak {
    use std::process::Child;

    /// Wait for `child`; its exit code (or 128 + signal) and peak resident
    /// memory in KiB.
    #[allow(unsafe_code)]
    pub fn wait(child: Child) -> std::io::Result<(i32, u64)> {
        let pid = child.id() as libc::pid_t;
        let mut status: libc::c_int = 0;
        // SAFETY: all-zero is a valid `rusage`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `pid` is our child, not yet waited for (we own
            // `child` and never call its `wait`); both pointers are valid
            // for the call.
            let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if waited == pid {
                break;
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
        let code =
            if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
        Ok((code, usage.ru_maxrss.max(0) as u64))
    }
}
