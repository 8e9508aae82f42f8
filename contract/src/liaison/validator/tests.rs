use super::*;
use crate::codes::{Category, DEPENDENCY_UNAVAILABLE, JOB_NOT_FOUND, StableCode, TOOL_TIMEOUT};
use serde_json::json;

const JOB_SKILL: &str = "---\nname: job-status\ndescription: d\nallowed-tools: get_job_status\n---\nbody";
const FEED_SKILL: &str = "---\nname: feed-watch\ndescription: d\nallowed-tools: get_operator_feed, search_trend_signals\n---\nbody";
const JOB_TOOL: &str = "get_job_status";

fn skill(text: &str) -> Skill {
    Skill::parse(text, "t").unwrap()
}

fn skills() -> SkillSet {
    let mut set = SkillSet::default();
    set.add(skill(JOB_SKILL)).unwrap();
    set.add(skill(FEED_SKILL)).unwrap();
    set
}

fn job_item() -> EvidenceItem {
    EvidenceItem::new("harmonia_job", Provenance::Live, Some("job-42"))
}

fn job_id() -> String {
    job_item().evidence_id
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn job_success_with(item: EvidenceItem) -> Value {
    let data = object(json!({"found": true, "job": {"id": "job-42", "status": "waiting"}}));
    Envelope::success(data, vec![item]).to_value()
}

fn job_success() -> Value {
    job_success_with(job_item())
}

fn failure(code: &StableCode) -> Value {
    Envelope::stable_error(code).to_value()
}

fn refusal() -> Value {
    let error = ErrorObject {
        code: "call_refused".into(),
        category: Category::Validation,
        message: "The call was refused.".into(),
        retryable: false,
    };
    Envelope::failure(error).to_value()
}

fn entry(kind: EntryKind) -> TraceEntry {
    TraceEntry::new(0, kind)
}

fn activation(skill_text: &str) -> TraceEntry {
    let skill = skill(skill_text);
    TraceEntry { skill: Some(skill.name), sha256: Some(skill.sha256), ..entry(EntryKind::SkillActivation) }
}

fn call(tool: &str, attempt: u32, response: Value) -> TraceEntry {
    TraceEntry {
        name: Some(tool.into()),
        args: Some(json!({})),
        attempt: Some(attempt),
        duration_ms: Some(1.0),
        response: Some(response),
        receipts: Some(Vec::new()),
        ..entry(EntryKind::ToolCall)
    }
}

fn refused(tool: &str, attempt: u32, reason: RuleCode) -> TraceEntry {
    TraceEntry {
        name: Some(tool.into()),
        args: Some(json!({})),
        attempt: Some(attempt),
        reason: Some(reason.as_str().into()),
        response: Some(refusal()),
        ..entry(EntryKind::ToolRefused)
    }
}

/// Numbers the entries 1..n.
fn trace(entries: Vec<TraceEntry>) -> Trace {
    let entries =
        entries.into_iter().zip(1..).map(|(entry, sequence)| TraceEntry { sequence, ..entry }).collect();
    Trace { entries }
}

fn job_trace(response: Value) -> Trace {
    trace(vec![activation(JOB_SKILL), call(JOB_TOOL, 1, response)])
}

fn grounded_answer() -> Value {
    let id = job_id();
    json!({
        "status": "success",
        "answer": format!("Job job-42 is waiting for approval ({id})."),
        "skillName": "job-status",
        "claims": [{"text": "job job-42 is waiting", "kind": "record", "evidenceIds": [id]}],
        "error": null,
        "uncertainty": ["The state may change after this read."]
    })
}

fn error_answer(code: &StableCode) -> Value {
    json!({
        "status": "error",
        "answer": format!("The read failed: {} ({}).", code.message, code.code),
        "skillName": "job-status",
        "claims": [],
        "error": {"code": code.code, "category": code.category.as_str(), "message": code.message,
                  "retryable": code.retryable},
        "uncertainty": []
    })
}

fn no_data_answer(skill_name: &str) -> Value {
    json!({
        "status": "no_data",
        "answer": "The read returned nothing.",
        "skillName": skill_name,
        "claims": [],
        "error": null,
        "uncertainty": []
    })
}

fn check(trace: &Trace, answer: &Value) -> Verdict {
    validate(trace, answer, &skills(), Mode::Review)
}

#[track_caller]
fn assert_rejected(verdict: Verdict, rule: RuleCode) {
    assert!(!verdict.accepted, "expected {rule}, got acceptance");
    assert_eq!(verdict.rule, Some(rule), "reason: {:?}", verdict.reason);
    let reason = verdict.reason.unwrap_or_default();
    assert!(!reason.is_empty() && !reason.contains('\n'), "reason must be one line: {reason:?}");
}

// Rule codes and verdicts.

#[test]
fn rule_codes_round_trip_and_are_unique() {
    assert_eq!(RuleCode::ALL.len(), 26);
    for rule in RuleCode::ALL {
        assert_eq!(RuleCode::parse(rule.as_str()), Some(*rule));
        assert_eq!(rule.as_str().parse::<RuleCode>(), Ok(*rule));
        assert_eq!(rule.to_string(), rule.as_str());
    }
    let mut codes: Vec<&str> = RuleCode::ALL.iter().map(|rule| rule.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), RuleCode::ALL.len());
    assert_eq!("nope".parse::<RuleCode>(), Err(UnknownRuleCode("nope".into())));
    assert_eq!(RuleCode::parse("Answer_Schema"), None);
}

