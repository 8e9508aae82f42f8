//! `harmonia bench`'s MCP figures: a `tools/call` round trip over
//! streamable HTTP on loopback against `Host::call` for the same mock
//! tool, and the time from starting `harmonia serve` to `/readyz`
//! answering, with a warm component cache.
//!
//! The client is a plain blocking HTTP/1.1 client (`ureq`) speaking the
//! JSON-RPC of one MCP session (initialize, then `tools/call` with the
//! session id), and the stateless 2026-07-28 form; no client SDK's cost is
//! in the figure, but the HTTP client's is.
//!
//! A guarded call (on a skill route) is timed on both revisions in the
//! same run: in an MCP session (handshake), and carried by a sealed handle
//! through the session ledger (stateless 2026-07-28). Each sample is a
//! new session's first call (the tool runs) and its second (the guard
//! refuses a retry after a success): the second differs between the two
//! revisions only by the carried state, opened, checked against the
//! ledger, the guard rebuilt from the trace, recorded and sealed again.
//!
//! Two floors put the MCP figure in context, both through the same client:
//! `GET /healthz` (HTTP alone), and the same call behind a bare hyper
//! endpoint on the same runtime (HTTP, the call run where its answer is
//! awaited as the server runs it, and the same result JSON; no MCP SDK, no
//! authentication, no bounds): what any server answering this call over
//! HTTP on this machine pays before MCP.

use super::stats::Samples;
use super::{Effort, Report};
use anyhow::{Context, Result};
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::skills::SkillSet;
use harmonia_host::{CallContext, Host};
use harmonia_serve::auth::Authenticator;
use harmonia_serve::auth::tokens::{TokenFile, TokenStore};
use harmonia_serve::config::ServeConfig;
use harmonia_serve::http::HttpServer;
use harmonia_serve::sessions::NEW_SESSION;
use harmonia_serve::state::ServeState;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(super) const TOOL: &str = "get_job_status";
pub(super) const INPUT: &str = r#"{"job_id": "job-7"}"#;

/// A client bounded by `limit` in each phase of a request but name
/// resolution: with a resolve timeout, ureq resolves on a new thread for
/// every request, even of an IP literal, which would put a thread's start
/// into every figure.
pub(super) fn loopback_agent(limit: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_connect(Some(limit))
        .timeout_send_request(Some(limit))
        .timeout_send_body(Some(limit))
        .timeout_recv_response(Some(limit))
        .timeout_recv_body(Some(limit))
        .build()
        .into()
}

struct Session {
    agent: ureq::Agent,
    url: String,
    token: String,
    id: String,
}

fn post(
    agent: &ureq::Agent,
    url: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<(Option<String>, String)> {
    let mut request = agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
    }
    let mut response = request.send(body.to_string())?;
    let id =
        response.headers().get("mcp-session-id").and_then(|value| value.to_str().ok()).map(str::to_owned);
    Ok((id, response.body_mut().read_to_string()?))
}

/// The last JSON-RPC message of a JSON or SSE body.
pub(super) fn message(body: &str) -> Result<Value> {
    let text = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| !data.is_empty())
        .unwrap_or(body);
    Ok(serde_json::from_str(text)?)
}

