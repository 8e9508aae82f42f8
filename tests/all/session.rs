//! Guarded sessions through the library: the pre-dispatch guard, the
//! trace it records, and skills that must agree with the tools.

use harmonia_conformance::outage::Outage;
use harmonia_contract::liaison::trace::EntryKind;
use harmonia_contract::liaison::validator::Mode;
use harmonia_host::capability::workspace::mock;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::{Liaison, Limit, SessionError, SessionLimits};
use harmonia_host::liaison::skills::{Skill, SkillError, SkillSet};
use harmonia_host::{CallContext, Host};
use serde_json::{Value, json};
use std::sync::Arc;

fn liaison() -> Liaison {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    Liaison::new(host, SkillSet::builtin()).unwrap()
}

fn refused(reason_message: &str) -> Value {
    json!({"status": "error", "data": null, "error": {"code": "call_refused", "category": "authorization",
        "message": reason_message, "retryable": false}, "evidence": []})
}

#[test]
fn activation_must_come_first_and_only_once() {
    let liaison = liaison();
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    let envelope = session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap();
    assert_eq!(envelope.to_value(), refused("Call refused: no skill is active in this session."));
    assert_eq!(
        session.activate("no-such-skill").unwrap_err(),
        SessionError::UnknownSkill("no-such-skill".into())
    );
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    let skill = session.activate("job-status").unwrap();
    assert_eq!(skill.sha256, SkillSet::builtin().get("job-status").unwrap().sha256);
    assert_eq!(
        session.activate("trend-scan").unwrap_err(),
        SessionError::AlreadyActivated("job-status".into())
    );
}

#[test]
fn the_guard_refuses_before_anything_runs() {
    let liaison = liaison();
    let context = CallContext::for_workspace("ws_demo");

    let mut session = liaison.session(context.clone());
    session.activate("job-status").unwrap();
    let envelope = session.call("get_operator_feed", &json!({})).unwrap();
    assert_eq!(envelope.to_value(), refused("Call refused: the active skill does not allow this tool."));

    let mut session = liaison.session(context.clone());
    session.activate("posting-schedule").unwrap();
    assert!(session.call("suggest_posting_windows", &json!({})).unwrap().is_success());
    let envelope = session.call("get_engagement_insights", &json!({})).unwrap();
    assert_eq!(envelope.to_value(), refused("Call refused: this session already used another tool."));

    let mut session = liaison.session(context.clone());
    session.activate("job-status").unwrap();
    assert_eq!(
        session.call("get_job_status", &json!({"job_id": "nope"})).unwrap().error.unwrap().code,
        "job_not_found"
    );
    let envelope = session.call("get_job_status", &json!({"job_id": "nope"})).unwrap();
    assert_eq!(
        envelope.to_value(),
        refused("Call refused: a retry is allowed only after a retryable error.")
    );

    let mut session = liaison.session(context);
    session.activate("job-status").unwrap();
    assert!(session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap().is_success());
    let envelope = session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap();
    assert_eq!(envelope.error.unwrap().code, "call_refused", "no second attempt after a success");
    let kinds: Vec<EntryKind> = session.trace().entries.iter().map(|entry| entry.kind).collect();
    assert_eq!(kinds, [EntryKind::SkillActivation, EntryKind::ToolCall, EntryKind::ToolRefused]);
    assert_eq!(session.trace().entries[2].reason.as_deref(), Some("retry_without_retryable_error"));
    assert_eq!(session.trace().entries[2].attempt, Some(2));
}

