//! The spans of real calls (mock sources), caught by an exporter that
//! keeps them in memory: one `harmonia.call` per call with its outcome, a child
//! `harmonia.capability` per capability use inside it, and no argument,
//! URL or data in any of them.

use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use harmonia_serve::telemetry::CallSpans;
use opentelemetry::Value;
use opentelemetry::trace::Status;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The spans exported, kept. (The SDK's own in-memory exporter needs its
/// `testing` feature, which would give the test build other features of
/// opentelemetry than `cargo run` has, and the demo a rebuild.)
#[derive(Clone, Debug, Default)]
struct KeptSpans(Arc<Mutex<Vec<SpanData>>>);

impl KeptSpans {
    fn get_finished_spans(&self) -> Result<Vec<SpanData>, String> {
        self.0.lock().map(|spans| spans.clone()).map_err(|error| error.to_string())
    }
}

impl SpanExporter for KeptSpans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().expect("not poisoned").extend(batch);
        Ok(())
    }
}

const CANARY: &str = "CANARYx7q";

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes.iter().find(|pair| pair.key.as_str() == key).map(|pair| &pair.value)
}

/// The spans of `calls`, each recorded `late` after it ended (a server's
/// recording waits on its scheduler).
fn spans_recorded_late(calls: &[(&str, String)], late: Duration) -> Vec<SpanData> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    let exporter = KeptSpans::default();
    let spans = CallSpans::with_exporter(exporter.clone());
    for (tool, input) in calls {
        let record = host.call_recorded(tool, input, &CallContext::for_workspace("ws_demo")).unwrap();
        std::thread::sleep(late);
        spans.record(tool, &record);
    }
    spans.flush();
    exporter.get_finished_spans().unwrap()
}

fn spans_of(calls: &[(&str, String)]) -> Vec<SpanData> {
    spans_recorded_late(calls, Duration::ZERO)
}

/// Each capability span starts no earlier and ends no later than its
/// call's, on the record's own clock.
fn assert_children_within_their_calls(spans: &[SpanData]) {
    for call in spans.iter().filter(|span| span.name == "harmonia.call") {
        for child in spans.iter().filter(|span| span.parent_span_id == call.span_context.span_id()) {
            assert!(
                child.start_time >= call.start_time && child.end_time <= call.end_time,
                "{call:#?} {child:#?}"
            );
        }
    }
}

#[test]
fn a_call_is_one_span_with_its_capability_uses_as_children_and_no_argument_in_any() {
    let spans = spans_of(&[
        ("search_trend_signals", format!(r#"{{"query": "{CANARY}"}}"#)),
        ("get_job_status", r#"{"job_id": "job-7"}"#.to_owned()),
    ]);
    let calls: Vec<&SpanData> = spans.iter().filter(|span| span.name == "harmonia.call").collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let tools: Vec<String> =
        calls.iter().map(|span| attribute(span, "harmonia.tool").unwrap().as_str().into_owned()).collect();
    assert_eq!(tools, ["search_trend_signals", "get_job_status"]);
    for call in &calls {
        assert_eq!(attribute(call, "harmonia.outcome").unwrap().as_str(), "success");
        assert_eq!(call.status, Status::Unset);
        let children: Vec<&SpanData> =
            spans.iter().filter(|span| span.parent_span_id == call.span_context.span_id()).collect();
        assert!(!children.is_empty(), "every tool here reads its capability once at least");
        for child in children {
            assert_eq!(child.name, "harmonia.capability");
            assert_eq!(child.span_context.trace_id(), call.span_context.trace_id());
            assert!(attribute(child, "harmonia.capability.status").is_some());
        }
    }
    let job = spans.iter().find(|span| span.parent_span_id == calls[1].span_context.span_id()).unwrap();
    assert_eq!(attribute(job, "harmonia.capability").unwrap().as_str(), "workspace");
    assert!(attribute(job, "harmonia.capability.read").is_some(), "a workspace read says which kind");
    let search = spans.iter().find(|span| span.parent_span_id == calls[0].span_context.span_id()).unwrap();
    assert_eq!(attribute(search, "harmonia.capability").unwrap().as_str(), "public-web");
    assert!(attribute(search, "harmonia.capability.read").is_none(), "a URL may hold an argument");
    assert_children_within_their_calls(&spans);
    let everything = format!("{spans:?}");
    assert!(!everything.contains(CANARY), "an argument reached a span");
    assert!(!everything.contains("hn.algolia") && !everything.contains("http"), "a URL reached a span");
}

#[test]
fn a_call_recorded_late_still_holds_its_capability_uses() {
    // Before, the call's span ended when it was recorded and started its
    // duration earlier: a recording the scheduler delayed (CI saw one)
    // put the call's start after its capability's.
    let spans = spans_recorded_late(
        &[("get_job_status", r#"{"job_id": "job-7"}"#.to_owned())],
        Duration::from_millis(50),
    );
    assert_eq!(spans.iter().filter(|span| span.name == "harmonia.capability").count(), 1, "{spans:#?}");
    assert_children_within_their_calls(&spans);
}

#[test]
fn an_error_is_the_spans_status_with_its_code_and_never_its_input() {
    let spans = spans_of(&[("get_job_status", format!(r#"{{"job_id": "job-7", "{CANARY}": 1}}"#))]);
    let call = spans.iter().find(|span| span.name == "harmonia.call").unwrap();
    assert_eq!(attribute(call, "harmonia.outcome").unwrap().as_str(), "invalid_input");
    assert_eq!(attribute(call, "harmonia.error.category").unwrap().as_str(), "validation");
    assert_eq!(attribute(call, "harmonia.error.retryable"), Some(&Value::Bool(false)));
    assert_eq!(call.status, Status::error("invalid_input"));
    assert!(!format!("{spans:?}").contains(CANARY));
}

#[test]
fn a_clients_traceparent_is_the_parent_of_the_call_span_and_a_malformed_one_is_ignored() {
    use harmonia_serve::telemetry::TraceParent;
    use opentelemetry::trace::{SpanId, TraceId};
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    let exporter = KeptSpans::default();
    let spans = CallSpans::with_exporter(exporter.clone());
    let record = host
        .call_recorded("get_job_status", r#"{"job_id": "job-7"}"#, &CallContext::for_workspace("ws_demo"))
        .unwrap();
    let client = TraceParent {
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
        tracestate: Some("vendor=opaque".into()),
    };
    spans.record_within("get_job_status", &record, Some(&client));
    let malformed = TraceParent { traceparent: "00-not-a-trace-01".into(), tracestate: None };
    spans.record_within("get_job_status", &record, Some(&malformed));
    spans.flush();
    let finished = exporter.get_finished_spans().unwrap();
    let calls: Vec<&SpanData> = finished.iter().filter(|span| span.name == "harmonia.call").collect();
    assert_eq!(calls.len(), 2);
    let client_trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    assert_eq!(calls[0].span_context.trace_id(), client_trace);
    assert_eq!(calls[0].parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
    assert_eq!(calls[0].span_context.trace_state().header(), "vendor=opaque");
    let child = finished.iter().find(|span| span.parent_span_id == calls[0].span_context.span_id()).unwrap();
    assert_eq!(child.span_context.trace_id(), client_trace, "the capability spans join the client's trace");
    assert_eq!(calls[1].parent_span_id, SpanId::INVALID, "a malformed traceparent starts a trace of its own");
    assert_ne!(calls[1].span_context.trace_id(), client_trace);
}