/// The body of a stateless (2026-07-28) `tools/call` of `tool`.
pub(super) fn stateless_body(tool: &str, arguments: Value, n: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

/// The headers of a stateless `tools/call` of `tool` with `token`.
pub(super) fn stateless_headers(tool: &str, token: &str) -> [(&'static str, String); 6] {
    [
        ("Authorization", format!("Bearer {token}")),
        ("Accept", "application/json, text/event-stream".into()),
        ("Content-Type", "application/json".into()),
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", tool.into()),
    ]
}

/// One stateless (2026-07-28) `tools/call`, no session.
pub(super) fn call_stateless(agent: &ureq::Agent, url: &str, token: &str, n: u64) -> Result<Value> {
    let body = stateless_body(TOOL, serde_json::from_str(INPUT)?, n);
    let mut request = agent.post(url);
    for (name, value) in stateless_headers(TOOL, token) {
        request = request.header(name, &value);
    }
    let mut response = request.send(body.to_string())?;
    message(&response.body_mut().read_to_string()?)
}

impl Session {
    fn open(url: &str, token: &str) -> Result<Self> {
        let agent = loopback_agent(Duration::from_secs(30));
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
        let (id, _) = post(&agent, url, token, None, &init)?;
        let id = id.context("no session id")?;
        post(
            &agent,
            url,
            token,
            Some(&id),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )?;
        Ok(Self { agent, url: url.to_owned(), token: token.to_owned(), id })
    }

    fn call(&self, n: u64) -> Result<Value> {
        let arguments: Value = serde_json::from_str(INPUT)?;
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": TOOL, "arguments": arguments}});
        let (_, text) = post(&self.agent, &self.url, &self.token, Some(&self.id), &body)?;
        message(&text)
    }

    /// End the MCP session (its place in the bounds freed at once).
    fn close(self) -> Result<()> {
        self.agent
            .delete(&self.url)
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-06-18")
            .call()?;
        Ok(())
    }
}

/// One stateless guarded `tools/call` on a skill route, carrying `handle`
/// (none: a new session); the answer and the handle for the next call.
fn call_carried(
    agent: &ureq::Agent,
    url: &str,
    token: &str,
    handle: Option<&str>,
    n: u64,
) -> Result<(Value, String)> {
    let mut body = stateless_body(TOOL, serde_json::from_str(INPUT)?, n);
    if let Some(handle) = handle {
        body["params"]["_meta"][harmonia_serve::sessions::handle::META_KEY] = json!(handle);
    }
    let mut request = agent.post(url);
    for (name, value) in stateless_headers(TOOL, token) {
        request = request.header(name, &value);
    }
    let mut response = request.send(body.to_string())?;
    let answer = message(&response.body_mut().read_to_string()?)?;
    let next = answer["result"]["_meta"][harmonia_serve::sessions::handle::META_KEY]
        .as_str()
        .with_context(|| format!("no session handle: {answer}"))?
        .to_owned();
    Ok((answer, next))
}

/// The guard's verdict in a call's answer: `success`, or the error code.
fn outcome(answer: &Value) -> &str {
    let envelope = &answer["result"]["structuredContent"];
    envelope["error"]["code"].as_str().or(envelope["status"].as_str()).unwrap_or("no envelope")
}

/// The credential the bench's in-process figures call as: the one its
/// token file holds.
pub(super) fn bench_principal() -> harmonia_serve::auth::Principal {
    harmonia_serve::auth::Principal {
        id: "token:tok_bench".into(),
        workspace: Some("ws_demo".into()),
        allow: [TOOL.to_owned()].into(),
        rate: None,
    }
}

/// The carried state of a stateless guarded session on its own (no
/// HTTP): a session's second step held by its handle and recorded,
/// `steps` times, each on a session whose first call ran. In one process
/// (`across` empty: the ledger in memory, the guard kept warm), or with
/// the second step on another replica sharing the key and the ledger file
/// in `across` (the guard rebuilt from the stored trace, the ledger on
/// disk).
fn carried_state(host: &Host, steps: usize, across: Option<&Path>) -> Result<Samples> {
    use harmonia_serve::config::SessionsConfig;
    use harmonia_serve::sessions::{Continue, GuardedSessions};
    let liaison = Liaison::new(host.clone(), SkillSet::builtin())?;
    let skill = liaison.skills().get("job-status").context("the job-status skill")?.clone();
    let mut config = bench_serve_config();
    config.limits.max_sessions = 1_000_000;
    config.limits.max_sessions_per_credential = 1_000_000;
    let sessions = match across {
        None => SessionsConfig::default(),
        Some(dir) => {
            let key = dir.join("session.key");
            std::fs::write(&key, "bench-key-shared-by-both-replicas-0123456789")?;
            std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
            let ledger = dir.join("sessions.db");
            let _ = std::fs::remove_file(&ledger);
            SessionsConfig {
                key_file: Some(key),
                ledger: Some(ledger.display().to_string()),
                ..SessionsConfig::default()
            }
        }
    };
    let first = GuardedSessions::new(&sessions, &config.limits, "bench-a")?;
    let second = match across {
        None => None,
        Some(_) => Some(GuardedSessions::new(&sessions, &config.limits, "bench-b")?),
    };
    let next = second.as_ref().unwrap_or(&first);
    let principal = bench_principal();
    let arguments: Value = serde_json::from_str(INPUT)?;
    let lease = Duration::from_secs(30);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let warm = steps.min(200);
    let mut times = Vec::with_capacity(steps + warm);
    runtime.block_on(async {
        for _ in 0..steps + warm {
            let mut held = first.hold(&liaison, &principal, &skill, &Continue::New, lease).await?;
            held.session().call_recorded_async(TOOL, &arguments).await?;
            let handle = first.record(held).await?;
            let started = Instant::now();
            let held = next.hold(&liaison, &principal, &skill, &Continue::Handle(handle), lease).await?;
            next.record(held).await?;
            times.push(started.elapsed());
        }
        anyhow::Ok(())
    })?;
    Ok(Samples::new(times.split_off(warm)))
}

/// A guarded call on both revisions, the figures into `out`.
fn guarded_round_trip(effort: &Effort, out: &mut Report, dir: &Path) -> Result<()> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() })?;
    let token = token_file(dir, TOOL)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut config = bench_serve_config();
    // Every sample opens two sessions; the stateless ones stay in the
    // ledger until their idle time passes.
    config.limits.max_sessions = 1_000_000;
    config.limits.max_sessions_per_credential = 1_000_000;
    let (url, stop, running) = serve_on(&runtime, &host, &config, dir)?;
    let skill = format!("{url}/skills/job-status");
    let agent = loopback_agent(Duration::from_secs(30));
    let samples = effort.tool_calls;
    let warm = samples.min(50);
    let mut times: [Vec<Duration>; 5] = Default::default();
    for n in 0..(warm + samples) as u64 {
        let session = Session::open(&skill, &token)?;
        let started = Instant::now();
        let first = session.call(n)?;
        let handshake_first = started.elapsed();
        let started = Instant::now();
        let second = session.call(n)?;
        let handshake_second = started.elapsed();
        session.close()?;
        let started = Instant::now();
        let (carried_first, handle) = call_carried(&agent, &skill, &token, Some(NEW_SESSION), n)?;
        let stateless_first = started.elapsed();
        let started = Instant::now();
        let (carried_second, _) = call_carried(&agent, &skill, &token, Some(&handle), n)?;
        let stateless_second = started.elapsed();
        let started = Instant::now();
        let unguarded = call_stateless(&agent, &url, &token, n)?;
        let unguarded_call = started.elapsed();
        let verdicts = [&first, &second, &carried_first, &carried_second, &unguarded].map(outcome);
        anyhow::ensure!(
            verdicts == ["success", "call_refused", "success", "call_refused", "success"],
            "a guarded call did not answer as the guard says: {verdicts:?}"
        );
        if n >= warm as u64 {
            let each = [handshake_first, handshake_second, stateless_first, stateless_second, unguarded_call];
            for (kept, time) in times.iter_mut().zip(each) {
                kept.push(time);
            }
        }
    }
    let _ = stop.send(());
    let _ = runtime.block_on(running);
    let [handshake_first, handshake_second, stateless_first, stateless_second, unguarded] =
        times.map(Samples::new);
    let carried = carried_state(&host, samples * 10, None)?;
    let replicas = dir.join("replicas");
    std::fs::create_dir_all(&replicas)?;
    let carried_across = carried_state(&host, samples * 10, Some(&replicas))?;
    out.say(format!(
        "\nGuarded tools/call on the skill route job-status, {TOOL} (mock), {samples} sessions:"
    ));
    for (what, samples) in [
        ("handshake, first call:   ", &handshake_first),
        ("stateless, first call:   ", &stateless_first),
        ("handshake, second call:  ", &handshake_second),
        ("stateless, second call:  ", &stateless_second),
        ("unguarded stateless call:", &unguarded),
    ] {
        out.say(format!("  {what}  p50 {:8.1} us   p99 {:8.1} us", samples.p50_us(), samples.p99_us()));
    }
    out.say(format!(
        "  the carried state alone, one process (handle opened and checked, ledger step held, step recorded, next handle sealed): p50 {:.1} us   p99 {:.1} us",
        carried.p50_us(),
        carried.p99_us()
    ));
    out.say(format!(
        "  the same, the step on another replica (ledger file shared, guard rebuilt from the trace): p50 {:.1} us   p99 {:.1} us",
        carried_across.p50_us(),
        carried_across.p99_us()
    ));
    out.say(format!(
        "  stateless second call - handshake second call: {:.1} us at p50 (the carried state and the SDK's per-request service against its session task)",
        stateless_second.p50_us() - handshake_second.p50_us()
    ));
    out.insert("mcp_guarded_handshake_first_us_p50", json!(handshake_first.p50_us()));
    out.insert("mcp_guarded_stateless_first_us_p50", json!(stateless_first.p50_us()));
    out.insert("mcp_guarded_handshake_second_us_p50", json!(handshake_second.p50_us()));
    out.insert("mcp_guarded_stateless_second_us_p50", json!(stateless_second.p50_us()));
    out.insert("mcp_guarded_unguarded_us_p50", json!(unguarded.p50_us()));
    out.insert("mcp_guarded_carried_state_us_p50", json!(carried.p50_us()));
    out.insert("mcp_guarded_carried_state_us_p99", json!(carried.p99_us()));
    out.insert("mcp_guarded_carried_across_replicas_us_p50", json!(carried_across.p50_us()));
    Ok(())
}

