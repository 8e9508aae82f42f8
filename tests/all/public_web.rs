//! The public web capability and the two public tools against a real
//! loopback server playing the Hacker News search API.

use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::hosts::{bare_config, host_with};
use harmonia_testkit::server::{Loopback, Reply};
use harmonia_testkit::{dependency_unavailable, expected_evidence_id};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const HITS: &str = r#"{"hits": [
    {"objectID": "1", "title": "Wasm on the server", "url": "https://a.example/wasm", "points": 120, "num_comments": 30},
    {"objectID": "2", "comment_text": "no title at all"},
    {"objectID": "3", "story_title": "Agents, sandboxed", "points": null},
    {"objectID": "4", "title": "Provenance matters", "url": "https://b.example/p", "num_comments": 7}
]}"#;

fn routed_config(server: &Loopback) -> HostConfig {
    let mut config = HostConfig::default();
    config.public_web.routes.insert("https://hn.algolia.com".into(), server.base_url());
    config
}

/// The envelope of `tool`.
fn call(host: &Host, tool: &str, input: &str) -> Value {
    host.call(tool, input, &CallContext::default()).unwrap().to_value()
}

fn live(source: &str, reference: Option<&str>) -> Value {
    json!({"evidenceId": expected_evidence_id(source, "live", reference), "source": source, "provenance": "live",
        "reference": reference})
}

