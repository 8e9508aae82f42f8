//! Where a stateless MCP `tools/call` over HTTP spends its time: each
//! stage measured in the same run, with the same keep-alive client, each
//! adding one thing to the one before:
//! - (a) a TCP echo of the request's bytes (a thread per connection);
//! - (b) a hyper endpoint answering a fixed body of the answer's size;
//! - (c) (b), the request parsed into rmcp's message types and a fixed
//!   result serialized from them;
//! - (d) `Host::call` and `Host::call_async` of the tool, in process: in
//!   a tight loop, and with the thread asleep for (c)'s round trip before
//!   each call, as a server's core sits between requests (what waking
//!   from that costs the call is the machine's, not the path's);
//! - (e) (c) and (d) together: the call run where its answer is awaited,
//!   and the call's own time inside that endpoint;
//! - (f) the stateless MCP path of `harmonia serve` (rmcp's service, our
//!   handler) with a fixed principal: no authentication, no rate limits,
//!   no door (bounds, gate);
//! - (g) `harmonia serve` as it runs: with the door and authentication,
//!   then with rate limits too.
//!
//! And the client's own share: the same fixed-body request sent by ureq
//! and by a raw socket writer that reads the answer by its length.

use crate::mcp::{
    INPUT, TOOL, bench_serve_config, loopback_agent, serve_on, stateless_body, stateless_headers, token_file,
};
use crate::stats::Samples;
use crate::{Effort, Report};
use anyhow::Result;
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A request's bytes as the bench's client sends them (for the echo and
/// the raw client).
fn request_bytes(path: &str, address: &str, token: &str, body: &str) -> Vec<u8> {
    let mut text = format!("POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in stateless_headers(TOOL, token) {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text.into_bytes()
}

/// (a): a thread per connection echoing what it reads.
fn echo_server() -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut stream = stream;
                let mut buffer = [0u8; 65536];
                while let Ok(read) = stream.read(&mut buffer) {
                    if read == 0 || stream.write_all(&buffer[..read]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok(address)
}

fn echo_round_trips(address: &str, bytes: &[u8], calls: usize) -> Result<Samples> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    let mut answer = vec![0u8; bytes.len()];
    let mut once = || -> Result<()> {
        stream.write_all(bytes)?;
        stream.read_exact(&mut answer)?;
        Ok(())
    };
    for _ in 0..calls.min(200) {
        once()?;
    }
    crate::mcp::timed(calls, |_| once())
}

/// What the endpoint of (b), (c) or (e) does with a request body.
#[derive(Clone, Copy)]
enum Stage {
    Fixed,
    Parsed,
    Called,
}

/// How long each call took inside the endpoint of (e).
type CallTimes = Arc<Mutex<Vec<Duration>>>;

/// One answer of `stage`: the JSON-RPC response text.
async fn answer(stage: Stage, host: &Host, body: &[u8], fixed: &str, times: &CallTimes) -> Result<String> {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage, ServerResult};
    if let Stage::Fixed = stage {
        return Ok(fixed.to_owned());
    }
    let ClientJsonRpcMessage::Request(request) = serde_json::from_slice::<ClientJsonRpcMessage>(body)? else {
        anyhow::bail!("not a request");
    };
    let ClientRequest::CallToolRequest(call) = &request.request else { anyhow::bail!("not tools/call") };
    let result = match stage {
        Stage::Called => {
            let arguments = Value::Object(call.params.arguments.clone().unwrap_or_default()).to_string();
            let context = CallContext::for_workspace("ws_demo");
            let started = Instant::now();
            let record = host.call_recorded_async(TOOL, &arguments, &context).await?;
            if let Ok(mut times) = times.lock() {
                times.push(started.elapsed());
            }
            harmonia_serve::catalog::result(record.envelope)
        }
        _ => rmcp::model::CallToolResult::structured(serde_json::from_str(fixed_envelope())?),
    };
    let message = ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), request.id);
    Ok(serde_json::to_string(&message)?)
}

/// The envelope the fixed answers carry (the mock job's, near its size).
fn fixed_envelope() -> &'static str {
    r#"{"status":"success","data":{"job":{"id":"job-7","title":"Repost benchmark results","status":"failed","stage":"publish","error":"provider_rate_limited"}},"error":null,"evidence":[{"evidenceId":"ev-0000000000000000","source":"workspace_job","provenance":"mock","reference":"job-7"}]}"#
}

