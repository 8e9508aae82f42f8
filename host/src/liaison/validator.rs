//! The answer validator (CONTRACT.md §5): binds the liaison's final answer
//! to the skill it loaded and to what its tools returned in this invocation.
//!
//! [`validate`] checks the rules in the contract's order and reports the
//! first that fails, as a [`Verdict`] with a stable [`RuleCode`] and a
//! one-line reason:
//!
//! First, for a trace read from outside ([`validate_received`]) in
//! [`Mode::Submission`]: `trace_unverified`, its seal does not verify with
//! the trusted key. Then:
//! 0. `answer_schema`: the answer is not a valid [`Answer`].
//! 1. `skill_not_activated`, `skill_mismatch`: entry 1 activates the
//!    answer's skill, the skill is loaded and has the recorded hash, and no
//!    second skill is activated.
//! 2. `sequence_invalid`: entries are numbered 1..n, and each tool's
//!    attempts (refused ones included) are numbered 1, 2, ...
//! 3. `no_tool_call`, `tool_not_allowed`: at least one `tool_call` (refusals
//!    alone do not count); every attempt names a tool the skill allows.
//! 4. `multiple_tools`, `retry_ceiling`, `retry_without_retryable_error`:
//!    one tool, at most two attempts, and a second attempt only directly
//!    after a valid error envelope whose `retryable` is true.
//! 5. `invalid_envelope`: every `tool_call` response is a valid envelope.
//! 6. `feed_freshness_missing`: `get_operator_feed` successes carry
//!    `freshness.state` and an RFC 3339 `freshness.readAt`.
//! 7. `mutation_claim`: the answer text and uncertainty claim no authority
//!    (see [`authority`] for the matcher).
//! 8. Per claim, in order: `claim_text_absent`, `unknown_evidence`,
//!    `evidence_not_displayed`, `record_claim_without_record_evidence`.
//! 9. `error_not_bound`, `error_not_preserved`, `error_code_not_displayed`,
//!    `success_after_error`: the status agrees with the final `tool_call`.
//! 10. `false_no_data`: `no_data` only when the final data holds no records.
//! 11. `mock_evidence_in_submission` ([`Mode::Submission`] only).
//!
//! Decisions where the contract leaves room:
//! - Evidence counts only from success envelopes of `tool_call` entries;
//!   refused attempts never contribute evidence, and the "final envelope" is
//!   the response of the last `tool_call`, even if a refusal follows it.
//! - A response counts as "a retryable error" only when it is a valid
//!   envelope; a malformed one never licenses a retry.
//! - The skill hash is compared case-insensitively (it is hex).
//! - An error code is "shown" when it appears verbatim in the answer text;
//!   evidence ids likewise. Claim text is matched case-insensitively.
//! - A `count` holds records when it is any positive number.
//! - Reasons name entries by their 1-based position in the trace.

use crate::envelope::{Envelope, ErrorObject, EvidenceItem, Provenance};
use crate::liaison::answer::{Answer, AnswerStatus, Claim, ClaimKind, one_line};
use crate::liaison::skills::{Skill, SkillSet};
use crate::liaison::trace::{EntryKind, Trace, TraceEntry};
use harmonia_tool_common::time::parse_rfc3339;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// Which rules apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every rule except the submission-only one.
    #[default]
    Review,
    /// Every rule, including: no claim may cite mock evidence.
    Submission,
}

