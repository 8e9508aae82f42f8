//! Claim grounding: which words of an answer state facts from the data,
//! whether the claims cover them, and whether a record claim names the
//! record it cites.
//!
//! Matching is case-insensitive (both sides are lowercased) and at word
//! boundaries: a match may not begin or end inside a run of word
//! characters (letters, digits, `_`), so `job-4` is not found in `job-42`.
//!
//! - A **fact** is a span of the answer text that is either a run of word
//!   characters holding a digit (a number, an id such as `act-1`, a time,
//!   a date), or a string value of the returned data, of at least
//!   [`MIN_VALUE_CHARS`] characters, found at word boundaries (`drafting`,
//!   `waiting_approval`, a post's title). Evidence ids (`ev-` and 16 hex
//!   digits) are not facts.
//! - A sentence **states a fact from data** when it holds a fact; it is
//!   **covered** when each of its facts lies inside an occurrence of a
//!   claim's text. Sentences end at a line break, or at `.`, `!` or `?`
//!   followed by whitespace or the end of the text. So a labelled
//!   interpretation without numbers, ids or data values needs no claim,
//!   and a sentence cannot carry an extra figure past a claim that covers
//!   only part of it.
//! - A record claim **names its record** when its text holds the cited
//!   evidence's reference, or a value (a string of at least
//!   [`MIN_VALUE_CHARS`] characters, or a number written with at least
//!   that many characters) of the cited record: every object of the
//!   call's data that holds the reference as one of its own values,
//!   nested values included. Values shorter than that (`0`, `2`, `ok`)
//!   name nothing.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::rc::Rc;

/// Shortest data value, in characters, that counts as a fact or names a
/// record.
pub const MIN_VALUE_CHARS: usize = 3;

fn is_word_char(character: char) -> bool {
    character.is_alphanumeric() || character == '_'
}

/// Byte spans of `haystack` where `needle` occurs at word boundaries.
/// Both are expected lowercased.
pub fn occurrences(haystack: &str, needle: &str) -> Vec<Range<usize>> {
    if needle.is_empty() {
        return Vec::new();
    }
    let starts_word = needle.chars().next().is_some_and(is_word_char);
    let ends_word = needle.chars().next_back().is_some_and(is_word_char);
    haystack
        .match_indices(needle)
        .map(|(start, _)| start..start + needle.len())
        .filter(|span| {
            let clear_before =
                !starts_word || !haystack[..span.start].chars().next_back().is_some_and(is_word_char);
            let clear_after = !ends_word || !haystack[span.end..].chars().next().is_some_and(is_word_char);
            clear_before && clear_after
        })
        .collect()
}

/// Every leaf of `value` that can name something, lowercased: strings of
/// at least [`MIN_VALUE_CHARS`] characters and numbers written with at
/// least that many.
fn leaf_names(value: &Value, names: &mut Vec<String>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => push_name(text.trim(), names),
            Value::Number(number) => push_name(&number.to_string(), names),
            Value::Array(items) => stack.extend(items),
            Value::Object(object) => stack.extend(object.values()),
            Value::Bool(_) | Value::Null => {}
        }
    }
}

fn push_name(text: &str, names: &mut Vec<String>) {
    if text.chars().nth(MIN_VALUE_CHARS - 1).is_some() {
        names.push(text.to_lowercase());
    }
}