/// A hyper HTTP/1.1 endpoint answering as `stage` says, on a free port.
fn stage_endpoint(
    runtime: &tokio::runtime::Runtime,
    stage: Stage,
    host: Host,
    fixed: String,
    times: CallTimes,
) -> Result<String> {
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let address = listener.local_addr()?.to_string();
    runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let (host, fixed, times) = (host.clone(), fixed.clone(), Arc::clone(&times));
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let (host, fixed, times) = (host.clone(), fixed.clone(), Arc::clone(&times));
                        async move {
                            let body = request.into_body().collect().await.map(|body| body.to_bytes());
                            let (status, text) = match body {
                                Ok(body) => match answer(stage, &host, &body, &fixed, &times).await {
                                    Ok(text) => (200, text),
                                    Err(error) => (500, error.to_string()),
                                },
                                Err(error) => (400, error.to_string()),
                            };
                            hyper::Response::builder()
                                .status(status)
                                .header("content-type", "application/json")
                                .body(Full::new(hyper::body::Bytes::from(text)))
                        }
                    });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    Ok(address)
}

/// Round trips of ureq's keep-alive agent to `url` with `body`.
fn ureq_round_trips(
    agent: &ureq::Agent,
    url: &str,
    token: &str,
    body: &str,
    calls: usize,
) -> Result<Samples> {
    let once = || -> Result<()> {
        let mut request = agent.post(url);
        for (name, value) in stateless_headers(TOOL, token) {
            request = request.header(name, &value);
        }
        let mut response = request.send(body)?;
        anyhow::ensure!(response.status() == 200, "{url}: {}", response.status());
        response.body_mut().read_to_string()?;
        Ok(())
    };
    for _ in 0..calls.min(200) {
        once()?;
    }
    crate::mcp::timed(calls, |_| once())
}

/// Round trips of a raw socket writer: the prebuilt request written, the
/// answer read by its `Content-Length`.
fn raw_round_trips(address: &str, bytes: &[u8], calls: usize) -> Result<Samples> {
    let stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut once = || -> Result<()> {
        writer.write_all(bytes)?;
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            anyhow::ensure!(reader.read_line(&mut line)? > 0, "the server closed");
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse()?;
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        Ok(())
    };
    for _ in 0..calls.min(200) {
        once()?;
    }
    crate::mcp::timed(calls, |_| once())
}

/// (f): rmcp's streamable HTTP service with our handler for a fixed
/// principal, alone on a port: no authentication, no rate limits, no door.
fn bare_mcp_path(runtime: &tokio::runtime::Runtime, host: &Host) -> Result<String> {
    use harmonia_host::liaison::session::Liaison;
    use harmonia_host::liaison::skills::SkillSet;
    use harmonia_serve::handler::McpServer;
    use harmonia_serve::state::ServeState;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let config = bench_serve_config();
    let state = ServeState::from_config(Liaison::new(host.clone(), SkillSet::builtin())?, &config, None)?;
    let principal = crate::mcp::bench_principal();
    let mut mcp_config = StreamableHttpServerConfig::default();
    mcp_config.json_response = true;
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(std::sync::Arc::clone(&state), None, Some(principal.clone()))),
        std::sync::Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let address = listener.local_addr()?.to_string();
    runtime.spawn(async move { axum::serve(listener, router).await });
    Ok(format!("http://{address}/mcp"))
}

