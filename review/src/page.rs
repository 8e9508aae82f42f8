//! The document: head (CSP, title, styles), the skip link and table of
//! contents, the verdict and the seal, then the sections in reading order:
//! answer, evidence, timeline.

use crate::bound::{MAX_IDS_SHOWN, MAX_MARKED_CLAIMS, Page};
use crate::escape::{self, PREVIEW_CHARS};
use crate::evidence::MAX_CARDS;
use crate::fault::{self, Fault};
use crate::view::{AnswerView, evidence_cards};
use crate::{CONTENT_SECURITY_POLICY, Review, SealState, answer, evidence, timeline};
use harmonia_contract::liaison::validator::Mode;
use std::collections::{BTreeSet, HashMap};

/// The stylesheet every page shares.
pub const STYLE: &str = include_str!("style.css");

/// Characters of the page's `<title>` (it cannot fold text away).
const TITLE_CHARS: usize = 140;
/// Characters of the heading shown before the rest is folded away, so the
/// verdict stays on the first screen.
const HEADING_CHARS: usize = 200;

/// The `<head>` and the opening of the `<body>`.
pub fn open_document(out: &mut Page, title: &str, extra_style: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    out.push_str(CONTENT_SECURITY_POLICY);
    out.push_str("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    match escape::cut_at(title, TITLE_CHARS) {
        Some(cut) => {
            escape::text(out, &title[..cut]);
            out.push('…');
        }
        None => escape::text(out, title),
    }
    out.push_str("</title>\n<style>\n");
    out.push_str(STYLE);
    out.push_str(extra_style);
    out.push_str("</style>\n</head>\n<body>\n");
}

/// The closing of the document.
pub fn close_document(out: &mut Page) {
    out.push_str(
        "<footer><p>Written by <code>harmonia review</code>. Rules: docs/contract.md §5. \
         Every string on this page is shown as text, as the tools and the agent sent it; \
         hidden characters appear as <span class=\"cc\">[U+XXXX]</span>.</p></footer>\n</body>\n</html>\n",
    );
}

/// Per-claim rules: hovering or focusing claim n shows its tip and
/// outlines the evidence it cites (each card once). Built from indexes
/// only, never from data; for the first [`MAX_MARKED_CLAIMS`] claims, as
/// long as the rules stay within `room` bytes. Returns the rules and how
/// many claims have theirs.
fn claim_style(answer: &AnswerView<'_>, by_id: &HashMap<&str, usize>, room: usize) -> (String, usize) {
    let mut style = String::new();
    let mut styled = 0;
    for (index, claim) in answer.claims.iter().enumerate().take(MAX_MARKED_CLAIMS) {
        let n = index + 1;
        let active = format!("main:has(.c{n}:hover, #claim-{n}:focus, #claim-{n}-detail:target)");
        let mut rules = format!("{active} #claim-{n}-tip {{ display: block; }}\n");
        let cited: BTreeSet<usize> = claim
            .ids
            .iter()
            .take(MAX_IDS_SHOWN)
            .filter_map(|id| by_id.get(id).copied())
            .filter(|card| *card < MAX_CARDS)
            .collect();
        for card in cited {
            rules.push_str(&format!(
                "{active} #evidence-{} {{ outline: 3px solid var(--focus); }}\n",
                card + 1
            ));
        }
        if style.len() + rules.len() > room {
            break;
        }
        style.push_str(&rules);
        styled = n;
    }
    (style, styled)
}

fn verdict(out: &mut Page, review: &Review<'_>, fault: &Fault) {
    let accepted = review.verdict.accepted;
    out.push_str(if accepted {
        "<section id=\"verdict\" class=\"verdict accepted\" aria-labelledby=\"verdict-heading\">"
    } else {
        "<section id=\"verdict\" class=\"verdict refused\" aria-labelledby=\"verdict-heading\">"
    });
    out.push_str("<h2 id=\"verdict-heading\">Verdict</h2>");
    match (accepted, review.verdict.rule) {
        (true, _) => out.push_str(
            "<p class=\"outcome\"><span class=\"icon\" aria-hidden=\"true\">✔</span> Accepted: \
             every rule holds.</p>",
        ),
        (false, rule) => {
            out.push_str("<p class=\"outcome\"><span class=\"icon\" aria-hidden=\"true\">✖</span> Refused: rule <code class=\"rule\">");
            out.push_str(rule.map_or("unknown", |rule| rule.as_str()));
            out.push_str("</code></p>");
            if let Some(reason) = &review.verdict.reason {
                out.push_str("<div class=\"reason\"><span class=\"label\">Reason</span>");
                escape::long(out, reason, PREVIEW_CHARS);
                out.push_str("</div>");
            }
            let claims = answer_claims(review);
            let mut links = Vec::new();
            if fault.in_text.is_some() {
                links.push("<a href=\"#fault\">the phrase in the answer</a>".to_owned());
            }
            if let Some(claim) = fault.claim.filter(|claim| *claim < claims) {
                links.push(format!("<a href=\"#claim-{0}-detail\">claim {0}</a>", claim + 1));
            }
            if let Some((note, _)) = fault.uncertainty {
                links.push(format!("<a href=\"#note-{0}\">uncertainty note {0}</a>", note + 1));
            }
            if fault.error_path {
                links.push("<a href=\"#error-path\">the error path</a>".to_owned());
            }
            if fault.seal {
                links.push("<a href=\"#seal\">the seal</a>".to_owned());
            }
            if let Some(entry) = fault.entry {
                links.push(format!("<a href=\"#entry-{entry}\">trace entry {entry}</a>"));
            }
            if !links.is_empty() {
                out.push_str("<p class=\"where\">Where: ");
                out.push_str(&links.join(", "));
                out.push_str("</p>");
            }
        }
    }
    out.push_str(match review.mode {
        Mode::Review => "<p class=\"mode\">Checked in <strong>review</strong> mode: the seal is shown but does not change the verdict.</p>",
        Mode::Submission => "<p class=\"mode\">Checked in <strong>submission</strong> mode: the trace must verify, and no claim may cite mock evidence.</p>",
    });
    seal(out, review.seal, fault.seal);
    out.push_str("</section>\n");
}

