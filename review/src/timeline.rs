//! The session's timeline: each trace entry in order. An activation with
//! its skill and whether the file is the loaded one; an attempt with its
//! tool, attempt number, arguments, duration, outcome, capability
//! receipts and exact envelope; a refusal marked as such, with its rule.

use crate::bound::Page;
use crate::escape::{self, PREVIEW_CHARS};
use crate::fault::Fault;
use harmonia_contract::liaison::skills::SkillSet;
use harmonia_contract::liaison::trace::{EntryKind, Trace, TraceEntry};
use serde_json::Value;

/// Characters of a name, code or receipt cell.
const CELL_CHARS: usize = 160;

/// Write the timeline section.
pub fn write(out: &mut Page, trace: &Trace, skills: &SkillSet, fault: &Fault) {
    out.push_str("<section id=\"timeline\" aria-labelledby=\"timeline-heading\"><h2 id=\"timeline-heading\">Timeline</h2>");
    if trace.entries.is_empty() {
        out.push_str("<p class=\"missing\">⚠ The trace is empty.</p></section>\n");
        return;
    }
    out.push_str(&format!(
        "<p>{} entries, in the order the host recorded them.</p><ol class=\"timeline\">",
        escape::thousands(trace.entries.len())
    ));
    let mut shown = 0;
    for (index, entry) in trace.entries.iter().enumerate() {
        if !out.has_room() {
            break;
        }
        shown = index + 1;
        let position = index + 1;
        let at_fault = fault.entry == Some(position);
        let kind = match entry.kind {
            EntryKind::SkillActivation => "activation",
            EntryKind::ToolCall => "call",
            EntryKind::ToolRefused => "refused",
        };
        out.push_str(&format!(
            "<li id=\"entry-{position}\" class=\"entry {kind}{}\"><p class=\"entry-head\"><span class=\"seq\">#{position}</span> ",
            if at_fault { " at-fault" } else { "" }
        ));
        if at_fault && let Some(rule) = fault.rule {
            out.push_str("<span class=\"rule-tag\">✖ ");
            out.push_str(rule);
            out.push_str("</span> ");
        }
        if entry.sequence != position as u64 {
            out.push_str(&format!("<span class=\"warn\">⚠ recorded as sequence {}</span> ", entry.sequence));
        }
        match entry.kind {
            EntryKind::SkillActivation => activation(out, entry, skills),
            EntryKind::ToolCall | EntryKind::ToolRefused => attempt(out, entry, position),
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    if shown < trace.entries.len() {
        out.not_shown(trace.entries.len() - shown, "trace entries are");
    }
    out.push_str("</section>\n");
}

fn activation(out: &mut Page, entry: &TraceEntry, skills: &SkillSet) {
    let name = entry.skill.as_deref().unwrap_or("");
    out.push_str("<strong>Skill activated</strong> <code>");
    escape::scalar(out, &Value::from(name), CELL_CHARS);
    out.push_str("</code></p><dl class=\"facts\"><dt>SHA-256</dt><dd><code>");
    escape::scalar(out, &entry.sha256.as_deref().map_or(Value::Null, Value::from), CELL_CHARS);
    out.push_str("</code> ");
    let recorded = entry.sha256.as_deref().unwrap_or("");
    out.push_str(match skills.get(name) {
        Some(skill) if skill.sha256.eq_ignore_ascii_case(recorded) => "✔ the loaded skill file",
        Some(_) => "<strong class=\"warn\">⚠ not the loaded skill file</strong>",
        None => "<strong class=\"warn\">⚠ no such skill is loaded</strong>",
    });
    out.push_str("</dd></dl>");
}

fn outcome(out: &mut Page, response: Option<&Value>) {
    let status = response.and_then(|response| response.get("status")).and_then(Value::as_str);
    let error = response.and_then(|response| response.get("error"));
    match status {
        Some("success") => out.push_str("<span class=\"ok\">✔ success</span>"),
        Some("error") => {
            out.push_str("<span class=\"bad\">✖ error <code>");
            escape::scalar(
                out,
                error.and_then(|error| error.get("code")).unwrap_or(&Value::Null),
                CELL_CHARS,
            );
            out.push_str("</code>");
            match error.and_then(|error| error.get("retryable")).and_then(Value::as_bool) {
                Some(true) => out.push_str(", retryable"),
                Some(false) => out.push_str(", not retryable"),
                None => {}
            }
            out.push_str("</span>");
        }
        _ => out.push_str("<span class=\"bad\">⚠ no readable status</span>"),
    }
}

fn attempt(out: &mut Page, entry: &TraceEntry, position: usize) {
    let refused = entry.kind == EntryKind::ToolRefused;
    out.push_str(if refused {
        "<strong class=\"bad\">✖ Call refused</strong> <code>"
    } else {
        "<strong>Tool call</strong> <code>"
    });
    escape::scalar(out, &entry.name.as_deref().map_or(Value::Null, Value::from), CELL_CHARS);
    out.push_str("</code>");
    if let Some(attempt) = entry.attempt {
        out.push_str(&format!(" · attempt {attempt}"));
    }
    if let Some(duration) = entry.duration_ms {
        out.push_str(&format!(" · {duration:.3} ms"));
    }
    out.push_str(" · ");
    if refused {
        out.push_str("<span class=\"bad\">refused before it ran: <code>");
        escape::scalar(out, &entry.reason.as_deref().map_or(Value::Null, Value::from), CELL_CHARS);
        out.push_str("</code></span>");
    } else {
        outcome(out, entry.response.as_ref());
    }
    out.push_str("</p><div class=\"label\">Arguments</div>");
    escape::json(out, entry.args.as_ref().unwrap_or(&Value::Null), PREVIEW_CHARS);
    if let Some(receipts) = &entry.receipts {
        receipts_table(out, receipts, position);
    }
    out.push_str(&format!(
        "<details id=\"entry-{position}-response\" class=\"envelope\"><summary>The exact envelope the caller received</summary>"
    ));
    escape::json(out, entry.response.as_ref().unwrap_or(&Value::Null), PREVIEW_CHARS * 4);
    out.push_str("</details>");
}

fn receipts_table(out: &mut Page, receipts: &[Value], position: usize) {
    if receipts.is_empty() {
        out.push_str("<p class=\"label\">No capability was used.</p>");
        return;
    }
    out.push_str(&format!(
        "<table class=\"receipts\"><caption>Capability receipts of entry {position}</caption><thead><tr>\
         <th scope=\"col\">Capability</th><th scope=\"col\">Target</th><th scope=\"col\">Status</th>\
         <th scope=\"col\">Bytes</th><th scope=\"col\">Time</th></tr></thead><tbody>"
    ));
    for (index, receipt) in receipts.iter().enumerate() {
        if !out.has_room() {
            out.push_str("</tbody></table>");
            out.not_shown(receipts.len() - index, "receipts are");
            return;
        }
        out.push_str("<tr>");
        for key in ["capability", "target", "status", "bytes"] {
            out.push_str("<td>");
            escape::scalar(out, receipt.get(key).unwrap_or(&Value::Null), CELL_CHARS);
            out.push_str("</td>");
        }
        out.push_str("<td>");
        match receipt.get("durationUs").and_then(Value::as_f64) {
            Some(micros) => out.push_str(&format!("{:.3} ms", micros / 1000.0)),
            None => escape::scalar(out, receipt.get("durationUs").unwrap_or(&Value::Null), CELL_CHARS),
        }
        out.push_str("</td></tr>");
    }
    out.push_str("</tbody></table>");
}
