//! The answer validator (docs/contract.md §5): binds the liaison's final answer
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
//! 4. `multiple_tools`, `retry_ceiling`, `retry_without_retryable_error`,
//!    `retry_arguments_changed`: one tool, at most two attempts, and a
//!    second attempt only directly after a valid error envelope whose
//!    `retryable` is true, repeating its arguments. The session's guard
//!    decides with the same function ([`super::attempts`]).
//! 5. `invalid_envelope`: every `tool_call` response is a valid envelope.
//! 6. `feed_freshness_missing`: `get_operator_feed` successes carry
//!    `freshness.state` and an RFC 3339 `freshness.readAt`.
//! 7. `mutation_claim`: the answer text, every claim's text and every
//!    uncertainty note claim no effect the read-only liaison cannot have
//!    (see [`crate::liaison::mutation`] for the detector's design); the
//!    reason names the field and the matched phrase. A span in double
//!    quotes that repeats a string a successful call returned is a
//!    quotation of the source, not a claim.
//! 8. Per claim, in order: `claim_text_absent` (the text must occur in the
//!    answer at word boundaries), `unknown_evidence`,
//!    `evidence_not_displayed`, `record_claim_without_record_evidence` (a
//!    record claim cites record-level evidence and names that record: its
//!    reference or one of its values). Then, for a `success` answer,
//!    `unclaimed_fact`: every number, id or data value the answer states
//!    lies inside a claim's text. [`super::grounding`] says exactly what
//!    counts; a claim's floor of three words is part of the answer schema.
//! 9. `error_not_bound`, `error_not_preserved`, `error_code_not_displayed`,
//!    `success_after_error`: the status agrees with the final `tool_call`.
//! 10. `false_no_data`: `no_data` only when the final data holds no records,
//!     judged from its shape so plugins are covered: `found: true`, a
//!     non-empty list or a positive number anywhere in the data, nested
//!     objects included.
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
//! - Any positive number in the final data shows records (`count: 2`,
//!   `jobHealth.failed: 1`): a tool that finds nothing reports zeros.
//! - Reasons name entries by their 1-based position in the trace.

use crate::envelope::{Envelope, ErrorObject, EvidenceItem, Provenance};
use crate::liaison::answer::{Answer, AnswerStatus, Claim, ClaimKind, one_line};
use crate::liaison::attempts::{Attempts, Outcome};
use crate::liaison::grounding;
use crate::liaison::mutation;
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
    /// A second attempt whose arguments differ from the failed call's.
    RetryArgumentsChanged => "retry_arguments_changed",
    /// A recorded tool response is not a valid envelope.
    InvalidEnvelope => "invalid_envelope",
    /// An operator feed success lacks a valid freshness.
    FeedFreshnessMissing => "feed_freshness_missing",
    /// The answer, a claim or an uncertainty note claims an effect the liaison cannot have.
    MutationClaim => "mutation_claim",
    /// A claim's text is not in the answer.
    ClaimTextAbsent => "claim_text_absent",
    /// A claim cites an id no successful call returned.
    UnknownEvidence => "unknown_evidence",
    /// A claim cites an id the answer text does not show.
    EvidenceNotDisplayed => "evidence_not_displayed",
    /// A record claim cites only dataset-level evidence, or names nothing of the records it cites.
    RecordClaimWithoutRecordEvidence => "record_claim_without_record_evidence",
    /// A success answer states a number, id or data value outside every claim.
    UnclaimedFact => "unclaimed_fact",
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

/// An evidence item a successful call returned, with that call's data.
struct Returned<'c> {
    item: &'c EvidenceItem,
    data: Option<&'c Map<String, Value>>,
}

/// Evidence items returned by successful calls, by id.
type ReturnedEvidence<'c> = HashMap<&'c str, Returned<'c>>;

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
    check_no_mutation_claim(&answer, &calls)?;
    for (index, claim) in answer.claims.iter().enumerate() {
        check_claim(index, claim, &answer.answer, &evidence)?;
    }
    check_facts_claimed(&answer, &calls)?;
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