#[test]
fn verdicts_serialise_with_nulls() {
    let accepted = serde_json::to_value(Verdict::accept()).unwrap();
    assert_eq!(accepted, json!({"accepted": true, "rule": null, "reason": null}));
    let rejected = serde_json::to_value(Verdict::reject(RuleCode::SkillMismatch, "why")).unwrap();
    assert_eq!(rejected, json!({"accepted": false, "rule": "skill_mismatch", "reason": "why"}));
    assert_eq!(Mode::default(), Mode::Review);
}

// Accepted answers.

#[test]
fn accepts_a_grounded_answer() {
    let verdict = check(&job_trace(job_success()), &grounded_answer());
    assert_eq!(verdict, Verdict::accept());
    let verdict = validate(&job_trace(job_success()), &grounded_answer(), &skills(), Mode::Submission);
    assert_eq!(verdict, Verdict::accept());
}

#[test]
fn accepts_a_retry_after_a_retryable_error() {
    let trace = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)),
        call(JOB_TOOL, 2, job_success()),
    ]);
    assert_eq!(check(&trace, &grounded_answer()), Verdict::accept());
}

#[test]
fn accepts_a_preserved_error_after_a_failed_retry() {
    let trace = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&TOOL_TIMEOUT)),
        call(JOB_TOOL, 2, failure(&DEPENDENCY_UNAVAILABLE)),
    ]);
    assert_eq!(check(&trace, &error_answer(&DEPENDENCY_UNAVAILABLE)), Verdict::accept());
}

#[test]
fn accepts_no_data_after_an_empty_read() {
    let data =
        object(json!({"pendingItems": [], "recentPublished": [], "jobHealth": {"active": 0, "failed": 0},
        "goals": [], "freshness": {"state": "current", "readAt": "2026-11-30T09:00:00Z"}, "count": 0}));
    let item = EvidenceItem::new("harmonia_feed", Provenance::Live, None);
    let feed = Envelope::success(data, vec![item]).to_value();
    let trace = trace(vec![activation(FEED_SKILL), call(FEED_TOOL, 1, feed)]);
    assert_eq!(check(&trace, &no_data_answer("feed-watch")), Verdict::accept());
}

// Rule 0.

#[test]
fn answer_schema() {
    let mut answer = grounded_answer();
    answer["confidence"] = json!("high");
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(verdict.reason.as_deref(), Some("confidence: unknown key"));
    assert_rejected(verdict, RuleCode::AnswerSchema);
}

// Rule 1.

#[test]
fn skill_not_activated() {
    assert_rejected(check(&trace(Vec::new()), &grounded_answer()), RuleCode::SkillNotActivated);
    let without_activation = trace(vec![call(JOB_TOOL, 1, job_success())]);
    assert_rejected(check(&without_activation, &grounded_answer()), RuleCode::SkillNotActivated);
}

#[test]
fn skill_mismatch() {
    let mut other_skill = grounded_answer();
    other_skill["skillName"] = json!("feed-watch");
    assert_rejected(check(&job_trace(job_success()), &other_skill), RuleCode::SkillMismatch);

    let mut unloaded = job_trace(job_success());
    unloaded.entries[0].skill = Some("ghost".into());
    let mut answer = grounded_answer();
    answer["skillName"] = json!("ghost");
    assert_rejected(check(&unloaded, &answer), RuleCode::SkillMismatch);

    let mut edited = job_trace(job_success());
    edited.entries[0].sha256 = Some("0".repeat(64));
    assert_rejected(check(&edited, &grounded_answer()), RuleCode::SkillMismatch);

    let second = trace(vec![activation(JOB_SKILL), activation(JOB_SKILL), call(JOB_TOOL, 1, job_success())]);
    let verdict = check(&second, &grounded_answer());
    assert_eq!(verdict.reason.as_deref(), Some("entry 2 activates a second skill"));
    assert_rejected(verdict, RuleCode::SkillMismatch);
}

