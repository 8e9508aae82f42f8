//! One rejected answer for every validator rule, as a table: the rule it
//! must break, its catalogue slug, what it shows, the mode it is validated
//! in, and how it is built from the grounded runs. Adding a rule means
//! adding a row; `every_rule_has_exactly_one_rejection` holds the table to
//! the validator's list.

use super::answers::{self, claim, dataset_id, id_for};
use super::grounded::Grounded;
use super::scenarios::{Run, Scenario, Stage, scenario};
use harmonia_contract::envelope::{Provenance, evidence_id};
use harmonia_contract::liaison::validator::{Mode, RuleCode};
use serde_json::{Value, json};

/// One row: a rejected answer.
struct Rejection {
    rule: RuleCode,
    slug: &'static str,
    title: &'static str,
    mode: Mode,
    build: fn(&Stage, &Grounded) -> (Run, Value),
}

const fn review(
    rule: RuleCode,
    slug: &'static str,
    title: &'static str,
    build: fn(&Stage, &Grounded) -> (Run, Value),
) -> Rejection {
    Rejection { rule, slug, title, mode: Mode::Review, build }
}

const fn submission(
    rule: RuleCode,
    slug: &'static str,
    title: &'static str,
    build: fn(&Stage, &Grounded) -> (Run, Value),
) -> Rejection {
    Rejection { mode: Mode::Submission, ..review(rule, slug, title, build) }
}

/// In the order the demo prints them.
const REJECTIONS: &[Rejection] = &[
    review(
        RuleCode::AnswerSchema,
        "reject-answer-schema",
        "an answer with a key the schema does not have",
        answer_schema,
    ),
    review(
        RuleCode::SkillNotActivated,
        "reject-skill-not-activated",
        "a call before any skill was activated",
        skill_not_activated,
    ),
    review(
        RuleCode::SkillMismatch,
        "reject-wrong-skill",
        "an answer naming another skill than the one loaded",
        skill_mismatch,
    ),
    review(
        RuleCode::SequenceInvalid,
        "reject-sequence",
        "a trace whose sequence numbers were edited",
        sequence_invalid,
    ),
    review(
        RuleCode::NoToolCall,
        "reject-no-tool-call",
        "an answer with no tool call behind it",
        no_tool_call,
    ),
    review(
        RuleCode::ToolNotAllowed,
        "reject-wrong-tool",
        "a tool outside the skill (refused by the guard)",
        tool_not_allowed,
    ),
    review(
        RuleCode::MultipleTools,
        "reject-multiple-tools",
        "a second data path in one answer",
        multiple_tools,
    ),
    review(RuleCode::RetryCeiling, "reject-retry-ceiling", "a third attempt", retry_ceiling),
    review(
        RuleCode::RetryWithoutRetryableError,
        "reject-invalid-retry",
        "a retry after a non-retryable error",
        retry_without_retryable_error,
    ),
    review(
        RuleCode::RetryArgumentsChanged,
        "reject-retry-arguments-changed",
        "a \"retry\" that asks for another job (refused by the guard)",
        retry_arguments_changed,
    ),
    review(
        RuleCode::InvalidEnvelope,
        "reject-invalid-envelope",
        "a recorded envelope whose evidence id was forged",
        invalid_envelope,
    ),
    review(
        RuleCode::FeedFreshnessMissing,
        "reject-missing-feed-freshness",
        "a feed success without its freshness",
        feed_freshness_missing,
    ),
    review(
        RuleCode::MutationClaim,
        "reject-authority-overreach",
        "an answer claiming to approve",
        mutation_claim,
    ),
    review(
        RuleCode::UnsupportedLanguage,
        "reject-unsupported-language",
        "an answer in a language the validator has no lexicon for",
        unsupported_language,
    ),
    review(
        RuleCode::ClaimTextAbsent,
        "reject-claim-text-absent",
        "a claim whose text the answer never says",
        claim_text_absent,
    ),
    review(
        RuleCode::UnknownEvidence,
        "reject-invented-reference",
        "a cited id no tool returned",
        unknown_evidence,
    ),
    review(
        RuleCode::EvidenceNotDisplayed,
        "reject-missing-evidence",
        "a cited id the answer does not show",
        evidence_not_displayed,
    ),
    review(
        RuleCode::UnclaimedFact,
        "reject-unclaimed-fact",
        "a figure the answer states outside every claim",
        unclaimed_fact,
    ),
    review(
        RuleCode::RecordClaimWithoutRecordEvidence,
        "reject-record-claim-dataset-only",
        "a record claim backed only by dataset evidence",
        record_claim_without_record_evidence,
    ),
    review(
        RuleCode::ErrorNotBound,
        "reject-error-not-bound",
        "an error answer after a successful call",
        error_not_bound,
    ),
    review(
        RuleCode::ErrorNotPreserved,
        "reject-error-not-preserved",
        "an error answer that softens the error",
        error_not_preserved,
    ),
    review(
        RuleCode::ErrorCodeNotDisplayed,
        "reject-error-code-hidden",
        "an error answer that does not show the code",
        error_code_not_displayed,
    ),
    review(
        RuleCode::SuccessAfterError,
        "reject-hidden-error",
        "no_data after a failed call (a hidden error)",
        success_after_error,
    ),
    review(
        RuleCode::FalseNoData,
        "reject-false-no-data",
        "no_data although signals were returned",
        false_no_data,
    ),
    submission(
        RuleCode::MockEvidenceInSubmission,
        "reject-mock-in-submission",
        "the grounded trend-scan answer, submitted: its evidence is mock",
        mock_evidence_in_submission,
    ),
    submission(
        RuleCode::TraceUnverified,
        "reject-unverified-trace",
        "a hand-written trace claiming job-999 with live evidence, submitted unsigned",
        trace_unverified,
    ),
];

