//! The answer's sections: its text with claims and the fault marked, the
//! tips naming each claim's evidence, the claims one by one, the
//! uncertainty notes, and the error path of an error answer.

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

/// Write the answer, claims and error path sections.
pub fn write(
    out: &mut String,
    answer: &AnswerView<'_>,
    fault: &Fault,
    cards: &[EvidenceCard<'_>],
    by_id: &HashMap<&str, usize>,
    trace: &Trace,
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
    tips(out, answer, cards, by_id);
    uncertainty(out, answer, fault);
    out.push_str("</section>\n");
    claims(out, answer, fault, cards, by_id);
    error_path(out, answer, fault, trace);
}

fn text(out: &mut String, answer: &AnswerView<'_>, fault: &Fault) {
    let Some(text) = answer.text else {
        out.push_str("<p class=\"missing\">⚠ The answer has no text.</p>");
        return;
    };
    if escape::cut_at(text, MAX_MARKED_CHARS).is_some() {
        out.push_str("<p class=\"missing\">⚠ The answer text is too long to mark claims in; it is shown whole below.</p><div class=\"answer-text\">");
        escape::long(out, text, PREVIEW_CHARS);
        out.push_str("</div>");
        return;
    }
    let texts: Vec<Option<&str>> = answer.claims.iter().map(|claim| claim.text).collect();
    let mut spans: Vec<Span<'_>> = marks::claim_spans(&marks::Folded::new(text), &texts)
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
fn cited(out: &mut String, id: &str, cards: &[EvidenceCard<'_>], by_id: &HashMap<&str, usize>, link: bool) {
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

fn tips(out: &mut String, answer: &AnswerView<'_>, cards: &[EvidenceCard<'_>], by_id: &HashMap<&str, usize>) {
    if answer.claims.is_empty() {
        return;
    }
    out.push_str("<div class=\"tips\">");
    for (index, claim) in answer.claims.iter().enumerate() {
        let n = index + 1;
        out.push_str(&format!(
            "<div class=\"tip\" role=\"tooltip\" id=\"claim-{n}-tip\"><strong>Claim {n} cites</strong><ul>"
        ));
        if claim.ids.is_empty() {
            out.push_str("<li>no evidence</li>");
        }
        for id in &claim.ids {
            out.push_str("<li>");
            cited(out, id, cards, by_id, false);
            out.push_str("</li>");
        }
        out.push_str("</ul></div>");
    }
    out.push_str("</div>");
}

fn uncertainty(out: &mut String, answer: &AnswerView<'_>, fault: &Fault) {
    if answer.uncertainty.is_empty() {
        return;
    }
    out.push_str("<h3>Uncertainty</h3><ul class=\"notes\">");
    for (index, note) in answer.uncertainty.iter().enumerate() {
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
    out: &mut String,
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
        .map(|text| {
            let texts: Vec<Option<&str>> = answer.claims.iter().map(|claim| claim.text).collect();
            marks::claim_spans(&marks::Folded::new(text), &texts)
        })
        .unwrap_or_default();
    out.push_str("<ol class=\"claims\">");
    for (index, claim) in answer.claims.iter().enumerate() {
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
            None => out.push_str(" · <span class=\"warn\">⚠ not found in the answer text</span>"),
        }
        out.push_str("</p>");
        match claim.text {
            Some(text) => escape::long(out, text, PREVIEW_CHARS),
            None => out.push_str("<p class=\"missing\">⚠ no text</p>"),
        }
        out.push_str("<p class=\"label\">Cites</p><ul class=\"cites\">");
        if claim.ids.is_empty() {
            out.push_str("<li>no evidence</li>");
        }
        for id in &claim.ids {
            out.push_str("<li>");
            cited(out, id, cards, by_id, true);
            out.push_str("</li>");
        }
        out.push_str("</ul></li>");
    }
    out.push_str("</ol></section>\n");
}

fn error_field<'v>(error: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    error.and_then(|error| error.get(key))
}

fn error_path(out: &mut String, answer: &AnswerView<'_>, fault: &Fault, trace: &Trace) {
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
        escape::long(out, &stated.map_or_else(|| "—".to_owned(), shown), PREVIEW_CHARS);
        out.push_str("</td><td>");
        escape::long(out, &returned.map_or_else(|| "—".to_owned(), shown), PREVIEW_CHARS);
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

fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
