//! Backpressure at the host's call slots (`limits.max_calls`, shared by
//! `Host::call` and `Host::call_async`: each test holds the slot through
//! one API and waits through the other), against a loopback upstream that
//! holds a call's slot: a call that finds
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

/// One call slot, the fetch guest routed to `server`, a trivial
/// guest and a looping guest (1 s deadline), counting into `metrics`.
fn one_slot_host(server: &Loopback, metrics: &Metrics) -> Host {
    let mut config: HostConfig = bare_config();
    config.limits.max_calls = 1;
    config.public_web.routes.insert("https://hn.algolia.com".into(), server.base_url());
    let mut builder = Host::builder(config).metrics(metrics.clone());
    for guest in ["testing-fetch-url", "testing-trivial", "hostile-loop"] {
        builder = builder.component_file(guest_path(guest)).unwrap();
    }
    builder.build().unwrap()
}

/// How a test calls the host.
#[derive(Clone, Copy, Debug)]
enum Api {
    /// `Host::call` on the test's thread.
    Blocking,
    /// `Host::call_async`, awaited on a tokio runtime.
    Async,
}

/// The holder's API and the waiter's, each way round.
const PAIRS: [(Api, Api); 2] = [(Api::Blocking, Api::Async), (Api::Async, Api::Blocking)];

fn call(api: Api, host: &Host, tool: &str, input: &str) -> Value {
    let context = CallContext::default();
    let envelope = match api {
        Api::Blocking => host.call(tool, input, &context),
        Api::Async => harmonia_testkit::runtime().block_on(host.call_async(tool, input, &context)),
    };
    envelope.unwrap().to_value()
}

/// The metrics label of the host's slots.
const BOUND: &str = "host_slots";

/// Start a call that holds the only slot in the upstream, and return
/// once the upstream has its request.
fn hold_the_slot(api: Api, host: &Host, server: &Loopback) -> std::thread::JoinHandle<Value> {
    let holder = host.clone();
    let handle = std::thread::spawn(move || call(api, &holder, "testing_fetch_url", HOLD_URL));
    server.await_request();
    handle
}

#[test]
fn a_call_waiting_for_a_slot_runs_when_one_frees_before_its_deadline() {
    for (holder, waiter) in PAIRS {
        waiter_runs_when_a_slot_frees(holder, waiter);
    }
}