#[test]
fn skill_hash_is_compared_without_case() {
    let mut upper = job_trace(job_success());
    upper.entries[0].sha256 = upper.entries[0].sha256.as_deref().map(str::to_uppercase);
    assert!(check(&upper, &grounded_answer()).accepted);
}

// Rule 2.

#[test]
fn sequence_invalid() {
    let mut gap = job_trace(job_success());
    gap.entries[1].sequence = 3;
    assert_rejected(check(&gap, &grounded_answer()), RuleCode::SequenceInvalid);

    let mut from_zero = job_trace(job_success());
    from_zero.entries[0].sequence = 0;
    assert_rejected(check(&from_zero, &grounded_answer()), RuleCode::SequenceInvalid);

    let wrong_attempt = trace(vec![activation(JOB_SKILL), call(JOB_TOOL, 2, job_success())]);
    assert_rejected(check(&wrong_attempt, &grounded_answer()), RuleCode::SequenceInvalid);
}

#[test]
fn refused_attempts_count_towards_attempt_numbers() {
    let skipped = trace(vec![
        activation(JOB_SKILL),
        refused(JOB_TOOL, 1, RuleCode::ToolNotAllowed),
        call(JOB_TOOL, 1, job_success()),
    ]);
    assert_rejected(check(&skipped, &grounded_answer()), RuleCode::SequenceInvalid);
}

// Rule 3.

#[test]
fn no_tool_call() {
    let only_activation = trace(vec![activation(JOB_SKILL)]);
    assert_rejected(check(&only_activation, &grounded_answer()), RuleCode::NoToolCall);
    let only_refusal = trace(vec![activation(JOB_SKILL), refused(JOB_TOOL, 1, RuleCode::ToolNotAllowed)]);
    assert_rejected(check(&only_refusal, &grounded_answer()), RuleCode::NoToolCall);
}

#[test]
fn tool_not_allowed() {
    let called = trace(vec![activation(JOB_SKILL), call(FEED_TOOL, 1, job_success())]);
    assert_rejected(check(&called, &grounded_answer()), RuleCode::ToolNotAllowed);
    let refused_only = trace(vec![
        activation(JOB_SKILL),
        refused(FEED_TOOL, 1, RuleCode::ToolNotAllowed),
        call(JOB_TOOL, 1, job_success()),
    ]);
    let verdict = check(&refused_only, &grounded_answer());
    assert_eq!(
        verdict.reason.as_deref(),
        Some("entry 2 names `get_operator_feed`, which skill `job-status` does not allow")
    );
    assert_rejected(verdict, RuleCode::ToolNotAllowed);
}

// Rule 4.

#[test]
fn multiple_tools() {
    let feed = feed_success(json!({"state": "current", "readAt": "2026-11-30T09:00:00Z"}));
    let trace = trace(vec![
        activation(FEED_SKILL),
        call(FEED_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)),
        call("search_trend_signals", 1, feed),
    ]);
    assert_rejected(check(&trace, &no_data_answer("feed-watch")), RuleCode::MultipleTools);
}

#[test]
fn retry_ceiling() {
    let trace = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)),
        call(JOB_TOOL, 2, failure(&DEPENDENCY_UNAVAILABLE)),
        call(JOB_TOOL, 3, job_success()),
    ]);
    assert_rejected(check(&trace, &grounded_answer()), RuleCode::RetryCeiling);
}

#[test]
fn refused_attempts_count_towards_the_ceiling() {
    let trace = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)),
        call(JOB_TOOL, 2, job_success()),
        refused(JOB_TOOL, 3, RuleCode::RetryCeiling),
    ]);
    assert_rejected(check(&trace, &grounded_answer()), RuleCode::RetryCeiling);
}

#[test]
fn retry_without_retryable_error() {
    let after_success = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, job_success()),
        call(JOB_TOOL, 2, job_success()),
    ]);
    assert_rejected(check(&after_success, &grounded_answer()), RuleCode::RetryWithoutRetryableError);
    let after_permanent = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&JOB_NOT_FOUND)),
        call(JOB_TOOL, 2, job_success()),
    ]);
    assert_rejected(check(&after_permanent, &grounded_answer()), RuleCode::RetryWithoutRetryableError);
    let after_refusal = trace(vec![
        activation(JOB_SKILL),
        refused(JOB_TOOL, 1, RuleCode::ToolNotAllowed),
        call(JOB_TOOL, 2, job_success()),
    ]);
    assert_rejected(check(&after_refusal, &grounded_answer()), RuleCode::RetryWithoutRetryableError);
}

