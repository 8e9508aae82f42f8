//! Marking the answer text: where each claim occurs, where the phrase
//! that broke a rule is, and the text written out with both marked.
//!
//! Parts:
//! - [`Folded`]: the text lowercased as the validator reads it, with the
//!   way back to the original's byte offsets (lowercasing can change a
//!   character's length, `İ` for one).
//! - [`claim_spans`]: the first occurrence of each claim's text, found
//!   with the validator's own matcher (`grounding::occurrences`).
//! - [`phrase_span`], [`fact_span`]: the phrase `mutation_claim` quotes
//!   or the fact `unclaimed_fact` names, found with the contract's own
//!   matcher, detector and grounding functions, not a copy of them.
//! - [`write_marked`]: the text with its spans as properly nested
//!   elements; a span that crosses another is closed and reopened around
//!   it, and only its first piece is focusable.

use crate::bound::Page;
use crate::escape;
use harmonia_contract::liaison::grounding::{self, UnclaimedFact};
use harmonia_contract::liaison::mutation;
use std::ops::Range;

/// `text` lowercased, with the original byte offset of every lowercased byte.
pub struct Folded {
    /// The lowercased text, exactly as `str::to_lowercase` writes it.
    pub lower: String,
    /// For each byte of `lower` and one past its end: the start of the
    /// original character it came from.
    origin: Vec<usize>,
}

impl Folded {
    /// Fold `text`.
    pub fn new(text: &str) -> Self {
        let lower = text.to_lowercase();
        let mut origin = Vec::with_capacity(lower.len() + 1);
        for (at, character) in text.char_indices() {
            // `str::to_lowercase` differs from the per-character mapping only
            // for a final sigma, whose two spellings have the same length.
            let length: usize = character.to_lowercase().map(char::len_utf8).sum();
            origin.extend(std::iter::repeat_n(at, length));
        }
        origin.resize(lower.len(), text.len());
        origin.push(text.len());
        Self { lower, origin }
    }

    /// A span of `lower` as a span of the original text, if it is not empty there.
    pub fn original(&self, span: Range<usize>) -> Option<Range<usize>> {
        let start = *self.origin.get(span.start)?;
        let end = *self.origin.get(span.end)?;
        (start < end).then_some(start..end)
    }
}

/// For each claim text, its first occurrence in the answer (as the
/// validator matches: case-insensitive, at word boundaries).
pub fn claim_spans(folded: &Folded, claims: &[Option<&str>]) -> Vec<Option<Range<usize>>> {
    claims
        .iter()
        .map(|claim| {
            let needle = (*claim)?.to_lowercase();
            let first = grounding::occurrences(&folded.lower, &needle).into_iter().next()?;
            folded.original(first)
        })
        .collect()
}

/// Sentences of `text`, as byte spans: up to a line break, or up to `.`,
/// `!` or `?` followed by whitespace or the end (docs/contract.md §5.0.5).
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (at, character) in text.char_indices() {
        let end = at + character.len_utf8();
        let next = text[end..].chars().next();
        if character == '\n' || (matches!(character, '.' | '!' | '?') && next.is_none_or(char::is_whitespace))
        {
            spans.push(start..end);
            start = end;
        }
    }
    if start < text.len() {
        spans.push(start..text.len());
    }
    spans
}

/// Where in `text` the `phrase` a refusal quotes is: its first
/// occurrence when the text spells it plainly (case aside), else, for a
/// claimed effect, the sentence in which the contract's detector finds it
/// (the detector reads a normalised text, so look-alike letters or
/// markdown may stand between its phrase and the original).
pub fn phrase_span(text: &str, phrase: &str, effect: bool) -> Option<Range<usize>> {
    let folded = Folded::new(text);
    let needle = phrase.trim().to_lowercase();
    if let Some(found) = grounding::occurrences(&folded.lower, &needle).into_iter().next() {
        return folded.original(found);
    }
    if !effect {
        return None;
    }
    sentences(text).into_iter().find(|sentence| mutation::find(&text[sentence.clone()]).is_some())
}

/// Where in `text` the unclaimed `fact` is: the occurrence of its word in
/// the sentence the validator numbered.
pub fn fact_span(text: &str, fact: &UnclaimedFact) -> Option<Range<usize>> {
    let folded = Folded::new(text);
    let word = fact.word.as_str();
    if word.is_empty() {
        return None;
    }
    folded
        .lower
        .match_indices(word)
        .map(|(at, _)| at..at + word.len())
        .find(|span| grounding::sentence_number(&folded.lower, span.start) == fact.sentence)
        .and_then(|span| folded.original(span))
}

/// What a span marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark<'r> {
    /// Claim `n` (0-based).
    Claim(usize),
    /// The phrase that broke `rule`.
    Fault(&'r str),
}

/// A marked span of the text.
#[derive(Clone, Debug)]
pub struct Span<'r> {
    /// Byte range in the original text.
    pub range: Range<usize>,
    /// What it marks.
    pub mark: Mark<'r>,
}

