//! Calls in flight through `Host::call_async`: `fetch_trend_signals`
//! against a loopback upstream that answers every request after 100 ms.
//!
//! Each figure is a closed loop: `callers` tasks each call, wait for the
//! envelope, and call again, on a two-worker tokio runtime; the window
//! opens once every caller has ended its first call (connections made,
//! pool slots touched: the steady state) and lasts a fixed time. The
//! ideal is `callers / 100 ms` calls per second; what the machine gets is
//! printed next to it, with p50 and p99 latency and the host's peak
//! resident memory from the first call to the window's end (`VmHWM`,
//! reset first).
//! The upstream is a hyper server on its own one-worker runtime in the
//! same process, so its memory and CPU count against the host's figures:
//! the figures are conservative. The first figure runs the same loop
//! through `harmonia serve` (in process, over loopback HTTP), whose
//! per-request MCP work is then on the same two cores.
//! Before each figure the bench waits, for at most 75 s, until enough of
//! loopback's ephemeral ports are free of connections an earlier figure or
//! run left in `TIME_WAIT` ([`super::ports`]).

use super::{Effort, Report, mcp, ports, stats};
use anyhow::{Context, Result};
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::skills::SkillSet;
use harmonia_host::{CallContext, Host};
use harmonia_serve::auth::Authenticator;
use harmonia_serve::auth::tokens::TokenStore;

use harmonia_serve::http::HttpServer;
use harmonia_serve::state::ServeState;
use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The tool every call runs.
const TOOL: &str = "fetch_trend_signals";

/// How long the upstream takes to answer.
const UPSTREAM_DELAY: Duration = Duration::from_millis(100);

