//! Backpressure at the host's call slots (`limits.max_concurrent_calls`),
//! against a loopback upstream that holds a call's slot: a call that finds
//! every slot taken waits up to its deadline; it runs when a slot frees in
//! time, and otherwise gets exactly the retryable `dependency_unavailable`
//! envelope, having never run. Every wait is counted in the metrics.

use harmonia_host::config::HostConfig;
use harmonia_host::metrics::Metrics;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::hosts::{bare_config, guest_path};
use harmonia_testkit::server::Loopback;
use harmonia_testkit::{assert_metric, dependency_unavailable, metric_value};
use serde_json::Value;
use std::time::{Duration, Instant};

const HOLD_URL: &str = r#"{"url": "https://hn.algolia.com/hold"}"#;

/// One call slot, the fetch guest routed to `server`, a trivial guest and
/// a looping guest (1 s deadline), counting into `metrics`.
fn one_slot_host(server: &Loopback, metrics: &Metrics) -> Host {
    let mut config: HostConfig = bare_config();
    config.limits.max_concurrent_calls = 1;
    config.public_web.routes.insert("https://hn.algolia.com".into(), server.base_url());
    let mut builder = Host::builder(config).metrics(metrics.clone());
    for guest in ["testing-fetch-url", "testing-trivial", "hostile-loop"] {
        builder = builder.component_file(guest_path(guest)).unwrap();
    }
    builder.build().unwrap()
}

fn call(host: &Host, tool: &str, input: &str) -> Value {
    host.call(tool, input, &CallContext::default()).unwrap().to_value()
}

/// Start a call that holds the only slot in the upstream, and return once
/// the upstream has its request.
fn hold_the_slot(host: &Host, server: &Loopback) -> std::thread::JoinHandle<Value> {
    let holder = host.clone();
    let handle = std::thread::spawn(move || call(&holder, "testing_fetch_url", HOLD_URL));
    server.await_request();
    handle
}

#[test]
fn a_call_waiting_for_a_slot_runs_when_one_frees_before_its_deadline() {
    let server = Loopback::start();
    server.hold("/hold", Duration::from_millis(400));
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    let holder = hold_the_slot(&host, &server);
    let started = Instant::now();
    let waiter = call(&host, "trivial_probe", "{}");
    let waited = started.elapsed();
    assert_eq!(waiter["status"], "success", "{waiter}");
    assert!(waited >= Duration::from_millis(200), "the call did not wait for the slot: {waited:?}");
    let held = holder.join().unwrap();
    assert_eq!(held["data"]["status"], 200, "{held}");
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_slot_waits_total{bound="host_slots"}"#, 1.0);
    assert_metric(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#, 0.0);
    assert_metric(&text, r#"harmonia_slot_wait_seconds_count{bound="host_slots"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="trivial_probe",code="success"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="testing_fetch_url",code="success"}"#, 1.0);
    assert_metric(&text, r#"harmonia_capability_uses_total{kind="public_web",status="ok"}"#, 1.0);
    assert_metric(&text, "harmonia_calls_in_flight", 0.0);
}

#[test]
fn a_call_whose_deadline_passes_waiting_for_a_slot_gets_retryable_dependency_unavailable() {
    let server = Loopback::start();
    server.hold("/hold", Duration::from_millis(3000));
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    let started = Instant::now();
    let holder = hold_the_slot(&host, &server);
    let waiting = Instant::now();
    // The looping guest would spin forever; it never runs: its 1 s
    // deadline passes while the slot is held.
    let waiter = call(&host, "hostile_loop", "{}");
    let waited = waiting.elapsed();
    assert_eq!(waiter, dependency_unavailable());
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_millis(2500), "{waited:?}");
    let text = metrics.encode();
    assert_eq!(metric_value(&text, "harmonia_calls_in_flight"), 1.0, "the holder still runs: {text}");
    assert_metric(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="dependency_unavailable"}"#, 1.0);
    let held = holder.join().unwrap();
    assert_eq!(held["data"]["status"], 200, "{held}");
    // Once the slot is free the same guest runs, to its own deadline.
    let ran = call(&host, "hostile_loop", "{}");
    assert_eq!(ran["error"]["code"], "tool_timeout", "{ran}");
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="tool_timeout"}"#, 1.0);
    assert_metric(&text, r#"harmonia_slot_waits_total{bound="host_slots"}"#, 1.0);
    assert_metric(&text, "harmonia_calls_in_flight", 0.0);
}

#[test]
fn a_refused_plugin_and_an_unknown_tool_are_counted_without_their_names() {
    let metrics = Metrics::new();
    let refused = Host::builder(bare_config())
        .metrics(metrics.clone())
        .component("not-a-component", b"\0asm-but-not-really".to_vec())
        .build();
    assert!(refused.is_err());
    assert_eq!(metric_value(&metrics.encode(), "harmonia_component_load_failures_total"), 1.0);
    let host = Host::builder(bare_config())
        .metrics(metrics.clone())
        .component_file(guest_path("testing-trivial"))
        .unwrap()
        .build()
        .unwrap();
    assert!(host.call("no_such_tool_CANARY", "{}", &CallContext::default()).is_err());
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_calls_total{tool="unknown",code="call_refused"}"#, 1.0);
    assert!(!text.contains("CANARY") && !text.contains("not-a-component"), "{text}");
}