/// The stages, measured and said.
pub fn run(effort: &Effort, out: &mut Report, dir: &Path) -> Result<()> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() })?;
    let token = token_file(dir, TOOL)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let calls = effort.tool_calls * 5;
    let agent = loopback_agent(std::time::Duration::from_secs(30));
    let body = stateless_body(TOOL, serde_json::from_str(INPUT)?, 1).to_string();
    let times = CallTimes::default();
    let fixed = runtime.block_on(answer(Stage::Parsed, &host, body.as_bytes(), "", &times))?;

    let echo = echo_server()?;
    let echoed = echo_round_trips(&echo, &request_bytes("/mcp", &echo, &token, &body), calls)?;
    let fixed_at = stage_endpoint(&runtime, Stage::Fixed, host.clone(), fixed.clone(), Arc::clone(&times))?;
    let fixed_ureq = ureq_round_trips(&agent, &format!("http://{fixed_at}/mcp"), &token, &body, calls)?;
    let fixed_raw = raw_round_trips(&fixed_at, &request_bytes("/mcp", &fixed_at, &token, &body), calls)?;
    let parsed_at = stage_endpoint(&runtime, Stage::Parsed, host.clone(), fixed.clone(), Arc::clone(&times))?;
    let parsed = ureq_round_trips(&agent, &format!("http://{parsed_at}/mcp"), &token, &body, calls)?;
    let context = CallContext::for_workspace("ws_demo");
    let direct = crate::time_calls(&host, TOOL, INPUT, &context, calls);
    // The same call awaited on one thread, back to back, then with the
    // thread asleep before each for as long as (c)'s round trip: what a
    // server's core does between requests of one client.
    let gap = Duration::from_secs_f64(parsed.p50_us() / 1e6);
    let current = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (direct_async, after_idle) = current.block_on(async {
        for _ in 0..calls.min(200) {
            let _ = host.call_async(TOOL, INPUT, &context).await;
        }
        let mut tight = Vec::with_capacity(calls);
        let mut idle = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            let _ = host.call_async(TOOL, INPUT, &context).await;
            tight.push(started.elapsed());
        }
        for _ in 0..calls {
            std::thread::sleep(gap);
            let started = Instant::now();
            let _ = host.call_async(TOOL, INPUT, &context).await;
            idle.push(started.elapsed());
        }
        (Samples::new(tight), Samples::new(idle))
    });
    let called_at = stage_endpoint(&runtime, Stage::Called, host.clone(), fixed.clone(), Arc::clone(&times))?;
    let called = ureq_round_trips(&agent, &format!("http://{called_at}/mcp"), &token, &body, calls)?;
    // The timed round trips' calls: the last ones (the warm-up's came first).
    let called_inside = Samples::new(
        times.lock().map(|times| times[times.len().saturating_sub(calls)..].to_vec()).unwrap_or_default(),
    );
    let bare_mcp = bare_mcp_path(&runtime, &host)?;
    let mcp_path = ureq_round_trips(&agent, &bare_mcp, &token, &body, calls)?;
    let mut unlimited = bench_serve_config();
    unlimited.rate_limits.enabled = false;
    let (door_url, stop_door, _door) = serve_on(&runtime, &host, &unlimited, dir)?;
    let door = ureq_round_trips(&agent, &door_url, &token, &body, calls)?;
    let (full_url, stop_full, _full) = serve_on(&runtime, &host, &bench_serve_config(), dir)?;
    let full = ureq_round_trips(&agent, &full_url, &token, &body, calls)?;
    let _ = (stop_door.send(()), stop_full.send(()));

    let rows: [(&str, &Samples, &str); 12] = [
        ("(a) TCP echo of the request", &echoed, "the network floor"),
        ("(b) hyper, a fixed answer (ureq)", &fixed_ureq, "HTTP"),
        ("    the same, raw socket client", &fixed_raw, "the client's share is ureq's less this"),
        ("(c) (b) + rmcp parse and serialize", &parsed, "JSON-RPC in rmcp's types"),
        ("(d) Host::call", &direct, "the call in process"),
        ("    Host::call_async", &direct_async, "the async path"),
        ("    Host::call_async after (c)'s time idle", &after_idle, "the call on a core that slept"),
        ("(e) (c) + the call awaited", &called, "the floor of any server of this tool"),
        ("    the call's own time inside (e)", &called_inside, "the call between requests"),
        ("(f) our MCP path, no door", &mcp_path, "rmcp's service and our handler"),
        ("(g) + the door and authentication", &door, "gate, bounds, bearer check"),
        ("    + rate limits", &full, "harmonia serve as it runs"),
    ];
    out.say(format!("\nwhere a stateless tools/call's time goes ({calls} calls each, p50 / p99 us):"));
    let mut figures = serde_json::Map::new();
    for (what, samples, note) in rows {
        out.say(format!("  {what:38} {:8.1} {:9.1}   {note}", samples.p50_us(), samples.p99_us()));
        figures.insert(what.trim().to_owned(), json!(samples.p50_us()));
    }
    out.say(format!(
        "  stateless tools/call over Host::call_async: {:.1} us; Host::call_async over Host::call: {:.1} us; the client's share: {:.1} us",
        full.p50_us() - direct_async.p50_us(),
        direct_async.p50_us() - direct.p50_us(),
        fixed_ureq.p50_us() - fixed_raw.p50_us()
    ));
    out.say(format!(
        "  the call after {:.0} us idle over the call back to back: {:.1} us (inside (e)'s endpoint: {:.1} us); (c) + the call in a tight loop: {:.1} us",
        gap.as_secs_f64() * 1e6,
        after_idle.p50_us() - direct_async.p50_us(),
        called_inside.p50_us() - direct_async.p50_us(),
        parsed.p50_us() + direct_async.p50_us()
    ));
    out.insert("mcp_stages_us_p50", Value::Object(figures));
    out.insert("mcp_stateless_over_call_async_us_p50", json!(full.p50_us() - direct_async.p50_us()));
    out.insert("mcp_call_async_over_call_us_p50", json!(direct_async.p50_us() - direct.p50_us()));
    out.insert(
        "mcp_call_after_idle_over_call_async_us_p50",
        json!(after_idle.p50_us() - direct_async.p50_us()),
    );
    Ok(())
}