/// The loopback upstream: `{"hits": []}` after [`UPSTREAM_DELAY`], over
/// keep-alive HTTP/1.1, until its runtime is dropped.
fn upstream() -> Result<(tokio::runtime::Runtime, SocketAddr)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bench-upstream")
        .enable_all()
        .build()?;
    // A real upstream's accept queue, not tokio's default of 1,024
    // (the kernel caps it at net.core.somaxconn).
    let listener = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        socket.listen(16_384)
    })?;
    let address = listener.local_addr()?;
    runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|_request| async {
                    tokio::time::sleep(UPSTREAM_DELAY).await;
                    hyper::Response::builder()
                        .header("content-type", "application/json")
                        .body(Full::new(Bytes::from_static(br#"{"hits": []}"#)))
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    Ok((runtime, address))
}

/// One closed-loop run's figures.
struct Run {
    calls_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// Resident memory when the window opened, its peak during it, and
    /// what stays resident once every call has ended.
    baseline_mib: f64,
    peak_mib: f64,
    after_mib: f64,
    /// Calls that did not succeed, by what they ended with.
    failed: BTreeMap<String, u64>,
    /// CPU time per call answered in the window, µs, by the threads that
    /// spent it ([`THREADS`]), then the whole process.
    cpu_us_per_call: Vec<(&'static str, f64)>,
}

/// The threads whose CPU a figure counts apart, by name: the server's
/// workers (the MCP figure), the callers' (which run the host's calls in
/// the other figures), and the upstream's.
const THREADS: [(&str, &str); 3] =
    [("server", "bench-serve"), ("callers", "bench-caller"), ("upstream", "bench-upstream")];

/// CPU seconds used so far by each of [`THREADS`], then by the process.
fn cpu_now() -> Vec<(&'static str, f64)> {
    let mut used: Vec<_> =
        THREADS.iter().map(|&(label, prefix)| (label, stats::threads_cpu_seconds(prefix))).collect();
    used.push(("process", stats::cpu_seconds(std::process::id())));
    used
}

/// The longest a closed loop waits for every caller's first call before
/// its window opens anyway.
const WARM_UP_LIMIT: Duration = Duration::from_secs(20);

/// A closed loop of `callers` on one runtime. Its window opens once every
/// caller has ended one call (so each client is connected and each pool
/// slot the load reaches has served a call: a long-running server's steady
/// state, not its first seconds), or after [`WARM_UP_LIMIT`], and lasts
/// `window`; only the calls that end inside it are counted. The peak
/// memory covers the warm-up too.
fn closed_loop<F, Fut>(callers: usize, window: Duration, call: F) -> Result<Run>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    // Named, so that a profile tells the callers from the server.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bench-caller")
        .enable_all()
        .build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let warmed = Arc::new(AtomicUsize::new(0));
    // The window's bounds, set once it opens.
    let bounds = Arc::new(std::sync::OnceLock::<(Instant, Instant)>::new());
    stats::reset_peak_resident();
    let baseline_mib = stats::resident_kib() as f64 / 1024.0;
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (call, stop, warmed, bounds) =
                (call.clone(), Arc::clone(&stop), Arc::clone(&warmed), Arc::clone(&bounds));
            runtime.spawn(async move {
                let (mut latencies, mut failed) = (Vec::new(), BTreeMap::<String, u64>::new());
                let mut first = true;
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let outcome = call().await;
                    let ended = Instant::now();
                    // A call refused at once (every slot refused, say) is
                    // ready without ever waiting: without a yield, callers
                    // looping on it would hold both workers, whose timers
                    // then never fire, and the window would never close.
                    tokio::task::yield_now().await;
                    if std::mem::take(&mut first) {
                        warmed.fetch_add(1, Ordering::Relaxed);
                    }
                    let Some(&(opens, closes)) = bounds.get() else { continue };
                    if ended < opens || ended > closes {
                        continue;
                    }
                    match outcome {
                        Ok(()) => latencies.push(ended - started),
                        Err(outcome) => *failed.entry(outcome).or_default() += 1,
                    }
                }
                (latencies, failed)
            })
        })
        .collect();
    let warm_up_ends = Instant::now() + WARM_UP_LIMIT;
    runtime.block_on(async {
        while warmed.load(Ordering::Relaxed) < callers && Instant::now() < warm_up_ends {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let opens = Instant::now();
    let _ = bounds.set((opens, opens + window));
    let cpu_at_open = cpu_now();
    runtime.block_on(async { tokio::time::sleep(window).await });
    let cpu_at_close = cpu_now();
    stop.store(true, Ordering::Relaxed);
    let finished: Vec<_> = runtime.block_on(async {
        let mut finished = Vec::with_capacity(tasks.len());
        for task in tasks {
            finished.push(task.await);
        }
        finished
    });
    let peak_mib = stats::peak_resident_kib() as f64 / 1024.0;
    drop(runtime);
    let after_mib = stats::resident_kib() as f64 / 1024.0;
    let (mut latencies, mut failed) = (Vec::new(), BTreeMap::new());
    for result in finished {
        let (task_latencies, task_failed) = result.context("a caller task panicked")?;
        latencies.extend(task_latencies);
        for (outcome, count) in task_failed {
            *failed.entry(outcome).or_default() += count;
        }
    }
    let completed = latencies.len();
    let cpu_us_per_call = cpu_at_open
        .iter()
        .zip(&cpu_at_close)
        .map(|(&(label, before), &(_, after))| (label, (after - before) * 1e6 / completed.max(1) as f64))
        .collect();
    let samples = stats::Samples::new(latencies);
    Ok(Run {
        calls_per_second: completed as f64 / window.as_secs_f64(),
        p50_ms: samples.p50_us() / 1000.0,
        p99_ms: samples.p99_us() / 1000.0,
        baseline_mib,
        peak_mib,
        after_mib,
        failed,
        cpu_us_per_call,
    })
}

/// A caller of `Host::call_async`.
fn host_caller(host: &Host) -> impl Fn() -> BoxedCall + Clone + Send + 'static {
    let host = host.clone();
    move || {
        let host = host.clone();
        Box::pin(async move {
            let context = CallContext::default();
            let record =
                host.call_recorded_async(TOOL, "{}", &context).await.map_err(|error| error.to_string())?;
            match record.envelope.error {
                None => Ok(()),
                // With the capability's answer, which says why.
                Some(error) => match record.receipts.last() {
                    Some(receipt) => Err(format!("{} ({})", error.code, receipt.status)),
                    None => Err(error.code),
                },
            }
        })
    }
}

/// A caller of `tools/call` on `url` (stateless, 2026-07-28) with reqwest.
fn mcp_caller(url: String, token: &str) -> Result<impl Fn() -> BoxedCall + Clone + Send + 'static> {
    let client = reqwest::Client::builder().http1_only().build()?;
    let body = mcp::stateless_body(TOOL, json!({}), 1).to_string();
    let headers = mcp::stateless_headers(TOOL, token);
    Ok(move || {
        let mut request = client.post(&url).body(body.clone());
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        Box::pin(async move {
            let response = request.send().await.map_err(|_| "no_response".to_owned())?;
            let status = response.status();
            let text = response.text().await.map_err(|_| "no_body".to_owned())?;
            if !status.is_success() {
                return Err(format!("http_{}", status.as_u16()));
            }
            let message = mcp::message(&text).map_err(|_| "not_json_rpc".to_owned())?;
            match &message["result"]["structuredContent"]["error"]["code"] {
                Value::Null if message["result"]["structuredContent"]["status"] == "success" => Ok(()),
                Value::String(code) => Err(code.clone()),
                _ => Err("not_a_result".into()),
            }
        }) as BoxedCall
    })
}

type BoxedCall = std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

fn host(upstream: SocketAddr, max_calls: u32) -> Result<Host> {
    let mut config = HostConfig::default();
    config.limits.max_calls = max_calls;
    config.public_web.routes.insert("https://hn.algolia.com".into(), format!("http://{upstream}"));
    Ok(Host::new(config)?)
}

/// Print one run's line and keep its figures under `key`.
fn report(out: &mut Report, label: &str, key: &str, ideal: f64, run: &Run) {
    let failed: u64 = run.failed.values().sum();
    out.say(format!(
        "  {label}: {:8.0} calls/s ({:5.1}% of the ideal {ideal:.0}), p50 {:7.1} ms, p99 {:7.1} ms",
        run.calls_per_second,
        100.0 * run.calls_per_second / ideal,
        run.p50_ms,
        run.p99_ms,
    ));
    out.say(format!(
        "      resident {:.0} MiB before, peak {:.0} MiB, {:.0} MiB after; {failed} failed {:?}",
        run.baseline_mib, run.peak_mib, run.after_mib, run.failed
    ));
    let cpu: Vec<String> = run
        .cpu_us_per_call
        .iter()
        .filter(|(_, us)| *us > 0.0)
        .map(|(label, us)| format!("{label} {us:.0}"))
        .collect();
    out.say(format!("      CPU per call answered, µs: {}", cpu.join(", ")));
    let cpu: serde_json::Map<String, Value> =
        run.cpu_us_per_call.iter().map(|(label, us)| ((*label).to_owned(), json!(us))).collect();
    out.insert(
        key,
        json!({"calls_per_s": run.calls_per_second, "ideal_per_s": ideal, "p50_ms": run.p50_ms,
            "p99_ms": run.p99_ms, "resident_before_mib": run.baseline_mib, "peak_resident_mib": run.peak_mib,
            "resident_after_mib": run.after_mib, "failed": run.failed, "cpu_us_per_call": cpu}),
    );
}

/// The same closed loop through `harmonia serve` over HTTP: stateless
/// `tools/call` from reqwest, the server in this process on its own
/// two-worker runtime.
fn through_serve(address: SocketAddr, callers: usize, window: Duration, out: &mut Report) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("harmonia-bench-inflight-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<()> {
        let token = mcp::token_file(&dir, TOOL)?;
        let serve_config = mcp::bench_serve_config();
        let state = ServeState::with_rate_limits(
            Liaison::new(host(address, serve_config.limits.max_in_flight_calls)?, SkillSet::builtin())?,
            serve_config.limits.clone(),
            serve_config.rate_limits.clone(),
            None,
        )?;
        // Which reset the slots get (`limits.slot_reset = "auto"`) depends
        // on whether this machine can swap: said, so runs compare.
        let reset = state.liaison().host().slot_reset();
        out.say(format!("  pool slots reset: {}", reset.describe()));
        out.insert("slot_reset", json!(reset.name()));
        let auth = Authenticator::new(Some(TokenStore::open(&dir.join("tokens.toml"))?), None);
        let server_runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bench-serve")
            .enable_all()
            .build()?;
        let listener = server_runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running =
            server_runtime.spawn(HttpServer::new(state, auth, &serve_config).run(listener, async move {
                let _ = stopped.await;
            }));
        // reqwest is built with rustls but no provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let caller = mcp_caller(url, &token)?;
        let run = closed_loop(callers, window, caller)?;
        let _ = stop.send(());
        let _ = server_runtime.block_on(running);
        let ideal = callers as f64 / UPSTREAM_DELAY.as_secs_f64();
        let label = format!("{callers:>6} MCP clients (harmonia serve, stateless tools/call)");
        report(out, &label, &format!("inflight_mcp_{callers}"), ideal, &run);
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

pub fn run(effort: &Effort, out: &mut Report) -> Result<()> {
    // Every call in flight holds a client socket, and the upstream its
    // server end.
    let open_files = harmonia_serve::open_files::raise();
    let window = effort.concurrency_window;
    out.say(format!(
        "\ncalls in flight, {TOOL} against an upstream answering after 100 ms ({:.0} s each, open files {open_files}):",
        window.as_secs_f64()
    ));
    // First, so that its peak memory is its own: a figure with thousands
    // of slots leaves the allocator holding memory the next one would count.
    {
        // A client's socket and an upstream connection a call.
        if let Some(line) = ports::wait_for(2 * effort.concurrency_mcp) {
            out.say(line);
        }
        let (_upstream, address) = upstream()?;
        through_serve(address, effort.concurrency_mcp, window, out)?;
    }
    // Calls per second by (callers, slots), to say whether more slots for
    // the same callers serve less (issue 42: no cliff when slots grow).
    let mut served: BTreeMap<(usize, u32), f64> = BTreeMap::new();
    for &(callers, bound) in effort.concurrency {
        // Each call in flight holds two descriptors here (the host's
        // socket and, the upstream being in this process, its server's):
        // a bound the limit cannot hold is refused, naming it, as
        // `harmonia serve` refuses one at start, rather than measured as
        // calls failing for want of a socket.
        let needed = 2 * u64::from(bound.min(callers as u32)) + 256;
        if open_files < needed {
            out.say(format!(
                "  {callers:>6} callers, {bound:>5} slots: refused: {needed} open files needed (two a call in flight, the upstream being in this process, and 256 spare); this process may open {open_files}"
            ));
            out.insert(&format!("inflight_{callers}_slots_{bound}"), json!({"refused_open_files": needed}));
            continue;
        }
        // An upstream connection a call in flight.
        if let Some(line) = ports::wait_for(callers.min(bound as usize)) {
            out.say(line);
        }
        // A fresh upstream each time, so no run inherits another's sockets.
        let (_upstream, address) = upstream()?;
        let host = host(address, bound)?;
        let run = closed_loop(callers, window, host_caller(&host))?;
        let ideal = callers.min(bound as usize) as f64 / UPSTREAM_DELAY.as_secs_f64();
        let label = format!("{callers:>6} callers of Host::call_async, {bound:>5} slots");
        report(out, &label, &format!("inflight_{callers}_slots_{bound}"), ideal, &run);
        served.insert((callers, bound), run.calls_per_second);
    }
    for (line, key, share) in slots_grown(&served) {
        out.say(line);
        out.insert(&key, json!(share));
    }
    Ok(())
}

/// The slot count the others are held against.
const BASE_SLOTS: u32 = 1_024;

/// For each figure with more slots than [`BASE_SLOTS`] and the same
/// callers, its calls per second as a share of the base figure's: the
/// line, its JSON key, and the share. More slots may serve more or the
/// same, never less (a cliff).
fn slots_grown(served: &BTreeMap<(usize, u32), f64>) -> Vec<(String, String, f64)> {
    let mut lines = Vec::new();
    for (&(callers, bound), &per_second) in served {
        let Some(&base) = served.get(&(callers, BASE_SLOTS)) else { continue };
        if bound <= BASE_SLOTS || base <= 0.0 {
            continue;
        }
        let share = per_second / base;
        lines.push((
            format!(
                "  {callers:>6} callers on {bound} slots serve {:.1}% of what {BASE_SLOTS} slots serve ({per_second:.0} against {base:.0} calls/s)",
                100.0 * share
            ),
            format!("slots_{bound}_over_{BASE_SLOTS}_{callers}_callers"),
            share,
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_slots_are_held_against_the_base_figure_for_the_same_callers_only() {
        let served = BTreeMap::from([
            ((1_000, 1_024), 9_400.0),
            ((10_000, 1_024), 9_700.0),
            ((10_000, 8_000), 10_670.0),
            ((10_000, 512), 5_000.0),
            ((2_000, 8_000), 9_000.0),
        ]);
        let lines = slots_grown(&served);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let (line, key, share) = &lines[0];
        assert_eq!(key, "slots_8000_over_1024_10000_callers");
        assert!((share - 1.1).abs() < 1e-9, "{share}");
        assert!(line.contains("110.0% of what 1024 slots serve"), "{line}");
    }
}