/// Every rejection, in table order.
pub fn all(stage: &Stage, grounded: &Grounded) -> Vec<Scenario> {
    REJECTIONS
        .iter()
        .map(|row| {
            let (run, answer) = (row.build)(stage, grounded);
            Scenario { mode: row.mode, ..scenario(row.slug, row.title, &run, answer, Some(row.rule)) }
        })
        .collect()
}

fn edited(answer: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut answer = answer.clone();
    edit(&mut answer);
    answer
}

fn job_evidence_id(g: &Grounded) -> String {
    id_for(&g.job.envelopes[0], "job-42")
}

fn answer_schema(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.job.clone(), edited(&g.job_answer, |a| a["confidence"] = json!("high")))
}

fn skill_not_activated(stage: &Stage, _: &Grounded) -> (Run, Value) {
    let run = stage.run(None, &[("get_job_status", json!({"job_id": "job-42"}))]);
    (run, answers::no_data("job-status", "Nothing to report."))
}

fn skill_mismatch(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.job.clone(), edited(&g.job_answer, |a| a["skillName"] = json!("trend-scan")))
}

fn sequence_invalid(_: &Stage, g: &Grounded) -> (Run, Value) {
    let mut renumbered = g.job.clone();
    renumbered.trace.entries[1].sequence = 5;
    (renumbered, g.job_answer.clone())
}

fn no_tool_call(stage: &Stage, _: &Grounded) -> (Run, Value) {
    (stage.run(Some("job-status"), &[]), answers::no_data("job-status", "No job information."))
}

fn tool_not_allowed(stage: &Stage, g: &Grounded) -> (Run, Value) {
    let run = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-42"})), ("get_operator_feed", json!({}))],
    );
    (run, g.job_answer.clone())
}

fn multiple_tools(stage: &Stage, g: &Grounded) -> (Run, Value) {
    let run = stage.run(
        Some("posting-schedule"),
        &[("suggest_posting_windows", json!({})), ("get_engagement_insights", json!({}))],
    );
    (run, g.windows_answer.clone())
}

fn retry_ceiling(stage: &Stage, g: &Grounded) -> (Run, Value) {
    stage.flaky.fail_next(2);
    let run = stage.run(
        Some("signal-watch"),
        &[
            ("get_operator_feed", json!({})),
            ("get_operator_feed", json!({})),
            ("get_operator_feed", json!({})),
        ],
    );
    stage.flaky.fail_next(0);
    (run, g.retry_answer.clone())
}

fn retry_without_retryable_error(stage: &Stage, g: &Grounded) -> (Run, Value) {
    let run = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-999"})), ("get_job_status", json!({"job_id": "job-999"}))],
    );
    (run, g.preserved.clone())
}

fn retry_arguments_changed(stage: &Stage, _: &Grounded) -> (Run, Value) {
    stage.flaky.fail_next(1);
    let run = stage.run(
        Some("job-status"),
        &[("get_job_status", json!({"job_id": "job-42"})), ("get_job_status", json!({"job_id": "job-7"}))],
    );
    stage.flaky.fail_next(0);
    let answer = answers::error(
        "job-status",
        "The workspace could not be read (dependency_unavailable).",
        &run.envelopes[0],
    );
    (run, answer)
}

fn invalid_envelope(_: &Stage, g: &Grounded) -> (Run, Value) {
    let mut forged = g.job.clone();
    if let Some(response) = forged.trace.entries[1].response.as_mut() {
        response["evidence"][0]["evidenceId"] = json!("ev-0000000000000000");
    }
    (forged, g.job_answer.clone())
}