fn open(out: &mut Page, mark: Mark<'_>, first: bool) {
    match (mark, first) {
        (Mark::Claim(index), true) => {
            let n = index + 1;
            out.push_str(&format!(
                "<a class=\"claim c{n}\" id=\"claim-{n}\" href=\"#claim-{n}-detail\" \
                 aria-describedby=\"claim-{n}-tip\"><span class=\"tag\">claim {n}</span>"
            ));
        }
        (Mark::Claim(index), false) => out.push_str(&format!("<span class=\"claim c{}\">", index + 1)),
        (Mark::Fault(rule), true) => {
            out.push_str("<mark class=\"fault\" id=\"fault\"><span class=\"tag\">✖ ");
            escape::text(out, rule);
            out.push_str("</span>");
        }
        (Mark::Fault(_), false) => out.push_str("<mark class=\"fault\">"),
    }
}

fn close(out: &mut Page, mark: Mark<'_>, first: bool) {
    out.push_str(match (mark, first) {
        (Mark::Claim(_), true) => "</a>",
        (Mark::Claim(_), false) => "</span>",
        (Mark::Fault(_), _) => "</mark>",
    });
}

/// Write `text` escaped, with `spans` marked. Spans nest by start, longer
/// first, claims before the fault on a tie.
pub fn write_marked(out: &mut Page, text: &str, spans: &[Span<'_>]) {
    let mut spans: Vec<&Span<'_>> = spans.iter().filter(|span| span.range.start < span.range.end).collect();
    spans.sort_by_key(|span| {
        (span.range.start, std::cmp::Reverse(span.range.end), matches!(span.mark, Mark::Fault(_)))
    });
    let mut bounds: Vec<usize> = spans.iter().flat_map(|span| [span.range.start, span.range.end]).collect();
    bounds.extend([0, text.len()]);
    bounds.sort_unstable();
    bounds.dedup();
    // Indexes into `spans` of the open elements, outermost first, and
    // whether each is the span's first piece.
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut started = vec![false; spans.len()];
    for window in bounds.windows(2) {
        let segment = window[0]..window[1];
        let wanted: Vec<usize> = (0..spans.len())
            .filter(|&index| {
                spans[index].range.start <= segment.start && segment.end <= spans[index].range.end
            })
            .collect();
        let keep = stack.iter().zip(&wanted).take_while(|((open, _), wanted)| open == *wanted).count();
        while stack.len() > keep {
            if let Some((index, first)) = stack.pop() {
                close(out, spans[index].mark, first);
            }
        }
        for &index in &wanted[keep..] {
            let first = !started[index];
            started[index] = true;
            open(out, spans[index].mark, first);
            stack.push((index, first));
        }
        escape::text(out, &text[segment]);
    }
    while let Some((index, first)) = stack.pop() {
        close(out, spans[index].mark, first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_maps_back_to_the_original_offsets() {
        let folded = Folded::new("İx JOB-42");
        let found = grounding::occurrences(&folded.lower, "job-42")[0].clone();
        assert_eq!(folded.original(found), Some(4..10));
        assert_eq!(&"İx JOB-42"[4..10], "JOB-42");
    }

    #[test]
    fn crossing_spans_nest_and_only_the_first_piece_is_focusable() {
        let text = "one two three four";
        let spans = [
            Span { range: 0..13, mark: Mark::Claim(0) },
            Span { range: 8..18, mark: Mark::Fault("unclaimed_fact") },
        ];
        let mut out = Page::unbounded();
        write_marked(&mut out, text, &spans);
        let out = out.into_string();
        assert_eq!(out.matches("<a ").count(), 1, "{out}");
        assert_eq!(out.matches("id=\"fault\"").count(), 1, "{out}");
        assert_eq!(out.matches("<mark").count(), 2, "{out}");
        assert!(out.ends_with("</mark>"), "{out}");
        let tags = ["</a>", "</span>", "</mark>"];
        let closes: usize = tags.iter().map(|tag| out.matches(tag).count()).sum();
        assert_eq!(
            out.matches("<a ").count() + out.matches("<span").count() + out.matches("<mark").count(),
            closes
        );
    }

    #[test]
    fn the_detectors_phrases_are_found_in_place() {
        let text = "Job-42 is drafting. Harmonia published act-1 yesterday.";
        let span = phrase_span(text, "harmonia published", true).expect("a claimed effect");
        assert_eq!(&text[span], "Harmonia published");
        let span = phrase_span(text, "ｈａｒｍｏｎｉａ published", true).expect("the sentence holding it");
        assert_eq!(&text[span], " Harmonia published act-1 yesterday.");
        let fact = UnclaimedFact { sentence: 2, word: "act-1".into() };
        assert_eq!(fact_span(text, &fact).map(|span| &text[span]), Some("act-1"));
        assert_eq!(sentences("a. b\nc"), vec![0..2, 2..5, 5..6]);
    }
}