fn answer_claims(review: &Review<'_>) -> usize {
    review.answer.get("claims").and_then(|claims| claims.as_array()).map_or(0, Vec::len)
}

fn seal(out: &mut Page, state: &SealState, at_fault: bool) {
    let fault = if at_fault { " at-fault" } else { "" };
    match state {
        SealState::Verified { key } => {
            out.push_str(&format!("<div id=\"seal\" class=\"seal verified{fault}\"><span class=\"icon\" aria-hidden=\"true\">✔</span> Seal verified: the trace is exactly what the key <code class=\"key\">"));
            escape::text(out, key);
            out.push_str("</code> signed.</div>");
        }
        SealState::Unsigned => out.push_str(&format!(
            "<div id=\"seal\" class=\"seal unverified{fault}\"><span class=\"icon\" aria-hidden=\"true\">⚠</span> \
             Unsigned: the trace carries no seal, so nothing shows who recorded it.</div>"
        )),
        SealState::Unverified { reason } => {
            out.push_str(&format!("<div id=\"seal\" class=\"seal unverified{fault}\"><span class=\"icon\" aria-hidden=\"true\">⚠</span> Seal not verified: "));
            escape::text(out, reason);
            out.push_str("</div>");
        }
    }
}

/// The whole page, within its bound (see [`crate::bound`]).
pub fn render(review: &Review<'_>) -> String {
    let mut out = Page::for_input(review.input_bytes);
    let answer = AnswerView::read(review.answer);
    let trace = &review.document.trace;
    let (cards, by_id) = evidence_cards(trace);
    let fault = fault::locate(review.verdict, &answer, trace);
    let outcome = match review.verdict.rule {
        _ if review.verdict.accepted => "Accepted".to_owned(),
        Some(rule) => format!("Refused ({})", rule.as_str()),
        None => "Refused".to_owned(),
    };
    let heading = match (review.title, answer.skill) {
        (Some(title), _) => title.to_owned(),
        (None, Some(skill)) => format!("An answer under skill {skill}"),
        (None, None) => "An answer".to_owned(),
    };
    let heading = heading.as_str();
    // The style rules of claims take at most a quarter of the room.
    let (style, styled) = claim_style(&answer, &by_id, out.room() / 4);
    open_document(&mut out, &format!("{outcome}: {heading} · Harmonia review"), &style);
    out.push_str("<a class=\"skip\" href=\"#verdict\">Skip to the verdict</a>\n<header><p class=\"kicker\">Harmonia review</p><h1>");
    match escape::cut_at(heading, HEADING_CHARS) {
        Some(cut) => {
            escape::text(&mut out, &heading[..cut]);
            out.push_str("…</h1>");
            out.push_str(
                "<details class=\"whole\"><summary>Show the whole title</summary><div class=\"text\">",
            );
            escape::text(&mut out, heading);
            out.push_str("</div></details>");
        }
        None => {
            escape::text(&mut out, heading);
            out.push_str("</h1>");
        }
    }
    out.push_str(
        "<nav aria-label=\"Sections\"><ul><li><a href=\"#verdict\">Verdict</a></li>\
         <li><a href=\"#answer\">Answer</a></li><li><a href=\"#claims\">Claims</a></li>\
         <li><a href=\"#evidence\">Evidence</a></li><li><a href=\"#timeline\">Timeline</a></li></ul></nav></header>\n<main id=\"main\">\n",
    );
    verdict(&mut out, review, &fault);
    answer::write(&mut out, &answer, &fault, &cards, &by_id, trace, styled);
    evidence::write(&mut out, &cards, &answer);
    timeline::write(&mut out, trace, review.skills, &fault);
    out.push_str("</main>\n");
    close_document(&mut out);
    out.into_string()
}