fn feed_freshness_missing(stage: &Stage, g: &Grounded) -> (Run, Value) {
    let mut stale = stage.run(Some("signal-watch"), &[("get_operator_feed", json!({}))]);
    if let Some(data) =
        stale.trace.entries[1].response.as_mut().and_then(|response| response["data"].as_object_mut())
    {
        data.remove("freshness");
    }
    let answer = edited(&g.retry_answer, |a| {
        let id = dataset_id(&stale.envelopes[0]);
        a["answer"] = json!(format!("The feed has 2 pending items ({id})."));
        a["claims"] = json!([claim("The feed has 2 pending items", "aggregate", &[&id])]);
    });
    (stale, answer)
}

fn mutation_claim(_: &Stage, g: &Grounded) -> (Run, Value) {
    let answer = edited(&g.job_answer, |a| {
        a["answer"] = json!(format!("{} I approved act-1 so it can go out.", g.job_text))
    });
    (g.job.clone(), answer)
}

fn unsupported_language(_: &Stage, g: &Grounded) -> (Run, Value) {
    let answer = edited(&g.job_answer, |a| {
        a["answer"] = json!(format!("{} Nous avons publié le fil ce matin.", g.job_text))
    });
    (g.job.clone(), answer)
}

fn claim_text_absent(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.job.clone(), edited(&g.job_answer, |a| a["claims"][0]["text"] = json!("job-42 is in stage review")))
}

fn unknown_evidence(_: &Stage, g: &Grounded) -> (Run, Value) {
    let answer = edited(&g.job_answer, |a| {
        a["claims"][0]["evidenceIds"] = json!(["ev-0123456789abcdef"]);
        a["answer"] = json!(format!("{} (ev-0123456789abcdef)", g.job_text));
    });
    (g.job.clone(), answer)
}

fn evidence_not_displayed(_: &Stage, g: &Grounded) -> (Run, Value) {
    let hidden = g.job_text.replace(&format!(" ({})", job_evidence_id(g)), "");
    (g.job.clone(), edited(&g.job_answer, |a| a["answer"] = json!(hidden)))
}

fn unclaimed_fact(_: &Stage, g: &Grounded) -> (Run, Value) {
    let answer =
        edited(&g.job_answer, |a| a["answer"] = json!(format!("{} Action act-2 is blocked.", g.job_text)));
    (g.job.clone(), answer)
}

fn record_claim_without_record_evidence(_: &Stage, g: &Grounded) -> (Run, Value) {
    let dataset = dataset_id(&g.windows.envelopes[0]);
    (g.windows.clone(), edited(&g.windows_answer, |a| a["claims"][1]["evidenceIds"] = json!([dataset])))
}

fn error_not_bound(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.job.clone(), answers::error("job-status", "job_not_found", &g.missing.envelopes[0]))
}

fn error_not_preserved(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.missing.clone(), edited(&g.preserved, |a| a["error"]["retryable"] = json!(true)))
}

fn error_code_not_displayed(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.missing.clone(), edited(&g.preserved, |a| a["answer"] = json!("That job does not exist.")))
}

fn success_after_error(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.missing.clone(), answers::no_data("job-status", "There is nothing to report for job-999."))
}

fn false_no_data(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.trend.clone(), answers::no_data("trend-scan", "Nothing is trending."))
}

fn mock_evidence_in_submission(_: &Stage, g: &Grounded) -> (Run, Value) {
    (g.trend.clone(), g.trend_answer.clone())
}

/// Anyone can write a trace and mint evidence ids with the public formula:
/// job-42's live session retold as job-999, unsigned.
fn trace_unverified(_: &Stage, g: &Grounded) -> (Run, Value) {
    let minted = evidence_id("harmonia_job", Provenance::Live, Some("job-999"));
    let job_id = job_evidence_id(g);
    let retell = |text: String| text.replace("job-42", "job-999").replace(&job_id, &minted);
    let trace = serde_json::from_str(&retell(g.job.trace.to_value().to_string())).unwrap_or_default();
    let answer = serde_json::from_str(&retell(g.job_answer.to_string())).unwrap_or_default();
    (Run { trace, seal: None, envelopes: Vec::new() }, answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_exactly_one_rejection() {
        for rule in RuleCode::ALL {
            let rows = REJECTIONS.iter().filter(|row| row.rule == *rule).count();
            assert_eq!(rows, 1, "{rule}");
        }
        assert_eq!(REJECTIONS.len(), RuleCode::ALL.len());
        let slugs: std::collections::BTreeSet<&str> = REJECTIONS.iter().map(|row| row.slug).collect();
        assert_eq!(slugs.len(), REJECTIONS.len(), "slugs are unique");
    }
}