/// The serve config of the bench: one credential drives every call, so
/// its shares are the server's whole bounds, and its rate limit is on
/// (the buckets are checked on every call) at a rate no run reaches.
pub(super) fn bench_serve_config() -> ServeConfig {
    let mut config = ServeConfig::default();
    let limits = &mut config.limits;
    limits.max_sessions_per_credential = limits.max_sessions;
    limits.max_connections_per_credential = limits.max_connections;
    limits.max_in_flight_calls_per_credential = limits.max_in_flight_calls;
    config.rate_limits.calls_per_second = 1e9;
    config.rate_limits.burst = 1_000_000_000;
    config
}

/// A `harmonia serve` HTTP server for `host` under `config` on `runtime`,
/// its credentials in `dir`: the `/mcp` URL and what stops it.
pub(super) fn serve_on(
    runtime: &tokio::runtime::Runtime,
    host: &Host,
    config: &ServeConfig,
    dir: &Path,
) -> Result<(String, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>)> {
    let state = ServeState::from_config(Liaison::new(host.clone(), SkillSet::builtin())?, config, None)?;
    let auth = Authenticator::new(Some(TokenStore::open(&dir.join("tokens.toml"))?), None);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let server = HttpServer::new(state, auth, config);
    let running = runtime.spawn(server.run(listener, async move {
        let _ = stopped.await;
    }));
    Ok((url, stop, running))
}