#[test]
fn retry_arguments_changed() {
    let with_args = |mut entry: TraceEntry, args: Value| {
        entry.args = Some(args);
        entry
    };
    let changed = trace(vec![
        activation(JOB_SKILL),
        with_args(call(JOB_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)), json!({"job_id": "job-42"})),
        with_args(call(JOB_TOOL, 2, job_success()), json!({"job_id": "job-7"})),
    ]);
    let verdict = check(&changed, &grounded_answer());
    assert_eq!(
        verdict.reason.as_deref(),
        Some("entry 3 retries with other arguments than entry 2; a retry repeats the failed call")
    );
    assert_rejected(verdict, RuleCode::RetryArgumentsChanged);
    let mut same = changed.clone();
    same.entries[2].args = Some(json!({"job_id": "job-42"}));
    assert_eq!(check(&same, &grounded_answer()), Verdict::accept());
    // The earlier rule wins whichever attempt breaks it.
    let mut third = changed;
    third.entries.push(TraceEntry { sequence: 4, ..refused(JOB_TOOL, 3, RuleCode::RetryCeiling) });
    assert_rejected(check(&third, &grounded_answer()), RuleCode::RetryCeiling);
}

#[test]
fn a_malformed_retryable_error_does_not_license_a_retry() {
    let mut malformed = failure(&DEPENDENCY_UNAVAILABLE);
    malformed["error"]["extra"] = json!(1);
    let trace =
        trace(vec![activation(JOB_SKILL), call(JOB_TOOL, 1, malformed), call(JOB_TOOL, 2, job_success())]);
    assert_rejected(check(&trace, &grounded_answer()), RuleCode::RetryWithoutRetryableError);
}

// Rule 5.

#[test]
fn invalid_envelope() {
    let mut extra_key = job_success();
    extra_key["meta"] = json!({});
    assert_rejected(check(&job_trace(extra_key), &grounded_answer()), RuleCode::InvalidEnvelope);

    let mut forged = job_success();
    forged["evidence"][0]["evidenceId"] = json!("ev-0000000000000000");
    let verdict = check(&job_trace(forged), &grounded_answer());
    assert!(verdict.reason.as_deref().is_some_and(|reason| reason.starts_with("entry 2 (`get_job_status`)")));
    assert_rejected(verdict, RuleCode::InvalidEnvelope);

    let mut missing = job_trace(job_success());
    missing.entries[1].response = None;
    assert_rejected(check(&missing, &grounded_answer()), RuleCode::InvalidEnvelope);
}

#[test]
fn refused_responses_are_not_checked_as_envelopes() {
    let mut refusal = refused(JOB_TOOL, 2, RuleCode::RetryWithoutRetryableError);
    refusal.response = Some(json!({"refused": true}));
    let trace = trace(vec![activation(JOB_SKILL), call(JOB_TOOL, 1, failure(&TOOL_TIMEOUT)), refusal]);
    assert_eq!(check(&trace, &error_answer(&TOOL_TIMEOUT)), Verdict::accept());
}

// Rule 6.

fn feed_success(freshness: Value) -> Value {
    let data = object(json!({"pendingItems": [], "jobHealth": {"active": 0, "failed": 0}, "goals": [],
        "recentPublished": [], "freshness": freshness}));
    Envelope::success(data, vec![EvidenceItem::new("harmonia_feed", Provenance::Live, None)]).to_value()
}

fn feed_verdict(freshness: Value) -> Verdict {
    let trace = trace(vec![activation(FEED_SKILL), call(FEED_TOOL, 1, feed_success(freshness))]);
    check(&trace, &no_data_answer("feed-watch"))
}

#[test]
fn feed_freshness_missing() {
    for freshness in [
        Value::Null,
        json!("current"),
        json!({"state": "fresh", "readAt": "2026-11-30T09:00:00Z"}),
        json!({"readAt": "2026-11-30T09:00:00Z"}),
        json!({"state": "stale"}),
        json!({"state": "stale", "readAt": "yesterday"}),
        json!({"state": "stale", "readAt": 1764493200}),
    ] {
        assert_rejected(feed_verdict(freshness), RuleCode::FeedFreshnessMissing);
    }
    for state in ["current", "stale", "unavailable"] {
        let verdict = feed_verdict(json!({"state": state, "readAt": "2026-11-30T10:00:00+01:00"}));
        assert!(verdict.accepted, "{state}: {verdict:?}");
    }
}

// Rule 7.

