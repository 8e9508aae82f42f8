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
//!    quotation of the source, not a claim; a reported state ("act-1 was
//!    published") inside a claim whose cited evidence carries it is the
//!    data's, not the liaison's. When the liaison acts and the act is
//!    done or under way, any verb outside the allow-list of reading and
//!    reporting acts is a claim. Then `unsupported_language`: the same
//!    fields hold no stretch, however short, in a language without a
//!    lexicon (proper names and tool data quoted in any language aside).
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
//!
//! Parts: this module is the pipeline and the checks; `rule_code` the
//! rules and their stable codes; [`tool_facts`] the only facts about named
//! tools the rules use; `tests` the rule-by-rule tests.

mod rule_code;
pub mod tool_facts;

pub use rule_code::{RuleCode, UnknownRuleCode};
use tool_facts::{FEED_TOOL, FRESHNESS_STATES};

use crate::envelope::{Envelope, ErrorObject, EvidenceItem, Provenance};
use crate::liaison::answer::{Answer, AnswerStatus, Claim, ClaimKind, one_line};
use crate::liaison::attempts::{Attempts, Outcome};
use crate::liaison::grounding;
use crate::liaison::mutation;
use crate::liaison::skills::{Skill, SkillSet};
use crate::liaison::trace::{EntryKind, Trace, TraceEntry};
use crate::time::parse_rfc3339;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Which rules apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every rule except the submission-only one.
    #[default]
    Review,
    /// Every rule, including: no claim may cite mock evidence.
    Submission,
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
/// outcome of checking its seal (see `liaison::seal`). In
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

/// An evidence item a successful call returned, with that call's data
/// and its position among the calls.
struct Returned<'c> {
    item: &'c EvidenceItem,
    data: Option<&'c Map<String, Value>>,
    call: usize,
}

/// Evidence items returned by successful calls, by id.
type ReturnedEvidence<'c> = HashMap<&'c str, Returned<'c>>;

fn check_all(trace: &Trace, answer: &Value, skills: &SkillSet, mode: Mode) -> Check {
    let answer = Answer::parse(answer).or_else(|error| fail(RuleCode::AnswerSchema, error.to_string()))?;
    let skill = check_skill(trace, &answer, skills)?;
    check_sequence(trace)?;
    let attempts = attempts(trace);
    check_tools_allowed(&attempts, skill)?;
    check_single_tool_and_retry(&attempts)?;
    let calls = parse_calls(&attempts)?;
    let evidence = returned_evidence(&calls);
    check_feed_freshness(&calls)?;
    check_no_mutation_claim(&answer, &calls, &evidence)?;
    let records = record_index(&answer, &calls, &evidence);
    for (index, claim) in answer.claims.iter().enumerate() {
        check_claim(index, claim, &answer.answer, &evidence, &records)?;
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
        .enumerate()
        .filter(|(_, call)| call.envelope.is_success())
        .flat_map(|(position, call)| {
            let data = call.envelope.data.as_ref();
            call.envelope
                .evidence
                .iter()
                .map(move |item| (item.evidence_id.as_str(), Returned { item, data, call: position }))
        })
        .collect()
}

/// The records the answer's record claims cite, indexed in one pass over
/// each call's data (rule 8 then costs the data's size once, whatever
/// the number of claims and citations).
fn record_index<'c>(
    answer: &Answer,
    calls: &'c [Call<'_>],
    evidence: &ReturnedEvidence<'c>,
) -> grounding::RecordIndex<'c> {
    let references: std::collections::HashSet<&'c str> = answer
        .claims
        .iter()
        .filter(|claim| claim.kind == ClaimKind::Record)
        .flat_map(|claim| claim.evidence_ids.iter())
        .filter_map(|id| evidence.get(id.as_str()))
        .filter_map(|returned| returned.item.reference.as_deref())
        .collect();
    let data: Vec<Option<&'c Map<String, Value>>> =
        calls.iter().map(|call| call.envelope.data.as_ref().filter(|_| call.envelope.is_success())).collect();
    grounding::RecordIndex::new(&data, &references)
}

// Rule 6.
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