/// The cost of the per-tenant checks on their own, per call: the rate
/// buckets, the credential's call permit taken and given back, and a
/// session's owner looked up (ns, median of `calls`).
fn tenant_checks_ns(calls: usize) -> f64 {
    use harmonia_serve::replica::SessionOwners;
    use harmonia_serve::sessions::GuardedSessions;
    use harmonia_serve::tenants::Tenants;
    let config = bench_serve_config();
    let tenants = std::sync::Arc::new(Tenants::new(config.limits.clone(), config.rate_limits.clone()));
    let Ok(guarded) = GuardedSessions::new(&config.sessions, &config.limits, "bench") else {
        return f64::NAN;
    };
    let owners = SessionOwners::new(std::sync::Arc::new(guarded));
    let principal = bench_principal();
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        // The local buckets never wait: their future is ready at once.
        let admitted = futures_executor::block_on(tenants.admit_call(&principal, TOOL)).is_ok();
        let permit = std::sync::Arc::clone(&tenants.calls(&principal.id)).try_acquire_owned();
        let owned = owners.owner("a.0b6f2c").as_ref() == Some(&principal);
        if let Ok(permit) = permit {
            tenants.give_back(&principal.id, permit);
        }
        samples.push(started.elapsed());
        std::hint::black_box((admitted, owned));
    }
    samples.sort();
    samples[samples.len() / 2].as_nanos() as f64
}

/// A tokens file in `dir` granting `tool` in `ws_demo`; the token.
pub(super) fn token_file(dir: &Path, tool: &str) -> Result<String> {
    let mut file = TokenFile::default();
    let (token, _) = file.add("ws_demo", vec![tool.to_owned()])?;
    file.save(&dir.join("tokens.toml"))?;
    Ok(token)
}

