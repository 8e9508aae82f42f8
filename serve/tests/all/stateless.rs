//! Guarded sessions on the stateless revision (2026-07-28): no MCP
//! session, the guard carried by a sealed handle (an argument each tool
//! declares there, or `_meta`) and kept in the ledger. A hostile client
//! replays an earlier handle, moves one to another credential, truncates
//! or edits it, races two calls on one step, or drops the handle to get a
//! fresh guard: each licenses nothing, and the trace keeps exactly the
//! calls the guard judged.

use crate::support::{Server, stateless_request};
use harmonia_host::liaison::skills::SkillSet;
use harmonia_serve::config::{Limits, ServeConfig};
use harmonia_testkit::server::Loopback;
use harmonia_testkit::tempdir::TempDir;
use harmonia_testkit::{assert_metric, metric_value};
use serde_json::{Value, json};
use std::io::Write;
use std::time::{Duration, Instant};

const SKILL: &str = "/mcp/skills/job-status";
const META: &str = "dev.harmonia/session";

/// A stateless request of `method` with `params`, carrying `handle`.
fn request(method: &str, params: Value, handle: Option<&str>) -> Value {
    let mut request = stateless_request(method, params);
    if let Some(handle) = handle {
        request["params"]["_meta"][META] = json!(handle);
    }
    request
}

/// What a stateless call on the skill route answered.
struct Called {
    status: u16,
    /// The JSON-RPC message.
    message: Value,
}

impl Called {
    fn envelope(&self) -> &Value {
        &self.message["result"]["structuredContent"]
    }

    /// The handle for the next call.
    fn handle(&self) -> String {
        self.message["result"]["_meta"][META]
            .as_str()
            .unwrap_or_else(|| panic!("no handle: {}", self.message))
            .to_owned()
    }

    /// The JSON-RPC error's reason, when refused.
    fn refusal(&self) -> Option<&str> {
        self.message["error"]["data"]["reason"].as_str()
    }

    fn refused_by_guard(&self) -> bool {
        self.envelope()["error"]["code"] == "call_refused"
    }
}

fn call(server: &Server, token: &str, handle: Option<&str>, tool: &str, arguments: Value) -> Called {
    let body = request("tools/call", json!({"name": tool, "arguments": arguments}), handle);
    let answer = server.post(
        SKILL,
        token,
        &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", tool)],
        &body,
    );
    Called { status: answer.status, message: answer.json() }
}

/// The headers the revision asks of a `resources/read` of the trace.
const READ_HEADERS: [(&str, &str); 3] = [
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "resources/read"),
    ("mcp-name", "harmonia://session/trace"),
];

fn trace(server: &Server, token: &str, handle: &str) -> Value {
    let body = request("resources/read", json!({"uri": "harmonia://session/trace"}), Some(handle));
    let answer = server.post(SKILL, token, &READ_HEADERS, &body);
    let text = answer.json()["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", answer.body))
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

fn kinds(document: &Value) -> Vec<(String, Option<String>)> {
    document["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (entry["kind"].as_str().unwrap().to_owned(), entry["reason"].as_str().map(str::to_owned))
        })
        .collect()
}