fn waiter_runs_when_a_slot_frees(holder_api: Api, api: Api) {
    let server = Loopback::start();
    server.hold("/hold", Duration::from_millis(400));
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    let holder = hold_the_slot(holder_api, &host, &server);
    let started = Instant::now();
    let waiter = call(api, &host, "trivial_probe", "{}");
    let waited = started.elapsed();
    assert_eq!(waiter["status"], "success", "{api:?}: {waiter}");
    assert!(waited >= Duration::from_millis(200), "{api:?}: the call did not wait for the slot: {waited:?}");
    let held = holder.join().unwrap();
    assert_eq!(held["data"]["status"], 200, "{api:?}: {held}");
    let text = metrics.encode();
    let bound = BOUND;
    assert_metric(&text, &format!(r#"harmonia_slot_waits_total{{bound="{bound}"}}"#), 1.0);
    assert_metric(&text, &format!(r#"harmonia_slot_wait_timeouts_total{{bound="{bound}"}}"#), 0.0);
    assert_metric(&text, &format!(r#"harmonia_slot_wait_seconds_count{{bound="{bound}"}}"#), 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="trivial_probe",code="success"}"#, 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="testing_fetch_url",code="success"}"#, 1.0);
    assert_metric(&text, r#"harmonia_capability_uses_total{kind="public_web",status="ok"}"#, 1.0);
    assert_metric(&text, "harmonia_calls_in_flight", 0.0);
}

#[test]
fn a_call_whose_deadline_passes_waiting_for_a_slot_gets_retryable_dependency_unavailable() {
    for (holder, waiter) in PAIRS {
        waiter_past_its_deadline_is_refused(holder, waiter);
    }
}

fn waiter_past_its_deadline_is_refused(holder_api: Api, api: Api) {
    let server = Loopback::start();
    server.hold("/hold", Duration::from_millis(3000));
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    let started = Instant::now();
    let holder = hold_the_slot(holder_api, &host, &server);
    let waiting = Instant::now();
    // The looping guest would spin forever; it never runs: its 1 s
    // deadline passes while the slot is held.
    let waiter = call(api, &host, "hostile_loop", "{}");
    let waited = waiting.elapsed();
    assert_eq!(waiter, dependency_unavailable(), "{api:?}");
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_millis(2500),
        "{api:?}: {waited:?}"
    );
    let text = metrics.encode();
    let bound = BOUND;
    assert_eq!(
        metric_value(&text, "harmonia_calls_in_flight"),
        1.0,
        "{api:?}: the holder still runs: {text}"
    );
    assert_metric(&text, &format!(r#"harmonia_slot_wait_timeouts_total{{bound="{bound}"}}"#), 1.0);
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="dependency_unavailable"}"#, 1.0);
    let held = holder.join().unwrap();
    assert_eq!(held["data"]["status"], 200, "{api:?}: {held}");
    // Once the slot is free the same guest runs, to its own deadline.
    let ran = call(api, &host, "hostile_loop", "{}");
    assert_eq!(ran["error"]["code"], "tool_timeout", "{api:?}: {ran}");
    assert!(started.elapsed() < Duration::from_secs(8), "{api:?}: {:?}", started.elapsed());
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_calls_total{tool="hostile_loop",code="tool_timeout"}"#, 1.0);
    assert_metric(&text, &format!(r#"harmonia_slot_waits_total{{bound="{bound}"}}"#), 1.0);
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

#[test]
fn an_async_call_dropped_by_its_embedder_frees_its_slot_at_once() {
    let server = Loopback::start();
    server.hold("/hold", Duration::from_millis(3000));
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    harmonia_testkit::runtime().block_on(async {
        // A guest spinning in wasm, and one waiting on its upstream: the
        // embedder gives up on each after 100 ms and drops the future.
        for (tool, input) in [("hostile_loop", "{}"), ("testing_fetch_url", HOLD_URL)] {
            let context = CallContext::default();
            let call = host.call_async(tool, input, &context);
            let dropped = tokio::time::timeout(Duration::from_millis(100), call).await;
            assert!(dropped.is_err(), "{tool} finished within 100 ms");
            assert_metric(&metrics.encode(), "harmonia_calls_in_flight", 0.0);
            // The only slot is free again: the next call runs at once.
            let started = Instant::now();
            let next = host.call_async("trivial_probe", "{}", &CallContext::default()).await.unwrap();
            assert!(next.is_success(), "after dropping {tool}: {next:?}");
            assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
        }
    });
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#, 0.0);
}

/// A call awaited in a task on a multi-threaded runtime (as a server's
/// request is) frees its slot when its store is dropped, by a task queued
/// behind the caller's, after the caller has its answer. A caller that
/// calls again at once, in the same task, never waits for that slot nor
/// counts a wait: one slot serves a run of calls back to back, and the
/// slot is free once they end.
#[test]
fn calls_back_to_back_in_one_task_on_one_slot_never_wait_for_it() {
    let server = Loopback::start();
    let metrics = Metrics::new();
    let host = one_slot_host(&server, &metrics);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let caller = host.clone();
    let answers = runtime
        .block_on(runtime.spawn(async move {
            let context = CallContext::default();
            let mut answers = Vec::new();
            for _ in 0..50 {
                answers.push(caller.call_async("trivial_probe", "{}", &context).await.unwrap().to_value());
            }
            answers
        }))
        .unwrap();
    assert!(answers.iter().all(|answer| answer["status"] == "success"), "{answers:?}");
    let text = metrics.encode();
    assert_metric(&text, r#"harmonia_calls_total{tool="trivial_probe",code="success"}"#, 50.0);
    assert_metric(&text, &format!(r#"harmonia_slot_waits_total{{bound="{BOUND}"}}"#), 0.0);
    // The last store's task has run (or runs now): the slot is free.
    let started = Instant::now();
    while host.call_slots().in_flight() != 0 {
        assert!(started.elapsed() < Duration::from_secs(5), "the last call's slot was never freed");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(metric_value(&metrics.encode(), "harmonia_calls_in_flight"), 0.0);
}
