//! The evidence section: every evidence item any recorded response
//! carried, with its provenance, record or dataset, the entry and envelope
//! it came from, whether the validator counts it, and the claims citing it.

use crate::bound::{MAX_IDS_SHOWN, Page};
use crate::escape::{self, PREVIEW_CHARS};
use crate::view::{AnswerView, EvidenceCard};
use serde_json::Value;
use std::collections::HashMap;

/// Most evidence cards written; past it, a count of the rest (a trace
/// holds at most 4,096 entries of at most 100 items each, and the page
/// must stay a page).
pub const MAX_CARDS: usize = 2_000;

/// Claims listed as citing one item; the rest are counted.
const MAX_CITING: usize = 50;

/// For each id a claim cites (its first [`MAX_IDS_SHOWN`]), the claims
/// citing it, 1-based, each once: the first [`MAX_CITING`], and how many
/// more. One pass over the claims, so a card costs a lookup.
fn citing<'a>(answer: &AnswerView<'a>) -> HashMap<&'a str, (Vec<usize>, usize)> {
    let mut citing: HashMap<&str, (Vec<usize>, usize)> = HashMap::new();
    for (index, claim) in answer.claims.iter().enumerate() {
        for id in claim.ids.iter().take(MAX_IDS_SHOWN) {
            let (listed, more) = citing.entry(id).or_default();
            if listed.last() == Some(&(index + 1)) {
                continue;
            }
            if listed.len() < MAX_CITING {
                listed.push(index + 1);
            } else {
                *more += 1;
            }
        }
    }
    citing
}

/// Write the evidence section.
pub fn write(out: &mut Page, cards: &[EvidenceCard<'_>], answer: &AnswerView<'_>) {
    out.push_str("<section id=\"evidence\" aria-labelledby=\"evidence-heading\"><h2 id=\"evidence-heading\">Evidence</h2>");
    if cards.is_empty() {
        out.push_str("<p>No response in the trace carries evidence.</p></section>\n");
        return;
    }
    if !out.has_room() {
        out.not_shown(cards.len(), "evidence items are");
        out.push_str("</section>\n");
        return;
    }
    let citing = citing(answer);
    out.push_str(
        "<p>Only items of successful tool calls count as returned this invocation (docs/contract.md §5.0.5). \
         <span class=\"prov\">live</span> data came from a real source, <span class=\"prov mock\">mock</span> \
         from built-in fixtures; a <em>record</em> item names one story, post or job, a <em>dataset</em> item the read as a whole.</p>",
    );
    out.push_str("<ol class=\"cards\">");
    let mut shown = 0;
    for (index, card) in cards.iter().enumerate().take(MAX_CARDS) {
        if !out.has_room() {
            break;
        }
        shown += 1;
        let n = index + 1;
        out.push_str(&format!(
            "<li id=\"evidence-{n}\" class=\"card{}\">",
            if card.counted { "" } else { " uncounted" }
        ));
        out.push_str("<p class=\"card-head\"><code>");
        escape::scalar(out, &card.id.map_or(Value::Null, Value::from), 120);
        out.push_str("</code> ");
        let provenance = card.field("provenance");
        let class = match provenance {
            Some("live") => "prov",
            Some("mock") => "prov mock",
            _ => "prov other",
        };
        out.push_str(&format!("<span class=\"{class}\">"));
        escape::scalar(out, &provenance.map_or(Value::Null, Value::from), 40);
        out.push_str("</span> <span class=\"level\">");
        out.push_str(match card.is_record() {
            Some(true) => "record",
            Some(false) => "dataset",
            None => "reference unreadable",
        });
        out.push_str("</span>");
        if !card.counted {
            out.push_str(" <strong class=\"warn\">⚠ not counted</strong>");
        }
        out.push_str("</p><dl class=\"facts\"><dt>Source</dt><dd>");
        escape::long(out, card.field("source").unwrap_or("—"), PREVIEW_CHARS);
        out.push_str("</dd><dt>Reference</dt><dd>");
        match card.item.get("reference") {
            Some(Value::String(reference)) => escape::long(out, reference, PREVIEW_CHARS),
            Some(Value::Null) | None => out.push_str("none (the read as a whole)"),
            Some(other) => escape::json(out, other, PREVIEW_CHARS),
        }
        out.push_str(&format!("</dd><dt>From</dt><dd><a href=\"#entry-{0}\">entry {0}</a> (", card.entry));
        escape::scalar(out, &Value::from(card.tool), 120);
        out.push_str(&format!("), <a href=\"#entry-{}-response\">its envelope</a></dd>", card.entry));
        if let Some((claims, more)) = card.id.and_then(|id| citing.get(id)) {
            out.push_str("<dt>Cited by</dt><dd>");
            let links: Vec<String> =
                claims.iter().map(|n| format!("<a href=\"#claim-{n}-detail\">claim {n}</a>")).collect();
            out.push_str(&links.join(", "));
            if *more > 0 {
                out.push_str(&format!(" and {} more claims", escape::thousands(*more)));
            }
            out.push_str("</dd>");
        }
        out.push_str("</dl></li>");
    }
    out.push_str("</ol>");
    if shown < cards.len().min(MAX_CARDS) {
        out.not_shown(cards.len() - shown, "evidence items are");
    } else if cards.len() > MAX_CARDS {
        out.push_str(&format!(
            "<p class=\"missing\">⚠ {} more items are not shown; each entry's envelope in the timeline holds them.</p>",
            escape::thousands(cards.len() - MAX_CARDS)
        ));
    }
    out.push_str("</section>\n");
}