// Rule 4: each attempt through the guard's own decision; the earliest
// rule in the contract's order wins, then the earliest entry.
fn check_single_tool_and_retry(attempts: &[Attempt<'_>]) -> Check {
    let mut so_far = Attempts::default();
    let mut broken: Option<(usize, RuleCode, usize)> = None;
    for (index, attempt) in attempts.iter().enumerate() {
        let args = attempt.entry.args.as_ref().unwrap_or(&Value::Null);
        if let Err(rule) = so_far.check(attempt.tool(), args) {
            let order = RuleCode::ALL.iter().position(|known| *known == rule).unwrap_or(usize::MAX);
            if broken.is_none_or(|(earliest, _, _)| order < earliest) {
                broken = Some((order, rule, index));
            }
        }
        let outcome = match (&attempt.entry.kind, &attempt.entry.response) {
            (EntryKind::ToolCall, Some(response)) => Outcome::Called(response),
            _ => Outcome::Refused,
        };
        so_far.record(attempt.tool(), args, outcome);
    }
    let Some((_, rule, index)) = broken else { return Ok(()) };
    let (first, this) = (&attempts[0], &attempts[index]);
    let reason = match rule {
        RuleCode::MultipleTools => format!(
            "entry {} names `{}` after `{}`; an answer uses one tool",
            this.position,
            this.shown_tool(),
            first.shown_tool()
        ),
        RuleCode::RetryCeiling => format!("{} attempts; at most two are allowed", attempts.len()),
        RuleCode::RetryArgumentsChanged => format!(
            "entry {} retries with other arguments than entry {}; a retry repeats the failed call",
            this.position, first.position
        ),
        _ => format!(
            "entry {} retries but entry {} did not return a retryable error",
            this.position, first.position
        ),
    };
    fail(rule, reason)
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
        .flat_map(|call| {
            let data = call.envelope.data.as_ref();
            call.envelope
                .evidence
                .iter()
                .map(move |item| (item.evidence_id.as_str(), Returned { item, data }))
        })
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
fn check_no_mutation_claim(answer: &Answer, calls: &[Call<'_>]) -> Check {
    let mut quotations = Vec::new();
    for call in calls.iter().filter(|call| call.envelope.is_success()) {
        if let Some(data) = &call.envelope.data {
            data.values().for_each(|value| collect_strings(value, &mut quotations));
        }
    }
    let claims =
        answer.claims.iter().enumerate().map(|(index, claim)| (format!("claims[{index}].text"), &claim.text));
    let uncertainty =
        answer.uncertainty.iter().enumerate().map(|(index, text)| (format!("uncertainty[{index}]"), text));
    let fields = std::iter::once(("answer".to_owned(), &answer.answer)).chain(claims).chain(uncertainty);
    for (field, text) in fields {
        if let Some(found) = mutation::find_outside_quotations(text, &quotations) {
            let reason =
                format!("{field} claims an effect (`{}`); the liaison only reads", one_line(&found.phrase));
            return fail(RuleCode::MutationClaim, reason);
        }
    }
    Ok(())
}

/// Every string in `value`: what a tool returned, which the answer may quote.
fn collect_strings<'v>(value: &'v Value, strings: &mut Vec<&'v str>) {
    match value {
        Value::String(text) => strings.push(text),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, strings)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, strings)),
        _ => {}
    }
}

