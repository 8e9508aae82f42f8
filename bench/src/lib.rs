//! `harmonia bench`: what a sandboxed call costs on this machine.
//!
//! Figures, each from one run:
//! - a trivial guest's call (fresh instance every call), with the pooling
//!   allocator and without;
//! - each of the six tools on a 1,000-post workspace with mock public
//!   signals, sandboxed, against the same logic compiled natively;
//! - `suggest_posting_windows` on 100, 1,000 and 10,000 posts;
//! - loading the six plugins from the precompiled cache against compiling;
//! - how far past a 100 ms deadline a runaway loop is stopped (50 runs);
//! - calls per second on one and on two threads;
//! - resident memory growth over 100,000 calls;
//! - calls in flight through `Host::call_async` against a 100 ms upstream:
//!   1,000 and 10,000 callers ([`concurrency`]);
//! - the validator's verdicts per second over the catalogue's answers and
//!   one 64 KiB answer ([`validator`]);
//! - plugins from `plugins.lock`: a pull of a cached digest reference, and
//!   the verification of digests and signatures against a cached load
//!   ([`provenance`]).
//!
//! With `--only cluster --database URL` it measures what sharing state
//! through PostgreSQL costs, beside its floors ([`cluster`]); that part
//! runs only when named.
//!
//! With `--only peers --peers DIR` it measures `harmonia serve` against
//! Wassette and hyper-mcp built by `bench/peers/build.sh` ([`peers`]);
//! that part runs only when named.
//!
//! With `--plugin PATH` (repeatable) it measures those components instead
//! ([`plugins`]): load from the cache, a call once loaded, and a whole
//! `harmonia call --mock` process.
//!
//! Run it from a release build: `cargo run --release -p harmonia-cli -- bench`.
//! The CLI's `bench` command is [`run`]; the figures' lines go to the
//! writer it is given.

mod cluster;
mod concurrency;
mod mcp;
mod mcp_stages;
mod peers;
mod plugins;
mod ports;
mod provenance;
mod stats;
mod validator;
mod workload;

use anyhow::{Context, Result};
use harmonia_host::capability::workspace::memory::MemorySource;
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use serde_json::{Map, Value, json};
use stats::{Samples, resident_kib};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use workload::{CALLS, NativeWorkspace};

/// How much work each figure does.
struct Effort {
    trivial_calls: usize,
    tool_calls: usize,
    loads: usize,
    runaway_runs: usize,
    throughput_window: Duration,
    memory_calls: usize,
    /// Closed-loop runs through `Host::call_async`: (callers, async slots).
    concurrency: &'static [(usize, u32)],
    concurrency_window: Duration,
    /// MCP clients in the closed loop through `harmonia serve`.
    concurrency_mcp: usize,
}

const FULL: Effort = Effort {
    trivial_calls: 20_000,
    tool_calls: 1_000,
    loads: 5,
    runaway_runs: 50,
    throughput_window: Duration::from_secs(3),
    memory_calls: 100_000,
    concurrency: &[(1_000, 1_024), (10_000, 1_024), (10_000, 8_000), (10_000, 10_000)],
    concurrency_window: Duration::from_secs(5),
    concurrency_mcp: 1_000,
};

const QUICK: Effort = Effort {
    trivial_calls: 2_000,
    tool_calls: 100,
    loads: 2,
    runaway_runs: 5,
    throughput_window: Duration::from_millis(500),
    memory_calls: 5_000,
    concurrency: &[(100, 1_024), (1_000, 1_024)],
    concurrency_window: Duration::from_secs(1),
    concurrency_mcp: 100,
};