macro_rules! rule_codes {
    ($( $(#[$doc:meta])* $variant:ident => $code:literal, )*) => {
        /// A validator rule, with a stable code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RuleCode {
            $( $(#[$doc])* $variant, )*
        }

        impl RuleCode {
            /// Every rule, in the order the validator checks them.
            pub const ALL: &'static [RuleCode] = &[$(Self::$variant),*];

            /// The stable code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $code, )*
                }
            }
        }
    };
}

rule_codes! {
    /// Submission mode only: the trace is not signed by the trusted host key, or was changed after signing.
    TraceUnverified => "trace_unverified",
    /// The answer is not a valid answer document.
    AnswerSchema => "answer_schema",
    /// The trace does not start with a skill activation.
    SkillNotActivated => "skill_not_activated",
    /// The activated skill is not the answer's, not loaded, has another hash, or is not the only one.
    SkillMismatch => "skill_mismatch",
    /// Sequence or attempt numbers are out of order.
    SequenceInvalid => "sequence_invalid",
    /// No tool was called.
    NoToolCall => "no_tool_call",
    /// An attempt names a tool the skill does not allow.
    ToolNotAllowed => "tool_not_allowed",
    /// Attempts name more than one tool.
    MultipleTools => "multiple_tools",
    /// More than two attempts.
    RetryCeiling => "retry_ceiling",
    /// A second attempt without a retryable error before it.
    RetryWithoutRetryableError => "retry_without_retryable_error",
    /// A recorded tool response is not a valid envelope.
    InvalidEnvelope => "invalid_envelope",
    /// An operator feed success lacks a valid freshness.
    FeedFreshnessMissing => "feed_freshness_missing",
    /// The answer claims to approve, publish, schedule, execute, verify or authorise.
    MutationClaim => "mutation_claim",
    /// A claim's text is not in the answer.
    ClaimTextAbsent => "claim_text_absent",
    /// A claim cites an id no successful call returned.
    UnknownEvidence => "unknown_evidence",
    /// A claim cites an id the answer text does not show.
    EvidenceNotDisplayed => "evidence_not_displayed",
    /// A record claim cites only dataset-level evidence.
    RecordClaimWithoutRecordEvidence => "record_claim_without_record_evidence",
    /// An error answer after a successful final call.
    ErrorNotBound => "error_not_bound",
    /// An error answer whose error differs from the final tool error.
    ErrorNotPreserved => "error_not_preserved",
    /// An error answer that does not show the error code.
    ErrorCodeNotDisplayed => "error_code_not_displayed",
    /// A success or no-data answer after a failed final call.
    SuccessAfterError => "success_after_error",
    /// A no-data answer while the final data holds records.
    FalseNoData => "false_no_data",
    /// A claim cites mock evidence in submission mode.
    MockEvidenceInSubmission => "mock_evidence_in_submission",
}

impl RuleCode {
    /// The rule with this stable code.
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|rule| rule.as_str() == code)
    }
}

impl fmt::Display for RuleCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is not one of the validator's rule codes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule code `{0}`")]
pub struct UnknownRuleCode(pub String);

impl FromStr for RuleCode {
    type Err = UnknownRuleCode;

    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Self::parse(code).ok_or_else(|| UnknownRuleCode(code.to_owned()))
    }
}

impl Serialize for RuleCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The validator's decision: `{"accepted": bool, "rule": CODE|null, "reason": TEXT|null}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// True when every rule passed.
    pub accepted: bool,
    /// The first rule that failed.
    pub rule: Option<RuleCode>,
    /// One line on why it failed.
    pub reason: Option<String>,
}

impl Verdict {
    /// Every rule passed.
    pub fn accept() -> Self {
        Self { accepted: true, rule: None, reason: None }
    }

    /// `rule` failed, for `reason`.
    pub fn reject(rule: RuleCode, reason: impl Into<String>) -> Self {
        Self { accepted: false, rule: Some(rule), reason: Some(reason.into()) }
    }
}

/// Check `answer` against `trace` and the loaded `skills`, returning the
/// first failing rule in the contract's order.
pub fn validate(trace: &Trace, answer: &Value, skills: &SkillSet, mode: Mode) -> Verdict {
    match check_all(trace, answer, skills, mode) {
        Ok(()) => Verdict::accept(),
        Err(Rejection { rule, reason }) => Verdict::reject(rule, reason),
    }
}

/// [`validate`] for a trace that came from outside this process, given the
/// outcome of checking its seal (see `liaison::signing`). In
/// [`Mode::Submission`] an unverified trace is rejected first, with
/// `trace_unverified`: none of its entries can be believed, whatever the
/// answer. In [`Mode::Review`] the outcome does not change the verdict, so
/// hand-written and edited traces can still be checked rule by rule.
pub fn validate_received<E: fmt::Display>(
    trace: &Trace,
    verification: Result<(), E>,
    answer: &Value,
    skills: &SkillSet,
    mode: Mode,
) -> Verdict {
    match verification {
        Err(reason) if mode == Mode::Submission => {
            Verdict::reject(RuleCode::TraceUnverified, reason.to_string())
        }
        _ => validate(trace, answer, skills, mode),
    }
}

