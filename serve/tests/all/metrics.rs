//! `GET /metrics` and the in-flight bound of `harmonia serve`, over real
//! HTTP on 127.0.0.1: the scrape after real calls (a success, a tool
//! error, a hostile guest's timeout, refused credentials, refusals by
//! rule) has exact values; a canary sent as an argument or a token never
//! appears in it; a flood of made-up tool names adds one series at most;
//! a call past `limits.max_in_flight_calls` (the host's call slots, sized
//! by the server) waits for a slot up to its deadline, then gets exactly
//! the retryable `dependency_unavailable`.

use crate::support::Server;
use harmonia_serve::config::{Limits, ServeConfig};
use harmonia_testkit::server::Loopback;
use harmonia_testkit::tempdir::TempDir;
use harmonia_testkit::{assert_metric, dependency_unavailable, metric_value};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const CANARY_ARG: &str = "CANARY-argument-5f1e";
const CANARY_TOKEN: &str = "CANARY-token-9c3a";

/// The value of one series, 0 when it was never created.
fn series_count(text: &str, family: &str) -> usize {
    text.lines().filter(|line| line.starts_with(&format!("{family}{{"))).count()
}

#[test]
fn the_scrape_counts_real_calls_exactly_and_never_shows_a_secret() {
    let upstream = Loopback::start();
    let cache = TempDir::new("serve-metrics-shared-cache");
    let first = Server::start_cached(&upstream, ServeConfig::default(), &cache);
    // Six built-in tools and two guests, compiled into an empty cache...
    assert_eq!(metric_value(&first.metrics(), r#"harmonia_component_loads_total{outcome="miss"}"#), 8.0);
    drop(first);
    // ... then loaded from it.
    let server = Server::start_cached(&upstream, ServeConfig::default(), &cache);
    let (status, content_type, before) = server.scrape();
    assert_eq!(status, 200, "served without a credential");
    assert!(content_type.unwrap_or_default().starts_with("application/openmetrics-text"));
    assert!(before.ends_with("# EOF\n"), "{before}");
    assert_metric(&before, r#"harmonia_component_loads_total{outcome="hit"}"#, 8.0);
    assert_metric(&before, r#"harmonia_component_loads_total{outcome="miss"}"#, 0.0);

    assert_eq!(server.envelope("get_job_status", json!({"job_id": "job-7"}))["status"], "success");
    let error = server.envelope("get_job_status", json!({"job_id": CANARY_ARG}));
    assert_eq!(error["error"]["code"], "job_not_found", "{error}");
    let timeout = server.envelope("hostile_loop", json!({"secret": CANARY_ARG}));
    assert_eq!(timeout["error"]["code"], "tool_timeout", "{timeout}");
    let (status, _) = server.call_with(CANARY_TOKEN, "get_job_status", json!({}));
    assert_eq!(status, 401);
    let (status, _) = server.call_with("", "get_job_status", json!({}));
    assert_eq!(status, 401);
    // Loaded but not allowed for this credential: not offered, so an
    // unknown tool to it (-32602), counted as refused under its name.
    let refused = server.call_error("get_operator_feed", json!({}));
    assert_eq!(refused["code"], -32602, "{refused}");
    let verdict = server.validate(json!({"trace": [], "answer": {}, "mode": "review"}));
    assert_eq!(verdict["rule"], "answer_schema", "{verdict}");
    let verdict = server.validate(json!({"trace": [], "answer": {}, "mode": "submission"}));
    assert_eq!(verdict["rule"], "trace_unverified", "{verdict}");

    let text = server.metrics();
    let expected = [
        (r#"harmonia_calls_total{tool="get_job_status",code="success"}"#, 1.0),
        (r#"harmonia_calls_total{tool="get_job_status",code="job_not_found"}"#, 1.0),
        (r#"harmonia_calls_total{tool="hostile_loop",code="tool_timeout"}"#, 1.0),
        (r#"harmonia_calls_total{tool="get_operator_feed",code="call_refused"}"#, 1.0),
        (r#"harmonia_call_duration_seconds_count{tool="get_job_status"}"#, 2.0),
        (r#"harmonia_call_duration_seconds_count{tool="hostile_loop"}"#, 1.0),
        (r#"harmonia_call_duration_seconds_bucket{le="0.5",tool="hostile_loop"}"#, 0.0),
        (r#"harmonia_call_duration_seconds_bucket{le="+Inf",tool="hostile_loop"}"#, 1.0),
        (r#"harmonia_capability_uses_total{kind="workspace",status="ok"}"#, 1.0),
        (r#"harmonia_capability_uses_total{kind="workspace",status="not_found"}"#, 1.0),
        (r#"harmonia_authentication_failures_total{reason="unknown_token"}"#, 1.0),
        (r#"harmonia_authentication_failures_total{reason="missing"}"#, 1.0),
        (r#"harmonia_refusals_total{rule="answer_schema"}"#, 1.0),
        (r#"harmonia_refusals_total{rule="trace_unverified"}"#, 1.0),
        ("harmonia_calls_in_flight", 0.0),
    ];
    for (series, wanted) in expected {
        assert_eq!(metric_value(&text, series), wanted, "{series}\n{text}");
    }
    assert_eq!(series_count(&text, "harmonia_calls_total"), 4, "{text}");
    for secret in ["CANARY", server.token.as_str(), "ws_demo", "job-7"] {
        assert!(!text.contains(secret), "`{secret}` in the scrape:\n{text}");
    }

    // A flood of made-up tool names: one `unknown` series, whatever the count.
    for index in 0..200 {
        let refused = server.call_error(&format!("made_up_{CANARY_ARG}_{index}"), json!({}));
        assert_eq!(refused["code"], -32602, "{refused}");
    }
    let flooded = server.metrics();
    assert_eq!(series_count(&flooded, "harmonia_calls_total"), 5, "{flooded}");
    assert_eq!(metric_value(&flooded, r#"harmonia_calls_total{tool="unknown",code="call_refused"}"#), 200.0);
    assert_eq!(flooded.lines().count(), text.lines().count() + 1, "the flood added one line");
    assert!(!flooded.contains("made_up") && !flooded.contains("CANARY"), "{flooded}");
}

#[test]
fn a_skill_sessions_refusals_are_counted_by_rule() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let url = format!("{}/mcp/skills/job-status", server.url);
    let post = |session: Option<&str>, body: Value| {
        let mut request = server
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {}", server.token))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
        }
        let mut response = request.send(body.to_string()).unwrap();
        let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        (id, response.body_mut().read_to_string().unwrap())
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "metrics-test", "version": "1"}}});
    let (id, _) = post(None, init);
    let id = id.expect("a session id");
    post(Some(&id), json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The credential allows the loop, the skill does not: the guard refuses.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hostile_loop", "arguments": {}}});
    let (_, body) = post(Some(&id), call);
    assert!(body.contains("call_refused"), "{body}");
    let text = server.metrics();
    assert_metric(&text, r#"harmonia_refusals_total{rule="tool_not_allowed"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="call_refused"}"#, 1.0);
}

#[test]
fn a_session_past_the_bound_is_a_503_with_retry_after_and_counted() {
    let upstream = Loopback::start();
    let config =
        ServeConfig { limits: Limits { max_sessions: 1, ..Limits::default() }, ..ServeConfig::default() };
    let server = Server::start(&upstream, config);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "metrics-test", "version": "1"}}});
    let open = || {
        server
            .agent
            .post(format!("{}/mcp", server.url))
            .header("Authorization", &format!("Bearer {}", server.token))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .send(init.to_string())
            .unwrap()
    };
    assert_eq!(open().status().as_u16(), 200);
    let refused = open();
    assert_eq!(refused.status().as_u16(), 503);
    assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("2"));
    let text = server.metrics();
    assert_metric(&text, r#"harmonia_http_unavailable_total{reason="too_many_sessions"}"#, 1.0);
}

#[test]
fn metrics_can_require_a_token_or_be_off() {
    let upstream = Loopback::start();
    let mut config = ServeConfig::default();
    config.metrics.require_token = true;
    let server = Server::start(&upstream, config);
    let (status, _, _) = server.scrape();
    assert_eq!(status, 401, "a credential is required");
    let mut response = server
        .agent
        .get(format!("{}/metrics", server.url))
        .header("Authorization", &format!("Bearer {}", server.token))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.body_mut().read_to_string().unwrap().contains("harmonia_calls_in_flight"));
    drop(server);
    let mut config = ServeConfig::default();
    config.metrics.enabled = false;
    let server = Server::start(&upstream, config);
    let (status, _, _) = server.scrape();
    assert_eq!(status, 404, "no metrics route when off");
}

fn one_permit() -> ServeConfig {
    ServeConfig { limits: Limits { max_in_flight_calls: 1, ..Limits::default() }, ..ServeConfig::default() }
}

/// Start a call holding the only permit in the upstream; return once the
/// upstream has its request.
fn hold_the_permit(server: &Server, upstream: &Loopback) -> std::thread::JoinHandle<Value> {
    let (url, token, agent) = (server.url.clone(), server.token.clone(), server.agent.clone());
    let holder = std::thread::spawn(move || {
        let arguments = json!({"url": "https://hn.algolia.com/hold"});
        let (_, answer) = crate::support::call_at(&agent, &url, &token, "testing_fetch_url", arguments);
        answer["result"]["structuredContent"].clone()
    });
    upstream.await_request();
    holder
}

#[test]
fn a_call_past_the_in_flight_bound_runs_when_a_permit_frees_before_its_deadline() {
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(400));
    let server = Server::start(&upstream, one_permit());
    let holder = hold_the_permit(&server, &upstream);
    let started = Instant::now();
    let waiter = server.envelope("get_job_status", json!({"job_id": "job-7"}));
    let waited = started.elapsed();
    assert_eq!(waiter["status"], "success", "{waiter}");
    assert!(waited >= Duration::from_millis(200), "the call did not wait: {waited:?}");
    assert_eq!(holder.join().unwrap()["data"]["status"], 200);
    let text = server.metrics();
    assert_metric(&text, r#"harmonia_slot_waits_total{bound="host_slots"}"#, 1.0);
    assert_metric(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#, 0.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="get_job_status",code="success"}"#, 1.0);
}

#[test]
fn a_call_past_the_in_flight_bound_gets_retryable_dependency_unavailable_at_its_deadline() {
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(3000));
    let server = Server::start(&upstream, one_permit());
    let holder = hold_the_permit(&server, &upstream);
    let started = Instant::now();
    // The loop's deadline is 1 s: it passes while the permit is held, and
    // the loop never runs.
    let waiter = server.envelope("hostile_loop", json!({}));
    let waited = started.elapsed();
    assert_eq!(waiter, dependency_unavailable());
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_millis(2500), "{waited:?}");
    let text = server.metrics();
    assert_metric(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="dependency_unavailable"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="tool_timeout"}"#, 0.0);
    assert_eq!(holder.join().unwrap()["data"]["status"], 200);
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
}

/// A client that goes away while its call waits on an upstream does not
/// stop the call, which finishes, is counted, and frees its permit for
/// the next. The call is a stateless one, which the fast path answers:
/// it runs in the request's task, and is moved to a task of its own when
/// hyper drops that request (`serve/src/http/finish_on_drop.rs`); on
/// rmcp's path it runs in the task rmcp spawns for the request.
#[test]
fn a_call_whose_client_goes_away_still_finishes_and_frees_its_permit() {
    for fast_path in [true, false] {
        a_call_whose_client_goes_away_finishes(fast_path);
    }
}

fn a_call_whose_client_goes_away_finishes(fast_path: bool) {
    use std::io::Write;
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(600));
    let server = Server::start(&upstream, ServeConfig { stateless_fast_path: fast_path, ..one_permit() });
    let body =
        crate::support::stateless_call("testing_fetch_url", json!({"url": "https://hn.algolia.com/hold"}))
            .to_string();
    let mut socket = std::net::TcpStream::connect(server.address()).unwrap();
    write!(
        socket,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: testing_fetch_url\r\nContent-Length: {}\r\n\r\n{body}",
        server.address(),
        server.token,
        body.len()
    )
    .unwrap();
    upstream.await_request();
    // The client leaves while its call waits on the upstream.
    socket.shutdown(std::net::Shutdown::Both).unwrap();
    drop(socket);
    let finished = r#"harmonia_calls_total{tool="testing_fetch_url",code="success"}"#;
    let started = Instant::now();
    while metric_value(&server.metrics(), finished) != 1.0 {
        assert!(started.elapsed() < Duration::from_secs(10), "the call never finished: {}", server.metrics());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Its permit (the only one) is free: the next call runs at once.
    let next = server.envelope("get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(next["status"], "success", "{next}");
    assert_metric(&server.metrics(), r#"harmonia_slot_waits_total{bound="host_slots"}"#, 0.0);
    // The path the test meant took the call (the next one included).
    let answered_here = if fast_path { 2.0 } else { 0.0 };
    assert_metric(&server.metrics(), "harmonia_http_fast_path_calls_total", answered_here);
}