/// Where the bench's stdout goes: the CLI's writer, which ends the
/// process quietly when the reader has closed the pipe.
pub type Out = fn(std::fmt::Arguments<'_>);

/// The figures so far, and where the human-readable lines go (stderr when
/// stdout carries the JSON).
struct Report {
    json: bool,
    figures: Map<String, Value>,
    out: Out,
}

impl Report {
    fn say(&self, line: impl std::fmt::Display) {
        if self.json {
            eprintln!("{line}");
        } else {
            (self.out)(format_args!("{line}\n"));
        }
    }

    fn insert(&mut self, key: &str, value: Value) {
        self.figures.insert(key.to_owned(), value);
    }
}

fn bare_config(pooling: bool) -> HostConfig {
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config.limits.pooling = pooling;
    config
}

fn guest_host(config: HostConfig, guest: &str) -> Result<Host> {
    let bytes = harmonia_artifacts::bench_guest(guest).context("bench guest missing")?.to_vec();
    Ok(Host::builder(config).component(guest, bytes).build()?)
}

fn time_calls(host: &Host, tool: &str, input: &str, context: &CallContext, calls: usize) -> Samples {
    for _ in 0..calls.min(100) {
        let _ = host.call(tool, input, context);
    }
    Samples::new(
        (0..calls)
            .map(|_| {
                let started = Instant::now();
                let _ = host.call(tool, input, context);
                started.elapsed()
            })
            .collect(),
    )
}

/// The trivial call through `Host::call_async`, awaited one after another
/// inside one task on a current-thread runtime (no hop between threads).
fn time_async_calls(host: &Host, calls: usize) -> Result<Samples> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let context = CallContext::default();
    Ok(runtime.block_on(async {
        for _ in 0..calls.min(100) {
            let _ = host.call_async("trivial_probe", "{}", &context).await;
        }
        let mut samples = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            let _ = host.call_async("trivial_probe", "{}", &context).await;
            samples.push(started.elapsed());
        }
        Samples::new(samples)
    }))
}

fn trivial(effort: &Effort, out: &mut Report) -> Result<Host> {
    let context = CallContext::default();
    let pooled = guest_host(bare_config(true), "testing-trivial")?;
    let envelope = pooled.call("trivial_probe", "{}", &context)?;
    anyhow::ensure!(envelope.is_success(), "the trivial guest failed: {}", envelope.to_json());
    let with_pool = time_calls(&pooled, "trivial_probe", "{}", &context, effort.trivial_calls);
    let unpooled = guest_host(bare_config(false), "testing-trivial")?;
    let without_pool = time_calls(&unpooled, "trivial_probe", "{}", &context, effort.trivial_calls);
    let bytes = harmonia_artifacts::bench_guest("testing-trivial").context("bench guest missing")?.to_vec();
    let counted = Host::builder(bare_config(true))
        .component("testing-trivial", bytes)
        .metrics(harmonia_host::metrics::Metrics::new())
        .build()?;
    let with_metrics = time_calls(&counted, "trivial_probe", "{}", &context, effort.trivial_calls);
    let through_async = time_async_calls(&pooled, effort.trivial_calls)?;
    out.say(format!("trivial guest, fresh instance per call ({} calls):", effort.trivial_calls));
    out.say(format!("  pooling:     p50 {:8.1} us   p99 {:8.1} us", with_pool.p50_us(), with_pool.p99_us()));
    out.say(format!(
        "  no pooling:  p50 {:8.1} us   p99 {:8.1} us",
        without_pool.p50_us(),
        without_pool.p99_us()
    ));
    out.say(format!(
        "  pooling, metrics on: p50 {:8.1} us   p99 {:8.1} us",
        with_metrics.p50_us(),
        with_metrics.p99_us()
    ));
    out.say(format!(
        "  pooling, Host::call_async: p50 {:8.1} us   p99 {:8.1} us",
        through_async.p50_us(),
        through_async.p99_us()
    ));
    out.insert("trivial_call_us_p50", json!(with_pool.p50_us()));
    out.insert("trivial_call_us_p50_async", json!(through_async.p50_us()));
    out.insert("trivial_call_us_p99_async", json!(through_async.p99_us()));
    out.insert("trivial_call_us_p50_metrics", json!(with_metrics.p50_us()));
    out.insert("trivial_call_us_p99", json!(with_pool.p99_us()));
    out.insert("trivial_call_us_p50_no_pool", json!(without_pool.p50_us()));
    out.insert("trivial_call_us_p99_no_pool", json!(without_pool.p99_us()));
    Ok(pooled)
}

