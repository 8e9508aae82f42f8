//! The workspace capability and the four workspace tools on each source:
//! the embedded SQLite store, the internal HTTP API on a loopback server,
//! and mock fixtures.

use harmonia_contract::time::rfc3339_utc;
use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_host::capability::workspace::WorkspaceSource;
use harmonia_host::capability::workspace::http::HttpSource;
use harmonia_host::capability::workspace::memory::MemorySource;
use harmonia_host::capability::workspace::{mock, sqlite};
use harmonia_host::config::{HostConfig, WorkspaceConfig, WorkspaceSourceKind};
use harmonia_host::log::MemoryLog;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::expected_evidence_id;
use harmonia_testkit::hosts::guest_path;
use harmonia_testkit::server::{Loopback, Reply};
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

const CANARY: &str = "CANARY-7f3a9c-SECRET";

fn context() -> CallContext {
    CallContext::for_workspace("ws_demo")
}

/// The envelope of `tool`.
fn call(host: &Host, tool: &str, input: &str, context: &CallContext) -> Value {
    host.call(tool, input, context).unwrap().to_value()
}

/// `Host::call` is `Host::call_async`'s future polled on the caller's
/// thread: one path, so the two answer alike by construction. Held once
/// here, on a live source (the SQLite store, read on the blocking pool of
/// whichever runtime polls the call), for each workspace tool and a
/// refused read.
#[test]
fn host_call_and_call_async_answer_with_the_same_envelope() {
    let dir = TempDir::new("one-path");
    let db = dir.path().join("harmonia.db");
    sqlite::import(&db, &WorkspaceDocument::parse(mock::DEMO_WORKSPACE_JSON).unwrap()).unwrap();
    let mut config = HostConfig::default();
    config.workspace.path = db;
    let host = Host::new(config).unwrap();
    for (tool, input, workspace) in [
        ("get_engagement_insights", "{}", Some("ws_demo")),
        ("get_operator_feed", "{}", Some("ws_demo")),
        ("get_job_status", r#"{"job_id": "job-7"}"#, Some("ws_demo")),
        ("suggest_posting_windows", "{}", Some("ws_demo")),
        ("get_job_status", r#"{"job_id": "job-7"}"#, None),
    ] {
        let context = CallContext { workspace: workspace.map(str::to_owned), ..CallContext::default() };
        let blocking = host.call(tool, input, &context).unwrap().to_value();
        let awaited =
            harmonia_testkit::runtime().block_on(host.call_async(tool, input, &context)).unwrap().to_value();
        let stamped = |mut envelope: Value| {
            // The feed's freshness is computed at read time.
            envelope["data"].as_object_mut().map(|data| data.remove("freshness"));
            envelope
        };
        assert_eq!(stamped(awaited), stamped(blocking), "{tool} for {workspace:?}");
    }
}

fn error(code: &str, category: &str, message: &str, retryable: bool) -> Value {
    json!({"status": "error", "data": null, "error": {"code": code, "category": category, "message": message,
        "retryable": retryable}, "evidence": []})
}

fn authorization_failed() -> Value {
    error("authorization_failed", "authorization", "The workspace source refused this caller.", false)
}

fn dependency_unavailable() -> Value {
    error("dependency_unavailable", "dependency", "The data source is unavailable right now.", true)
}

fn evidence(source: &str, provenance: &str, reference: Option<&str>) -> Value {
    json!({"evidenceId": expected_evidence_id(source, provenance, reference), "source": source,
        "provenance": provenance, "reference": reference})
}

/// A SQLite store holding `document`, and a host reading it.
fn sqlite_host(document: &Value) -> (Host, TempDir) {
    let dir = TempDir::new("sqlite");
    let db = dir.path().join("harmonia.db");
    sqlite::import(&db, &WorkspaceDocument::from_value(document).unwrap()).unwrap();
    let mut config = HostConfig::default();
    config.workspace.path = db;
    (Host::new(config).unwrap(), dir)
}

fn demo() -> Value {
    serde_json::from_str(mock::DEMO_WORKSPACE_JSON).unwrap()
}

fn ago(seconds: u64) -> String {
    rfc3339_utc(SystemTime::now() - Duration::from_secs(seconds))
}

#[test]
fn sqlite_serves_engagement_insights_top_ten() {
    let (host, _dir) = sqlite_host(&demo());
    let envelope = call(&host, "get_engagement_insights", "{}", &context());
    let top: Vec<&str> = envelope["data"]["topPosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|post| post["postId"].as_str().unwrap())
        .collect();
    assert_eq!(
        top,
        [
            "post-001", "post-002", "post-003", "post-012", "post-005", "post-014", "post-006", "post-016",
            "post-008", "post-017"
        ]
    );
    assert_eq!(
        envelope["data"]["topPosts"][0],
        json!({"postId": "post-001", "text": "Shipping a read-only agent: why every tool call returns one envelope",
            "likes": 412, "publishedAt": "2026-11-03T14:05:00Z"})
    );
    assert_eq!(envelope["data"]["takeaways"]["topPostId"], "post-001");
    let mut expected = vec![evidence("harmonia_engagement", "live", None)];
    expected.extend(top.iter().map(|id| evidence("harmonia_measured_post", "live", Some(id))));
    assert_eq!(envelope["evidence"], Value::Array(expected));
}

#[test]
fn sqlite_feed_judges_freshness_from_updated_at() {
    for (updated_at, state) in
        [(Some(ago(300)), "current"), (Some(ago(3600)), "stale"), (None, "unavailable")]
    {
        let mut document = demo();
        document["updatedAt"] = json!(updated_at);
        let (host, _dir) = sqlite_host(&document);
        let envelope = call(&host, "get_operator_feed", "{}", &context());
        let data = &envelope["data"];
        assert_eq!(data["freshness"]["state"], state);
        let read_at = data["freshness"]["readAt"].as_str().unwrap();
        assert!(harmonia_contract::time::parse_rfc3339(read_at).is_some() && read_at.ends_with('Z'));
        assert_eq!(data["jobHealth"], json!({"active": 2, "failed": 1}));
        assert_eq!(data["pendingItems"].as_array().unwrap().len(), 2);
        assert_eq!(
            data["recentPublished"][0],
            json!({"postId": "post-018", "publishedAt": "2026-11-20T19:00:00Z"})
        );
        assert_eq!(envelope["evidence"], json!([evidence("harmonia_feed", "live", None)]));
    }
}

#[test]
fn job_status_leaks_no_draft_transcript_prompt_or_token() {
    let (host, _dir) = sqlite_host(&demo());
    let envelope = call(&host, "get_job_status", r#"{"job_id": "job-42"}"#, &context());
    assert_eq!(envelope["data"]["found"], true);
    assert_eq!(envelope["data"]["job"]["draftCount"], 2);
    assert_eq!(
        envelope["data"]["job"]["verificationSummary"],
        json!([{"actionId": "act-1", "verified": false}])
    );
    let text = envelope.to_string();
    for secret in
        ["DRAFT TEXT", "TRANSCRIPT", "PROMPT", "tok_live_do_not_leak", "accessToken", "payload", "notes"]
    {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert_eq!(envelope["evidence"], json!([evidence("harmonia_job", "live", Some("job-42"))]));
    assert_eq!(
        call(&host, "get_job_status", r#"{"job_id": "job-999"}"#, &context()),
        error("job_not_found", "not_found", "No job with that id exists in this workspace.", false)
    );
    assert_eq!(
        call(&host, "get_job_status", r#"{"job_id": "  "}"#, &context()),
        error("invalid_job_id", "validation", "The job id is empty.", false)
    );
}

#[test]
fn unknown_or_missing_workspaces_are_unauthorized() {
    let (host, _dir) = sqlite_host(&demo());
    for context in [CallContext::for_workspace("ws_other"), CallContext::default()] {
        for (tool, input) in [
            ("get_engagement_insights", "{}"),
            ("get_operator_feed", "{}"),
            ("get_job_status", r#"{"job_id": "job-42"}"#),
            ("suggest_posting_windows", "{}"),
        ] {
            assert_eq!(call(&host, tool, input, &context), authorization_failed(), "{tool} {context:?}");
        }
    }
}

#[test]
fn a_missing_database_is_dependency_unavailable() {
    let dir = TempDir::new("missing-db");
    let mut config = HostConfig::default();
    config.workspace.path = dir.path().join("absent.db");
    let host = Host::new(config).unwrap();
    assert_eq!(call(&host, "get_engagement_insights", "{}", &context()), dependency_unavailable());
    assert!(!dir.path().join("absent.db").exists(), "a read never creates the database");
}

fn post(id: &str, likes: Option<u64>, at: Option<&str>) -> Value {
    json!({"postId": id, "text": format!("text of {id}"), "likes": likes, "publishedAt": at})
}

fn windows_for(posts: Vec<Value>) -> Value {
    let (host, _dir) = sqlite_host(&json!({"workspaceId": "ws_demo", "posts": posts}));
    call(&host, "suggest_posting_windows", "{}", &context())
}

#[test]
fn posting_windows_convert_offsets_break_ties_early_and_wrap_at_23() {
    let envelope = windows_for(vec![
        post("a", Some(40), Some("2026-11-02T23:30:00+00:00")), // 23 UTC, more recent than b
        post("b", Some(40), Some("2026-11-03T01:15:00+02:00")), // 23 UTC
        post("c", Some(40), Some("2026-11-04T05:00:00-02:00")), // 07 UTC
        post("d", Some(10), Some("2026-11-05T12:00:00Z")),      // 12 UTC
        post("e", None, Some("2026-11-05T12:00:00Z")),          // unmeasured
        post("f", Some(99), None),                              // no time
    ]);
    assert_eq!(
        envelope["data"]["windows"],
        json!([
            {"hourUtc": 7, "window": "07:00-08:00 UTC", "averageLikes": 40.0, "sampleSize": 1},
            {"hourUtc": 23, "window": "23:00-00:00 UTC", "averageLikes": 40.0, "sampleSize": 2},
        ])
    );
    assert_eq!(envelope["data"]["measuredPosts"], 4);
    assert_eq!(envelope["data"]["confidence"], "low");
    assert_eq!(
        envelope["data"]["basis"],
        json!([{"postId": "c", "hourUtc": 7, "likes": 40}, {"postId": "a", "hourUtc": 23, "likes": 40},
            {"postId": "b", "hourUtc": 23, "likes": 40}])
    );
    assert_eq!(
        envelope["evidence"],
        json!([
            evidence("harmonia_measured_post_history", "live", None),
            evidence("harmonia_measured_post", "live", Some("c")),
            evidence("harmonia_measured_post", "live", Some("a")),
            evidence("harmonia_measured_post", "live", Some("b"))
        ])
    );
}

#[test]
fn two_measured_posts_are_insufficient_history() {
    let envelope = windows_for(vec![
        post("a", Some(5), Some("2026-11-02T10:00:00Z")),
        post("b", Some(7), Some("2026-11-02T11:00:00Z")),
        post("c", None, Some("2026-11-02T12:00:00Z")),
    ]);
    assert_eq!(
        envelope,
        error(
            "insufficient_measured_history",
            "not_found",
            "Fewer than three timestamped posts have measured engagement.",
            false
        )
    );
}

#[test]
fn import_refuses_malformed_files_and_leaves_the_store_unchanged() {
    let dir = TempDir::new("import");
    let db = dir.path().join("harmonia.db");
    sqlite::import(&db, &WorkspaceDocument::from_value(&demo()).unwrap()).unwrap();
    let before = std::fs::read(&db).unwrap();
    let mut broken = demo();
    broken["posts"][3]["likes"] = json!("many");
    let error = WorkspaceDocument::from_value(&broken).unwrap_err();
    assert_eq!(error.to_string(), "$.posts[3].likes: must be a non-negative integer or null");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // Re-importing replaces the workspace's rows rather than adding to them.
    let mut smaller = demo();
    smaller["posts"] = json!([post("only", Some(1), Some("2026-11-02T10:00:00Z"))]);
    let summary = sqlite::import(&db, &WorkspaceDocument::from_value(&smaller).unwrap()).unwrap();
    assert_eq!(summary.posts, 1);
    let mut config = HostConfig::default();
    config.workspace.path = db;
    let host = Host::new(config).unwrap();
    let envelope = call(&host, "get_engagement_insights", "{}", &context());
    assert_eq!(envelope["data"]["topPosts"].as_array().unwrap().len(), 1);
}

#[test]
fn mock_mode_stamps_every_evidence_item_mock() {
    let config = HostConfig { mock: true, ..HostConfig::default() };
    let host = Host::new(config).unwrap();
    for (tool, input) in [
        ("fetch_trend_signals", "{}"),
        ("search_trend_signals", r#"{"query": "wasm"}"#),
        ("get_engagement_insights", "{}"),
        ("get_operator_feed", "{}"),
        ("get_job_status", r#"{"job_id": "job-42"}"#),
        ("suggest_posting_windows", "{}"),
    ] {
        let envelope = call(&host, tool, input, &context());
        assert_eq!(envelope["status"], "success", "{tool}: {envelope}");
        let items = envelope["evidence"].as_array().unwrap();
        assert!(!items.is_empty());
        for item in items {
            assert_eq!(item["provenance"], "mock");
            let reference = item["reference"].as_str();
            assert_eq!(
                item["evidenceId"],
                expected_evidence_id(item["source"].as_str().unwrap(), "mock", reference)
            );
        }
    }
    let feed = call(&host, "get_operator_feed", "{}", &context());
    assert_eq!(feed["data"]["freshness"]["state"], "current");
}

/// A host reading the internal API on `server` with `token`, logging to
/// the returned log.
fn http_host(server: &Loopback, token: &'static str) -> (Host, Arc<MemoryLog>) {
    let config = WorkspaceConfig {
        source: WorkspaceSourceKind::Http,
        base_url: Some(server.base_url()),
        max_body_kib: 64,
        ..WorkspaceConfig::default()
    };
    let source = HttpSource::with_token(&config, Arc::new(move || Some(token.to_owned()))).unwrap();
    let log = Arc::new(MemoryLog::default());
    let mut host_config = HostConfig::default();
    host_config.limits.max_deadline_ms = Some(1500);
    let host =
        Host::builder(host_config).log(log.clone()).workspace_source(Arc::new(source)).build().unwrap();
    (host, log)
}

#[test]
fn http_source_sends_the_token_and_workspace_and_serves_every_tool() {
    let server = Loopback::start();
    let document = demo();
    let engagement = json!({"posts": document["posts"], "takeaways": document["takeaways"]});
    server.route("/api/internal/insights", Reply::Json(200, engagement.to_string()));
    let mut feed = document["feed"].clone();
    feed["updatedAt"] = json!(ago(60));
    server.route("/api/internal/proactive-feed", Reply::Json(200, feed.to_string()));
    server.route("/api/internal/job/job%2F42%20x", Reply::Json(200, document["jobs"][0].to_string()));
    let (host, _) = http_host(&server, "token-123");
    assert_eq!(
        call(&host, "get_engagement_insights", "{}", &context())["data"]["topPosts"][0]["postId"],
        "post-001"
    );
    assert_eq!(call(&host, "get_operator_feed", "{}", &context())["data"]["freshness"]["state"], "current");
    assert_eq!(call(&host, "suggest_posting_windows", "{}", &context())["data"]["windows"][0]["hourUtc"], 14);
    let job = call(&host, "get_job_status", r#"{"job_id": "job/42 x"}"#, &context());
    assert_eq!(job["data"]["job"]["id"], "job-42");
    assert_eq!(job["evidence"], json!([evidence("harmonia_job", "live", Some("job/42 x"))]));
    for request in server.requests() {
        assert_eq!(request.method, "GET");
        assert_eq!(request.headers["authorization"], "Bearer token-123");
        assert_eq!(request.headers["x-workspace-id"], "ws_demo");
    }
    let targets: Vec<String> = server.requests().into_iter().map(|request| request.target).collect();
    assert_eq!(
        targets,
        [
            "/api/internal/insights",
            "/api/internal/proactive-feed",
            "/api/internal/insights",
            "/api/internal/job/job%2F42%20x"
        ],
        "each read once"
    );
}

#[test]
fn http_statuses_map_as_the_contract_says_and_leak_nothing() {
    let server = Loopback::start();
    let (host, log) = http_host(&server, CANARY);
    let body =
        format!(r#"{{"error": "upstream exploded", "detail": "{CANARY}", "token": "Bearer {CANARY}"}}"#);
    let rejected = error(
        "provider_request_rejected",
        "provider_permanent",
        "The data source rejected the request.",
        false,
    );
    let not_found =
        error("job_not_found", "not_found", "No job with that id exists in this workspace.", false);
    let timeout = error("tool_timeout", "dependency", "The tool call passed its deadline.", true);
    let cases: Vec<(Reply, Value, Value)> = vec![
        (Reply::Json(401, body.clone()), authorization_failed(), authorization_failed()),
        (Reply::Json(403, body.clone()), authorization_failed(), authorization_failed()),
        (Reply::Json(404, body.clone()), rejected.clone(), not_found),
        (Reply::Json(400, body.clone()), rejected.clone(), rejected.clone()),
        (Reply::Json(422, body.clone()), rejected.clone(), rejected),
        (Reply::Json(429, body.clone()), dependency_unavailable(), dependency_unavailable()),
        (Reply::Json(500, body.clone()), dependency_unavailable(), dependency_unavailable()),
        (Reply::Json(503, body.clone()), dependency_unavailable(), dependency_unavailable()),
        (Reply::Json(200, format!("garbage {CANARY}")), dependency_unavailable(), dependency_unavailable()),
        (Reply::Oversized(65 * 1024), dependency_unavailable(), dependency_unavailable()),
        (Reply::NeverFinishes, timeout.clone(), timeout),
    ];
    let mut receipts = Vec::new();
    for (reply, expected, expected_for_job) in cases {
        for path in ["/api/internal/insights", "/api/internal/proactive-feed", "/api/internal/job/job-1"] {
            server.route(path, reply.clone());
        }
        {
            for (tool, input) in [
                ("get_engagement_insights", "{}"),
                ("get_operator_feed", "{}"),
                ("suggest_posting_windows", "{}"),
            ] {
                let record = host.call_recorded(tool, input, &context()).unwrap();
                assert_eq!(record.envelope.to_value(), expected, "{tool} {reply:?}");
                receipts.extend(record.receipts);
            }
            let record = host.call_recorded("get_job_status", r#"{"job_id": "job-1"}"#, &context()).unwrap();
            assert_eq!(record.envelope.to_value(), expected_for_job, "job {reply:?}");
            receipts.extend(record.receipts);
        }
    }
    let receipts = serde_json::to_string(&receipts).unwrap();
    assert!(!receipts.contains(CANARY), "a receipt holds the canary");
    assert!(!receipts.contains("Bearer"), "a receipt holds the authorization header");
    let log_text: String = log.records().iter().map(|record| format!("{record}\n")).collect();
    assert!(!log_text.contains(CANARY), "a log line holds the canary");
    assert!(
        server
            .requests()
            .iter()
            .all(|request| request.headers["authorization"] == format!("Bearer {CANARY}"))
    );
}

#[test]
fn public_error_bodies_never_reach_envelopes_receipts_or_logs() {
    let server = Loopback::start();
    let mut config = HostConfig::default();
    config.public_web.routes.insert("https://hn.algolia.com".into(), server.base_url());
    let log = Arc::new(MemoryLog::default());
    let host = Host::builder(config).log(log.clone()).build().unwrap();
    let mut seen = String::new();
    for status in [401, 403, 404, 429, 500, 503] {
        server.route("/api/v1/search", Reply::Json(status, format!(r#"{{"message": "{CANARY}"}}"#)));
        {
            let input = r#"{"query": "x"}"#;
            let record = host.call_recorded("search_trend_signals", input, &context()).unwrap();
            assert_eq!(record.envelope.to_value(), dependency_unavailable(), "{status}");
            seen.push_str(&record.envelope.to_json());
            seen.push_str(&serde_json::to_string(&record.receipts).unwrap());
        }
    }
    seen.extend(log.records().iter().map(|record| record.to_string()));
    assert!(!seen.contains(CANARY));
}

#[test]
fn a_missing_token_is_unauthorized_without_a_request() {
    let server = Loopback::start();
    let config = WorkspaceConfig {
        source: WorkspaceSourceKind::Http,
        base_url: Some(server.base_url()),
        ..WorkspaceConfig::default()
    };
    let source = HttpSource::with_token(&config, Arc::new(|| None)).unwrap();
    let host = Host::builder(HostConfig::default()).workspace_source(Arc::new(source)).build().unwrap();
    assert_eq!(call(&host, "get_operator_feed", "{}", &context()), authorization_failed());
    assert!(server.requests().is_empty());
}

/// A host over `source` (or the configured one) with the job-echo test
/// guest, a third-party workspace plugin that returns what `job` gave it.
fn echo_host(config: HostConfig, source: Option<Arc<dyn WorkspaceSource>>) -> Host {
    let mut builder = Host::builder(config).component_file(guest_path("testing-job-echo")).unwrap();
    if let Some(source) = source {
        builder = builder.workspace_source(source);
    }
    builder.build().unwrap()
}

/// What the job-echo guest received for `job_id`, checked to be a success.
fn echoed(host: &Host, job_id: &str) -> Value {
    let envelope = call(host, "testing_job_echo", &json!({"job_id": job_id}).to_string(), &context());
    assert_eq!(envelope["status"], "success", "{envelope}");
    envelope["data"].clone()
}

#[test]
fn workspace_plugin_never_receives_job_secrets() {
    let document = demo();
    let server = Loopback::start();
    server.route("/api/internal/job/job-42", Reply::Json(200, document["jobs"][0].to_string()));
    let http_config = WorkspaceConfig {
        source: WorkspaceSourceKind::Http,
        base_url: Some(server.base_url()),
        ..WorkspaceConfig::default()
    };
    let http: Arc<dyn WorkspaceSource> =
        Arc::new(HttpSource::with_token(&http_config, Arc::new(|| Some("token-1".to_owned()))).unwrap());
    let memory: Arc<dyn WorkspaceSource> =
        Arc::new(MemorySource::new(WorkspaceDocument::from_value(&document).unwrap(), false));
    let dir = TempDir::new("echo-sqlite");
    let db = dir.path().join("harmonia.db");
    sqlite::import(&db, &WorkspaceDocument::from_value(&document).unwrap()).unwrap();
    let mut sqlite_config = HostConfig::default();
    sqlite_config.workspace.path = db;
    let hosts = [
        ("sqlite", echo_host(sqlite_config, None)),
        ("http", echo_host(HostConfig::default(), Some(http))),
        ("memory", echo_host(HostConfig::default(), Some(memory))),
        ("mock", echo_host(HostConfig { mock: true, ..HostConfig::default() }, None)),
    ];
    for (source, host) in hosts {
        let data = echoed(&host, "job-42");
        let received =
            data["received"].as_str().unwrap_or_else(|| panic!("{source}: nothing received: {data}"));
        for secret in [
            "DRAFT TEXT",
            "TRANSCRIPT",
            "PROMPT",
            "tok_live_do_not_leak",
            "accessToken",
            "transcript",
            "prompt",
            "drafts",
            "payload",
            "notes",
        ] {
            assert!(!received.contains(secret), "{source}: the plugin received {secret}: {received}");
        }
        // The plugin sees exactly what the built-in tool returns as the job.
        let builtin = call(&host, "get_job_status", r#"{"job_id": "job-42"}"#, &context());
        let received: Value = serde_json::from_str(received).unwrap();
        assert_eq!(received, builtin["data"]["job"], "{source}");
        assert_eq!(received["draftCount"], 2, "{source}");
    }
    assert!(server.requests().iter().all(|request| request.target == "/api/internal/job/job-42"));
}

#[test]
fn job_ids_dot_and_dot_dot_are_invalid_and_never_requested() {
    let server = Loopback::start();
    server.route("/api/internal/job", Reply::Json(200, demo()["jobs"][0].to_string()));
    server.route("/api/internal", Reply::Json(200, demo()["jobs"][0].to_string()));
    let config = WorkspaceConfig {
        source: WorkspaceSourceKind::Http,
        base_url: Some(server.base_url()),
        ..WorkspaceConfig::default()
    };
    let source: Arc<dyn WorkspaceSource> =
        Arc::new(HttpSource::with_token(&config, Arc::new(|| Some("token-1".to_owned()))).unwrap());
    let host = echo_host(HostConfig::default(), Some(source));
    let invalid = error("invalid_job_id", "validation", "The job id is empty.", false);
    for id in [".", "..", " .. ", "\t.\n"] {
        let input = json!({"job_id": id}).to_string();
        assert_eq!(call(&host, "get_job_status", &input, &context()), invalid, "{id:?}");
        // A third-party plugin asking for them gets not-found, without a request.
        assert_eq!(echoed(&host, id.trim()), json!({"readError": "not_found"}), "{id:?}");
    }
    let targets: Vec<String> = server.requests().into_iter().map(|request| request.target).collect();
    assert!(targets.is_empty(), "requests were made: {targets:?}");
}

#[test]
fn a_token_with_a_line_break_is_refused_without_a_request() {
    let server = Loopback::start();
    server.route("/api/internal/proactive-feed", Reply::Json(200, demo()["feed"].to_string()));
    let config = WorkspaceConfig {
        source: WorkspaceSourceKind::Http,
        base_url: Some(server.base_url()),
        ..WorkspaceConfig::default()
    };
    for token in ["token\r\nx-injected: 1", "token\n", "tok\u{0}en"] {
        let source = HttpSource::with_token(&config, Arc::new(move || Some(token.to_owned()))).unwrap();
        let host = Host::builder(HostConfig::default()).workspace_source(Arc::new(source)).build().unwrap();
        let envelope = call(&host, "get_operator_feed", "{}", &context());
        assert_eq!(envelope, authorization_failed(), "{token:?}");
        assert_eq!(envelope["error"]["retryable"], false);
    }
    assert!(server.requests().is_empty());
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn workspace_import_creates_the_database_owner_only() {
    let dir = TempDir::new("import-mode");
    let document = WorkspaceDocument::from_value(&demo()).unwrap();
    // A new database is 0600, from creation on.
    let db = dir.path().join("new.db");
    sqlite::import(&db, &document).unwrap();
    assert_eq!(mode(&db), 0o600);
    for suffix in ["-wal", "-shm"] {
        let side = dir.path().join(format!("new.db{suffix}"));
        if side.exists() {
            assert_eq!(mode(&side) & 0o077, 0, "{suffix}");
        }
    }
    // The user's own world-readable database is narrowed to 0600.
    let loose = dir.path().join("loose.db");
    sqlite::import(&loose, &document).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    sqlite::import(&loose, &document).unwrap();
    assert_eq!(mode(&loose), 0o600);
    // A symbolic link is never followed; its target stays as it was.
    let target = dir.path().join("target.db");
    std::fs::write(&target, b"not yours").unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let refused = sqlite::import(&link, &document).unwrap_err().to_string();
    assert!(refused.contains("symbolic link"), "{refused}");
    assert_eq!(std::fs::read(&target).unwrap(), b"not yours");
    // Not a regular file: refused at once (a FIFO would otherwise block).
    let fifo = dir.path().join("fifo.db");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|status| status.success()) {
        let refused = sqlite::import(&fifo, &document).unwrap_err().to_string();
        assert!(refused.contains("not a regular file"), "{refused}");
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
    // Another user's database is refused (needs root to hand a file away).
    let theirs = dir.path().join("theirs.db");
    sqlite::import(&theirs, &document).unwrap();
    let me = std::fs::metadata(&theirs).unwrap().uid();
    if me == 0 {
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let before = std::fs::read(&theirs).unwrap();
        let refused = sqlite::import(&theirs, &document).unwrap_err().to_string();
        assert!(refused.contains("another user"), "{refused}");
        assert_eq!(std::fs::read(&theirs).unwrap(), before);
    } else {
        eprintln!("skipped the other-user case: not running as root, cannot hand a file to another user");
    }
}

/// A document whose every post id and `takeaways.topPostId` start with
/// `tag`: a read mixing two imports shows two tags.
fn tagged_document(tag: &str, posts: usize) -> WorkspaceDocument {
    let posts: Vec<Value> = (0..posts)
        .map(|index| post(&format!("{tag}-{index}"), Some(index as u64), Some("2026-11-02T10:00:00Z")))
        .collect();
    WorkspaceDocument::from_value(&json!({"workspaceId": "ws_demo", "posts": posts,
        "takeaways": {"topPostId": format!("{tag}-7")}}))
    .unwrap()
}

#[test]
fn sqlite_reads_never_mix_two_imports() {
    use harmonia_host::capability::workspace::WorkspaceRead;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = TempDir::new("torn");
    let db = dir.path().join("harmonia.db");
    let documents = [tagged_document("a", 300), tagged_document("b", 200)];
    sqlite::import(&db, &documents[0]).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (db, done) = (db.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                let source = Arc::new(sqlite::SqliteSource::new(db));
                let (mut reads, mut torn, mut failed) = (0u32, Vec::new(), 0u32);
                loop {
                    let last = done.load(Ordering::SeqCst);
                    let deadline = std::time::Instant::now() + Duration::from_secs(10);
                    let (result, _) = harmonia_testkit::read_source(
                        &source,
                        "ws_demo",
                        WorkspaceRead::Engagement,
                        deadline,
                    );
                    let Ok(document) = result else {
                        failed += 1;
                        if last {
                            break;
                        }
                        continue;
                    };
                    reads += 1;
                    let body: Value = serde_json::from_str(&document.body).unwrap();
                    let top = body["takeaways"]["topPostId"].as_str().unwrap().to_owned();
                    let tag = &top[..1];
                    let posts = body["posts"].as_array().unwrap();
                    let expected = if tag == "a" { 300 } else { 200 };
                    let mixed = posts.len() != expected
                        || posts.iter().any(|post| !post["postId"].as_str().unwrap().starts_with(tag));
                    if mixed {
                        torn.push(format!("top {top}, {} posts", posts.len()));
                    }
                    if last {
                        break;
                    }
                }
                (reads, torn, failed)
            })
        })
        .collect();
    for round in 0..120 {
        sqlite::import(&db, &documents[round % 2]).unwrap();
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        let (reads, torn, failed) = reader.join().unwrap();
        assert!(reads > 0);
        assert!(
            torn.is_empty(),
            "{} of {reads} reads mixed two imports: {:?}",
            torn.len(),
            &torn[..torn.len().min(3)]
        );
        assert_eq!(failed, 0, "a read failed while an import ran ({reads} succeeded)");
    }
}