// Rule 7, then its language rule.
fn check_no_mutation_claim(answer: &Answer, calls: &[Call<'_>], evidence: &ReturnedEvidence<'_>) -> Check {
    let mut quotations = Vec::new();
    for call in calls.iter().filter(|call| call.envelope.is_success()) {
        if let Some(data) = &call.envelope.data {
            data.values().for_each(|value| collect_strings(value, &mut quotations));
        }
    }
    let groundings = groundings(answer, evidence);
    let claims = answer
        .claims
        .iter()
        .enumerate()
        .map(|(index, claim)| (format!("claims[{index}].text"), &claim.text, index));
    let uncertainty = answer
        .uncertainty
        .iter()
        .enumerate()
        .map(|(index, text)| (format!("uncertainty[{index}]"), text, usize::MAX));
    let fields: Vec<(String, &String, usize)> =
        std::iter::once(("answer".to_owned(), &answer.answer, usize::MAX))
            .chain(claims)
            .chain(uncertainty)
            .collect();
    for (field, text, claim) in &fields {
        // The answer is grounded by every claim; a claim's text by its own
        // evidence; an uncertainty note by none.
        let groundings = match (field.as_str(), groundings.get(*claim)) {
            ("answer", _) => &groundings[..],
            (_, Some(own)) => std::slice::from_ref(own),
            _ => &[],
        };
        let context = mutation::Context { quotations: &quotations, groundings };
        if let Some(found) = mutation::find_in(text, &context) {
            let reason = format!(
                "{field} claims an effect (`{}`, {}); the liaison only reads",
                one_line(&found.phrase),
                found.frame
            );
            return fail(RuleCode::MutationClaim, reason);
        }
    }
    let language = mutation::LanguageCheck::new(&quotations);
    for (field, text, _) in &fields {
        if let Some(foreign) = language.find(text) {
            let reason = format!(
                "{field} is in {} (`{}`); the validator judges English only",
                foreign.language,
                one_line(&foreign.phrase)
            );
            return fail(RuleCode::UnsupportedLanguage, reason);
        }
    }
    Ok(())
}

/// Each claim and what its cited evidence carries: the evidence items'
/// sources and every key and string of the data of the calls that
/// returned them. Each call's data is collected once, whatever the claims,
/// and read only if a claim's text asks.
fn groundings<'d>(answer: &'d Answer, evidence: &ReturnedEvidence<'d>) -> Vec<mutation::Grounding<'d>> {
    let mut by_call: HashMap<*const Map<String, Value>, Arc<mutation::Carried<'d>>> = HashMap::new();
    answer
        .claims
        .iter()
        .map(|claim| {
            let mut carried = Vec::new();
            for returned in claim.evidence_ids.iter().filter_map(|id| evidence.get(id.as_str())) {
                carried.push(Arc::new(mutation::Carried::source(returned.item.source.as_str())));
                if let Some(data) = returned.data {
                    let call = by_call.entry(std::ptr::from_ref(data)).or_insert_with(|| {
                        let mut strings = Vec::new();
                        collect_keys_and_strings(data, &mut strings);
                        Arc::new(mutation::Carried::data(strings))
                    });
                    carried.push(Arc::clone(call));
                }
            }
            mutation::Grounding::citing(&claim.text, carried)
        })
        .collect()
}

fn collect_keys_and_strings<'v>(data: &'v Map<String, Value>, strings: &mut Vec<&'v str>) {
    for (key, value) in data {
        strings.push(key);
        match value {
            Value::Object(map) => collect_keys_and_strings(map, strings),
            Value::Array(items) => items.iter().for_each(|item| match item {
                Value::Object(map) => collect_keys_and_strings(map, strings),
                other => collect_strings(other, strings),
            }),
            other => collect_strings(other, strings),
        }
    }
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
fn check_claim(
    index: usize,
    claim: &Claim,
    answer_text: &str,
    evidence: &ReturnedEvidence<'_>,
    records: &grounding::RecordIndex<'_>,
) -> Check {
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
    let cited: Vec<(&str, &Returned<'_>)> = claim
        .evidence_ids
        .iter()
        .filter_map(|id| evidence.get(id.as_str()))
        .filter_map(|returned| returned.item.reference.as_deref().map(|reference| (reference, returned)))
        .collect();
    if cited.is_empty() {
        let reason = format!("claims[{index}] is a record claim but cites only dataset-level evidence");
        return fail(RuleCode::RecordClaimWithoutRecordEvidence, reason);
    }
    let named =
        cited.iter().any(|(reference, returned)| records.names(&claim.text, returned.call, reference));
    if !named {
        let reason = format!(
            "claims[{index}] is a record claim but names nothing of the record it cites (`{}`)",
            one_line(cited[0].0)
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
mod tests;