#[test]
fn mutation_claim() {
    let mut answer = grounded_answer();
    answer["answer"] =
        json!(format!("Job job-42 is waiting ({}). We have\npub\u{200B}lished the thread.", job_id()));
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("answer claims an effect (`we have published`, the liaison as subject); the liaison only reads")
    );
    assert_rejected(verdict, RuleCode::MutationClaim);

    let mut in_uncertainty = grounded_answer();
    in_uncertainty["uncertainty"] = json!(["Fine.", "act-1 was approved by H\u{0430}rmonia"]);
    let verdict = check(&job_trace(job_success()), &in_uncertainty);
    assert_eq!(
        verdict.reason.as_deref(),
        Some(
            "uncertainty[1] claims an effect (`approved by harmonia`, the liaison as agent); the liaison only reads"
        )
    );
    assert_rejected(verdict, RuleCode::MutationClaim);
}

#[test]
fn mutation_claim_in_a_claim_text() {
    // The answer denies the effect; the claim, cut out of it, asserts it.
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting ({}). Nothing was approved by me.", job_id()));
    answer["claims"] = json!([{"text": "approved by me", "kind": "record", "evidenceIds": [job_id()]}]);
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some(
            "claims[0].text claims an effect (`approved by me`, the liaison as agent); the liaison only reads"
        )
    );
    assert_rejected(verdict, RuleCode::MutationClaim);
}

#[test]
fn benign_reports_pass_rule_7() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!(
        "Job job-42 is waiting for approval ({}). I recommend that you approve act-1; \
         once you approve, the workflow will publish it. Nothing was published by me.",
        job_id()
    ));
    answer["uncertainty"] = json!(["I cannot approve, publish or retry anything."]);
    let claims = answer["claims"].as_array_mut().unwrap();
    for text in ["I recommend that you approve act-1", "Nothing was published by me"] {
        claims.push(json!({"text": text, "kind": "aggregate", "evidenceIds": [job_id()]}));
    }
    assert_eq!(check(&job_trace(job_success()), &answer), Verdict::accept());
}

/// Default deny: a fragment with no subject is the liaison's, and the
/// reason names the frame that did not hold.
#[test]
fn mutation_claim_without_a_subject() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting for approval ({}). Posted!", job_id()));
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("answer claims an effect (`posted`, no subject: read as the liaison's); the liaison only reads")
    );
    assert_rejected(verdict, RuleCode::MutationClaim);
}

/// A state the cited evidence carries is the data's report; the same
/// state outside every claim (here an uncertainty note) is the liaison's.
#[test]
fn a_state_the_cited_evidence_carries_is_reported() {
    let item = job_item();
    let data =
        object(json!({"found": true, "job": {"id": "job-42", "status": "waiting", "strategy": "approved"}}));
    let trace = job_trace(Envelope::success(data, vec![item]).to_value());
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting ({}); its strategy was approved.", job_id()));
    answer["claims"] = json!([{"text": "its strategy was approved", "kind": "record", "evidenceIds": [job_id()]},
        {"text": "Job job-42 is waiting", "kind": "record", "evidenceIds": [job_id()]}]);
    assert_eq!(check(&trace, &answer), Verdict::accept());
    answer["uncertainty"] = json!(["The post was published."]);
    let verdict = check(&trace, &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some(
            "uncertainty[0] claims an effect (`post was published`, implicit agent: read as the liaison's); the liaison only reads"
        )
    );
}

// Rule 7, its language.

#[test]
fn unsupported_language() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!(
        "Job job-42 is waiting for approval ({}). Nous avons publié le fil ce matin.",
        job_id()
    ));
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("answer is in French (`nous avons publié le fil ce`); the validator judges English only")
    );
    assert_rejected(verdict, RuleCode::UnsupportedLanguage);
}

/// A stretch in another language is refused however short: one word
/// after an English sentence is enough.
#[test]
fn a_short_stretch_in_another_language_is_refused() {
    let mut answer = grounded_answer();
    for (tail, language) in [("Hecho.", "Spanish"), ("Voilà, c'est fait!", "French"), ("Erledigt.", "German")]
    {
        answer["answer"] = json!(format!("Job job-42 is waiting for approval ({}). {tail}", job_id()));
        let verdict = check(&job_trace(job_success()), &answer);
        let reason = verdict.reason.clone().unwrap_or_default();
        assert!(reason.starts_with(&format!("answer is in {language} (`")), "{tail}: {reason}");
        assert_rejected(verdict, RuleCode::UnsupportedLanguage);
    }
}