#[test]
fn a_stateless_guarded_session_is_carried_by_its_handle_and_the_guard_still_refuses() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let first = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(first.status, 200, "{}", first.message);
    assert_eq!(first.envelope()["status"], "success", "{}", first.message);
    let retry = call(&server, &token, Some(&first.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert!(retry.refused_by_guard(), "a retry after a success is refused: {}", retry.message);
    let third = call(&server, &token, Some(&retry.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert!(third.refused_by_guard(), "a third attempt is refused: {}", third.message);
    let other = call(&server, &token, Some(&third.handle()), "hostile_loop", json!({}));
    assert!(other.refused_by_guard(), "a tool the skill does not allow is refused: {}", other.message);
    let document = trace(&server, &token, &other.handle());
    let reasons: Vec<_> = kinds(&document).into_iter().map(|(_, reason)| reason).collect();
    assert_eq!(
        reasons,
        [
            None,
            None,
            Some("retry_without_retryable_error".into()),
            Some("retry_ceiling".into()),
            Some("tool_not_allowed".into())
        ],
        "{document}"
    );
    let checked = server.validate(json!({"trace": document, "answer": {"status": "error", "answer": "x"}}));
    assert_eq!(
        checked["seal"]["state"], "verified",
        "the server's own key seals the stored trace: {checked}"
    );
    // A call without a handle goes on with the credential's current
    // session (never a fresh guard); only `new` opens another.
    let dropped = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert!(dropped.refused_by_guard(), "{}", dropped.message);
    let fresh = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(fresh.envelope()["status"], "success");
    assert_eq!(kinds(&trace(&server, &token, &fresh.handle())).len(), 2);
}

#[test]
fn a_replayed_moved_truncated_or_edited_handle_licenses_nothing() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let first = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    let before = first.handle();
    // The failed (refused) retry moves the session on...
    let refused = call(&server, &token, Some(&before), "get_job_status", json!({"job_id": "job-7"}));
    assert!(refused.refused_by_guard(), "{}", refused.message);
    // ...so the handle from before it is stale: replaying it runs nothing.
    let replayed = call(&server, &token, Some(&before), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(replayed.refusal(), Some("stale_handle"), "{}", replayed.message);
    assert_eq!(replayed.message["error"]["code"], -32602);
    let current = refused.handle();
    assert_eq!(kinds(&trace(&server, &token, &current)).len(), 3, "the replay recorded nothing");

    // Another credential (same workspace and tools) cannot use the handle,
    // nor read the trace with it.
    let other = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let moved = call(&server, &other, Some(&current), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(moved.refusal(), Some("invalid_handle"), "{}", moved.message);
    let read = request("resources/read", json!({"uri": "harmonia://session/trace"}), Some(&current));
    let answer = server.post(SKILL, &other, &READ_HEADERS, &read);
    assert_eq!(answer.json()["error"]["data"]["reason"], "invalid_handle", "{}", answer.body);

    // Truncated, edited, empty or not a string.
    let mut edited = current.clone().into_bytes();
    let middle = edited.len() / 2;
    edited[middle] = if edited[middle] == b'x' { b'y' } else { b'x' };
    let edited = String::from_utf8(edited).unwrap();
    for bad in [&current[..current.len() - 2], &edited, "", "rs1.AAAA.BBBB"] {
        let answer = call(&server, &token, Some(bad), "get_job_status", json!({"job_id": "job-7"}));
        assert_eq!(answer.refusal(), Some("invalid_handle"), "{bad:?}: {}", answer.message);
    }

    // Two sessions of one credential: each handle goes on with its own
    // session only.
    let second = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-404"}));
    assert_eq!(second.envelope()["status"], "error", "{}", second.message);
    assert_eq!(kinds(&trace(&server, &token, &second.handle())).len(), 2);
    assert_eq!(kinds(&trace(&server, &token, &current)).len(), 3);
    assert_eq!(trace(&server, &token, &current)["entries"][1]["args"]["job_id"], "job-7");
}

/// A handle is bound to the workspace its credential names as well as
/// the credential: a static token the operator moves to another workspace
/// (its id unchanged) carries none of its earlier sessions over.
#[test]
fn a_handle_of_a_token_moved_to_another_workspace_licenses_nothing() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let first = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(first.envelope()["status"], "success", "{}", first.message);
    server.move_token(&token, "ws_other");
    let moved = call(&server, &token, Some(&first.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(moved.refusal(), Some("invalid_handle"), "{}", moved.message);
    let read = request("resources/read", json!({"uri": "harmonia://session/trace"}), Some(&first.handle()));
    let answer = server.post(SKILL, &token, &READ_HEADERS, &read);
    assert_eq!(answer.json()["error"]["data"]["reason"], "invalid_handle", "{}", answer.body);
    // Moved back, the session goes on where it was.
    server.move_token(&token, "ws_demo");
    let again = call(&server, &token, Some(&first.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert!(again.refused_by_guard(), "{}", again.message);
}

#[test]
fn two_calls_racing_on_one_step_record_at_most_one() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let first = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    let handle = first.handle();
    let answers: Vec<Called> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    call(&server, &token, Some(&handle), "get_job_status", json!({"job_id": "job-7"}))
                })
            })
            .collect();
        racers.into_iter().map(|racer| racer.join().unwrap()).collect()
    });
    let recorded: Vec<_> = answers.iter().filter(|answer| answer.message["result"].is_object()).collect();
    assert_eq!(recorded.len(), 1, "exactly one racer holds the step");
    for answer in answers.iter().filter(|answer| answer.message["error"].is_object()) {
        assert!(matches!(answer.refusal(), Some("session_busy" | "stale_handle")), "{}", answer.message);
    }
    assert_eq!(kinds(&trace(&server, &token, &recorded[0].handle())).len(), 3);
}