struct Rejection {
    rule: RuleCode,
    reason: String,
}

type Check<T = ()> = Result<T, Rejection>;

fn fail<T>(rule: RuleCode, reason: impl Into<String>) -> Check<T> {
    Err(Rejection { rule, reason: reason.into() })
}

/// A `tool_call` or `tool_refused` entry with its 1-based trace position.
struct Attempt<'t> {
    position: usize,
    entry: &'t TraceEntry,
}

impl<'t> Attempt<'t> {
    fn tool(&self) -> &'t str {
        self.entry.name.as_deref().unwrap_or("")
    }

    /// The tool name, fit for a reason.
    fn shown_tool(&self) -> String {
        one_line(self.tool())
    }
}

/// A `tool_call` entry whose response parsed as a valid envelope.
struct Call<'t> {
    position: usize,
    tool: &'t str,
    envelope: Envelope,
}

/// Evidence items returned by successful calls, by id.
type ReturnedEvidence<'c> = HashMap<&'c str, &'c EvidenceItem>;

fn check_all(trace: &Trace, answer: &Value, skills: &SkillSet, mode: Mode) -> Check {
    let answer = Answer::parse(answer).or_else(|reason| fail(RuleCode::AnswerSchema, reason))?;
    let skill = check_skill(trace, &answer, skills)?;
    check_sequence(trace)?;
    let attempts = attempts(trace);
    check_tools_allowed(&attempts, skill)?;
    check_single_tool_and_retry(&attempts)?;
    let calls = parse_calls(&attempts)?;
    let evidence = returned_evidence(&calls);
    check_feed_freshness(&calls)?;
    check_no_authority_claim(&answer)?;
    for (index, claim) in answer.claims.iter().enumerate() {
        check_claim(index, claim, &answer.answer, &evidence)?;
    }
    let Some(last_call) = calls.last() else {
        return fail(RuleCode::NoToolCall, "the trace records no tool call");
    };
    check_error_binding(&answer, last_call)?;
    check_no_data(&answer, &last_call.envelope)?;
    if mode == Mode::Submission {
        check_no_mock_evidence(&answer, &evidence)?;
    }
    Ok(())
}

// Rule 1.
fn check_skill<'s>(trace: &Trace, answer: &Answer, skills: &'s SkillSet) -> Check<&'s Skill> {
    let Some(first) = trace.entries.first() else {
        return fail(RuleCode::SkillNotActivated, "the trace is empty");
    };
    let (EntryKind::SkillActivation, Some(activated)) = (first.kind, first.skill.as_deref()) else {
        return fail(RuleCode::SkillNotActivated, "entry 1 is not a skill activation");
    };
    if answer.skill_name != activated {
        let reason = format!(
            "the answer names skill `{}` but `{}` was activated",
            one_line(&answer.skill_name),
            one_line(activated)
        );
        return fail(RuleCode::SkillMismatch, reason);
    }
    let Some(skill) = skills.get(activated) else {
        return fail(RuleCode::SkillMismatch, format!("skill `{}` is not loaded", one_line(activated)));
    };
    if !first.sha256.as_deref().is_some_and(|sha| sha.eq_ignore_ascii_case(&skill.sha256)) {
        return fail(
            RuleCode::SkillMismatch,
            format!("the activated file hash differs from skill `{}`", one_line(activated)),
        );
    }
    if let Some(position) =
        trace.entries.iter().skip(1).position(|entry| entry.kind == EntryKind::SkillActivation)
    {
        return fail(RuleCode::SkillMismatch, format!("entry {} activates a second skill", position + 2));
    }
    Ok(skill)
}