#[test]
fn the_trace_records_the_exact_envelope_duration_and_receipts() {
    let liaison = liaison();
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    session.activate("job-status").unwrap();
    let envelope = session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap();
    let trace = session.trace().to_value();
    assert_eq!(
        trace[0],
        json!({"sequence": 1, "kind": "skill_activation", "skill": "job-status",
        "sha256": SkillSet::builtin().get("job-status").unwrap().sha256})
    );
    assert_eq!(trace[1]["sequence"], 2);
    assert_eq!(trace[1]["kind"], "tool_call");
    assert_eq!(trace[1]["name"], "get_job_status");
    assert_eq!(trace[1]["args"], json!({"job_id": "job-42"}));
    assert_eq!(trace[1]["attempt"], 1);
    assert!(trace[1]["durationMs"].as_f64().unwrap() > 0.0);
    assert_eq!(trace[1]["response"], envelope.to_value());
    assert_eq!(trace[1]["receipts"][0]["capability"], "workspace");
    assert_eq!(trace[1]["receipts"][0]["target"], "mock:job");
    let evidence = envelope.evidence[0].evidence_id.clone();
    let answer = json!({"status": "success", "answer": format!("job-42 is drafting ({evidence})."), "skillName": "job-status",
        "claims": [{"text": "job-42 is drafting", "kind": "record", "evidenceIds": [evidence]}], "error": null, "uncertainty": []});
    assert!(session.validate(&answer, Mode::Review).accepted);
    assert_eq!(
        session.validate(&answer, Mode::Submission).rule.unwrap().as_str(),
        "mock_evidence_in_submission"
    );
}

#[test]
fn skills_and_descriptors_must_agree() {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    let mut unknown = SkillSet::builtin();
    unknown
        .add(
            Skill::parse(
                "---\nname: extra\ndescription: d\nallowed-tools: delete_everything\n---\nx",
                "extra",
            )
            .unwrap(),
        )
        .unwrap();
    assert_eq!(
        Liaison::new(host.clone(), unknown).unwrap_err(),
        SkillError::UnknownTool { skill: "extra".into(), tool: "delete_everything".into() }
    );
    let mut widened = SkillSet::default();
    widened.add(Skill::parse("---\nname: job-status\ndescription: d\nallowed-tools: get_job_status, get_operator_feed\n---\nx", "j").unwrap()).unwrap();
    let error = Liaison::new(host.clone(), widened).unwrap_err().to_string();
    assert!(error.contains("job-status") && error.contains("get_operator_feed"), "{error}");
    let mut narrowed = SkillSet::default();
    narrowed
        .add(
            Skill::parse(
                "---\nname: posting-schedule\ndescription: d\nallowed-tools: suggest_posting_windows\n---\nx",
                "p",
            )
            .unwrap(),
        )
        .unwrap();
    let error = Liaison::new(host, narrowed).unwrap_err().to_string();
    assert!(error.contains("posting-schedule") && error.contains("get_engagement_insights"), "{error}");
}

#[test]
fn the_skill_files_on_disk_are_the_built_in_ones() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    let key = |set: SkillSet| {
        let mut skills: Vec<(String, String)> =
            set.iter().map(|skill| (skill.name.clone(), skill.sha256.clone())).collect();
        skills.sort();
        skills
    };
    assert_eq!(key(harmonia_host::liaison::skills::load_dir(&dir).unwrap()), key(SkillSet::builtin()));
}

fn liaison_with_an_outage() -> Liaison {
    let source = Outage::failing(Arc::new(mock::source()), 1);
    let host = Host::builder(HostConfig::default())
        .public_web_mock(true)
        .workspace_source(Arc::new(source))
        .build()
        .unwrap();
    Liaison::new(host, SkillSet::builtin()).unwrap()
}

fn error_answer(envelope: &Value) -> Value {
    let code = envelope["error"]["code"].as_str().unwrap();
    json!({"status": "error", "answer": format!("The read failed ({code})."), "skillName": "job-status",
        "claims": [], "error": envelope["error"].clone(), "uncertainty": []})
}

#[test]
fn a_retry_repeats_the_failed_calls_arguments() {
    let liaison = liaison_with_an_outage();
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    session.activate("job-status").unwrap();
    let outage = session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap().to_value();
    assert_eq!(
        (outage["error"]["code"].as_str(), &outage["error"]["retryable"]),
        (Some("dependency_unavailable"), &json!(true))
    );
    let envelope = session.call("get_job_status", &json!({"job_id": "job-7"})).unwrap();
    assert_eq!(
        envelope.to_value(),
        refused("Call refused: a retry repeats the arguments of the failed call.")
    );
    assert_eq!(session.trace().entries[2].reason.as_deref(), Some("retry_arguments_changed"));
    let verdict = session.validate(&error_answer(&outage), Mode::Review);
    assert_eq!(verdict.rule.map(|rule| rule.as_str()), Some("retry_arguments_changed"), "{verdict:?}");

    let liaison = liaison_with_an_outage();
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    session.activate("job-status").unwrap();
    assert!(!session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap().is_success());
    let envelope = session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap();
    assert!(envelope.is_success(), "the same arguments may be retried: {:?}", envelope.error);
}

