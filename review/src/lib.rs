//! The review page: one self-contained HTML file showing why an answer was
//! accepted or refused (docs/contract.md §5.13).
//!
//! The page holds the verdict and the seal's state, the answer text with
//! each claim marked (hovering or focusing a claim shows the evidence it
//! cites; activating it goes to the claim's details), the phrase that broke
//! a rule marked in place with its rule code, every evidence item linked to
//! the trace entry and envelope it came from, the session's timeline
//! (activation, attempts with arguments, durations, outcomes, capability
//! receipts, refusals) and the error path of an error answer.
//!
//! Safety: every string comes from a tool, a plugin or an agent, so every
//! string is escaped ([`escape`]); the page loads nothing and runs no
//! script: its Content-Security-Policy is `default-src 'none'` with inline
//! styles only, so not even a script that slipped through could run.
//! Interactions are links, `<details>` and CSS (`:hover`, `:focus`,
//! `:target`, `:has`).
//!
//! Size: a page is at most 4 × the bytes of its input + 256 KiB, whatever
//! the input holds ([`bound`]): what does not fit is left out, saying so.
//!
//! Parts:
//! - [`review_page`]: the entry point for a caller holding a parsed trace
//!   document, its seal check, an answer, the skills and the mode
//!   (`harmonia review`, and `harmonia serve`'s `POST /v1/review`).
//! - [`render`] and [`Review`]: the same from a verdict already computed.
//! - [`index_page`] and [`IndexRow`]: the page listing many reviews
//!   (`harmonia demo --html`).
//! - [`SealState`]: verified by which key, unsigned, or not verified.
//! - `page` (the document and its header), `answer`, `evidence`,
//!   `timeline`: the sections; `fault`: where a refusal points; `marks`:
//!   the answer text with its claims and fault marked; `view`: the raw JSON
//!   read leniently; [`escape`]: untrusted text into HTML; [`bound`]: the
//!   page's bound and the page being written.

mod answer;
pub mod bound;
pub mod escape;
mod evidence;
mod fault;
mod index;
mod marks;
mod page;
mod timeline;
mod view;

pub use index::{IndexRow, index_page};

use harmonia_contract::liaison::skills::SkillSet;
use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::{Mode, Verdict, validate_received};
use serde_json::Value;
use std::fmt::Display;

/// The Content-Security-Policy every page carries in a `<meta>` tag:
/// nothing may load, no script may run, inline styles only.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// What the trace's seal showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SealState {
    /// Signed by this key (64 hex digits), the trusted one.
    Verified {
        /// The signer's public key.
        key: String,
    },
    /// The trace carries no seal.
    Unsigned,
    /// Signed, but the check failed: altered, another key, no key to
    /// check with. The reason says which.
    Unverified {
        /// Why.
        reason: String,
    },
}

impl SealState {
    /// The state of `document`'s seal given the outcome of checking it
    /// (`TraceDocument::verify`, or the reason there was no key to check with).
    pub fn of<E: Display>(document: &TraceDocument, verification: &Result<(), E>) -> Self {
        match (verification, &document.seal) {
            (Ok(()), Some(seal)) => Self::Verified { key: seal.public_key.clone() },
            (_, None) => Self::Unsigned,
            (Err(reason), Some(_)) => Self::Unverified { reason: reason.to_string() },
        }
    }
}

/// Everything one review page shows.
pub struct Review<'a> {
    /// A heading for the page (a scenario's title); `None` names the skill.
    pub title: Option<&'a str>,
    /// The trace as read.
    pub document: &'a TraceDocument,
    /// Its seal's state.
    pub seal: &'a SealState,
    /// The answer as sent (any JSON: a malformed answer is shown as it is).
    pub answer: &'a Value,
    /// The validator's verdict on them.
    pub verdict: &'a Verdict,
    /// The skills the trace was checked against (to say whether the
    /// activated file is the loaded one).
    pub skills: &'a SkillSet,
    /// The mode the verdict was reached in.
    pub mode: Mode,
    /// The bytes the trace and the answer were read from (a request's
    /// body; [`input_bytes`] for values at hand): the page is at most
    /// [`bound::page_bound`] of it.
    pub input_bytes: usize,
}

/// The bytes of `document` and `answer` as compact JSON: the input size of
/// a page for a caller holding values rather than the bytes they came from.
pub fn input_bytes(document: &TraceDocument, answer: &Value) -> usize {
    use harmonia_contract::json_size::compact_bytes;
    // Writing these values cannot fail; a count that did would add nothing.
    [
        compact_bytes(&document.trace, usize::MAX),
        compact_bytes(&document.seal, usize::MAX),
        compact_bytes(answer, usize::MAX),
    ]
    .into_iter()
    .map(Option::unwrap_or_default)
    .sum()
}

/// The page for `review`.
pub fn render(review: &Review<'_>) -> String {
    page::render(review)
}

/// Validate `answer` against `document` as `harmonia validate` does and
/// return the review page: the one call `harmonia review` and
/// `harmonia serve`'s `POST /v1/review` make.
///
/// `verification` is the outcome of checking the seal
/// (`document.verify(&trusted_key)`), or the reason no key was at hand; in
/// [`Mode::Submission`] a failed check refuses the answer with
/// `trace_unverified`, in [`Mode::Review`] it is shown and the rules are
/// checked on what the trace says. The verdict is exactly
/// `validate_received`'s. The page is a complete HTML document, UTF-8,
/// to be served as `text/html; charset=utf-8`; it needs nothing else.
/// `input_bytes` is what the trace and the answer were read from (a
/// request's body; [`input_bytes`] for values at hand): the page is at
/// most 4 × it + 256 KiB ([`bound`]).
pub fn review_page<E: Display>(
    document: &TraceDocument,
    verification: Result<(), E>,
    answer: &Value,
    skills: &SkillSet,
    mode: Mode,
    input_bytes: usize,
) -> String {
    let (page, _) = review_with_verdict(document, verification, answer, skills, mode, None, input_bytes);
    page
}

/// [`review_page`] with a title, also returning the verdict shown.
pub fn review_with_verdict<E: Display>(
    document: &TraceDocument,
    verification: Result<(), E>,
    answer: &Value,
    skills: &SkillSet,
    mode: Mode,
    title: Option<&str>,
    input_bytes: usize,
) -> (String, Verdict) {
    let seal = SealState::of(document, &verification);
    let verdict = validate_received(&document.trace, verification, answer, skills, mode);
    let page = render(&Review {
        title,
        document,
        seal: &seal,
        answer,
        verdict: &verdict,
        skills,
        mode,
        input_bytes,
    });
    (page, verdict)
}

#[cfg(test)]
mod tests;