// Rule 2.
fn check_sequence(trace: &Trace) -> Check {
    for (index, entry) in trace.entries.iter().enumerate() {
        let position = index + 1;
        if entry.sequence != position as u64 {
            return fail(
                RuleCode::SequenceInvalid,
                format!("entry {position} has sequence {}", entry.sequence),
            );
        }
    }
    let mut attempts_so_far: HashMap<&str, u32> = HashMap::new();
    for attempt in attempts(trace) {
        let count = attempts_so_far.entry(attempt.tool()).or_insert(0);
        *count += 1;
        if attempt.entry.attempt != Some(*count) {
            let recorded =
                attempt.entry.attempt.map_or_else(|| "none".to_owned(), |number| number.to_string());
            let reason = format!(
                "entry {} records attempt {recorded} of `{}`, expected {count}",
                attempt.position,
                attempt.shown_tool()
            );
            return fail(RuleCode::SequenceInvalid, reason);
        }
    }
    Ok(())
}

fn attempts(trace: &Trace) -> Vec<Attempt<'_>> {
    trace
        .entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.is_attempt())
        .map(|(index, entry)| Attempt { position: index + 1, entry })
        .collect()
}

// Rule 3.
fn check_tools_allowed(attempts: &[Attempt<'_>], skill: &Skill) -> Check {
    if !attempts.iter().any(|attempt| attempt.entry.kind == EntryKind::ToolCall) {
        return fail(RuleCode::NoToolCall, "the trace records no tool call");
    }
    if let Some(attempt) = attempts.iter().find(|attempt| !skill.allows(attempt.tool())) {
        let reason = format!(
            "entry {} names `{}`, which skill `{}` does not allow",
            attempt.position,
            attempt.shown_tool(),
            one_line(&skill.name)
        );
        return fail(RuleCode::ToolNotAllowed, reason);
    }
    Ok(())
}

// Rule 4.
fn check_single_tool_and_retry(attempts: &[Attempt<'_>]) -> Check {
    if let [first, rest @ ..] = attempts
        && let Some(other) = rest.iter().find(|attempt| attempt.tool() != first.tool())
    {
        let reason = format!(
            "entry {} names `{}` after `{}`; an answer uses one tool",
            other.position,
            other.shown_tool(),
            first.shown_tool()
        );
        return fail(RuleCode::MultipleTools, reason);
    }
    if attempts.len() > 2 {
        return fail(RuleCode::RetryCeiling, format!("{} attempts; at most two are allowed", attempts.len()));
    }
    if let [first, second] = attempts
        && !is_retryable_error(first.entry.response.as_ref())
    {
        let reason = format!(
            "entry {} retries but entry {} did not return a retryable error",
            second.position, first.position
        );
        return fail(RuleCode::RetryWithoutRetryableError, reason);
    }
    Ok(())
}

fn is_retryable_error(response: Option<&Value>) -> bool {
    response
        .and_then(|value| Envelope::from_value(value).ok())
        .and_then(|envelope| envelope.error)
        .is_some_and(|error| error.retryable)
}

// Rule 5.
fn parse_calls<'t>(attempts: &[Attempt<'t>]) -> Check<Vec<Call<'t>>> {
    let calls = attempts.iter().filter(|attempt| attempt.entry.kind == EntryKind::ToolCall);
    let mut parsed = Vec::new();
    for attempt in calls {
        let envelope = match &attempt.entry.response {
            Some(response) => Envelope::from_value(response).map_err(|error| error.to_string()),
            None => Err("no response is recorded".to_owned()),
        };
        match envelope {
            Ok(envelope) => parsed.push(Call { position: attempt.position, tool: attempt.tool(), envelope }),
            Err(error) => {
                let reason =
                    format!("entry {} (`{}`): {}", attempt.position, attempt.shown_tool(), one_line(&error));
                return fail(RuleCode::InvalidEnvelope, reason);
            }
        }
    }
    Ok(parsed)
}

