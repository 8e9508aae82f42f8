//! Hostile guests: each gets its exact envelope, and the host stays
//! healthy afterwards.

use harmonia_contract::envelope::Envelope;
use harmonia_host::log::{Level, MemoryLog};
use harmonia_host::{CallContext, Host};
use harmonia_testkit::assert_test_exists;
use harmonia_testkit::hosts::{bare_config, guest_path, host_with, try_host_with};
use serde_json::{Value, json};
use std::future::Future;
use std::time::{Duration, Instant};

// Every hostile guest has a test, here or in `tests/all/adversary.rs`: a guest
// without one does not compile (`tests/support/hostile.rs`).
harmonia_testkit::hostile_tests!(hostile);
harmonia_artifacts::foreach_hostile!(assert_test_exists);

const HOSTILE: &[&str] = &[
    "hostile-loop",
    "hostile-oom",
    "hostile-recursion",
    "hostile-panic",
    "hostile-not-object",
    "hostile-invalid-json",
    "hostile-undeclared-error",
    "hostile-wrong-category",
    "hostile-leaky-message",
    "hostile-big-data",
    "hostile-evidence-flood",
    "hostile-counter",
    "hostile-chatty",
];

fn hostile_host() -> (Host, std::sync::Arc<MemoryLog>) {
    let mut guests = HOSTILE.to_vec();
    guests.push("testing-trivial");
    host_with(bare_config(), &guests)
}

/// The envelope of `tool`.
fn call(host: &Host, tool: &str) -> Value {
    host.call(tool, "{}", &CallContext::default()).unwrap().to_value()
}

fn execution_failed(message: &str) -> Value {
    json!({"status": "error", "data": null, "error": {"code": "tool_execution_failed", "category": "dependency",
        "message": message, "retryable": false}, "evidence": []})
}

fn assert_healthy(host: &Host) {
    assert_eq!(
        call(host, "trivial_probe"),
        json!({"status": "success", "data": {}, "error": null, "evidence": []})
    );
}

#[test]
fn infinite_loop_is_stopped_at_its_deadline_as_tool_timeout() {
    let (host, _) = hostile_host();
    {
        let started = Instant::now();
        let envelope = host.call("hostile_loop", "{}", &CallContext::default()).unwrap().to_value();
        let elapsed = started.elapsed();
        assert_eq!(
            envelope,
            json!({"status": "error", "data": null, "error": {"code": "tool_timeout", "category": "dependency",
                "message": "The tool call passed its deadline.", "retryable": true}, "evidence": []}),
            ""
        );
        // The deadline is 1 s; the bound here only proves the call cannot
        // hang (the precise overshoot is measured by `harmonia bench`).
        assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
    }
    assert_healthy(&host);
}

#[test]
fn config_lowers_the_deadline_never_raises_it() {
    let mut config = bare_config();
    config.limits.max_deadline_ms = Some(200);
    let (host, _) = host_with(config, &["hostile-loop"]);
    assert_eq!(host.deadline("hostile_loop"), Some(Duration::from_millis(200)));
    {
        let started = Instant::now();
        let envelope = host.call("hostile_loop", "{}", &CallContext::default()).unwrap();
        assert_eq!(envelope.error.unwrap().code, "tool_timeout");
        assert!(started.elapsed() < Duration::from_millis(900));
    }
    let mut config = bare_config();
    config.limits.max_deadline_ms = Some(60_000);
    let (host, _) = host_with(config, &["hostile-loop"]);
    assert_eq!(host.deadline("hostile_loop"), Some(Duration::from_millis(1000)));
}

#[test]
fn fuel_when_asked_for_bounds_instructions() {
    let mut config = bare_config();
    config.limits.fuel = Some(5_000_000);
    let (host, _) = host_with(config, &["hostile-loop", "testing-trivial"]);
    {
        let started = Instant::now();
        let envelope = host.call("hostile_loop", "{}", &CallContext::default()).unwrap().to_value();
        assert_eq!(envelope, execution_failed("The tool exceeded its instruction budget."));
        assert!(started.elapsed() < Duration::from_millis(900), "fuel, not the deadline, stopped it");
    }
    assert_healthy(&host);
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let (host, log) = hostile_host();
    assert_eq!(call(&host, "hostile_oom"), execution_failed("The tool exceeded its memory limit."));
    assert!(log.records().iter().any(|record| record.event == "call.trap"));
    assert_healthy(&host);
}

