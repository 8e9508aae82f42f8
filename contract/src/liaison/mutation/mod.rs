//! The mutation-claim detector behind the validator's `mutation_claim` rule:
//! does a text claim that the liaison (which only reads) caused an effect?
//!
//! Design, in three layers:
//! - `normalize`: the text is folded before anything is read (NFKC,
//!   format characters removed, look-alike letters folded to ASCII with the
//!   UTS #39 skeleton, markdown stripped, case folded) and split into
//!   clauses of words; line breaks are spaces, so a claim split over lines
//!   is one clause.
//! - `effects.toml` (read by `lexicon`): every effect the contract
//!   forbids, as data: approve/reject/authorise, publish/post/send/submit,
//!   schedule, retry/re-run/restart/trigger/execute, delete/remove/cancel,
//!   changing budgets or settings, rotating credentials, write/save/store,
//!   verify/mark as verified, and phrasal stand-ins ("took care of it"),
//!   each verb with its five forms.
//! - `grammar` and `detect`: who the liaison is (I, we, my team,
//!   Harmonia, Nova, the liaison, the agent, the assistant) and four
//!   shapes of claim:
//!   1. an actor, then auxiliaries, adverbs and asides, then an effect verb
//!      in the form the last auxiliary asks for (active, progressive,
//!      perfect, future, offers such as "let me publish"), and the verbs
//!      coordinated with it ("I read the job and published act-1");
//!   2. a passive with the liaison as agent ("was approved by Harmonia");
//!   3. an effect noun the liaison owns ("my approval");
//!   4. an approval, publishing or execution receipt (docs/contract.md §5.7).
//!
//! What stays allowed: negations in the chain or the clause ("I cannot
//! approve", "nothing was published by me", "I approved nothing"), other
//! actors ("you approved", "the scheduler retried", "the Harmonia workflow
//! published"), recommendations and conditionals to the user ("I recommend
//! that you approve"), states without an actor ("awaiting approval", "was
//! published on Monday"), a retry of a read ("I retried the read"), and
//! reported questions ("you asked whether I approved it"), and quotations
//! of what the tools returned ([`find_outside_quotations`]).
//!
//! It is lexical: it reads words, not meaning. A claim made without an
//! actor it knows ("Done: act-1 is live now"), split across sentences
//! ("Harmonia. Published act-1."), or put in words outside its tables is
//! not seen; the corpus in `tests/claims/` measures what it does see.

use std::collections::HashSet;

mod detect;
mod grammar;
mod lexicon;
mod normalize;

#[cfg(test)]
mod tests;

/// One claim of an effect found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The effect's family in `effects.toml`, e.g. `publish`, or `receipt`.
    pub family: String,
    /// The matched words, normalised, e.g. `harmonia published`.
    pub phrase: String,
}

/// The first claim of an effect in `text`, if any.
pub fn find(text: &str) -> Option<Finding> {
    normalize::clauses(text).iter().find_map(|clause| detect::claim_in(clause))
}

/// Like [`find`], but a span in double quotes (`"..."` or `“...”`) that
/// repeats one of `quotations` exactly, ignoring case, is read as a
/// quotation of that source rather than the liaison's own words: a story
/// titled "We deleted our database" can be cited. The validator passes the
/// strings its tools returned this invocation.
pub fn find_outside_quotations(text: &str, quotations: &[&str]) -> Option<Finding> {
    let known: HashSet<String> = quotations.iter().map(|quotation| quotation.trim().to_lowercase()).collect();
    find(&without_quotations(text, &known))
}

/// The longest quoted span considered, so the scan for its end is bounded.
const MAX_QUOTATION_CHARS: usize = 2000;

fn without_quotations(text: &str, known: &HashSet<String>) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(['"', '\u{201C}']) {
        let quote = rest[open..].chars().next().map_or(1, char::len_utf8);
        let inner_start = open + quote;
        let close = rest[inner_start..]
            .char_indices()
            .take(MAX_QUOTATION_CHARS)
            .find(|(_, c)| matches!(c, '"' | '\u{201D}'))
            .map(|(at, c)| (inner_start + at, c.len_utf8()));
        let Some((close, close_length)) = close else { break };
        let inner = rest[inner_start..close].trim().to_lowercase();
        kept.push_str(&rest[..open]);
        if !inner.is_empty() && known.contains(&inner) {
            kept.push_str(" quotation ");
        } else {
            kept.push_str(&rest[open..close + close_length]);
        }
        rest = &rest[close + close_length..];
    }
    kept.push_str(rest);
    kept
}