fn returned_evidence<'c>(calls: &'c [Call<'_>]) -> ReturnedEvidence<'c> {
    calls
        .iter()
        .filter(|call| call.envelope.is_success())
        .flat_map(|call| &call.envelope.evidence)
        .map(|item| (item.evidence_id.as_str(), item))
        .collect()
}

// Rule 6.
const FEED_TOOL: &str = "get_operator_feed";
const FRESHNESS_STATES: [&str; 3] = ["current", "stale", "unavailable"];

fn check_feed_freshness(calls: &[Call<'_>]) -> Check {
    for call in calls.iter().filter(|call| call.tool == FEED_TOOL) {
        let Some(data) = &call.envelope.data else { continue };
        if let Err(problem) = freshness_problem(data) {
            return fail(
                RuleCode::FeedFreshnessMissing,
                format!("entry {}: {FEED_TOOL} {problem}", call.position),
            );
        }
    }
    Ok(())
}

fn freshness_problem(data: &Map<String, Value>) -> Result<(), &'static str> {
    let freshness =
        data.get("freshness").and_then(Value::as_object).ok_or("data.freshness is not an object")?;
    let state = freshness.get("state").and_then(Value::as_str);
    if !state.is_some_and(|state| FRESHNESS_STATES.contains(&state)) {
        return Err("data.freshness.state is not current, stale or unavailable");
    }
    let read_at = freshness.get("readAt").and_then(Value::as_str);
    if read_at.and_then(parse_rfc3339).is_none() {
        return Err("data.freshness.readAt is not an RFC 3339 time");
    }
    Ok(())
}

// Rule 7.
fn check_no_authority_claim(answer: &Answer) -> Check {
    let uncertainty =
        answer.uncertainty.iter().enumerate().map(|(index, text)| (format!("uncertainty[{index}]"), text));
    for (field, text) in std::iter::once(("answer".to_owned(), &answer.answer)).chain(uncertainty) {
        if let Some(claim) = authority::find_claim(text) {
            return fail(
                RuleCode::MutationClaim,
                format!("{field} claims authority ({claim}); the liaison only reads"),
            );
        }
    }
    Ok(())
}

// Rule 8.
fn check_claim(index: usize, claim: &Claim, answer_text: &str, evidence: &ReturnedEvidence<'_>) -> Check {
    if !answer_text.to_lowercase().contains(&claim.text.to_lowercase()) {
        return fail(
            RuleCode::ClaimTextAbsent,
            format!("claims[{index}].text does not appear in the answer text"),
        );
    }
    if let Some(id) = claim.evidence_ids.iter().find(|id| !evidence.contains_key(id.as_str())) {
        let reason =
            format!("claims[{index}] cites `{}`, which no successful tool call returned", one_line(id));
        return fail(RuleCode::UnknownEvidence, reason);
    }
    if let Some(id) = claim.evidence_ids.iter().find(|id| !answer_text.contains(id.as_str())) {
        return fail(
            RuleCode::EvidenceNotDisplayed,
            format!("claims[{index}] cites `{}` but the answer does not show it", one_line(id)),
        );
    }
    let cites_a_record = claim
        .evidence_ids
        .iter()
        .any(|id| evidence.get(id.as_str()).is_some_and(|item| item.is_record_level()));
    if claim.kind == ClaimKind::Record && !cites_a_record {
        let reason = format!("claims[{index}] is a record claim but cites only dataset-level evidence");
        return fail(RuleCode::RecordClaimWithoutRecordEvidence, reason);
    }
    Ok(())
}

// Rule 9.
fn check_error_binding(answer: &Answer, last_call: &Call<'_>) -> Check {
    let position = last_call.position;
    match (&answer.error, &last_call.envelope.error) {
        (Some(_), None) => fail(
            RuleCode::ErrorNotBound,
            format!("an error answer, but the final call (entry {position}) succeeded"),
        ),
        (Some(stated), Some(returned)) => {
            if let Some(field) = first_difference(stated, returned) {
                let reason = format!("error.{field} differs from the final tool error (entry {position})");
                return fail(RuleCode::ErrorNotPreserved, reason);
            }
            if !answer.answer.contains(&returned.code) {
                return fail(
                    RuleCode::ErrorCodeNotDisplayed,
                    format!("the answer does not show `{}`", returned.code),
                );
            }
            Ok(())
        }
        (None, Some(returned)) => {
            let reason = format!(
                "a `{}` answer, but the final call (entry {position}) failed with `{}`",
                answer.status.as_str(),
                returned.code
            );
            fail(RuleCode::SuccessAfterError, reason)
        }
        (None, None) => Ok(()),
    }
}

fn first_difference(stated: &ErrorObject, returned: &ErrorObject) -> Option<&'static str> {
    [
        ("code", stated.code == returned.code),
        ("category", stated.category == returned.category),
        ("message", stated.message == returned.message),
        ("retryable", stated.retryable == returned.retryable),
    ]
    .into_iter()
    .find_map(|(field, same)| (!same).then_some(field))
}