fn tools(effort: &Effort, out: &mut Report) -> Result<()> {
    let document = workload::document(workload::POSTS);
    let host = Host::builder(HostConfig::default())
        .public_web_mock(true)
        .workspace_source(Arc::new(MemorySource::new(document.clone(), false)))
        .build()?;
    let native = NativeWorkspace::new(document);
    let context = CallContext::for_workspace("ws_bench");
    let (mut p50, mut p99, mut native_p50, mut ratios) = (Map::new(), Map::new(), Map::new(), Map::new());
    out.say(format!(
        "\nsix tools, {} posts, mock public signals ({} calls each):",
        workload::POSTS,
        effort.tool_calls
    ));
    out.say(format!("  {:26} {:>11} {:>11} {:>11} {:>7}", "tool", "p50 us", "p99 us", "native p50", "ratio"));
    for (tool, input) in CALLS {
        let envelope = host.call(tool, input, &context)?;
        anyhow::ensure!(envelope.is_success(), "{tool} failed: {}", envelope.to_json());
        anyhow::ensure!(workload::run_native(tool, input, &native), "{tool} failed natively");
        let sandboxed = time_calls(&host, tool, input, &context, effort.tool_calls);
        let direct = Samples::new(
            (0..effort.tool_calls)
                .map(|_| {
                    let started = Instant::now();
                    std::hint::black_box(workload::run_native(tool, input, &native));
                    started.elapsed()
                })
                .collect(),
        );
        let ratio = sandboxed.p50_us() / direct.p50_us().max(0.001);
        out.say(format!(
            "  {tool:26} {:11.1} {:11.1} {:11.1} {ratio:7.2}",
            sandboxed.p50_us(),
            sandboxed.p99_us(),
            direct.p50_us()
        ));
        p50.insert(tool.into(), json!(sandboxed.p50_us()));
        p99.insert(tool.into(), json!(sandboxed.p99_us()));
        native_p50.insert(tool.into(), json!(direct.p50_us()));
        ratios.insert(tool.into(), json!(ratio));
    }
    out.insert("posting_windows_native_ratio", ratios["suggest_posting_windows"].clone());
    out.insert("tool_call_us_p50", Value::Object(p50));
    out.insert("tool_call_us_p99", Value::Object(p99));
    out.insert("tool_native_us_p50", Value::Object(native_p50));
    out.insert("tool_native_ratio", Value::Object(ratios));
    Ok(())
}

