//! The demo's scenarios: a grounded session per skill, the accepted
//! edge cases (a retry, a preserved error, an honest `no_data`), and one
//! rejected answer for every validator rule.

use super::answers::{self, claim, dataset_id, id_for};
use super::flaky::FlakySource;
use harmonia_host::CallContext;
use harmonia_host::envelope::Envelope;
use harmonia_host::envelope::{Provenance, evidence_id};
use harmonia_host::liaison::session::{Liaison, Session};
use harmonia_host::liaison::signing::Seal;
use harmonia_host::liaison::trace::Trace;
use harmonia_host::liaison::validator::{Mode, RuleCode};
use serde_json::{Value, json};
use std::sync::Arc;

/// One scenario, run.
pub struct Scenario {
    /// Directory name in the exported catalogue.
    pub slug: &'static str,
    /// What it shows.
    pub title: String,
    /// The recorded invocation (possibly tampered with, to show the check).
    pub trace: Trace,
    /// The seal the session emitted with it (`None` for a hand-written trace).
    pub seal: Option<Seal>,
    /// The agent's answer.
    pub answer: Value,
    /// Review or submission.
    pub mode: Mode,
    /// The rule it must break, or `None` when it must be accepted.
    pub expected: Option<RuleCode>,
    /// Envelopes worth showing.
    pub envelopes: Vec<Envelope>,
}

/// What the scenarios run against.
pub struct Stage {
    pub liaison: Liaison,
    pub flaky: Arc<FlakySource>,
}

/// A finished session and what it returned.
#[derive(Clone)]
struct Run {
    trace: Trace,
    seal: Option<Seal>,
    envelopes: Vec<Envelope>,
}

impl Stage {
    fn session(&self) -> Session {
        self.liaison.session(CallContext::for_workspace("ws_demo"))
    }

    fn run(&self, skill: Option<&str>, calls: &[(&str, Value)]) -> Run {
        let mut session = self.session();
        if let Some(skill) = skill {
            session.activate(skill).unwrap_or_else(|error| panic!("demo skill: {error}"));
        }
        let envelopes = calls
            .iter()
            .map(|(tool, args)| session.call(tool, args).unwrap_or_else(|error| panic!("demo call: {error}")))
            .collect();
        // The stage's liaison has its signer, so sealing cannot fail.
        let seal = session.signed_trace().ok().and_then(|document| document.seal);
        Run { trace: session.trace().clone(), seal, envelopes }
    }
}

fn scenario(
    slug: &'static str,
    title: &str,
    run: &Run,
    answer: Value,
    expected: Option<RuleCode>,
) -> Scenario {
    Scenario {
        slug,
        title: title.to_owned(),
        trace: run.trace.clone(),
        seal: run.seal.clone(),
        answer,
        mode: Mode::Review,
        expected,
        envelopes: run.envelopes.clone(),
    }
}

fn signal_lines(envelope: &Envelope, limit: usize) -> (String, Vec<Value>) {
    let data = envelope.data.clone().unwrap_or_default();
    let mut text = format!("Live signals from the Hacker News front page ({}):\n", dataset_id(envelope));
    let mut claims =
        vec![claim("Live signals from the Hacker News front page", "aggregate", &[&dataset_id(envelope)])];
    for signal in data["signals"].as_array().into_iter().flatten().take(limit) {
        let line = format!(
            "\"{}\": {} points, {} comments",
            signal["title"].as_str().unwrap_or_default(),
            signal["points"],
            signal["comments"]
        );
        let id = id_for(envelope, signal["url"].as_str().unwrap_or_default());
        text.push_str(&format!("- {line} ({id})\n"));
        claims.push(claim(&line, "record", &[&id]));
    }
    (text, claims)
}