// Rule 10.
const RECORD_LISTS: [&str; 6] = ["signals", "topPosts", "windows", "pendingItems", "recentPublished", "jobs"];

fn check_no_data(answer: &Answer, final_envelope: &Envelope) -> Check {
    if answer.status != AnswerStatus::NoData {
        return Ok(());
    }
    match final_envelope.data.as_ref().and_then(records_held) {
        Some(what) => fail(
            RuleCode::FalseNoData,
            format!("a `no_data` answer, but the final data holds records ({what})"),
        ),
        None => Ok(()),
    }
}

/// Names the first top-level key of `data` that shows records, if any.
fn records_held(data: &Map<String, Value>) -> Option<String> {
    if data.get("found") == Some(&Value::Bool(true)) {
        return Some("`found` is true".to_owned());
    }
    if data.get("count").and_then(Value::as_f64).is_some_and(|count| count > 0.0) {
        return Some("`count` is positive".to_owned());
    }
    RECORD_LISTS
        .into_iter()
        .find(|key| data.get(*key).and_then(Value::as_array).is_some_and(|list| !list.is_empty()))
        .map(|key| format!("`{key}` is not empty"))
}

// Rule 11.
fn check_no_mock_evidence(answer: &Answer, evidence: &ReturnedEvidence<'_>) -> Check {
    for (index, claim) in answer.claims.iter().enumerate() {
        let is_mock =
            |id: &&String| evidence.get(id.as_str()).is_some_and(|item| item.provenance == Provenance::Mock);
        if let Some(id) = claim.evidence_ids.iter().find(is_mock) {
            let reason = format!("claims[{index}] cites mock evidence `{}` in submission mode", one_line(id));
            return fail(RuleCode::MockEvidenceInSubmission, reason);
        }
    }
    Ok(())
}

/// The `mutation_claim` matcher: does a text claim authority it cannot have?
///
/// Deliberately simple and word-based. The text is split into sentences at
/// `.`, `!` or `?` followed by whitespace or the end, and at line breaks.
/// Each sentence is split into lowercase words at every character that is
/// neither alphanumeric nor an apostrophe (`’` counts as `'`), so
/// `waiting_approval` is two words and `can't` is one. A sentence claims
/// authority when:
/// - an actor word (first person, or `harmonia`) is followed within its
///   next four words by an authority verb, with no negation among the words
///   between them; or
/// - it holds the two-word phrase approval/publishing/publication/execution
///   + receipt(s).
///
/// `schedule` is also a noun ("our posting schedule"), so it counts only as
/// a verb: right after a non-possessive actor or after an auxiliary such as
/// `will`, `can` or `to` ("I'll schedule", "we can schedule"), and never
/// after `my`/`our`. A value reported without an actor
/// ("strategyApprovalState: approved") never matches.
pub mod authority {
    const ACTORS: [&str; 15] = [
        "i", "i'm", "i've", "i'll", "i'd", "me", "my", "we", "we're", "we've", "we'll", "we'd", "us", "our",
        "harmonia",
    ];
    const POSSESSIVE_ACTORS: [&str; 2] = ["my", "our"];
    const VERBS: [&str; 17] = [
        "approved",
        "approve",
        "approves",
        "rejected",
        "reject",
        "published",
        "publish",
        "publishes",
        "executed",
        "execute",
        "scheduled",
        "verified",
        "verify",
        "authorized",
        "authorised",
        "authorize",
        "authorise",
    ];
    const SCHEDULE: &str = "schedule";
    const AUXILIARIES: [&str; 14] = [
        "will", "would", "shall", "should", "can", "could", "may", "might", "must", "to", "do", "did",
        "also", "just",
    ];
    const NEGATIONS: [&str; 9] =
        ["not", "never", "cannot", "can't", "don't", "didn't", "won't", "haven't", "hasn't"];
    const RECEIPT_KINDS: [&str; 4] = ["approval", "publishing", "publication", "execution"];
    const RECEIPT_WORDS: [&str; 2] = ["receipt", "receipts"];
    /// How many words after the actor may hold the verb.
    const WINDOW: usize = 4;