#[test]
fn a_handle_past_the_idle_time_is_expired() {
    let upstream = Loopback::start();
    let mut config = ServeConfig::default();
    config.limits.idle_session_s = 1;
    let server = Server::start(&upstream, config);
    let token = server.token.clone();
    let first = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    std::thread::sleep(Duration::from_millis(1100));
    let late = call(&server, &token, Some(&first.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(late.refusal(), Some("expired_handle"), "{}", late.message);
}

#[test]
fn stateless_sessions_count_against_the_credentials_share() {
    let upstream = Loopback::start();
    let mut config = ServeConfig::default();
    config.limits.max_sessions_per_credential = 2;
    let server = Server::start(&upstream, config);
    let token = server.token.clone();
    for _ in 0..2 {
        let opened = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-7"}));
        assert_eq!(opened.envelope()["status"], "success", "{}", opened.message);
    }
    let third = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(third.refusal(), Some("credential_sessions"), "{}", third.message);
    assert_eq!(third.message["error"]["data"]["retryable"], true);
    let other = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let theirs = call(&server, &other, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(theirs.envelope()["status"], "success", "another credential still opens its own");
}

/// The two kinds of session draw on one share: a credential holding MCP
/// sessions opens fewer stateless ones, and the other way round, and the
/// server's bound counts both.
#[test]
fn mcp_and_stateless_sessions_draw_on_one_share() {
    let upstream = Loopback::start();
    let mut config = ServeConfig::default();
    config.limits.max_sessions_per_credential = 2;
    config.limits.max_sessions = 3;
    let server = Server::start(&upstream, config);
    let token = server.token.clone();
    server.open_session("/mcp", &token);
    server.open_session("/mcp", &token);
    let stateless = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(stateless.refusal(), Some("credential_sessions"), "{}", stateless.message);

    let other = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let opened = call(&server, &other, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(opened.envelope()["status"], "success", "{}", opened.message);
    let initialize = server.post("/mcp", &other, &[], &crate::support::initialize());
    assert_eq!(initialize.status, 503, "the server holds 3 sessions of both kinds: {}", initialize.body);
    assert_eq!(initialize.json()["error"], "too many sessions", "{}", initialize.body);

    let third = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let refused = call(&server, &third, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(refused.refusal(), Some("too_many_sessions"), "{}", refused.message);
}

#[test]
fn lists_and_discovery_say_how_long_they_keep_and_that_they_are_private() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    for path in ["/mcp", SKILL] {
        for method in ["tools/list", "prompts/list", "server/discover"] {
            let body = request(method, json!({}), None);
            let answer = server.post(
                path,
                &server.token,
                &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)],
                &body,
            );
            let result = &answer.json()["result"];
            assert_eq!(result["ttlMs"], 60_000, "{path} {method}: {}", answer.body);
            assert_eq!(result["cacheScope"], "private", "{path} {method}: {}", answer.body);
        }
        let body = request("server/discover", json!({}), None);
        let answer = server.post(
            path,
            &server.token,
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "server/discover")],
            &body,
        );
        let versions = answer.json()["result"]["supportedVersions"].clone();
        assert!(
            versions.as_array().is_some_and(|all| all.contains(&json!("2026-07-28"))),
            "{path}: every route speaks the stateless revision: {}",
            answer.body
        );
    }
}

#[test]
fn a_stateless_request_whose_routing_headers_disagree_with_its_body_is_refused() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let body =
        request("tools/call", json!({"name": "get_job_status", "arguments": {"job_id": "job-7"}}), None);
    let wrong = [
        vec![("mcp-protocol-version", "2026-07-28"), ("mcp-name", "get_job_status")],
        vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "get_job_status"),
        ],
        vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "hostile_loop"),
        ],
    ];
    for headers in wrong {
        let answer = server.post(SKILL, &server.token, &headers, &body);
        assert_eq!(answer.status, 400, "{headers:?}: {}", answer.body);
        assert!(answer.json()["error"]["message"].is_string(), "{}", answer.body);
    }
    let metrics = server.metrics();
    assert!(!metrics.contains("harmonia_calls_total{"), "nothing ran: {metrics}");
}