#[test]
fn unbounded_recursion_overflows_the_stack() {
    let (host, _) = hostile_host();
    assert_eq!(call(&host, "hostile_recursion"), execution_failed("The tool exceeded its stack limit."));
    assert_healthy(&host);
}

#[test]
fn panic_becomes_a_fixed_message_and_its_text_stays_in_the_log() {
    let (host, log) = hostile_host();
    let envelope = call(&host, "hostile_panic");
    assert_eq!(envelope, execution_failed("The tool stopped with a fault before producing a result."));
    assert!(!envelope.to_string().contains("SECRET-PANIC-TEXT"));
    let stderr: Vec<_> = log.records().into_iter().filter(|record| record.event == "guest.stderr").collect();
    assert_eq!(stderr.len(), 1, "one record of the call's stderr");
    for record in stderr {
        assert_eq!(record.level, Level::Debug);
        assert!(
            record.fields.iter().any(|(key, value)| *key == "text" && value.contains("SECRET-PANIC-TEXT"))
        );
    }
    assert_healthy(&host);
}

#[test]
fn data_that_is_not_an_object_or_not_json_breaks_the_envelope() {
    let (host, _) = hostile_host();
    let broken = execution_failed("The tool returned a result that breaks the envelope contract.");
    assert_eq!(call(&host, "hostile_not_object"), broken);
    assert_eq!(call(&host, "hostile_invalid_json"), broken);
    assert_eq!(call(&host, "hostile_big_data"), broken);
    assert_eq!(call(&host, "hostile_evidence_flood"), broken);
    assert_healthy(&host);
}

#[test]
fn undeclared_errors_and_wrong_categories_become_tool_execution_failed() {
    let (host, _) = hostile_host();
    let undeclared = execution_failed("The tool returned an error it does not declare.");
    let envelope = call(&host, "hostile_undeclared_error");
    assert_eq!(envelope, undeclared);
    assert!(!envelope.to_string().contains("SECRET"));
    assert_eq!(call(&host, "hostile_wrong_category"), undeclared);
    assert_healthy(&host);
}

#[test]
fn contract_codes_carry_the_contracts_message_not_the_guests() {
    let (host, _) = hostile_host();
    assert_eq!(
        call(&host, "hostile_leaky_message"),
        json!({"status": "error", "data": null, "error": {"code": "dependency_unavailable", "category": "dependency",
            "message": "The data source is unavailable right now.", "retryable": true}, "evidence": []})
    );
}

#[test]
fn inputs_over_one_mib_are_refused_unread() {
    let (host, _) = hostile_host();
    let big = format!("{{\"blob\": \"{}\"}}", "x".repeat(1024 * 1024));
    assert_eq!(
        host.call("trivial_probe", &big, &CallContext::default()).unwrap().to_value(),
        json!({"status": "error", "data": null, "error": {"code": "invalid_input", "category": "validation",
            "message": "The input is not a JSON object of this tool's schema.", "retryable": false}, "evidence": []})
    );
    assert_healthy(&host);
}

#[test]
fn static_state_never_survives_a_call() {
    let (host, _) = hostile_host();
    for _ in 0..20 {
        assert_eq!(
            call(&host, "hostile_counter"),
            json!({"status": "success", "data": {"count": 1}, "error": null, "evidence": []})
        );
    }
}

#[test]
fn stdout_and_stderr_are_captured_capped_and_kept_out_of_envelopes() {
    let (host, log) = hostile_host();
    let envelope = call(&host, "hostile_chatty");
    assert_eq!(
        envelope,
        json!({"status": "success", "data": {"printed": true}, "error": null, "evidence": []})
    );
    for event in ["guest.stdout", "guest.stderr"] {
        let record = log.records().into_iter().find(|record| record.event == event).expect(event);
        let field = |name: &str| {
            record.fields.iter().find(|(key, _)| *key == name).map(|(_, value)| value.clone()).unwrap()
        };
        assert_eq!(field("text").len(), 16 * 1024);
        assert!(field("dropped_bytes").parse::<usize>().unwrap() > 900_000);
    }
}

#[test]
fn a_guest_importing_sockets_is_refused_at_load_when_the_operator_says_so() {
    let mut config = bare_config();
    config.wasi.inert_filesystem_and_sockets = false;
    let error = try_host_with(config, &["hostile-sockets"]).unwrap_err().to_string();
    assert!(error.contains("wasi:sockets/"), "{error}");
    assert!(error.contains(&guest_path("hostile-sockets").display().to_string()), "{error}");
}