/// Names, ids and tool data quoted in another language are not judged.
#[test]
fn short_mixed_sentences_and_quoted_tool_data_pass_the_language_rule() {
    let title = "Wir haben die neue Version veröffentlicht";
    let data = object(json!({"found": true, "job": {"id": "job-42", "status": "waiting", "title": title}}));
    let trace = job_trace(Envelope::success(data, vec![job_item()]).to_value());
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!(
        "Job job-42 is waiting for approval ({}). Owner: José Álvarez, in São Paulo. Its title is \"{title}\".",
        job_id()
    ));
    answer["claims"] = json!([{"text": "job job-42 is waiting", "kind": "record", "evidenceIds": [job_id()]},
        {"text": format!("Its title is \"{title}\""), "kind": "record", "evidenceIds": [job_id()]}]);
    assert_eq!(check(&trace, &answer), Verdict::accept());
}

// Rule 8.

#[test]
fn a_one_letter_claim_grounds_nothing() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 failed yesterday ({}).", job_id()));
    answer["claims"][0]["text"] = json!("J");
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(verdict.reason.as_deref(), Some("claims[0].text: must hold at least 3 words"));
    assert_rejected(verdict, RuleCode::AnswerSchema);
}

#[test]
fn claim_text_must_occur_at_word_boundaries() {
    let mut answer = grounded_answer();
    answer["claims"][0]["text"] = json!("ob job-42 is wait");
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::ClaimTextAbsent);
}

#[test]
fn a_record_claim_names_its_record() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-7 failed in stage publishing ({}).", job_id()));
    answer["claims"][0]["text"] = json!("Job job-7 failed in stage publishing");
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("claims[0] is a record claim but names nothing of the record it cites (`job-42`)")
    );
    assert_rejected(verdict, RuleCode::RecordClaimWithoutRecordEvidence);
    // A value of the record names it as well as its reference does.
    answer["answer"] = json!(format!("The job is waiting ({}).", job_id()));
    answer["claims"][0]["text"] = json!("The job is waiting");
    assert_eq!(check(&job_trace(job_success()), &answer), Verdict::accept());
}

#[test]
fn unclaimed_fact() {
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting for approval ({}). It has 99 drafts.", job_id()));
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("sentence 2 states `99` outside every claim; each fact from the data needs a claim")
    );
    assert_rejected(verdict, RuleCode::UnclaimedFact);
    answer["answer"] = json!(format!("Job job-42 is waiting ({}). Its status: waiting.", job_id()));
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::UnclaimedFact);
    answer["answer"] =
        json!(format!("Job job-42 is waiting ({}). Interpretation: it needs a reviewer.", job_id()));
    assert_eq!(check(&job_trace(job_success()), &answer), Verdict::accept());
}

#[test]
fn claim_text_absent() {
    let mut answer = grounded_answer();
    answer["claims"][0]["text"] = json!("Job job-42 failed");
    let verdict = check(&job_trace(job_success()), &answer);
    assert_eq!(verdict.reason.as_deref(), Some("claims[0].text does not appear in the answer text"));
    assert_rejected(verdict, RuleCode::ClaimTextAbsent);
}

#[test]
fn unknown_evidence() {
    let other = EvidenceItem::new("harmonia_job", Provenance::Live, Some("job-7")).evidence_id;
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting ({}, {other}).", job_id()));
    answer["claims"][0]["evidenceIds"] = json!([job_id(), other]);
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::UnknownEvidence);
}

#[test]
fn evidence_from_failed_calls_never_counts() {
    let trace = trace(vec![
        activation(JOB_SKILL),
        call(JOB_TOOL, 1, failure(&DEPENDENCY_UNAVAILABLE)),
        call(
            JOB_TOOL,
            2,
            job_success_with(EvidenceItem::new("harmonia_job", Provenance::Live, Some("job-7"))),
        ),
    ]);
    assert_rejected(check(&trace, &grounded_answer()), RuleCode::UnknownEvidence);
}

#[test]
fn evidence_not_displayed() {
    let mut answer = grounded_answer();
    answer["answer"] = json!("Job job-42 is waiting for approval.");
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::EvidenceNotDisplayed);
    let mut upper = grounded_answer();
    upper["answer"] = json!(format!("Job job-42 is waiting ({}).", job_id().to_uppercase()));
    assert_rejected(check(&job_trace(job_success()), &upper), RuleCode::EvidenceNotDisplayed);
}

#[test]
fn record_claim_without_record_evidence() {
    let dataset = EvidenceItem::new("harmonia_job", Provenance::Live, None);
    let id = dataset.evidence_id.clone();
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting ({id})."));
    answer["claims"][0]["evidenceIds"] = json!([id]);
    let trace = job_trace(job_success_with(dataset));
    assert_rejected(check(&trace, &answer), RuleCode::RecordClaimWithoutRecordEvidence);
    answer["claims"][0]["kind"] = json!("aggregate");
    assert!(check(&trace, &answer).accepted);
}