/// The JSON-RPC response to a `tools/call` request body: the call run
/// where its answer is awaited (as the server runs it), its envelope as
/// the server's MCP result.
async fn bare_answer(host: Host, body: &[u8]) -> Result<Value> {
    let request: Value = serde_json::from_slice(body)?;
    let arguments = request["params"]["arguments"].to_string();
    let envelope = host
        .call_recorded_async(TOOL, &arguments, &CallContext::for_workspace("ws_demo"))
        .await
        .map(|record| record.envelope)?;
    Ok(json!({"jsonrpc": "2.0", "id": request["id"], "result": harmonia_serve::catalog::result(envelope)}))
}

/// Serves [`bare_answer`] over HTTP/1.1 on `listener` until the runtime
/// stops.
async fn bare_endpoint(listener: tokio::net::TcpListener, host: Host) {
    use http_body_util::{BodyExt, Full};
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        let host = host.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let host = host.clone();
                    async move {
                        let answer = match request.into_body().collect().await {
                            Ok(body) => bare_answer(host, &body.to_bytes()).await,
                            Err(error) => Err(error.into()),
                        };
                        let (status, body) = match answer {
                            Ok(answer) => (200, answer.to_string()),
                            Err(error) => (500, error.to_string()),
                        };
                        hyper::Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(hyper::body::Bytes::from(body)))
                    }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
        });
    }
}

/// `calls` timed round trips of `call` (given a request id), after one
/// that must succeed and 200 unmeasured ones.
fn timed_calls(what: &str, calls: usize, mut call: impl FnMut(u64) -> Result<Value>) -> Result<Samples> {
    let first = call(0)?;
    anyhow::ensure!(first["result"]["structuredContent"]["status"] == "success", "{what} failed: {first}");
    for n in 1..=calls.min(200) {
        call(n as u64)?;
    }
    timed(calls, |n| call(n).map(drop))
}

/// `calls` timed runs of `each`, given its run's number.
pub(super) fn timed(calls: usize, mut each: impl FnMut(u64) -> Result<()>) -> Result<Samples> {
    let samples = (0..calls as u64)
        .map(|n| {
            let started = Instant::now();
            each(n).map(|()| started.elapsed())
        })
        .collect::<Result<_>>()?;
    Ok(Samples::new(samples))
}