fn posts_scaling(effort: &Effort, out: &mut Report) -> Result<()> {
    let context = CallContext::for_workspace("ws_bench");
    let mut figures = Map::new();
    out.say("\nsuggest_posting_windows as the history grows (sandboxed p50):");
    for posts in [100, 1_000, 10_000] {
        let document = workload::document(posts);
        let host = Host::builder(HostConfig::default())
            .workspace_source(Arc::new(MemorySource::new(document, false)))
            .build()?;
        let calls = (effort.tool_calls * 1_000 / posts).clamp(20, effort.tool_calls * 10);
        let samples = time_calls(&host, "suggest_posting_windows", "{}", &context, calls);
        out.say(format!("  {posts:6} posts: {:10.1} us", samples.p50_us()));
        figures.insert(posts.to_string(), json!(samples.p50_us()));
    }
    out.insert("posting_windows_us_p50_by_posts", Value::Object(figures));
    Ok(())
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn loading(effort: &Effort, out: &mut Report) -> Result<()> {
    let cache = std::env::temp_dir().join(format!("harmonia-bench-cache-{}", std::process::id()));
    let build = |enabled: bool| -> Result<Duration> {
        let mut config = HostConfig::default();
        config.cache.enabled = enabled;
        config.cache.dir = Some(cache.clone());
        let started = Instant::now();
        let host = Host::new(config)?;
        let elapsed = started.elapsed();
        anyhow::ensure!(host.tools().count() == 6, "six tools");
        Ok(elapsed)
    };
    build(true)?; // warm the cache
    let cached = median_ms((0..effort.loads).map(|_| build(true)).collect::<Result<_>>()?);
    let compiled = median_ms((0..effort.loads).map(|_| build(false)).collect::<Result<_>>()?);
    let _ = std::fs::remove_dir_all(&cache);
    let speedup = compiled / cached;
    out.say(format!("\nstarting a host with the six tools (median of {}):", effort.loads));
    out.say(format!("  from the precompiled cache: {cached:8.1} ms"));
    out.say(format!("  compiling them:             {compiled:8.1} ms   ({speedup:.1}x slower)"));
    out.insert("cached_load_ms", json!(cached));
    out.insert("compile_load_ms", json!(compiled));
    out.insert("cached_load_speedup", json!(speedup));
    Ok(())
}

fn runaway(effort: &Effort, out: &mut Report) -> Result<()> {
    let deadline = Duration::from_millis(100);
    let mut config = bare_config(true);
    config.limits.max_deadline_ms = Some(100);
    let host = guest_host(config, "hostile-loop")?;
    let context = CallContext::default();
    let overshoots = Samples::new(
        (0..effort.runaway_runs)
            .map(|_| {
                let started = Instant::now();
                let envelope = host.call("hostile_loop", "{}", &context);
                debug_assert!(envelope.is_ok_and(|envelope| !envelope.is_success()));
                started.elapsed().saturating_sub(deadline)
            })
            .collect(),
    );
    let p50 = overshoots.percentile(50.0).as_secs_f64() * 1000.0;
    let max = overshoots.max().as_secs_f64() * 1000.0;
    out.say(format!(
        "\nrunaway loop, 100 ms deadline ({} runs): stopped p50 {p50:.2} ms, max {max:.2} ms past it",
        effort.runaway_runs
    ));
    out.insert("deadline_overshoot_ms_p50", json!(p50));
    out.insert("deadline_overshoot_ms_max", json!(max));
    Ok(())
}

fn calls_per_second(host: &Host, threads: usize, window: Duration) -> f64 {
    let stop = AtomicBool::new(false);
    let calls = AtomicU64::new(0);
    let context = CallContext::default();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = host.call("trivial_probe", "{}", &context);
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        std::thread::sleep(window);
        stop.store(true, Ordering::Relaxed);
    });
    calls.load(Ordering::Relaxed) as f64 / window.as_secs_f64()
}

fn throughput(host: &Host, effort: &Effort, out: &mut Report) {
    let one = calls_per_second(host, 1, effort.throughput_window);
    let two = calls_per_second(host, 2, effort.throughput_window);
    out.say(format!("\ntrivial calls per second: 1 thread {one:.0}, 2 threads {two:.0} ({:.2}x)", two / one));
    out.insert("calls_per_s_1_thread", json!(one));
    out.insert("calls_per_s_2_threads", json!(two));
    out.insert("thread_scaling", json!(two / one));
}

fn memory(host: &Host, effort: &Effort, out: &mut Report) {
    let context = CallContext::default();
    for _ in 0..1_000 {
        let _ = host.call("trivial_probe", "{}", &context);
    }
    let before = resident_kib();
    for _ in 0..effort.memory_calls {
        let _ = host.call("trivial_probe", "{}", &context);
    }
    let growth = (resident_kib() as f64 - before as f64) / 1024.0;
    out.say(format!("\nresident memory growth over {} calls: {growth:.2} MiB", effort.memory_calls));
    out.insert("memory_growth_mib", json!(growth));
    out.insert("memory_growth_calls", json!(effort.memory_calls));
}