/// What a stock client does: never sends the handle back, and retries a
/// call that succeeded. Every call goes on with the credential's one
/// current session on the skill, so the guard judges them all: one runs,
/// the retries are refused, and the trace (read without a handle: the
/// current session's) has them all.
#[test]
fn a_client_that_never_sends_the_handle_back_gets_one_guard_not_a_fresh_one_per_call() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let answers: Vec<Called> =
        (0..4).map(|_| call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}))).collect();
    assert_eq!(answers[0].envelope()["status"], "success", "{}", answers[0].message);
    for retry in &answers[1..] {
        assert!(retry.refused_by_guard(), "a retry after a success is refused: {}", retry.message);
    }
    let body = request("resources/read", json!({"uri": "harmonia://session/trace"}), None);
    let read = server.post(SKILL, &token, &READ_HEADERS, &body);
    let result = &read.json()["result"];
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(0), json!("private")),
        "{}",
        read.body
    );
    let document: Value = serde_json::from_str(result["contents"][0]["text"].as_str().unwrap()).unwrap();
    let reasons: Vec<_> = kinds(&document).into_iter().map(|(_, reason)| reason).collect();
    assert_eq!(
        reasons,
        [
            None,
            None,
            Some("retry_without_retryable_error".into()),
            Some("retry_ceiling".into()),
            Some("retry_ceiling".into())
        ],
        "{document}"
    );
    // Another credential's current session is its own.
    let other = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let theirs = call(&server, &other, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(theirs.envelope()["status"], "success", "{}", theirs.message);
}

/// SEP-2567's pattern: the handle is an ordinary argument each tool of a
/// skill route declares on the stateless revision, given back in each
/// result (as text a model reads, and in `_meta`), and taken out of the
/// arguments before the tool sees them.
#[test]
fn the_handle_travels_as_a_declared_argument_that_the_tool_never_sees() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let list = request("tools/list", json!({}), None);
    let listed = server.post(
        SKILL,
        &token,
        &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")],
        &list,
    );
    let tool = &listed.json()["result"]["tools"][0];
    assert_eq!(tool["name"], "get_job_status", "{}", listed.body);
    assert_eq!(tool["inputSchema"]["properties"]["harmonia_session"]["type"], "string", "{}", listed.body);
    let required = tool["inputSchema"]["required"].as_array().cloned().unwrap_or_default();
    assert!(!required.contains(&json!("harmonia_session")), "optional: {}", listed.body);
    let unbound = server.post(
        "/mcp",
        &token,
        &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")],
        &list,
    );
    assert!(!unbound.body.contains("harmonia_session"), "only skill routes take it: {}", unbound.body);

    let first = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-7"}));
    let texts: Vec<&str> = first.message["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 2, "{}", first.message);
    assert_eq!(serde_json::from_str::<Value>(texts[0]).unwrap(), *first.envelope(), "the envelope first");
    assert!(texts[1].starts_with(&format!("harmonia_session: {}", first.handle())), "{}", texts[1]);
    // The handle as an argument: the session goes on (the guard refuses
    // the retry), and the tool never saw the argument.
    let arguments = json!({"job_id": "job-7", "harmonia_session": first.handle()});
    let retry = call(&server, &token, None, "get_job_status", arguments);
    assert!(retry.refused_by_guard(), "{}", retry.message);
    let document = trace(&server, &token, &retry.handle());
    assert_eq!(document["entries"][1]["args"], json!({"job_id": "job-7"}), "{document}");
    assert_eq!(document["entries"].as_array().unwrap().len(), 3, "{document}");
    let bad =
        call(&server, &token, None, "get_job_status", json!({"job_id": "job-7", "harmonia_session": 7}));
    assert_eq!(bad.message["error"]["code"], -32602, "{}", bad.message);
}