#[test]
fn claims_are_checked_in_order() {
    let mut answer = grounded_answer();
    let first = json!({"text": "job job-42 is", "kind": "record", "evidenceIds": ["ev-ffffffffffffffff"]});
    let second = json!({"text": "some absent text", "kind": "record", "evidenceIds": [job_id()]});
    answer["claims"] = json!([first, second]);
    let verdict = check(&job_trace(job_success()), &answer);
    assert!(verdict.reason.as_deref().is_some_and(|reason| reason.starts_with("claims[0]")));
    assert_rejected(verdict, RuleCode::UnknownEvidence);
}

// Rule 9.

#[test]
fn error_not_bound() {
    assert_rejected(check(&job_trace(job_success()), &error_answer(&JOB_NOT_FOUND)), RuleCode::ErrorNotBound);
}

#[test]
fn error_not_preserved() {
    let trace = job_trace(failure(&JOB_NOT_FOUND));
    assert_eq!(check(&trace, &error_answer(&JOB_NOT_FOUND)), Verdict::accept());
    for (field, changed) in [
        ("code", json!("job_missing")),
        ("category", json!("validation")),
        ("message", json!("No such job.")),
        ("retryable", json!(true)),
    ] {
        let mut answer = error_answer(&JOB_NOT_FOUND);
        answer["error"][field] = changed;
        answer["answer"] = json!("job_missing job_not_found");
        let verdict = check(&trace, &answer);
        let expected = format!("error.{field} differs from the final tool error (entry 2)");
        assert_eq!(verdict.reason.as_deref(), Some(expected.as_str()));
        assert_rejected(verdict, RuleCode::ErrorNotPreserved);
    }
}

#[test]
fn error_code_not_displayed() {
    let mut answer = error_answer(&JOB_NOT_FOUND);
    answer["answer"] = json!("That job was not found.");
    assert_rejected(check(&job_trace(failure(&JOB_NOT_FOUND)), &answer), RuleCode::ErrorCodeNotDisplayed);
}

#[test]
fn success_after_error() {
    // A `success` answer after a final error already fails rule 8: with
    // at most one retry, only after an error, no call succeeded.
    let failed = job_trace(failure(&JOB_NOT_FOUND));
    assert_rejected(check(&failed, &no_data_answer("job-status")), RuleCode::SuccessAfterError);
}

// Rule 10.

#[test]
fn false_no_data() {
    assert_rejected(check(&job_trace(job_success()), &no_data_answer("job-status")), RuleCode::FalseNoData);
    for data in [
        json!({"count": 2, "signals": []}),
        json!({"signals": [{"title": "t"}], "count": 0}),
        json!({"topPosts": [{"postId": "p1"}]}),
        json!({"windows": [{"hourUtc": 14}]}),
        json!({"jobs": [{}]}),
    ] {
        let trace = job_trace(Envelope::success(object(data.clone()), Vec::new()).to_value());
        assert_rejected(check(&trace, &no_data_answer("job-status")), RuleCode::FalseNoData);
    }
    for data in [
        json!({"found": false}),
        json!({"count": 0, "signals": []}),
        json!({"jobs": "none"}),
        json!({"results": [], "summary": {"total": 0, "note": "nothing yet", "ok": false}}),
    ] {
        let trace = job_trace(Envelope::success(object(data.clone()), Vec::new()).to_value());
        assert!(check(&trace, &no_data_answer("job-status")).accepted, "{data}");
    }
}

#[test]
fn false_no_data_is_judged_from_the_datas_shape() {
    let feed = object(json!({"pendingItems": [], "jobHealth": {"active": 3, "failed": 2},
        "goals": [{"id": "goal-1", "title": "Two posts a week"}], "recentPublished": [],
        "freshness": {"state": "current", "readAt": "2026-11-30T09:00:00Z"}}));
    let item = EvidenceItem::new("harmonia_feed", Provenance::Live, None);
    let trace_ = trace(vec![
        activation(FEED_SKILL),
        call(FEED_TOOL, 1, Envelope::success(feed, vec![item]).to_value()),
    ]);
    let mut answer = no_data_answer("feed-watch");
    answer["answer"] = json!("The feed is empty.");
    let verdict = validate(&trace_, &answer, &skills(), Mode::Submission);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("a `no_data` answer, but the final data holds records (`jobHealth.active` is 3)")
    );
    assert_rejected(verdict, RuleCode::FalseNoData);
    for (data, shown) in [
        (json!({"goals": [{"id": "g"}], "jobHealth": {"active": 0}}), "`goals` is not empty"),
        (json!({"summary": {"byState": {"failed": 2}}}), "`summary.byState.failed` is 2"),
        (json!({"lookup": {"found": true}}), "`lookup.found` is true"),
        (json!({"plugin": {"results": [[]]}}), "`plugin.results` is not empty"),
    ] {
        let trace = job_trace(Envelope::success(object(data.clone()), Vec::new()).to_value());
        let verdict = check(&trace, &no_data_answer("job-status"));
        assert!(
            verdict.reason.as_deref().is_some_and(|reason| reason.contains(shown)),
            "{data}: {verdict:?}"
        );
        assert_rejected(verdict, RuleCode::FalseNoData);
    }
}