/// Every scenario, in the order the demo prints them.
pub fn all(stage: &Stage) -> Vec<Scenario> {
    let mut out = Vec::new();

    // trend-scan: one fetch, at most three signals.
    let trend = stage.run(Some("trend-scan"), &[("fetch_trend_signals", json!({"limit": 3}))]);
    let (mut text, claims) = signal_lines(&trend.envelopes[0], 3);
    text.push_str("Angle (interpretation): long-term-support runtimes make sandboxed tools a safer bet.");
    let trend_answer =
        answers::success("trend-scan", &text, claims, &["The angle is an interpretation, not a metric."]);
    out.push(scenario(
        "grounded-trend-scan",
        "trend-scan: three front-page signals, each cited",
        &trend,
        trend_answer.clone(),
        None,
    ));

    // signal-watch: search the topic.
    let watch = stage.run(Some("signal-watch"), &[("search_trend_signals", json!({"query": "agents"}))]);
    let (text, claims) = signal_lines(&watch.envelopes[0], 3);
    let text = text.replace("Live signals from the Hacker News front page", "Stories matching \"agents\"");
    let claims: Vec<Value> = claims
        .into_iter()
        .map(|mut claim| {
            if claim["kind"] == "aggregate" {
                claim["text"] = json!("Stories matching \"agents\"");
            }
            claim
        })
        .collect();
    out.push(scenario(
        "grounded-signal-watch",
        "signal-watch: stories matching the watched topic",
        &watch,
        answers::success("signal-watch", &text, claims, &[]),
        None,
    ));

    // engagement-insights: real metrics, interpretation labelled.
    let insights = stage.run(Some("engagement-insights"), &[("get_engagement_insights", json!({}))]);
    let envelope = &insights.envelopes[0];
    let top = &envelope.data.as_ref().map(|data| data["topPosts"][0].clone()).unwrap_or_default();
    let top_line = format!("\"{}\" has {} likes", top["text"].as_str().unwrap_or_default(), top["likes"]);
    let top_id = id_for(envelope, top["postId"].as_str().unwrap_or_default());
    let text = format!(
        "Your best measured post: {top_line} ({top_id}). The ten best posts are listed with their likes ({}).\n\
         Interpretation: technical deep dives seem to draw the most likes.",
        dataset_id(envelope)
    );
    let claims = vec![
        claim(&top_line, "record", &[&top_id]),
        claim("The ten best posts are listed with their likes", "aggregate", &[&dataset_id(envelope)]),
    ];
    out.push(scenario(
        "grounded-engagement-insights",
        "engagement-insights: real metrics, interpretation labelled",
        &insights,
        answers::success(
            "engagement-insights",
            &text,
            claims,
            &["Interpretation, not measurement: why posts did well."],
        ),
        None,
    ));

    // posting-schedule: windows with their basis.
    let windows = stage.run(Some("posting-schedule"), &[("suggest_posting_windows", json!({}))]);
    let envelope = &windows.envelopes[0];
    let data = envelope.data.clone().unwrap_or_default();
    let first = &data["windows"][0];
    let window_line = format!(
        "{} averaged {} likes over {} posts",
        first["window"].as_str().unwrap_or_default(),
        first["averageLikes"],
        first["sampleSize"]
    );
    let basis = &data["basis"][0];
    let basis_line = format!(
        "{} ({} likes) was published in that hour",
        basis["postId"].as_str().unwrap_or_default(),
        basis["likes"]
    );
    let basis_id = id_for(envelope, basis["postId"].as_str().unwrap_or_default());
    let confidence_line =
        format!("The suggestion's confidence is {}", data["confidence"].as_str().unwrap_or_default());
    let text = format!(
        "Suggested window: {window_line} ({}). For example, {basis_line} ({basis_id}). {confidence_line}. \
         Likes show which hours went well, not that the hour caused them.",
        dataset_id(envelope),
    );
    let windows_answer = answers::success(
        "posting-schedule",
        &text,
        vec![
            claim(&window_line, "aggregate", &[&dataset_id(envelope)]),
            claim(&basis_line, "record", &[&basis_id]),
            claim(&confidence_line, "aggregate", &[&dataset_id(envelope)]),
        ],
        &[],
    );
    out.push(scenario(
        "grounded-posting-schedule",
        "posting-schedule: two windows from measured history",
        &windows,
        windows_answer.clone(),
        None,
    ));

    // job-status: values exactly as returned, each fact in a claim.
    let job = stage.run(Some("job-status"), &[("get_job_status", json!({"job_id": "job-42"}))]);
    let job_id = id_for(&job.envelopes[0], "job-42");
    let job_lines = [
        "job-42 is in stage drafting with status waiting_approval",
        "job-42's strategy approval state is approved",
        "action act-1 (publish_post) is pending approval and not verified",
        "job-42 has 2 drafts and 0 receipts",
    ];
    let job_text =
        format!("{} ({job_id}). {}; {}. {}.", job_lines[0], job_lines[1], job_lines[2], job_lines[3]);
    let job_answer = answers::success(
        "job-status",
        &job_text,
        job_lines.iter().map(|line| claim(line, "record", &[&job_id])).collect(),
        &[],
    );
    out.push(scenario(
        "grounded-job-status",
        "job-status: one job, values as returned",
        &job,
        job_answer.clone(),
        None,
    ));

    // An accepted retry after a retryable error.
    stage.flaky.fail_next(1);
    let retry = stage
        .run(Some("signal-watch"), &[("get_operator_feed", json!({})), ("get_operator_feed", json!({}))]);
    stage.flaky.fail_next(0);
    let feed = &retry.envelopes[1];
    let feed_data = feed.data.clone().unwrap_or_default();
    let feed_line = format!(
        "The feed, read at {}, is {}",
        feed_data["freshness"]["readAt"].as_str().unwrap_or_default(),
        feed_data["freshness"]["state"].as_str().unwrap_or_default()
    );
    let counts_line = format!(
        "The feed has {} pending items, {} active jobs and {} failed jobs",
        feed_data["pendingItems"].as_array().map_or(0, Vec::len),
        feed_data["jobHealth"]["active"],
        feed_data["jobHealth"]["failed"]
    );
    let feed_text = format!("After one retry: {feed_line} ({}). {counts_line}.", dataset_id(feed));
    let feed_answer = answers::success(
        "signal-watch",
        &feed_text,
        vec![
            claim(&feed_line, "aggregate", &[&dataset_id(feed)]),
            claim(&counts_line, "aggregate", &[&dataset_id(feed)]),
        ],
        &[],
    );
    out.push(scenario(
        "accepted-retry",
        "signal-watch: a retryable outage, one retry, then the feed",
        &retry,
        feed_answer.clone(),
        None,
    ));

    // An error preserved exactly.
    let missing = stage.run(Some("job-status"), &[("get_job_status", json!({"job_id": "job-999"}))]);
    let missing_error = &missing.envelopes[0];
    let preserved = answers::error(
        "job-status",
        "job-999 was not found in this workspace (job_not_found).",
        missing_error,
    );
    out.push(scenario(
        "accepted-error",
        "job-status: an unknown id, the error kept exactly",
        &missing,
        preserved.clone(),
        None,
    ));

    // An honest no_data.
    let empty = stage
        .run(Some("signal-watch"), &[("search_trend_signals", json!({"query": "quantum basket weaving"}))]);
    out.push(scenario(
        "accepted-no-data",
        "signal-watch: a successful search with no stories",
        &empty,
        answers::no_data("signal-watch", "No stories match \"quantum basket weaving\" right now."),
        None,
    ));

    rejections(
        stage,
        &mut out,
        &Rejections {
            trend: &trend,
            trend_answer,
            windows: &windows,
            windows_answer,
            job: &job,
            job_answer,
            job_text,
            missing: &missing,
            preserved,
            retry_answer: feed_answer,
        },
    );
    out
}

