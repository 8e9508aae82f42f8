//! The mutation-claim detector behind the validator's `mutation_claim` rule:
//! does a text claim that the liaison (which only reads) caused an effect?
//!
//! Design, in three layers:
//! - [`normalize`]: the text is folded before anything is read (NFKC,
//!   format characters removed, look-alike letters folded to ASCII with the
//!   UTS #39 skeleton, markdown stripped, case folded) and split into
//!   clauses of words; line breaks are spaces, so a claim split over lines
//!   is one clause.
//! - `effects.toml` (read by [`lexicon`]): every effect the contract
//!   forbids, as data: approve/reject/authorise, publish/post/send/submit,
//!   schedule, retry/re-run/restart/trigger/execute, delete/remove/cancel,
//!   changing budgets or settings, rotating credentials, write/save/store,
//!   verify/mark as verified, and phrasal stand-ins ("took care of it"),
//!   each verb with its five forms.
//! - [`grammar`] and `detect`: who the liaison is (I, we, my team,
//!   Harmonia, Nova, the liaison, the agent, the assistant) and four
//!   shapes of claim:
//!   1. an actor, then auxiliaries, adverbs and asides, then an effect verb
//!      in the form the last auxiliary asks for (active, progressive,
//!      perfect, future, offers such as "let me publish"), and the verbs
//!      coordinated with it ("I read the job and published act-1");
//!   2. a passive with the liaison as agent ("was approved by Harmonia");
//!   3. an effect noun the liaison owns ("my approval");
//!   4. an approval, publishing or execution receipt (CONTRACT.md §5.7).
//!
//! What stays allowed: negations in the chain or the clause ("I cannot
//! approve", "nothing was published by me", "I approved nothing"), other
//! actors ("you approved", "the scheduler retried", "the Harmonia workflow
//! published"), recommendations and conditionals to the user ("I recommend
//! that you approve"), states without an actor ("awaiting approval", "was
//! published on Monday"), a retry of a read ("I retried the read"), and
//! reported questions ("you asked whether I approved it").
//!
//! It is lexical: it reads words, not meaning. A claim made without an
//! actor it knows ("Done: act-1 is live now"), split across sentences
//! ("Harmonia. Published act-1."), or put in words outside its tables is
//! not seen; the corpus in `tests/claims/` measures what it does see.

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
