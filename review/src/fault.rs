//! Where a refusal points: the phrase, claim, note, trace entry or error
//! that broke the rule, so the page can mark it in place.
//!
//! The phrase of `mutation_claim` and the fact of `unclaimed_fact` are
//! found again with the contract's own detector and grounding functions
//! (see [`crate::marks`]). Everything else is read from the verdict's
//! reason, whose wording the validator keeps stable: claims are named
//! `claims[i]`, trace entries `entry n` (docs/contract.md §5.0.6). Only
//! the first [`MAX_MARKED_CLAIMS`] claims are looked for in the text.

use crate::bound::MAX_MARKED_CLAIMS;
use crate::marks;
use crate::view::{AnswerView, returned_data};
use harmonia_contract::liaison::grounding;
use harmonia_contract::liaison::trace::{EntryKind, Trace};
use harmonia_contract::liaison::validator::{RuleCode, Verdict};
use std::ops::Range;

/// The place a refusal is about. Several fields may be set (a claim and
/// its phrase in the answer text).
#[derive(Debug, Default)]
pub struct Fault {
    /// The rule code, when the answer was refused.
    pub rule: Option<&'static str>,
    /// A span of the answer text.
    pub in_text: Option<Range<usize>>,
    /// A claim, 0-based.
    pub claim: Option<usize>,
    /// An uncertainty note, 0-based, and the span in it.
    pub uncertainty: Option<(usize, Option<Range<usize>>)>,
    /// A trace entry, 1-based.
    pub entry: Option<usize>,
    /// The error path (the answer's error against the tool's).
    pub error_path: bool,
    /// The seal.
    pub seal: bool,
}

/// The first number after `prefix` in `reason`.
fn number_after(reason: &str, prefix: &str) -> Option<usize> {
    let (_, rest) = reason.split_once(prefix)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The field a reason is about and the phrase it quotes:
/// "claims[1].text claims an effect (`we approved`, ...)" (docs/contract.md §5.7).
fn field_and_phrase(reason: &str) -> Option<(Field, &str)> {
    let field = if reason.starts_with("answer ") {
        Field::Answer
    } else if reason.starts_with("claims[") {
        Field::Claim(number_after(reason, "claims[")?)
    } else if reason.starts_with("uncertainty[") {
        Field::Uncertainty(number_after(reason, "uncertainty[")?)
    } else {
        return None;
    };
    let (_, quoted) = reason.split_once("(`")?;
    let (phrase, _) = quoted.split_once('`')?;
    Some((field, phrase))
}

/// A field of the answer.
enum Field {
    Answer,
    Claim(usize),
    Uncertainty(usize),
}

/// Mark the phrase the reason quotes in the field it names; a claim's
/// phrase is marked where the claim stands in the answer text.
fn locate_phrase(fault: &mut Fault, reason: &str, answer: &AnswerView<'_>, effect: bool) {
    let Some((field, phrase)) = field_and_phrase(reason) else { return };
    let text = answer.text.unwrap_or("");
    match field {
        Field::Answer => fault.in_text = marks::phrase_span(text, phrase, effect),
        Field::Claim(index) => {
            let Some(claim) = answer.claims.get(index).and_then(|claim| claim.text) else { return };
            let texts: Vec<Option<&str>> =
                answer.claims.iter().take(MAX_MARKED_CLAIMS).map(|claim| claim.text).collect();
            let start = marks::claim_spans(&marks::Folded::new(text), &texts)
                .get(index)
                .cloned()
                .flatten()
                .map(|span| span.start);
            let within = marks::phrase_span(claim, phrase, effect);
            fault.in_text = within.zip(start).map(|(span, start)| span.start + start..span.end + start);
        }
        Field::Uncertainty(index) => {
            if let Some(note) = answer.uncertainty.get(index) {
                fault.uncertainty = Some((index, marks::phrase_span(note, phrase, effect)));
            }
        }
    }
}

/// Where `verdict` points, in `answer` and `trace`.
pub fn locate(verdict: &Verdict, answer: &AnswerView<'_>, trace: &Trace) -> Fault {
    let Some(rule) = verdict.rule else { return Fault::default() };
    let reason = verdict.reason.as_deref().unwrap_or("");
    let mut fault = Fault { rule: Some(rule.as_str()), ..Fault::default() };
    fault.claim = number_after(reason, "claims[");
    fault.entry = number_after(reason, "entry ").filter(|entry| (1..=trace.entries.len()).contains(entry));
    let text = answer.text.unwrap_or("");
    let claim_spans = || {
        let texts: Vec<Option<&str>> =
            answer.claims.iter().take(MAX_MARKED_CLAIMS).map(|claim| claim.text).collect();
        marks::claim_spans(&marks::Folded::new(text), &texts)
    };
    match rule {
        RuleCode::TraceUnverified => fault.seal = true,
        // "3 attempts; at most two are allowed": the third is the one past the ceiling.
        RuleCode::RetryCeiling => {
            fault.entry = trace
                .entries
                .iter()
                .enumerate()
                .filter(|(_, entry)| entry.is_attempt())
                .nth(2)
                .map(|(at, _)| at + 1);
        }
        RuleCode::SkillNotActivated | RuleCode::SkillMismatch if fault.entry.is_none() => {
            fault.entry = (!trace.entries.is_empty()).then_some(1);
        }
        RuleCode::MutationClaim => locate_phrase(&mut fault, reason, answer, true),
        // The language rule another change adds quotes its stretch the same
        // way; named by its code so this compiles with or without it.
        _ if rule.as_str() == "unsupported_language" => locate_phrase(&mut fault, reason, answer, false),
        RuleCode::UnclaimedFact => {
            let claims: Vec<&str> = answer.claims.iter().filter_map(|claim| claim.text).collect();
            let data = returned_data(trace);
            if let Some(fact) = grounding::unclaimed_fact(text, &claims, data) {
                fault.in_text = marks::fact_span(text, &fact);
            }
        }
        RuleCode::ErrorNotBound
        | RuleCode::ErrorNotPreserved
        | RuleCode::ErrorCodeNotDisplayed
        | RuleCode::SuccessAfterError
        | RuleCode::FalseNoData => {
            fault.error_path = rule != RuleCode::FalseNoData;
            if fault.entry.is_none() {
                fault.entry = trace
                    .entries
                    .iter()
                    .rposition(|entry| entry.kind == EntryKind::ToolCall)
                    .map(|at| at + 1);
            }
        }
        _ => {}
    }
    // A claim's own fault is marked where the claim stands in the text.
    if let (Some(index), None) = (fault.claim, &fault.in_text) {
        fault.in_text = claim_spans().get(index).cloned().flatten();
    }
    fault
}

#[cfg(test)]
mod tests {
    use super::{Field, field_and_phrase, number_after};

    #[test]
    fn numbers_are_read_from_the_reasons_wording() {
        assert_eq!(number_after("claims[12] cites `ev-1`", "claims["), Some(12));
        assert_eq!(number_after("entry 3 (`t`): bad", "entry "), Some(3));
        assert_eq!(number_after("no such thing", "entry "), None);
        let reason = "claims[1].text claims an effect (`we approved`, active); the liaison only reads";
        let (field, phrase) = field_and_phrase(reason).unwrap();
        assert!(matches!(field, Field::Claim(1)) && phrase == "we approved");
        assert!(field_and_phrase("entry 2 (`t`): bad").is_none());
    }
}