#[test]
fn fetch_returns_signals_and_evidence_from_the_front_page() {
    let server = Loopback::start();
    server.route("/api/v1/search", Reply::Json(200, HITS.into()));
    let host = Host::new(routed_config(&server)).unwrap();
    let envelope = call(&host, "fetch_trend_signals", r#"{"limit": 4}"#);
    assert_eq!(
        envelope,
        json!({"status": "success", "data": {"signals": [
            {"title": "Wasm on the server", "url": "https://a.example/wasm", "points": 120, "comments": 30},
            {"title": "Agents, sandboxed", "url": "https://news.ycombinator.com/item?id=3", "points": 0, "comments": 0},
            {"title": "Provenance matters", "url": "https://b.example/p", "points": 0, "comments": 7}],
            "count": 3}, "error": null, "evidence": [
            live("hacker_news_algolia", None),
            live("hacker_news_story", Some("https://a.example/wasm")),
            live("hacker_news_story", Some("https://news.ycombinator.com/item?id=3")),
            live("hacker_news_story", Some("https://b.example/p"))]})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one request per call");
    for request in requests {
        assert_eq!(request.method, "GET");
        assert_eq!(request.target, "/api/v1/search?tags=front_page&hitsPerPage=4");
        assert!(!request.headers.contains_key("authorization"));
        assert!(!request.headers.contains_key("cookie"));
    }
}

#[test]
fn search_sends_the_trimmed_encoded_query() {
    let server = Loopback::start();
    server.route("/api/v1/search", Reply::Json(200, r#"{"hits": []}"#.into()));
    let host = Host::new(routed_config(&server)).unwrap();
    let envelope = call(&host, "search_trend_signals", r#"{"query": "  wasm & agents ", "limit": 99}"#);
    assert_eq!(
        envelope,
        json!({"status": "success", "data": {"query": "wasm & agents", "signals": [], "count": 0}, "error": null,
            "evidence": [live("hacker_news_algolia", None)]})
    );
    assert_eq!(
        server.requests()[0].target,
        "/api/v1/search?query=wasm%20%26%20agents&tags=story&hitsPerPage=10"
    );
    let invalid_query = call(&host, "search_trend_signals", r#"{"query": "   "}"#);
    assert_eq!(invalid_query["error"]["code"], "invalid_query");
    assert_eq!(invalid_query["error"]["category"], "validation");
    let invalid_input = call(&host, "search_trend_signals", r#"{"q": "x"}"#);
    assert_eq!(invalid_input["error"]["code"], "invalid_input");
    assert_eq!(server.requests().len(), 1, "validation errors make no request");
}

#[test]
fn every_failure_of_the_public_source_is_dependency_unavailable() {
    let server = Loopback::start();
    let mut config = routed_config(&server);
    config.public_web.max_body_kib = 64;
    let host = Host::new(config).unwrap();
    for reply in [
        Reply::Json(401, "{}".into()),
        Reply::Json(403, "{}".into()),
        Reply::Json(404, "{}".into()),
        Reply::Json(429, "{}".into()),
        Reply::Json(500, "{}".into()),
        Reply::Json(503, "{}".into()),
        Reply::Json(200, "<html>garbage</html>".into()),
        Reply::Json(200, r#"{"hits": "not a list"}"#.into()),
        Reply::Oversized(65 * 1024),
    ] {
        server.route("/api/v1/search", reply.clone());
        for (tool, input) in [("fetch_trend_signals", "{}"), ("search_trend_signals", r#"{"query": "x"}"#)] {
            assert_eq!(call(&host, tool, input), dependency_unavailable(), "{tool} {reply:?}");
        }
    }
}

#[test]
fn a_body_that_never_finishes_ends_as_tool_timeout_at_the_deadline() {
    let server = Loopback::start();
    server.route("/api/v1/search", Reply::NeverFinishes);
    let mut config = routed_config(&server);
    config.limits.max_deadline_ms = Some(1500);
    let host = Host::new(config).unwrap();
    {
        let started = Instant::now();
        let envelope = host.call("fetch_trend_signals", "{}", &CallContext::default()).unwrap();
        assert_eq!(
            envelope.to_value(),
            json!({"status": "error", "data": null, "error": {"code": "tool_timeout", "category": "dependency",
                "message": "The tool call passed its deadline.", "retryable": true}, "evidence": []}),
            ""
        );
        assert!(started.elapsed() >= Duration::from_millis(1400), "{:?}", started.elapsed());
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }
}

#[test]
fn a_slow_upstream_within_the_deadline_still_answers() {
    let server = Loopback::start();
    server.route(
        "/api/v1/search",
        Reply::Delayed(Duration::from_millis(300), Box::new(Reply::Json(200, HITS.into()))),
    );
    let host = Host::new(routed_config(&server)).unwrap();
    assert_eq!(call(&host, "fetch_trend_signals", "{}")["status"], "success");
}

fn fetch_url_host(config: HostConfig) -> Host {
    let mut config = config;
    config.plugins.builtin = false;
    host_with(config, &["testing-fetch-url"]).0
}

fn fetch_url(host: &Host, url: &str) -> Value {
    let input = json!({"url": url}).to_string();
    call(host, "testing_fetch_url", &input)["data"].clone()
}

#[test]
fn origins_off_the_allow_list_are_denied_without_traffic() {
    let server = Loopback::start();
    let host = fetch_url_host(bare_config());
    let before = server.requests().len();
    assert_eq!(fetch_url(&host, &format!("{}/anything", server.base_url())), json!({"fetchError": "denied"}));
    assert_eq!(fetch_url(&host, "https://hn.algolia.com.evil.example/api"), json!({"fetchError": "denied"}));
    assert_eq!(fetch_url(&host, "http://hn.algolia.com/api/v1/search"), json!({"fetchError": "denied"}));
    assert_eq!(fetch_url(&host, "https://hn.algolia.com:8443/api"), json!({"fetchError": "denied"}));
    assert_eq!(fetch_url(&host, "file:///etc/passwd"), json!({"fetchError": "invalid_url"}));
    assert_eq!(fetch_url(&host, "https://user:pw@hn.algolia.com/api"), json!({"fetchError": "invalid_url"}));
    assert_eq!(fetch_url(&host, "not a url"), json!({"fetchError": "invalid_url"}));
    assert_eq!(server.requests().len(), before, "the test server saw nothing");
}

#[test]
fn redirects_are_followed_only_within_the_allow_list() {
    let server = Loopback::start();
    server.route("/inside", Reply::Redirect(302, "/target".into()));
    server.route("/target", Reply::Json(200, "{}".into()));
    server.route("/outside", Reply::Redirect(301, "https://evil.example/steal".into()));
    let mut config = routed_config(&server);
    config.plugins.builtin = false;
    let host = fetch_url_host(config);
    assert_eq!(fetch_url(&host, "https://hn.algolia.com/inside"), json!({"status": 200, "bytes": 2}));
    assert_eq!(fetch_url(&host, "https://hn.algolia.com/outside"), json!({"fetchError": "denied"}));
    let targets: Vec<String> = server.requests().into_iter().map(|request| request.target).collect();
    assert_eq!(targets, ["/inside", "/target", "/outside"]);
}

#[test]
fn bodies_over_the_cap_are_too_large_not_truncated() {
    let server = Loopback::start();
    server.route("/big", Reply::Oversized(40 * 1024));
    server.route("/fits", Reply::Oversized(32 * 1024));
    let mut config = routed_config(&server);
    config.public_web.max_body_kib = 32;
    let host = fetch_url_host(config);
    assert_eq!(fetch_url(&host, "https://hn.algolia.com/big"), json!({"fetchError": "too_large"}));
    assert_eq!(fetch_url(&host, "https://hn.algolia.com/fits"), json!({"status": 200, "bytes": 32 * 1024}));
}

#[test]
fn receipts_record_each_use() {
    let server = Loopback::start();
    server.route("/api/v1/search", Reply::Json(200, HITS.into()));
    let host = Host::new(routed_config(&server)).unwrap();
    {
        let record = host.call_recorded("fetch_trend_signals", "{}", &CallContext::default()).unwrap();
        assert_eq!(record.receipts.len(), 1);
        let receipt = serde_json::to_value(&record.receipts[0]).unwrap();
        assert_eq!(receipt["capability"], "public-web");
        assert_eq!(receipt["target"], "https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=6");
        assert_eq!(receipt["status"], "200");
        assert_eq!(receipt["bytes"], HITS.len());
        assert_eq!(receipt["sha256"], harmonia_contract::digest::sha256_hex(HITS.as_bytes()));
    }
}
