//! The answer's sections: its text with claims and the fault marked, the
//! tips naming each claim's evidence, the claims one by one, the
//! uncertainty notes, and the error path of an error answer.

use crate::bound::{MAX_IDS_SHOWN, MAX_MARKED_CLAIMS, Page};
use crate::escape::{self, PREVIEW_CHARS};
use crate::fault::Fault;
use crate::marks::{self, Mark, Span};
use crate::view::{AnswerView, EvidenceCard};
use harmonia_contract::liaison::trace::{EntryKind, Trace};
use serde_json::Value;
use std::collections::HashMap;

/// Longest answer text marked in place; a longer one (far past the
/// schema's 4,000 characters) is shown folded, unmarked.
const MAX_MARKED_CHARS: usize = 20_000;

/// Characters of an evidence id or a label shown in a tip or a list.
const ID_CHARS: usize = 120;

/// Where the first [`MAX_MARKED_CLAIMS`] claims occur in `text`: the
/// only ones looked for (a valid answer makes at most 20).
pub fn marked_claims(text: &str, answer: &AnswerView<'_>) -> Vec<Option<std::ops::Range<usize>>> {
    let texts: Vec<Option<&str>> =
        answer.claims.iter().take(MAX_MARKED_CLAIMS).map(|claim| claim.text).collect();
    marks::claim_spans(&marks::Folded::new(text), &texts)
}