#[test]
fn sockets_are_linked_by_default_but_every_address_is_denied() {
    let (host, _) = host_with(bare_config(), &["hostile-sockets"]);
    assert_eq!(
        call(&host, "hostile_sockets"),
        json!({"status": "success", "data": {"connected": false}, "error": null, "evidence": []})
    );
}

#[test]
fn filesystem_and_sockets_links_deny_every_attempt_and_the_call_answers() {
    let (host, _) = host_with(bare_config(), &["testing-denied-probe"]);
    let envelope = call(&host, "denied_probe");
    assert_eq!(envelope["status"], "success", "{envelope}");
    let attempts = envelope["data"].as_object().unwrap();
    for attempt in [
        "preopens",
        "read_file",
        "list_root",
        "write_file",
        "std_tcp_connect",
        "tcp_connect",
        "udp_bind",
        "resolve_name",
    ] {
        let outcome = attempts[attempt].as_str().unwrap();
        assert!(outcome.starts_with("denied"), "{attempt}: {outcome}");
    }
}

#[test]
fn a_second_plugin_with_the_same_name_is_refused() {
    let error =
        try_host_with(bare_config(), &["hostile-counter", "hostile-counter"]).unwrap_err().to_string();
    assert!(error.contains("`hostile_counter` is already loaded"), "{error}");
}

#[test]
fn host_stays_healthy_after_a_thousand_hostile_calls() {
    let (host, _) = hostile_host();
    let rotation = [
        "hostile_panic",
        "hostile_not_object",
        "hostile_invalid_json",
        "hostile_undeclared_error",
        "hostile_wrong_category",
        "hostile_leaky_message",
        "hostile_evidence_flood",
        "hostile_recursion",
        "hostile_counter",
        "hostile_oom",
    ];
    let mut calls = 0;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|worker| {
                let host = &host;
                // One worker through each API, at the same time.
                scope.spawn(move || {
                    for i in 0..500 {
                        let tool = rotation[(i + worker) % rotation.len()];
                        let context = CallContext::default();
                        let envelope = if worker == 0 {
                            host.call(tool, "{}", &context)
                        } else {
                            harmonia_testkit::runtime().block_on(host.call_async(tool, "{}", &context))
                        };
                        let envelope = envelope.unwrap();
                        assert!(Envelope::from_value(&envelope.to_value()).is_ok());
                        if tool == "hostile_counter" {
                            assert_eq!(envelope.data.as_ref().unwrap()["count"], 1);
                        } else {
                            assert!(!envelope.is_success(), "{tool}");
                        }
                    }
                    500
                })
            })
            .collect();
        calls = workers.into_iter().map(|worker| worker.join().unwrap()).sum::<usize>();
    });
    assert_eq!(calls, 1000);
    assert_healthy(&host);
}

#[test]
fn a_spinning_guest_does_not_hold_the_async_executor() {
    let (host, _) = hostile_host();
    // One thread for everything: if the spinning guest kept it, the trivial
    // call could only run after the loop's 1 s deadline.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let started = Instant::now();
        let spinner = host.clone();
        let spinning = tokio::spawn(async move {
            spinner.call_async("hostile_loop", "{}", &CallContext::default()).await.unwrap()
        });
        // Let the spinner start; this sleep itself only ends if it yields.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let trivial = host.call_async("trivial_probe", "{}", &CallContext::default()).await.unwrap();
        let took = started.elapsed();
        assert!(trivial.is_success(), "{trivial:?}");
        assert!(took < Duration::from_millis(600), "the trivial call waited for the spinner: {took:?}");
        let spun = spinning.await.unwrap();
        assert_eq!(spun.error.unwrap().code, "tool_timeout");
    });
}

#[test]
fn an_async_call_outside_a_tokio_runtime_is_a_typed_error_not_a_panic() {
    let (host, _) = hostile_host();
    let context = CallContext::default();
    let mut call = std::pin::pin!(host.call_async("trivial_probe", "{}", &context));
    let mut poll = std::task::Context::from_waker(std::task::Waker::noop());
    match call.as_mut().poll(&mut poll) {
        std::task::Poll::Ready(answer) => {
            assert_eq!(answer.unwrap_err(), harmonia_host::CallError::NoAsyncRuntime);
        }
        std::task::Poll::Pending => panic!("the call waited instead of answering"),
    }
    assert_healthy(&host);
}