/// What names the record `reference` in `data`: the reference itself and
/// the values of every object in `data` holding it as one of its own
/// values. Lowercased.
pub fn record_names(data: Option<&Map<String, Value>>, reference: &str) -> Vec<String> {
    let mut names = vec![reference.trim().to_lowercase()];
    let mut stack: Vec<&Value> = data.into_iter().flat_map(Map::values).collect();
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(object) => {
                if object.values().any(|field| field.as_str() == Some(reference)) {
                    object.values().for_each(|field| leaf_names(field, &mut names));
                } else {
                    stack.extend(object.values());
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    names
}

/// The records that references name in some calls' data, indexed in one
/// pass over the data so that checking many claims against many
/// references costs the size of the data once, not once per claim and
/// reference: for each reference, every object holding it as one of its
/// own values. The names of a reference ([`record_names`]'s set) are
/// gathered the first time a claim is checked against it, and kept.
pub struct RecordIndex<'d> {
    holders: HashMap<(usize, &'d str), Vec<&'d Map<String, Value>>>,
    names: RefCell<NamesByRecord>,
}

/// A reference's names, by call position and reference, once gathered.
type NamesByRecord = HashMap<(usize, String), Rc<Vec<String>>>;

impl<'d> RecordIndex<'d> {
    /// Index `references` in each of `data` (a call's data, known by its
    /// position in the list).
    pub fn new(data: &[Option<&'d Map<String, Value>>], references: &HashSet<&'d str>) -> Self {
        let mut holders = HashMap::new();
        for (call, data) in data.iter().enumerate() {
            let mut stack: Vec<&Value> = data.iter().flat_map(|data| data.values()).collect();
            while let Some(value) = stack.pop() {
                match value {
                    Value::Object(object) => {
                        for field in object.values() {
                            if let Some(reference) = field.as_str().and_then(|text| references.get(text)) {
                                holders.entry((call, *reference)).or_insert_with(Vec::new).push(object);
                            }
                        }
                        stack.extend(object.values());
                    }
                    Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
        }
        Self { holders, names: Default::default() }
    }

    /// Whether `claim` names the record `reference` of call `call`: the
    /// same answer as `names_any(claim, &record_names(data, reference))`.
    pub fn names(&self, claim: &str, call: usize, reference: &str) -> bool {
        let key = (call, reference.to_owned());
        let cached = self.names.borrow().get(&key).cloned();
        let names = match cached {
            Some(names) => names,
            None => {
                // Nested holders add nothing an outer one lacks; the set,
                // not the walk, is what counts.
                let mut gathered = vec![reference.trim().to_lowercase()];
                for object in self.holders.get(&(call, reference)).into_iter().flatten() {
                    object.values().for_each(|field| leaf_names(field, &mut gathered));
                }
                let mut seen = HashSet::new();
                gathered.retain(|name| seen.insert(name.clone()));
                let gathered = Rc::new(gathered);
                self.names.borrow_mut().insert(key, Rc::clone(&gathered));
                gathered
            }
        };
        names_any(claim, &names)
    }
}

/// True when `claim` holds one of `names` at word boundaries.
/// A name is looked for only when it could fit and its first word is a
/// word of the claim, which keeps this linear in the number of names for
/// all but those that may match.
pub fn names_any(claim: &str, names: &[String]) -> bool {
    let claim = claim.to_lowercase();
    let words: HashSet<&str> = word_runs(&claim).map(|run| &claim[run]).collect();
    names.iter().any(|name| {
        if name.len() > claim.len() {
            return false;
        }
        let first_word_fits = match name.chars().next() {
            Some(first) if is_word_char(first) => {
                word_runs(name).next().is_some_and(|run| words.contains(&name[run]))
            }
            _ => true,
        };
        first_word_fits && !occurrences(&claim, name).is_empty()
    })
}

/// A fact the answer states outside every claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnclaimedFact {
    /// 1-based sentence of the answer holding it.
    pub sentence: usize,
    /// The word of the (lowercased) answer holding it.
    pub word: String,
}

/// The first fact `answer` states outside every occurrence of `claims`,
/// given the data of the successful calls.
pub fn unclaimed_fact<'d>(
    answer: &str,
    claims: &[&str],
    data: impl IntoIterator<Item = &'d Map<String, Value>>,
) -> Option<UnclaimedFact> {
    let text = answer.to_lowercase();
    let covered: Vec<Range<usize>> =
        claims.iter().flat_map(|claim| occurrences(&text, &claim.to_lowercase())).collect();
    let evidence_ids = evidence_id_spans(&text);
    let mut facts: Vec<Range<usize>> = word_runs(&text)
        .filter(|run| text[run.clone()].chars().any(char::is_numeric))
        .filter(|run| !evidence_ids.iter().any(|id| id.start <= run.start && run.end <= id.end))
        .collect();
    facts.extend(data_value_spans(&text, data));
    facts.sort_by_key(|span| span.start);
    let fact = facts
        .into_iter()
        .find(|fact| !covered.iter().any(|claim| claim.start <= fact.start && fact.end <= claim.end))?;
    Some(UnclaimedFact { sentence: sentence_number(&text, fact.start), word: enclosing_word(&text, fact) })
}

/// Maximal runs of word characters.
fn word_runs(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut runs = Vec::new();
    let mut start = None;
    for (index, character) in text.char_indices() {
        match (is_word_char(character), start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                runs.push(begin..index);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(begin) = start {
        runs.push(begin..text.len());
    }
    runs.into_iter()
}

/// Spans of `ev-` followed by 16 hex digits, at word boundaries.
fn evidence_id_spans(text: &str) -> Vec<Range<usize>> {
    occurrences(text, "ev")
        .into_iter()
        .filter_map(|span| {
            let rest = text[span.end..].strip_prefix('-')?;
            let hex = rest.get(..16)?;
            let after = rest[16..].chars().next();
            (hex.bytes().all(|byte| byte.is_ascii_hexdigit()) && !after.is_some_and(is_word_char))
                .then(|| span.start..span.end + 17)
        })
        .collect()
}

/// Where string values of `data` occur in `text`. A value is looked for
/// only when its first word is a word of the text, which keeps this linear
/// in the size of the data for all but the values that may match.
fn data_value_spans<'d>(
    text: &str,
    data: impl IntoIterator<Item = &'d Map<String, Value>>,
) -> Vec<Range<usize>> {
    let words: HashSet<&str> = word_runs(text).map(|run| &text[run]).collect();
    let mut seen = HashSet::new();
    let mut spans = Vec::new();
    let mut stack: Vec<&Value> = data.into_iter().flat_map(Map::values).collect();
    while let Some(value) = stack.pop() {
        match value {
            Value::String(raw) => {
                let value = raw.trim();
                if value.len() > text.len() || value.chars().nth(MIN_VALUE_CHARS - 1).is_none() {
                    continue;
                }
                let value = value.to_lowercase();
                let Some(first) = word_runs(&value).next() else { continue };
                if words.contains(&value[first]) && seen.insert(value.clone()) {
                    spans.extend(occurrences(text, &value));
                }
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(object) => stack.extend(object.values()),
            _ => {}
        }
    }
    spans
}

/// 1-based number of the sentence holding byte `offset`; empty sentences
/// (the line break after a full stop) are not counted. Public so a reader
/// of [`UnclaimedFact::sentence`] can find the sentence it numbers.
pub fn sentence_number(text: &str, offset: usize) -> usize {
    let (mut number, mut open) = (0, false);
    for (index, character) in text.char_indices().take_while(|(index, _)| *index <= offset) {
        if !open && !character.is_whitespace() {
            number += 1;
            open = true;
        }
        let next = text[index + character.len_utf8()..].chars().next();
        if character == '\n' || (matches!(character, '.' | '!' | '?') && next.is_none_or(char::is_whitespace))
        {
            open = false;
        }
    }
    number.max(1)
}

/// The whitespace-delimited word around `span`, for a reason.
fn enclosing_word(text: &str, span: Range<usize>) -> String {
    let start = text[..span.start]
        .char_indices()
        .rfind(|(_, character)| character.is_whitespace())
        .map_or(0, |(index, character)| index + character.len_utf8());
    let end = text[span.end..].find(char::is_whitespace).map_or(text.len(), |index| span.end + index);
    text[start..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn occurrences_respect_word_boundaries() {
        assert_eq!(occurrences("job-42 and job-4", "job-4"), vec![11..16]);
        assert_eq!(occurrences("waiting_approval", "waiting"), Vec::<Range<usize>>::new());
        assert_eq!(occurrences("\"a title\": 3", "\"a title\""), vec![0..9]);
        assert!(occurrences("anything", "").is_empty());
    }

    #[test]
    fn record_names_come_from_the_objects_holding_the_reference() {
        let feed = data(json!({"job": {"id": "job-42", "stage": "drafting", "draftCount": 2,
            "actions": [{"id": "act-1", "likes": 412}]}, "other": {"id": "job-7", "stage": "failed"}}));
        let names = record_names(Some(&feed), "job-42");
        for name in ["job-42", "drafting", "act-1", "412"] {
            assert!(names.contains(&name.to_owned()), "{name}");
        }
        assert!(!names.contains(&"failed".to_owned()) && !names.contains(&"2".to_owned()));
        assert!(names_any("Job-42 is drafting", &names));
        assert!(!names_any("job-7 is in stage failed", &names));
        assert!(!names_any("it has 2 drafts", &names));
        assert_eq!(record_names(None, "p1"), ["p1"]);
    }

    #[test]
    fn the_record_index_answers_as_record_names_does_in_one_pass() {
        let feed = data(json!({"job": {"id": "job-42", "stage": "drafting", "draftCount": 2,
            "actions": [{"id": "act-1", "likes": 412, "parent": "job-42"}]}, "other": {"id": "job-7", "stage": "failed"}}));
        let references: HashSet<&str> = ["job-42", "job-7", "act-1", "missing"].into_iter().collect();
        let index = RecordIndex::new(&[Some(&feed)], &references);
        for claim in [
            "Job-42 is drafting",
            "job-7 is in stage failed",
            "it has 2 drafts",
            "act-1 has 412 likes",
            "missing one",
        ] {
            for reference in &references {
                assert_eq!(
                    index.names(claim, 0, reference),
                    names_any(claim, &record_names(Some(&feed), reference)),
                    "{claim} / {reference}"
                );
            }
        }
        assert!(index.names("it is drafting now", 0, "job-42"));
        assert!(!index.names("it is drafting now", 1, "job-42"), "another call's data names nothing");
    }

    #[test]
    fn numbers_ids_and_data_values_are_facts() {
        let job = data(json!({"job": {"id": "job-42", "status": "waiting_approval", "risk": "low"}}));
        let claims = ["job-42 is waiting"];
        let answer = "Job-42 is waiting (ev-0123456789abcdef). A note without figures.";
        assert_eq!(unclaimed_fact(answer, &claims, [&job]), None);
        let extra = "Job-42 is waiting (ev-0123456789abcdef). It has 99 drafts.";
        assert_eq!(
            unclaimed_fact(extra, &claims, [&job]),
            Some(UnclaimedFact { sentence: 2, word: "99".into() })
        );
        let value = "Job-42 is waiting.\nIts status is waiting_approval";
        assert_eq!(
            unclaimed_fact(value, &claims, [&job]),
            Some(UnclaimedFact { sentence: 2, word: "waiting_approval".into() })
        );
        let partly = "job-42 is waiting for job-7";
        assert_eq!(
            unclaimed_fact(partly, &claims, [&job]),
            Some(UnclaimedFact { sentence: 1, word: "job-7".into() })
        );
        // A short value ("ok") is not a fact; an unknown evidence-like word is.
        let short = data(json!({"job": {"id": "job-42", "risk": "ok"}}));
        assert_eq!(unclaimed_fact("Job-42 is waiting. Risk is ok.", &claims, [&short]), None);
        assert!(unclaimed_fact("Job-42 is waiting. See ev-12.", &claims, [&job]).is_some());
        // Wide whitespace and non-ASCII text around a fact.
        assert_eq!(
            unclaimed_fact("Job-42 is waiting.\u{3000}Ünïcode\u{a0}№7\u{3000}x", &claims, [&job]),
            Some(UnclaimedFact { sentence: 2, word: "№7".into() })
        );
    }

    #[test]
    fn odd_text_never_panics() {
        let pieces =
            ["İ", "ev-", "0123456789abcdef", "\u{3000}", ".", "\n", "7", "é", "_", "-", " ", "🙂", "ǅ"];
        let job = data(json!({"job": {"id": "İ7-ǅ", "note": "é 🙂 7", "n": 1.5e300}}));
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}{b}{c}{a}");
                    let _ = unclaimed_fact(&text, &[&format!("{b}{c}"), a], [&job]);
                    let _ = names_any(&text, &record_names(Some(&job), &format!("{c}{a}")));
                }
            }
        }
    }

    #[test]
    fn sentences_are_numbered_like_the_authority_matcher() {
        assert_eq!(sentence_number("a. b", 3), 2);
        assert_eq!(sentence_number("305.7 likes", 4), 1);
        assert_eq!(sentence_number("one\ntwo! three", 9), 3);
        assert_eq!(sentence_number("one.\ntwo", 5), 2);
    }
}