    /// Describes the first authority claim in `text`, e.g. "`we` … `published`".
    pub fn find_claim(text: &str) -> Option<String> {
        sentences(text).into_iter().find_map(|sentence| {
            let words = words(sentence);
            receipt_phrase(&words).or_else(|| actor_with_verb(&words))
        })
    }

    fn sentences(text: &str) -> Vec<&str> {
        let mut sentences = Vec::new();
        let mut start = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((index, character)) = chars.next() {
            let at_break = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
            if character == '\n' || (matches!(character, '.' | '!' | '?') && at_break) {
                sentences.push(&text[start..index]);
                start = index + character.len_utf8();
            }
        }
        sentences.push(&text[start..]);
        sentences
    }

    fn words(sentence: &str) -> Vec<String> {
        sentence
            .to_lowercase()
            .replace(['\u{2019}', '\u{2018}'], "'")
            .split(|character: char| !character.is_alphanumeric() && character != '\'')
            .map(|word| word.trim_matches('\''))
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn receipt_phrase(words: &[String]) -> Option<String> {
        words
            .windows(2)
            .find(|pair| {
                RECEIPT_KINDS.contains(&pair[0].as_str()) && RECEIPT_WORDS.contains(&pair[1].as_str())
            })
            .map(|pair| format!("`{} {}`", pair[0], pair[1]))
    }

    fn actor_with_verb(words: &[String]) -> Option<String> {
        let mut actors = words.iter().enumerate().filter(|(_, word)| ACTORS.contains(&word.as_str()));
        actors.find_map(|(actor_index, actor)| {
            let following = words.iter().enumerate().skip(actor_index + 1).take(WINDOW);
            following
                .take_while(|(_, word)| !is_negation(word))
                .find(|(index, _)| is_authority_verb(words, *index, actor_index))
                .map(|(_, verb)| format!("`{actor}` … `{verb}`"))
        })
    }

    fn is_negation(word: &str) -> bool {
        NEGATIONS.contains(&word) || word.ends_with("n't")
    }

    fn is_authority_verb(words: &[String], index: usize, actor_index: usize) -> bool {
        let word = words[index].as_str();
        if word != SCHEDULE {
            return VERBS.contains(&word);
        }
        let actor_is_subject = !POSSESSIVE_ACTORS.contains(&words[actor_index].as_str());
        let previous = words[index - 1].as_str();
        actor_is_subject && (index == actor_index + 1 || AUXILIARIES.contains(&previous))
    }
}

#[cfg(test)]
mod tests {
    use super::authority::find_claim;
    use super::*;
    use crate::contract::{Category, DEPENDENCY_UNAVAILABLE, JOB_NOT_FOUND, StableCode, TOOL_TIMEOUT};
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
        TraceEntry {
            skill: Some(skill.name),
            sha256: Some(skill.sha256),
            ..entry(EntryKind::SkillActivation)
        }
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
        assert_eq!(RuleCode::ALL.len(), 23);
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
        let data = object(
            json!({"pendingItems": [], "recentPublished": [], "jobHealth": {"active": 0, "failed": 0},
            "goals": [], "freshness": {"state": "current", "readAt": "2026-11-30T09:00:00Z"}, "count": 0}),
        );
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