struct Rejections<'a> {
    trend: &'a Run,
    trend_answer: Value,
    windows: &'a Run,
    windows_answer: Value,
    job: &'a Run,
    job_answer: Value,
    job_text: String,
    missing: &'a Run,
    preserved: Value,
    retry_answer: Value,
}

fn edited(answer: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut answer = answer.clone();
    edit(&mut answer);
    answer
}

fn rejections(stage: &Stage, out: &mut Vec<Scenario>, r: &Rejections<'_>) {
    use RuleCode::*;
    let job_id = id_for(&r.job.envelopes[0], "job-42");
    let mut reject = |slug, title: &str, run: &Run, answer: Value, rule| {
        out.push(scenario(slug, title, run, answer, Some(rule)))
    };

    reject(
        "reject-answer-schema",
        "an answer with a key the schema does not have",
        r.job,
        edited(&r.job_answer, |a| a["confidence"] = json!("high")),
        AnswerSchema,
    );
    let unactivated = stage.run(None, &[("get_job_status", json!({"job_id": "job-42"}))]);
    reject(
        "reject-skill-not-activated",
        "a call before any skill was activated",
        &unactivated,
        answers::no_data("job-status", "Nothing to report."),
        SkillNotActivated,
    );
    reject(
        "reject-wrong-skill",
        "an answer naming another skill than the one loaded",
        r.job,
        edited(&r.job_answer, |a| a["skillName"] = json!("trend-scan")),
        SkillMismatch,
    );
    let mut renumbered = r.job.clone();
    renumbered.trace.entries[1].sequence = 5;
    reject(
        "reject-sequence",
        "a trace whose sequence numbers were edited",
        &renumbered,
        r.job_answer.clone(),
        SequenceInvalid,
    );
    let no_call = stage.run(Some("job-status"), &[]);
    reject(
        "reject-no-tool-call",
        "an answer with no tool call behind it",
        &no_call,
        answers::no_data("job-status", "No job information."),
        NoToolCall,
    );
    let wrong_tool = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-42"})), ("get_operator_feed", json!({}))],
    );
    reject(
        "reject-wrong-tool",
        "a tool outside the skill (refused by the guard)",
        &wrong_tool,
        r.job_answer.clone(),
        ToolNotAllowed,
    );
    let two_tools = stage.run(
        Some("posting-schedule"),
        &[("suggest_posting_windows", json!({})), ("get_engagement_insights", json!({}))],
    );
    reject(
        "reject-multiple-tools",
        "a second data path in one answer",
        &two_tools,
        r.windows_answer.clone(),
        MultipleTools,
    );
    stage.flaky.fail_next(2);
    let ceiling = stage.run(
        Some("signal-watch"),
        &[
            ("get_operator_feed", json!({})),
            ("get_operator_feed", json!({})),
            ("get_operator_feed", json!({})),
        ],
    );
    stage.flaky.fail_next(0);
    reject("reject-retry-ceiling", "a third attempt", &ceiling, r.retry_answer.clone(), RetryCeiling);
    let bad_retry = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-999"})), ("get_job_status", json!({"job_id": "job-999"}))],
    );
    reject(
        "reject-invalid-retry",
        "a retry after a non-retryable error",
        &bad_retry,
        r.preserved.clone(),
        RetryWithoutRetryableError,
    );
    stage.flaky.fail_next(1);
    let changed_retry = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-42"})), ("get_job_status", json!({"job_id": "job-7"}))],
    );
    stage.flaky.fail_next(0);
    reject(
        "reject-retry-arguments-changed",
        "a \"retry\" that asks for another job (refused by the guard)",
        &changed_retry,
        answers::error(
            "job-status",
            "The workspace could not be read (dependency_unavailable).",
            &changed_retry.envelopes[0],
        ),
        RetryArgumentsChanged,
    );
    let mut forged = r.job.clone();
    if let Some(response) = forged.trace.entries[1].response.as_mut() {
        response["evidence"][0]["evidenceId"] = json!("ev-0000000000000000");
    }
    reject(
        "reject-invalid-envelope",
        "a recorded envelope whose evidence id was forged",
        &forged,
        r.job_answer.clone(),
        InvalidEnvelope,
    );
    let mut stale = stage.run(Some("signal-watch"), &[("get_operator_feed", json!({}))]);
    if let Some(data) =
        stale.trace.entries[1].response.as_mut().and_then(|response| response["data"].as_object_mut())
    {
        data.remove("freshness");
    }
    let stale_answer = edited(&r.retry_answer, |a| {
        let id = dataset_id(&stale.envelopes[0]);
        a["answer"] = json!(format!("The feed has 2 pending items ({id})."));
        a["claims"] = json!([claim("The feed has 2 pending items", "aggregate", &[&id])]);
    });
    reject(
        "reject-missing-feed-freshness",
        "a feed success without its freshness",
        &stale,
        stale_answer,
        FeedFreshnessMissing,
    );
    reject(
        "reject-authority-overreach",
        "an answer claiming to approve",
        r.job,
        edited(&r.job_answer, |a| {
            a["answer"] = json!(format!("{} I approved act-1 so it can go out.", r.job_text))
        }),
        MutationClaim,
    );
    reject(
        "reject-claim-text-absent",
        "a claim whose text the answer never says",
        r.job,
        edited(&r.job_answer, |a| a["claims"][0]["text"] = json!("job-42 is published")),
        ClaimTextAbsent,
    );
    reject(
        "reject-invented-reference",
        "a cited id no tool returned",
        r.job,
        edited(&r.job_answer, |a| {
            a["claims"][0]["evidenceIds"] = json!(["ev-0123456789abcdef"]);
            a["answer"] = json!(format!("{} (ev-0123456789abcdef)", r.job_text));
        }),
        UnknownEvidence,
    );
    reject(
        "reject-missing-evidence",
        "a cited id the answer does not show",
        r.job,
        edited(&r.job_answer, |a| a["answer"] = json!(r.job_text.replace(&format!(" ({job_id})"), ""))),
        EvidenceNotDisplayed,
    );
    reject(
        "reject-unclaimed-fact",
        "a figure the answer states outside every claim",
        r.job,
        edited(&r.job_answer, |a| {
            a["answer"] = json!(format!("{} Action act-2 has already gone out.", r.job_text))
        }),
        UnclaimedFact,
    );
    let dataset = dataset_id(&r.windows.envelopes[0]);
    reject(
        "reject-record-claim-dataset-only",
        "a record claim backed only by dataset evidence",
        r.windows,
        edited(&r.windows_answer, |a| a["claims"][1]["evidenceIds"] = json!([dataset])),
        RecordClaimWithoutRecordEvidence,
    );
    reject(
        "reject-error-not-bound",
        "an error answer after a successful call",
        r.job,
        answers::error("job-status", "job_not_found", &r.missing.envelopes[0]),
        ErrorNotBound,
    );
    reject(
        "reject-error-not-preserved",
        "an error answer that softens the error",
        r.missing,
        edited(&r.preserved, |a| a["error"]["retryable"] = json!(true)),
        ErrorNotPreserved,
    );
    reject(
        "reject-error-code-hidden",
        "an error answer that does not show the code",
        r.missing,
        edited(&r.preserved, |a| a["answer"] = json!("That job does not exist.")),
        ErrorCodeNotDisplayed,
    );
    reject(
        "reject-hidden-error",
        "no_data after a failed call (a hidden error)",
        r.missing,
        answers::no_data("job-status", "There is nothing to report for job-999."),
        SuccessAfterError,
    );
    reject(
        "reject-false-no-data",
        "no_data although signals were returned",
        r.trend,
        answers::no_data("trend-scan", "Nothing is trending."),
        FalseNoData,
    );
    out.push(Scenario {
        mode: Mode::Submission,
        ..scenario(
            "reject-mock-in-submission",
            "the grounded trend-scan answer, submitted: its evidence is mock",
            r.trend,
            r.trend_answer.clone(),
            Some(MockEvidenceInSubmission),
        )
    });
    // Anyone can write a trace and mint evidence ids with the public
    // formula: job-42's live session retold as job-999, unsigned.
    let minted = evidence_id("harmonia_job", Provenance::Live, Some("job-999"));
    let retell = |text: String| text.replace("job-42", "job-999").replace(&job_id, &minted);
    let forged_trace = serde_json::from_str(&retell(r.job.trace.to_value().to_string())).unwrap_or_default();
    let forged_answer = serde_json::from_str(&retell(r.job_answer.to_string())).unwrap_or_default();
    let forged = Run { trace: forged_trace, seal: None, envelopes: Vec::new() };
    out.push(Scenario {
        mode: Mode::Submission,
        ..scenario(
            "reject-unverified-trace",
            "a hand-written trace claiming job-999 with live evidence, submitted unsigned",
            &forged,
            forged_answer,
            Some(TraceUnverified),
        )
    });
}