/// A part of the table, for `--only`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Part {
    /// The trivial guest's call, its throughput and memory growth.
    Trivial,
    /// The six tools against native code, and posts scaling.
    Tools,
    /// Starting a host from the cache and compiling.
    Loading,
    /// A runaway loop past its deadline.
    Runaway,
    /// Calls in flight through `Host::call_async` and `harmonia serve`.
    Concurrency,
    /// The MCP round trip and `harmonia serve`'s start.
    Mcp,
    /// The validator's verdicts per second.
    Validator,
    /// Plugins from `plugins.lock`: a cached pull, and verification
    /// against a cached load.
    Provenance,
    /// `harmonia serve` against Wassette and hyper-mcp (needs `--peers
    /// DIR` from `bench/peers/build.sh`); only when named.
    Peers,
    /// Shared state in PostgreSQL: floors, guarded steps on each ledger,
    /// cluster-wide buckets, 1 to 3 replicas (needs `--database URL`);
    /// only when named.
    Cluster,
}

/// Run the parts in `only` (every part but `peers` when empty), or
/// measure `plugin_paths` instead; the table goes to `out` (with
/// `json_output`, one JSON object of every figure, and the table to
/// stderr). `peers_dir` is where `bench/peers/build.sh` left the peers;
/// `database` the PostgreSQL URL `cluster` measures.
#[allow(clippy::too_many_arguments)]
pub fn run(
    json_output: bool,
    quick: bool,
    plugin_paths: &[std::path::PathBuf],
    only: &[Part],
    peers_dir: Option<&std::path::Path>,
    database: Option<&str>,
    out: Out,
) -> Result<ExitCode> {
    let effort = if quick { &QUICK } else { &FULL };
    let mut out = Report { json: json_output, figures: Map::new(), out };
    if cfg!(debug_assertions) {
        eprintln!("harmonia: bench figures from a debug build are not representative; use --release");
    }
    if !plugin_paths.is_empty() {
        let plugin_effort = if quick {
            plugins::PluginEffort { loads: 3, calls: 50, processes: 3 }
        } else {
            plugins::PluginEffort { loads: 10, calls: 1_000, processes: 10 }
        };
        plugins::run(plugin_paths, &plugin_effort, &mut out)?;
        return finish(out);
    }
    let wanted = |part: Part| {
        only.contains(&part) || (only.is_empty() && !matches!(part, Part::Peers | Part::Cluster))
    };
    if wanted(Part::Trivial) {
        let trivial_host = trivial(effort, &mut out)?;
        throughput(&trivial_host, effort, &mut out);
        memory(&trivial_host, effort, &mut out);
    }
    if wanted(Part::Tools) {
        tools(effort, &mut out)?;
        posts_scaling(effort, &mut out)?;
    }
    if wanted(Part::Loading) {
        loading(effort, &mut out)?;
    }
    if wanted(Part::Runaway) {
        runaway(effort, &mut out)?;
    }
    if wanted(Part::Concurrency) {
        concurrency::run(effort, &mut out)?;
    }
    if wanted(Part::Mcp) {
        mcp::run(effort, &mut out)?;
    }
    if wanted(Part::Validator) {
        validator::run(quick, &mut out)?;
    }
    if wanted(Part::Provenance) {
        provenance::run(effort, &mut out)?;
    }
    if wanted(Part::Peers) {
        let dir = peers_dir.context("--only peers needs --peers DIR (built by bench/peers/build.sh)")?;
        peers::run(dir, effort, &mut out)?;
    }
    if wanted(Part::Cluster) {
        cluster::run(database, effort, &mut out)?;
    }
    finish(out)
}

fn finish(mut out: Report) -> Result<ExitCode> {
    out.insert("cores", json!(std::thread::available_parallelism().map(usize::from).unwrap_or(1)));
    out.insert("release_build", json!(!cfg!(debug_assertions)));
    if out.json {
        let json = serde_json::to_string(&Value::Object(out.figures))?;
        (out.out)(format_args!("{json}\n"));
    }
    Ok(ExitCode::SUCCESS)
}