        let second =
            trace(vec![activation(JOB_SKILL), activation(JOB_SKILL), call(JOB_TOOL, 1, job_success())]);
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
    fn a_malformed_retryable_error_does_not_license_a_retry() {
        let mut malformed = failure(&DEPENDENCY_UNAVAILABLE);
        malformed["error"]["extra"] = json!(1);
        let trace = trace(vec![
            activation(JOB_SKILL),
            call(JOB_TOOL, 1, malformed),
            call(JOB_TOOL, 2, job_success()),
        ]);
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
        assert!(
            verdict.reason.as_deref().is_some_and(|reason| reason.starts_with("entry 2 (`get_job_status`)"))
        );
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
            json!(format!("Job job-42 is waiting ({}). We have published the thread.", job_id()));
        let verdict = check(&job_trace(job_success()), &answer);
        assert_eq!(
            verdict.reason.as_deref(),
            Some("answer claims authority (`we` … `published`); the liaison only reads")
        );
        assert_rejected(verdict, RuleCode::MutationClaim);

        let mut in_uncertainty = grounded_answer();
        in_uncertainty["uncertainty"] = json!(["Fine.", "Harmonia approved the draft"]);
        let verdict = check(&job_trace(job_success()), &in_uncertainty);
        assert!(
            verdict
                .reason
                .as_deref()
                .is_some_and(|reason| reason.starts_with("uncertainty[1] claims authority"))
        );
        assert_rejected(verdict, RuleCode::MutationClaim);
    }

    #[test]
    fn authority_matcher_flags_claims_of_effects() {
        for text in [
            "We have published the thread",
            "Harmonia approved the draft",
            "I scheduled it for 14:00",
            "I've verified the receipts",
            "Done. I’ll approve it now.",
            "I have already formally approved act-1",
            "We will schedule the post for Monday",
            "Let me schedule that",
            "Our team rejected the draft",
            "The approval receipt is attached",
            "Two Publication Receipts were issued",
            "There is an execution-receipt for act-1",
            "The job is fine.\nWe executed act-2",
        ] {
            assert!(find_claim(text).is_some(), "should flag: {text:?}");
        }
    }

    #[test]
    fn authority_matcher_passes_reports_and_negations() {
        for text in [
            "I have not approved anything",
            "We cannot publish on your behalf",
            "I can't verify that the action ran",
            "I didn’t schedule anything",
            "The job status is waiting_approval and act-1 is not verified",
            "Job job-42: strategyApprovalState approved",
            "The draft was approved by the operator",
            "I read the feed. Approved drafts: 2",
            "I read the job and its four actions were approved",
            "Our posting schedule favours 14:00 UTC",
            "My schedule suggestion is 09:00-10:00 UTC",
            "I suggest you schedule the post at 14:00 UTC",
            "The job has 2 receipts awaiting approval",
            "Receipt count: 0. Execution is pending",
            "The job was approved. Receipts: 3",
        ] {
            assert_eq!(find_claim(text), None, "should pass: {text:?}");
        }
    }

    // Rule 8.

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
        let first = json!({"text": "job-42", "kind": "record", "evidenceIds": ["ev-ffffffffffffffff"]});
        let second = json!({"text": "absent text", "kind": "record", "evidenceIds": [job_id()]});
        answer["claims"] = json!([first, second]);
        let verdict = check(&job_trace(job_success()), &answer);
        assert!(verdict.reason.as_deref().is_some_and(|reason| reason.starts_with("claims[0]")));
        assert_rejected(verdict, RuleCode::UnknownEvidence);
    }

    // Rule 9.

    #[test]
    fn error_not_bound() {
        assert_rejected(
            check(&job_trace(job_success()), &error_answer(&JOB_NOT_FOUND)),
            RuleCode::ErrorNotBound,
        );
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
        assert_rejected(
            check(&job_trace(job_success()), &no_data_answer("job-status")),
            RuleCode::FalseNoData,
        );
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
        for data in [json!({"found": false}), json!({"count": 0, "signals": []}), json!({"jobs": "none"})] {
            let trace = job_trace(Envelope::success(object(data.clone()), Vec::new()).to_value());
            assert!(check(&trace, &no_data_answer("job-status")).accepted, "{data}");
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

        // An authority claim and an absent claim text: rule 7 before rule 8.
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
}