fn refuse_until_ended(limits: SessionLimits, args: &Value) -> (SessionError, usize) {
    let liaison = liaison();
    let mut session = liaison.session_with_limits(CallContext::for_workspace("ws_demo"), limits);
    session.activate("job-status").unwrap();
    for _ in 0..10_000 {
        match session.call("get_operator_feed", args) {
            Ok(envelope) => assert_eq!(envelope.error.unwrap().code, "call_refused"),
            Err(error) => {
                assert_eq!(session.call("get_job_status", &json!({"job_id": "job-42"})).unwrap_err(), error);
                assert_eq!(session.activate("job-status").unwrap_err(), error);
                return (error, session.trace().entries.len());
            }
        }
    }
    panic!("the session never ended");
}

#[test]
fn a_session_ends_at_its_bounds() {
    let (error, entries) = refuse_until_ended(SessionLimits::default(), &json!({}));
    assert_eq!(error, SessionError::LimitReached { limit: Limit::Refusals, bound: 16 });
    assert_eq!(entries, 1 + 16, "the call past the bound is not recorded");
    assert_eq!(error.code(), "session_limit");

    let attempts = SessionLimits { max_attempts: 3, ..SessionLimits::default() };
    assert_eq!(
        refuse_until_ended(attempts, &json!({})),
        (SessionError::LimitReached { limit: Limit::Attempts, bound: 3 }, 4)
    );

    let bytes = SessionLimits { max_recorded_bytes: 10_000, ..SessionLimits::default() };
    let big = json!({"blob": "x".repeat(4_000)});
    assert_eq!(
        refuse_until_ended(bytes, &big),
        (SessionError::LimitReached { limit: Limit::RecordedBytes, bound: 10_000 }, 3)
    );
}

#[test]
fn allowed_calls_count_towards_the_bounds_too() {
    let liaison = liaison();
    let limits = SessionLimits { max_recorded_bytes: 100, ..SessionLimits::default() };
    let mut session = liaison.session_with_limits(CallContext::for_workspace("ws_demo"), limits);
    session.activate("job-status").unwrap();
    let error = session.call("get_job_status", &json!({"job_id": "j".repeat(200)})).unwrap_err();
    assert_eq!(error, SessionError::LimitReached { limit: Limit::RecordedBytes, bound: 100 });
    assert_eq!(session.trace().entries.len(), 1, "nothing ran and nothing was recorded");
}

#[test]
fn async_session_calls_match_blocking_ones_and_need_a_runtime() {
    let liaison = liaison();
    let args = json!({"job_id": "job-7"});
    let mut blocking = liaison.session(CallContext::for_workspace("ws_demo"));
    blocking.activate("job-status").unwrap();
    let mut asynchronous = liaison.session(CallContext::for_workspace("ws_demo"));
    asynchronous.activate("job-status").unwrap();
    // Outside a runtime: a typed error, and nothing recorded.
    let outside = {
        let call = std::pin::pin!(asynchronous.call_recorded_async("get_job_status", &args));
        let mut call = call;
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match std::future::Future::poll(call.as_mut(), &mut context) {
            std::task::Poll::Ready(answer) => answer.map(|_| ()).unwrap_err(),
            std::task::Poll::Pending => panic!("the call waited instead of answering"),
        }
    };
    assert_eq!(outside, SessionError::NoAsyncRuntime);
    assert_eq!(outside.code(), "no_async_runtime");
    assert!(asynchronous.trace().entries.iter().all(|entry| entry.kind != EntryKind::ToolCall));
    // Inside one: the same envelope and the same kind of entry as the
    // blocking session, the guard included (a second call is refused).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for _ in 0..2 {
        let (expected, _) = blocking.call_recorded("get_job_status", &args).unwrap();
        let (envelope, _) =
            runtime.block_on(asynchronous.call_recorded_async("get_job_status", &args)).unwrap();
        assert_eq!(envelope.to_value(), expected.to_value());
        let kinds = |session: &harmonia_host::liaison::session::Session| {
            session.trace().entries.iter().map(|entry| entry.kind).collect::<Vec<_>>()
        };
        assert_eq!(kinds(&asynchronous), kinds(&blocking));
    }
}