// Rule 8.
fn check_claim(index: usize, claim: &Claim, answer_text: &str, evidence: &ReturnedEvidence<'_>) -> Check {
    if grounding::occurrences(&answer_text.to_lowercase(), &claim.text.to_lowercase()).is_empty() {
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
    if claim.kind != ClaimKind::Record {
        return Ok(());
    }
    let records: Vec<(&str, &Returned<'_>)> = claim
        .evidence_ids
        .iter()
        .filter_map(|id| evidence.get(id.as_str()))
        .filter_map(|returned| returned.item.reference.as_deref().map(|reference| (reference, returned)))
        .collect();
    if records.is_empty() {
        let reason = format!("claims[{index}] is a record claim but cites only dataset-level evidence");
        return fail(RuleCode::RecordClaimWithoutRecordEvidence, reason);
    }
    let named = records.iter().any(|(reference, returned)| {
        grounding::names_any(&claim.text, &grounding::record_names(returned.data, reference))
    });
    if !named {
        let reason = format!(
            "claims[{index}] is a record claim but names nothing of the record it cites (`{}`)",
            one_line(records[0].0)
        );
        return fail(RuleCode::RecordClaimWithoutRecordEvidence, reason);
    }
    Ok(())
}

// Rule 8, after the claims: a success answer states no fact outside them.
fn check_facts_claimed(answer: &Answer, calls: &[Call<'_>]) -> Check {
    if answer.status != AnswerStatus::Success {
        return Ok(());
    }
    let claims: Vec<&str> = answer.claims.iter().map(|claim| claim.text.as_str()).collect();
    let data =
        calls.iter().filter(|call| call.envelope.is_success()).filter_map(|call| call.envelope.data.as_ref());
    match grounding::unclaimed_fact(&answer.answer, &claims, data) {
        Some(fact) => fail(
            RuleCode::UnclaimedFact,
            format!(
                "sentence {} states `{}` outside every claim; each fact from the data needs a claim",
                fact.sentence,
                one_line(&fact.word)
            ),
        ),
        None => Ok(()),
    }
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

/// Names the first place, in document order at any depth, where `data`
/// shows records: `found: true`, a non-empty list or a positive number.
fn records_held(data: &Map<String, Value>) -> Option<String> {
    // Depth-first with an explicit stack; `path` holds the keys down to the
    // entry being looked at.
    let mut stack: Vec<(usize, &str, &Value)> =
        data.iter().rev().map(|(key, value)| (0, key.as_str(), value)).collect();
    let mut path: Vec<&str> = Vec::new();
    while let Some((depth, key, value)) = stack.pop() {
        path.truncate(depth);
        path.push(key);
        let shown = || format!("`{}`", one_line(&path.join(".")));
        match value {
            Value::Bool(true) if key == "found" => return Some(format!("{} is true", shown())),
            Value::Array(items) if !items.is_empty() => return Some(format!("{} is not empty", shown())),
            Value::Number(number) if number.as_f64().is_some_and(|number| number > 0.0) => {
                return Some(format!("{} is {number}", shown()));
            }
            Value::Object(object) => {
                stack.extend(object.iter().rev().map(|(key, value)| (depth + 1, key.as_str(), value)));
            }
            _ => {}
        }
    }
    None
}

// Rule 11.
fn check_no_mock_evidence(answer: &Answer, evidence: &ReturnedEvidence<'_>) -> Check {
    for (index, claim) in answer.claims.iter().enumerate() {
        let is_mock = |id: &&String| {
            evidence.get(id.as_str()).is_some_and(|returned| returned.item.provenance == Provenance::Mock)
        };
        if let Some(id) = claim.evidence_ids.iter().find(is_mock) {
            let reason = format!("claims[{index}] cites mock evidence `{}` in submission mode", one_line(id));
            return fail(RuleCode::MockEvidenceInSubmission, reason);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        assert_eq!(RuleCode::ALL.len(), 25);
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
            json!(format!("Job job-42 is waiting ({}). We have\npub\u{200B}lished the thread.", job_id()));
        let verdict = check(&job_trace(job_success()), &answer);
        assert_eq!(
            verdict.reason.as_deref(),
            Some("answer claims an effect (`we have published`); the liaison only reads")
        );
        assert_rejected(verdict, RuleCode::MutationClaim);

        let mut in_uncertainty = grounded_answer();
        in_uncertainty["uncertainty"] = json!(["Fine.", "act-1 was approved by H\u{0430}rmonia"]);
        let verdict = check(&job_trace(job_success()), &in_uncertainty);
        assert_eq!(
            verdict.reason.as_deref(),
            Some("uncertainty[1] claims an effect (`approved by harmonia`); the liaison only reads")
        );
        assert_rejected(verdict, RuleCode::MutationClaim);
    }

    #[test]
    fn mutation_claim_in_a_claim_text() {
        // The answer denies the effect; the claim, cut out of it, asserts it.
        let mut answer = grounded_answer();
        answer["answer"] =
            json!(format!("Job job-42 is waiting ({}). Nothing was approved by me.", job_id()));
        answer["claims"] = json!([{"text": "approved by me", "kind": "record", "evidenceIds": [job_id()]}]);
        let verdict = check(&job_trace(job_success()), &answer);
        assert_eq!(
            verdict.reason.as_deref(),
            Some("claims[0].text claims an effect (`approved by me`); the liaison only reads")
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
        answer["answer"] =
            json!(format!("Job job-42 is waiting for approval ({}). It has 99 drafts.", job_id()));
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
        let first =
            json!({"text": "job job-42 is", "kind": "record", "evidenceIds": ["ev-ffffffffffffffff"]});
        let second = json!({"text": "some absent text", "kind": "record", "evidenceIds": [job_id()]});
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
}
