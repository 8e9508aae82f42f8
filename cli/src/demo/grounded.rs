//! The grounded scenarios: a session per built-in skill whose answer the
//! validator accepts, then the accepted edge cases (a retry after a
//! retryable error, an error kept exactly, an honest `no_data`).

use super::answers::{self, claim, dataset_id, id_for};
use super::scenarios::{Run, Scenario, Stage, scenario};
use harmonia_contract::envelope::Envelope;
use serde_json::{Value, json};

/// The grounded runs and answers the rejections edit.
pub struct Grounded {
    /// trend-scan's run and accepted answer.
    pub trend: Run,
    pub trend_answer: Value,
    /// posting-schedule's run and accepted answer.
    pub windows: Run,
    pub windows_answer: Value,
    /// job-status's run, accepted answer and its text.
    pub job: Run,
    pub job_answer: Value,
    pub job_text: String,
    /// job-status on an unknown job, and the answer keeping its error.
    pub missing: Run,
    pub preserved: Value,
    /// The accepted answer after a retry.
    pub retry_answer: Value,
}

/// The grounded scenarios, in the order the demo prints them, and the runs
/// and answers the rejections are made from.
pub fn all(stage: &Stage) -> (Vec<Scenario>, Grounded) {
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

    let grounded = Grounded {
        trend,
        trend_answer,
        windows,
        windows_answer,
        job,
        job_answer,
        job_text,
        missing,
        preserved,
        retry_answer: feed_answer,
    };
    (out, grounded)
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