/// Write the answer, claims and error path sections; the first `styled`
/// claims have style rules, so only they get a tip.
pub fn write(
    out: &mut Page,
    answer: &AnswerView<'_>,
    fault: &Fault,
    cards: &[EvidenceCard<'_>],
    by_id: &HashMap<&str, usize>,
    trace: &Trace,
    styled: usize,
) {
    out.push_str(
        "<section id=\"answer\" aria-labelledby=\"answer-heading\"><h2 id=\"answer-heading\">Answer</h2>",
    );
    out.push_str("<dl class=\"facts\"><dt>Status</dt><dd>");
    escape::scalar(out, &answer.status.map_or(Value::Null, Value::from), ID_CHARS);
    out.push_str("</dd><dt>Skill</dt><dd>");
    escape::scalar(out, &answer.skill.map_or(Value::Null, Value::from), ID_CHARS);
    out.push_str("</dd><dt>Claims</dt><dd>");
    out.push_str(&answer.claims.len().to_string());
    out.push_str("</dd></dl>");
    text(out, answer, fault);
    tips(out, answer, cards, by_id, styled);
    uncertainty(out, answer, fault);
    out.push_str("</section>\n");
    claims(out, answer, fault, cards, by_id);
    error_path(out, answer, fault, trace);
}

fn text(out: &mut Page, answer: &AnswerView<'_>, fault: &Fault) {
    let Some(text) = answer.text else {
        out.push_str("<p class=\"missing\">⚠ The answer has no text.</p>");
        return;
    };
    let too_long = escape::cut_at(text, MAX_MARKED_CHARS).is_some();
    if too_long || !out.has_room() {
        if too_long {
            out.push_str("<p class=\"missing\">⚠ The answer text is too long to mark claims in; it is shown whole below.</p>");
        }
        out.push_str("<div class=\"answer-text\">");
        escape::long(out, text, PREVIEW_CHARS);
        out.push_str("</div>");
        return;
    }
    let mut spans: Vec<Span<'_>> = marked_claims(text, answer)
        .into_iter()
        .enumerate()
        .filter_map(|(index, range)| Some(Span { range: range?, mark: Mark::Claim(index) }))
        .collect();
    if let (Some(range), Some(rule)) = (&fault.in_text, fault.rule) {
        spans.push(Span { range: range.clone(), mark: Mark::Fault(rule) });
    }
    out.push_str("<div class=\"answer-text\">");
    marks::write_marked(out, text, &spans);
    out.push_str("</div>");
    if !answer.claims.is_empty() {
        out.push_str(
            "<p class=\"hint\">Hover over or focus a claim (<kbd>Tab</kbd>) to see the evidence it cites; \
             activate it (<kbd>Enter</kbd>) to go to its details.</p>",
        );
    }
}

/// One line naming a cited id and what it is.
fn cited(out: &mut Page, id: &str, cards: &[EvidenceCard<'_>], by_id: &HashMap<&str, usize>, link: bool) {
    match by_id.get(id) {
        Some(&index) => {
            let card = &cards[index];
            if link {
                out.push_str(&format!("<a href=\"#evidence-{}\"><code>", index + 1));
            } else {
                out.push_str("<code>");
            }
            escape::scalar(out, &Value::from(id), ID_CHARS);
            out.push_str(if link { "</code></a> " } else { "</code> " });
            out.push_str(&format!("from entry {} (", card.entry));
            escape::scalar(out, &Value::from(card.tool), ID_CHARS);
            out.push_str("), ");
            escape::scalar(out, &card.field("provenance").map_or(Value::Null, Value::from), ID_CHARS);
            out.push_str(match card.is_record() {
                Some(true) => ", record",
                Some(false) => ", dataset",
                None => ", reference unreadable",
            });
            if !card.counted {
                out.push_str(" <strong class=\"warn\">⚠ not counted: not a successful call's</strong>");
            }
        }
        None => {
            out.push_str("<code>");
            escape::scalar(out, &Value::from(id), ID_CHARS);
            out.push_str(
                "</code> <strong class=\"warn\">⚠ no response in the trace carries this id</strong>",
            );
        }
    }
}

/// The ids `claim` cites, as list items: the first [`MAX_IDS_SHOWN`], then
/// how many more.
fn cited_list(
    out: &mut Page,
    ids: &[&str],
    cards: &[EvidenceCard<'_>],
    by_id: &HashMap<&str, usize>,
    link: bool,
) {
    if ids.is_empty() {
        out.push_str("<li>no evidence</li>");
    }
    for (index, id) in ids.iter().take(MAX_IDS_SHOWN).enumerate() {
        if !out.has_room() {
            out.push_str(&format!(
                "<li class=\"warn\">⚠ {} more ids not listed: the page reached its bound</li>",
                escape::thousands(ids.len() - index)
            ));
            return;
        }
        out.push_str("<li>");
        cited(out, id, cards, by_id, link);
        out.push_str("</li>");
    }
    if ids.len() > MAX_IDS_SHOWN {
        out.push_str(&format!(
            "<li class=\"warn\">⚠ and {} more ids, not listed (a valid claim cites at most 8)</li>",
            escape::thousands(ids.len() - MAX_IDS_SHOWN)
        ));
    }
}

fn tips(
    out: &mut Page,
    answer: &AnswerView<'_>,
    cards: &[EvidenceCard<'_>],
    by_id: &HashMap<&str, usize>,
    styled: usize,
) {
    if answer.claims.is_empty() || styled == 0 {
        return;
    }
    out.push_str("<div class=\"tips\">");
    for (index, claim) in answer.claims.iter().enumerate().take(styled) {
        if !out.has_room() {
            break;
        }
        let n = index + 1;
        out.push_str(&format!(
            "<div class=\"tip\" role=\"tooltip\" id=\"claim-{n}-tip\"><strong>Claim {n} cites</strong><ul>"
        ));
        cited_list(out, &claim.ids, cards, by_id, false);
        out.push_str("</ul></div>");
    }
    out.push_str("</div>");
}

fn uncertainty(out: &mut Page, answer: &AnswerView<'_>, fault: &Fault) {
    if answer.uncertainty.is_empty() {
        return;
    }
    out.push_str("<h3>Uncertainty</h3><ul class=\"notes\">");
    for (index, note) in answer.uncertainty.iter().enumerate() {
        if !out.has_room() {
            out.push_str("</ul>");
            out.not_shown(answer.uncertainty.len() - index, "notes are");
            return;
        }
        let at_fault = fault.uncertainty.as_ref().filter(|(at, _)| *at == index);
        out.push_str(&format!(
            "<li id=\"note-{}\"{}>",
            index + 1,
            if at_fault.is_some() { " class=\"at-fault\"" } else { "" }
        ));
        match (at_fault, fault.rule) {
            (Some((_, Some(range))), Some(rule)) if escape::cut_at(note, MAX_MARKED_CHARS).is_none() => {
                out.push_str("<div class=\"text\">");
                marks::write_marked(out, note, &[Span { range: range.clone(), mark: Mark::Fault(rule) }]);
                out.push_str("</div>");
            }
            _ => escape::long(out, note, PREVIEW_CHARS),
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

fn claims(
    out: &mut Page,
    answer: &AnswerView<'_>,
    fault: &Fault,
    cards: &[EvidenceCard<'_>],
    by_id: &HashMap<&str, usize>,
) {
    out.push_str(
        "<section id=\"claims\" aria-labelledby=\"claims-heading\"><h2 id=\"claims-heading\">Claims</h2>",
    );
    if answer.claims.is_empty() {
        out.push_str("<p>The answer makes no claim.</p></section>\n");
        return;
    }
    let located = answer
        .text
        .filter(|text| escape::cut_at(text, MAX_MARKED_CHARS).is_none())
        .map(|text| marked_claims(text, answer))
        .unwrap_or_default();
    out.push_str("<ol class=\"claims\">");
    for (index, claim) in answer.claims.iter().enumerate() {
        if !out.has_room() {
            out.push_str("</ol>");
            out.not_shown(answer.claims.len() - index, "claims are");
            out.push_str("</section>\n");
            return;
        }
        let n = index + 1;
        let at_fault = fault.claim == Some(index);
        out.push_str(&format!(
            "<li id=\"claim-{n}-detail\" class=\"claim-detail{}\"><p class=\"claim-head\"><strong>Claim {n}</strong> · ",
            if at_fault { " at-fault" } else { "" }
        ));
        escape::scalar(out, &claim.kind.map_or(Value::Null, Value::from), ID_CHARS);
        if at_fault && let Some(rule) = fault.rule {
            out.push_str(" <span class=\"rule-tag\">✖ ");
            out.push_str(rule);
            out.push_str("</span>");
        }
        match located.get(index).cloned().flatten() {
            Some(_) => out.push_str(&format!(" · <a href=\"#claim-{n}\">in the answer text</a>")),
            None if index >= MAX_MARKED_CLAIMS => out.push_str(&format!(
                " · <span class=\"warn\">⚠ not looked for in the answer text (only the first {MAX_MARKED_CLAIMS} claims are)</span>"
            )),
            None => out.push_str(" · <span class=\"warn\">⚠ not found in the answer text</span>"),
        }
        out.push_str("</p>");
        match claim.text {
            Some(text) => escape::long(out, text, PREVIEW_CHARS),
            None => out.push_str("<p class=\"missing\">⚠ no text</p>"),
        }
        out.push_str("<p class=\"label\">Cites</p><ul class=\"cites\">");
        cited_list(out, &claim.ids, cards, by_id, true);
        out.push_str("</ul></li>");
    }
    out.push_str("</ol></section>\n");
}

fn error_field<'v>(error: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    error.and_then(|error| error.get(key))
}

fn error_path(out: &mut Page, answer: &AnswerView<'_>, fault: &Fault, trace: &Trace) {
    let last_call = trace.entries.iter().rposition(|entry| entry.kind == EntryKind::ToolCall);
    let tool_error = last_call
        .and_then(|at| trace.entries[at].response.as_ref())
        .and_then(|response| response.get("error"))
        .filter(|error| !error.is_null());
    if answer.error.is_none() && tool_error.is_none() && !fault.error_path {
        return;
    }
    out.push_str(&format!(
        "<section id=\"error-path\" class=\"{}\" aria-labelledby=\"error-heading\"><h2 id=\"error-heading\">Error path</h2>",
        if fault.error_path { "at-fault" } else { "" }
    ));
    out.push_str("<p>An error answer must repeat the final call's error exactly and show its code (docs/contract.md §5.9).</p>");
    out.push_str("<table><caption>The answer's error beside the final tool error</caption><thead><tr><th scope=\"col\">Field</th><th scope=\"col\">Answer</th>");
    match last_call {
        Some(at) => out.push_str(&format!(
            "<th scope=\"col\">Final call (<a href=\"#entry-{0}\">entry {0}</a>)</th>",
            at + 1
        )),
        None => out.push_str("<th scope=\"col\">Final call (none)</th>"),
    }
    out.push_str("<th scope=\"col\">Same?</th></tr></thead><tbody>");
    for key in ["code", "category", "message", "retryable"] {
        let stated = error_field(answer.error, key);
        let returned = error_field(tool_error, key);
        out.push_str("<tr><th scope=\"row\">");
        out.push_str(key);
        out.push_str("</th><td>");
        let room = out.room();
        escape::long(out, &stated.map_or_else(|| "—".to_owned(), |value| shown(value, room)), PREVIEW_CHARS);
        out.push_str("</td><td>");
        let room = out.room();
        escape::long(
            out,
            &returned.map_or_else(|| "—".to_owned(), |value| shown(value, room)),
            PREVIEW_CHARS,
        );
        out.push_str("</td><td>");
        out.push_str(if stated == returned {
            "✔ same"
        } else {
            "<strong class=\"warn\">≠ differs</strong>"
        });
        out.push_str("</td></tr>");
    }
    out.push_str("</tbody></table></section>\n");
}

/// `value` as text: a string as itself, anything else as compact JSON,
/// serialized no further than `room` bytes (the page cuts the rest).
fn shown(value: &Value, room: usize) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => escape::serialized(other, false, room.saturating_add(1)).0,
    }
}