/// `new` is the one way to a fresh guard, and an explicit one: the
/// session it replaces goes on only by its own handle.
#[test]
fn new_opens_a_session_explicitly_and_the_one_it_replaces_goes_on_by_its_handle() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let old = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(old.envelope()["status"], "success", "{}", old.message);
    let new = call(&server, &token, Some("new"), "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(new.envelope()["status"], "success", "{}", new.message);
    let current = call(&server, &token, None, "get_job_status", json!({"job_id": "job-7"}));
    assert!(current.refused_by_guard(), "{}", current.message);
    assert_eq!(kinds(&trace(&server, &token, &current.handle())).len(), 3, "it went on with the new one");
    let by_handle = call(&server, &token, Some(&old.handle()), "get_job_status", json!({"job_id": "job-7"}));
    assert!(by_handle.refused_by_guard(), "{}", by_handle.message);
    assert_eq!(kinds(&trace(&server, &token, &by_handle.handle())).len(), 3, "the old one, by its handle");
}

/// A skill route whose one tool waits on the upstream (the test fetch
/// guest names the skill `trend-scan`; its file allows every tool that
/// names it).
fn fetch_skill(dir: &TempDir) -> SkillSet {
    let skill = dir.path().join("skills/trend-scan");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: trend-scan\ndescription: Fetch one page.\nallowed-tools: fetch_trend_signals, search_trend_signals, testing_fetch_url, hostile_loop\n---\n# Fetch probe\n\nMake one call to `testing_fetch_url`.\n",
    )
    .unwrap();
    harmonia_host::liaison::skills::load_dir(&dir.path().join("skills")).unwrap()
}

/// A client that leaves while its guarded step waits on the upstream
/// does not stop the step, on either path: the call finishes, the step is
/// recorded once in the session's trace, and the only permit is free for
/// the next call at once. The step's task is the request's on the fast
/// path, moved to a task of its own when hyper drops it
/// (`serve/src/http/finish_on_drop.rs`), and rmcp's own task on its path.
#[test]
fn a_guarded_step_whose_client_goes_away_is_still_recorded_and_frees_its_permit() {
    for fast_path in [true, false] {
        guarded_step_whose_client_goes_away(fast_path);
    }
}

fn guarded_step_whose_client_goes_away(fast_path: bool) {
    const ROUTE: &str = "/mcp/skills/trend-scan";
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(600));
    let config = ServeConfig {
        stateless_fast_path: fast_path,
        limits: Limits { max_in_flight_calls: 1, ..Limits::default() },
        ..ServeConfig::default()
    };
    let cache = TempDir::new("serve-stateless-cache");
    let server = Server::start_with_skills(&upstream, config, &cache, fetch_skill);
    let body = request(
        "tools/call",
        json!({"name": "testing_fetch_url", "arguments": {"url": "https://hn.algolia.com/hold"}}),
        None,
    )
    .to_string();
    let mut socket = std::net::TcpStream::connect(server.address()).unwrap();
    write!(
        socket,
        "POST {ROUTE} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: testing_fetch_url\r\nContent-Length: {}\r\n\r\n{body}",
        server.address(),
        server.token,
        body.len()
    )
    .unwrap();
    upstream.await_request();
    // The client leaves while its step waits on the upstream.
    socket.shutdown(std::net::Shutdown::Both).unwrap();
    drop(socket);
    let read = request("resources/read", json!({"uri": "harmonia://session/trace"}), None);
    let started = Instant::now();
    let entries = loop {
        let answer = server.post(ROUTE, &server.token, &READ_HEADERS, &read);
        let text = answer.json()["result"]["contents"][0]["text"].as_str().map(str::to_owned);
        let document: Value = text.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(Value::Null);
        // The session's activation is its first entry; the step follows.
        if document["entries"].as_array().is_some_and(|entries| entries.len() > 1) {
            break kinds(&document);
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the step was never recorded: {}", answer.body);
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        entries,
        [("skill_activation".to_owned(), None), ("tool_call".to_owned(), None)],
        "fast path {fast_path}: one step, judged and recorded once"
    );
    let finished = r#"harmonia_calls_total{tool="testing_fetch_url",code="success"}"#;
    assert_eq!(metric_value(&server.metrics(), finished), 1.0, "fast path {fast_path}");
    // Its permit (the only one) is free: the next call runs at once.
    let next = server.envelope("get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(next["status"], "success", "{next}");
    assert_metric(&server.metrics(), r#"harmonia_slot_waits_total{bound="host_slots"}"#, 0.0);
    let answered_here = if fast_path { 2.0 } else { 0.0 };
    assert_metric(&server.metrics(), "harmonia_http_fast_path_calls_total", answered_here);
}