// Rule 11.

#[test]
fn mock_evidence_in_submission() {
    let mock = EvidenceItem::new("harmonia_job", Provenance::Mock, Some("job-42"));
    let id = mock.evidence_id.clone();
    let trace = job_trace(job_success_with(mock));
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("Job job-42 is waiting ({id})."));
    answer["claims"][0]["evidenceIds"] = json!([id]);
    assert!(validate(&trace, &answer, &skills(), Mode::Review).accepted);
    let verdict = validate(&trace, &answer, &skills(), Mode::Submission);
    assert_rejected(verdict, RuleCode::MockEvidenceInSubmission);
}

// Ordering.

#[test]
fn the_earlier_rule_wins() {
    // Wrong skill name and an unshown evidence id: rule 1 before rule 8.
    let mut answer = grounded_answer();
    answer["skillName"] = json!("feed-watch");
    answer["answer"] = json!("Job job-42 is waiting.");
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::SkillMismatch);

    // A bad sequence and a disallowed tool: rule 2 before rule 3.
    let mut trace_ = trace(vec![activation(JOB_SKILL), call(FEED_TOOL, 1, job_success())]);
    trace_.entries[1].sequence = 5;
    assert_rejected(check(&trace_, &grounded_answer()), RuleCode::SequenceInvalid);

    // A mutation claim and an absent claim text: rule 7 before rule 8.
    let mut answer = grounded_answer();
    answer["answer"] = json!(format!("I approved job-42 ({}).", job_id()));
    assert_rejected(check(&job_trace(job_success()), &answer), RuleCode::MutationClaim);

    // An invalid envelope and a false no-data: rule 5 before rule 10.
    let mut broken = job_success();
    broken["error"] = failure(&TOOL_TIMEOUT)["error"].clone();
    assert_rejected(check(&job_trace(broken), &no_data_answer("job-status")), RuleCode::InvalidEnvelope);

    // Schema errors come before everything.
    let mut answer = grounded_answer();
    answer["status"] = json!("done");
    assert_rejected(check(&trace(Vec::new()), &answer), RuleCode::AnswerSchema);
}

#[test]
fn reasons_stay_on_one_line_whatever_the_input() {
    let mut answer = grounded_answer();
    answer["skillName"] = json!("job-status\nIGNORE THIS");
    let verdict = check(&job_trace(job_success()), &answer);
    assert!(verdict.reason.as_deref().is_some_and(|reason| reason.contains("job-status\\nIGNORE")));
    assert_rejected(verdict, RuleCode::SkillMismatch);
    let mut answer = grounded_answer();
    answer["claims"][0]["evidenceIds"] = json!([format!("ev-\n{}", "x".repeat(1000))]);
    let verdict = check(&job_trace(job_success()), &answer);
    assert!(verdict.reason.as_deref().is_some_and(|reason| reason.len() < 300));
    assert_rejected(verdict, RuleCode::UnknownEvidence);
    let mut response = job_success();
    response["stray\nkey"] = json!(1);
    assert_rejected(check(&job_trace(response), &grounded_answer()), RuleCode::InvalidEnvelope);
}

#[test]
fn malformed_traces_never_panic() {
    let mut odd = job_trace(job_success());
    odd.entries[1].name = None;
    odd.entries[1].attempt = None;
    assert_rejected(check(&odd, &grounded_answer()), RuleCode::SequenceInvalid);
    let mut nameless = job_trace(job_success());
    nameless.entries[1].name = None;
    assert_rejected(check(&nameless, &grounded_answer()), RuleCode::ToolNotAllowed);
    let mut no_skill = job_trace(job_success());
    no_skill.entries[0].skill = None;
    assert_rejected(check(&no_skill, &grounded_answer()), RuleCode::SkillNotActivated);
    let mut no_hash = job_trace(job_success());
    no_hash.entries[0].sha256 = None;
    assert_rejected(check(&no_hash, &grounded_answer()), RuleCode::SkillMismatch);
    assert_rejected(check(&job_trace(job_success()), &Value::Null), RuleCode::AnswerSchema);
}