fn round_trip(effort: &Effort, out: &mut Report, dir: &Path) -> Result<()> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() })?;
    let token = token_file(dir, TOOL)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (url, stop, running) = serve_on(&runtime, &host, &bench_serve_config(), dir)?;
    let mut unlimited_config = bench_serve_config();
    unlimited_config.rate_limits.enabled = false;
    let (unlimited_url, stop_unlimited, running_unlimited) =
        serve_on(&runtime, &host, &unlimited_config, dir)?;
    let bare_listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let bare_url = format!("http://{}/", bare_listener.local_addr()?);
    runtime.spawn(bare_endpoint(bare_listener, host.clone()));
    let session = Session::open(&url, &token)?;
    let calls = effort.tool_calls * 5;
    let mcp = timed_calls("the MCP call", calls, |n| session.call(n))?;
    let stateless =
        timed_calls("the stateless call", calls, |n| call_stateless(&session.agent, &url, &token, n))?;
    let unlimited = timed_calls("the stateless call without rate limits", calls, |n| {
        call_stateless(&session.agent, &unlimited_url, &token, n)
    })?;
    let checks_ns = tenant_checks_ns(calls);
    let bare = timed_calls("the bare endpoint's call", calls, |n| {
        call_stateless(&session.agent, &bare_url, &token, n)
    })?;
    let health = format!("{}/healthz", url.trim_end_matches("/mcp"));
    let floor = timed(calls, |_| {
        session.agent.get(&health).call()?.body_mut().read_to_string()?;
        Ok(())
    })?;
    let context = CallContext::for_workspace("ws_demo");
    let direct = super::time_calls(&host, TOOL, INPUT, &context, calls);
    let _ = stop.send(());
    let _ = runtime.block_on(running);
    let _ = stop_unlimited.send(());
    let _ = runtime.block_on(running_unlimited);
    let overhead = mcp.p50_us() - direct.p50_us();
    out.say(format!("\nMCP tools/call round trip on loopback, {TOOL} (mock), {calls} calls:"));
    out.say(format!(
        "  in an MCP session:          p50 {:8.1} us   p99 {:8.1} us",
        mcp.p50_us(),
        mcp.p99_us()
    ));
    out.say(format!(
        "  Host::call:                 p50 {:8.1} us   p99 {:8.1} us",
        direct.p50_us(),
        direct.p99_us()
    ));
    out.say(format!(
        "  stateless (2026-07-28):     p50 {:8.1} us   p99 {:8.1} us",
        stateless.p50_us(),
        stateless.p99_us()
    ));
    out.say(format!(
        "  stateless, rate limits off: p50 {:8.1} us   p99 {:8.1} us   (the same server without its buckets)",
        unlimited.p50_us(),
        unlimited.p99_us()
    ));
    out.say(format!(
        "  per-tenant checks alone (rate buckets, the credential's permit, a session's owner): {checks_ns:.0} ns a call"
    ));
    out.say(format!(
        "  GET /healthz, same client:  p50 {:8.1} us   p99 {:8.1} us   (the HTTP floor)",
        floor.p50_us(),
        floor.p99_us()
    ));
    out.say(format!(
        "  bare endpoint, same call:   p50 {:8.1} us   p99 {:8.1} us   (hyper, no MCP SDK, no authentication)",
        bare.p50_us(),
        bare.p99_us()
    ));
    out.say(format!(
        "  overhead p50: {overhead:.1} us in a session, {:.1} us stateless; {:.1} us for the bare endpoint (the floor of any server here)",
        stateless.p50_us() - direct.p50_us(),
        bare.p50_us() - direct.p50_us()
    ));
    out.insert("mcp_call_us_p50", json!(mcp.p50_us()));
    out.insert("mcp_call_us_p99", json!(mcp.p99_us()));
    out.insert("mcp_host_call_us_p50", json!(direct.p50_us()));
    out.insert("mcp_overhead_us_p50", json!(overhead));
    out.insert("mcp_stateless_call_us_p50", json!(stateless.p50_us()));
    out.insert("mcp_stateless_call_us_p99", json!(stateless.p99_us()));
    out.insert("mcp_http_floor_us_p50", json!(floor.p50_us()));
    out.insert("mcp_stateless_unlimited_us_p50", json!(unlimited.p50_us()));
    out.insert("mcp_tenant_checks_ns", json!(checks_ns));
    out.insert("mcp_bare_endpoint_us_p50", json!(bare.p50_us()));
    out.insert("mcp_bare_endpoint_us_p99", json!(bare.p99_us()));
    Ok(())
}

fn start_to_ready(dir: &Path) -> Result<Duration> {
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .args(["serve", "--http", "127.0.0.1:0", "--mock", "--serve-config"])
        .arg(dir.join("serve.toml"))
        .env("XDG_DATA_HOME", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let base = line.trim().rsplit(' ').next().unwrap_or_default().to_owned();
    let agent = loopback_agent(Duration::from_secs(5));
    let ready = loop {
        if agent.get(&format!("{base}/readyz")).call().is_ok() {
            break started.elapsed();
        }
        anyhow::ensure!(started.elapsed() < Duration::from_secs(60), "serve never became ready");
        std::thread::sleep(Duration::from_micros(200));
    };
    let _ = child.kill();
    let _ = child.wait();
    Ok(ready)
}

/// The MCP figures.
pub fn run(effort: &Effort, out: &mut Report) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("harmonia-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<()> {
        crate::mcp_stages::run(effort, out, &dir)?;
        round_trip(effort, out, &dir)?;
        guarded_round_trip(effort, out, &dir)?;
        std::fs::write(dir.join("serve.toml"), "tokens_file = \"tokens.toml\"\n")?;
        start_to_ready(&dir)?; // warms the cache
        let mut times: Vec<Duration> =
            (0..effort.loads).map(|_| start_to_ready(&dir)).collect::<Result<_>>()?;
        times.sort();
        let median = times[times.len() / 2].as_secs_f64() * 1000.0;
        out.say(format!(
            "  harmonia serve start to ready (warm cache, median of {}): {median:.1} ms",
            effort.loads
        ));
        out.insert("mcp_serve_ready_ms", json!(median));
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