/// A session paused as its trace after each call and resumed from it
/// (as a stateless MCP session is between its calls) judges every call
/// exactly as the session that never paused.
#[test]
fn a_trace_resumes_into_the_same_guard_and_a_forged_one_is_refused() {
    use harmonia_host::liaison::session::ResumeError;
    let calls = [
        ("get_job_status", json!({"job_id": "job-42"})),
        ("get_job_status", json!({"job_id": "job-7"})),
        ("get_job_status", json!({"job_id": "job-42"})),
        ("get_job_status", json!({"job_id": "job-42"})),
        ("get_operator_feed", json!({})),
    ];
    let whole = liaison_with_an_outage();
    let mut unpaused = whole.session(CallContext::for_workspace("ws_demo"));
    unpaused.activate("job-status").unwrap();
    let paused_liaison = liaison_with_an_outage();
    let mut paused = paused_liaison.session(CallContext::for_workspace("ws_demo"));
    paused.activate("job-status").unwrap();
    for (tool, args) in &calls {
        let trace = paused.trace().clone();
        let mut resumed = paused_liaison
            .resume(CallContext::for_workspace("ws_demo"), trace, SessionLimits::default())
            .unwrap();
        let expected = unpaused.call(tool, args).unwrap().to_value();
        let got = resumed.call(tool, args).unwrap().to_value();
        assert_eq!(got["status"], expected["status"], "{tool} {args}");
        assert_eq!(got["error"]["code"], expected["error"]["code"], "{tool} {args}");
        paused = resumed;
    }
    let reasons = |trace: &harmonia_contract::liaison::trace::Trace| {
        trace.entries.iter().map(|entry| entry.reason.clone()).collect::<Vec<_>>()
    };
    assert_eq!(reasons(paused.trace()), reasons(unpaused.trace()));
    assert_eq!(paused.trace().entries.len(), 1 + calls.len());

    // The bounds count the resumed entries.
    let limits = SessionLimits { max_refusals: 2, ..SessionLimits::default() };
    let resumed =
        paused_liaison.resume(CallContext::for_workspace("ws_demo"), paused.trace().clone(), limits);
    let error = resumed.unwrap().call("get_job_status", &json!({"job_id": "job-42"})).unwrap_err();
    assert_eq!(error, SessionError::LimitReached { limit: Limit::Refusals, bound: 2 });

    // A trace no session of these skills could have recorded.
    let resume = |trace: harmonia_contract::liaison::trace::Trace| {
        paused_liaison.resume(CallContext::for_workspace("ws_demo"), trace, SessionLimits::default()).err()
    };
    let mut no_activation = paused.trace().clone();
    no_activation.entries.remove(0);
    assert_eq!(resume(no_activation), Some(ResumeError::NoActivation));
    let mut changed_skill = paused.trace().clone();
    changed_skill.entries[0].sha256 = Some("0".repeat(64));
    assert_eq!(resume(changed_skill), Some(ResumeError::SkillChanged("job-status".into())));
    let mut out_of_order = paused.trace().clone();
    out_of_order.entries.swap(1, 2);
    assert_eq!(resume(out_of_order), Some(ResumeError::BadEntry(3)));
    let mut renumbered_attempt = paused.trace().clone();
    renumbered_attempt.entries[2].attempt = Some(1);
    assert_eq!(resume(renumbered_attempt), Some(ResumeError::BadEntry(3)));
    let mut second_activation = paused.trace().clone();
    second_activation.entries[2].kind = EntryKind::SkillActivation;
    assert!(resume(second_activation).is_some());
    assert_eq!(resume(harmonia_contract::liaison::trace::Trace::default()), Some(ResumeError::NoActivation));
}
