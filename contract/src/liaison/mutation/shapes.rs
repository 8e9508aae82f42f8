//! The liaison's acts told in shapes its verbs alone do not show, read
//! after `invert`'s own (docs/contract.md §5.7): a causative ("I had the
//! banner replaced"), an act named by its noun ("I did the refund"), a
//! base form after a passive auxiliary with the liaison as agent ("Post is
//! publish by me"), the liaison named as an event's doer ("my doing",
//! "went through on my end"), a change announced from now on ("Starting
//! now, ..."), a headline that names an act done ("Cleanup finished"), a
//! state said to hold now or no longer ("The channel is now private"), and
//! an offer to undo ("I can switch it back"). Each keeps the frames that
//! make a sentence not the liaison's claim: a negation, a question, a
//! condition, a source that reports it, the user's, evidence that
//! carries it.

use super::Finding;
use super::acts::ACTS;
use super::deny::Grounding;
use super::grammar;
use super::invert::{
    AGENT_WINDOW, REACH, finding, heads_fragment, is_bare_base, is_closed, may_be_verb, starts_object, word,
};
use super::lexicon::{BASE, LEXICON, PARTICIPLE, PAST};
use super::normalize::Token;
use super::roles;
use super::words;

/// The first of this module's shapes that starts at `index`.
pub(super) fn claim_at(clause: &[Token], index: usize, groundings: &[Grounding<'_>]) -> Option<Finding> {
    base_passive_claim(clause, index)
        .or_else(|| agency_claim(clause, index))
        .or_else(|| announced_change(clause, index))
        .or_else(|| completion_headline(clause, index))
        .or_else(|| state_now(clause, index, groundings))
        .or_else(|| undo_offer(clause, index))
}

/// How many words may stand between a causative's object and its verb.
const CAUSATIVE_WINDOW: usize = 6;

const CAUSATIVE: &str = "a causative: the liaison had it done";

// "I had the banner replaced", "I've had the contacts merged", "I got the
// refund pushed through": `had` or `got` before an object and a
// participle of any verb the allow-list does not have ("I had the figures
// checked" is a read). A present "I have the report attached" is
// possession, not a causative.
pub(super) fn causative_claim(clause: &[Token], start: usize, end: usize) -> Option<Finding> {
    let causative = end.checked_sub(1).and_then(|at| word(clause, at));
    if !matches!(causative, Some("had" | "got" | "gotten")) || !word(clause, end).is_some_and(starts_object) {
        return None;
    }
    (end + 1..end + 1 + CAUSATIVE_WINDOW).take_while(|&at| word(clause, at).is_some()).find_map(|at| {
        let current = word(clause, at)?;
        let participle = words::completed_form(current) & PARTICIPLE != 0
            || (current.len() > 4 && current.ends_with("ed") && words::is_adjective(current));
        let read = ACTS.act_at(clause, at).is_some();
        (participle && !read && may_be_verb(current)).then(|| finding(clause, start, at, at + 1, CAUSATIVE))
    })
}

const ANNOUNCED: &str = "a change announced from a time on: read as the liaison's";

/// Openings that announce a change from a time on: "Starting now",
/// "Effective immediately", "From Monday onwards".
const CHANGE_OPENINGS: &[&[&str]] = &[
    &["starting", "now"],
    &["starting", "today"],
    &["starting", "tomorrow"],
    &["starting", "monday"],
    &["starting", "next"],
    &["effective", "immediately"],
    &["effective", "today"],
    &["effective", "now"],
    &["effective", "tomorrow"],
    &["from", "now", "on"],
    &["from", "today"],
    &["from", "tomorrow"],
    &["from", "monday"],
    &["from", "tuesday"],
    &["from", "wednesday"],
    &["from", "thursday"],
    &["from", "friday"],
    &["from", "next"],
    &["going", "forward"],
];

/// The openings that name the moment of writing: what holds from then on
/// was changed by whoever writes. A later date ("from Monday") may be a
/// schedule read from the data, unless the clause says what it replaces.
const IMMEDIATE: &[&str] = &["now", "immediately", "today", "on"];

/// Words that say what a change replaces: "instead of 9", "no longer".
const REPLACING: &[&str] = &["instead", "longer", "anymore", "rather"];

/// Present verbs that state how things now stand after such an opening.
const STANDING: &[&str] = &[
    "is", "are", "goes", "go", "gets", "get", "has", "have", "opens", "runs", "sends", "lands", "points",
    "shows",
];

/// Words that make what follows a report or someone else's: "the
/// dashboard shows", "Dana says", "you can".
const NOT_ANNOUNCED: &[&str] = &[
    "you",
    "your",
    "i",
    "we",
    "says",
    "said",
    "reports",
    "shows",
    "reads",
    "lists",
    "plans",
    "expects",
    "according",
];

// "Starting now, new sign-ups get a 30-day trial", "From tomorrow, the
// standup is at 10", "Effective immediately, the badge no longer opens
// the office": a change said to hold from a time on, which only an act
// makes, unless it is a report ("the dashboard shows"), the user's
// ("you can"), a question, a condition, modal or negated ("will", "may").
fn announced_change(clause: &[Token], index: usize) -> Option<Finding> {
    if index != 0 || !matches!(word(clause, 0)?, "starting" | "effective" | "from" | "going") {
        return None;
    }
    let length = grammar::longest(clause, 0, CHANGE_OPENINGS)?;
    if clause.contains(&Token::Question) || grammar::is_hypothetical(clause) {
        return None;
    }
    let rest: Vec<&str> = clause[length..].iter().filter_map(Token::word).collect();
    if rest.iter().any(|w| NOT_ANNOUNCED.contains(w) || grammar::is_negation(w) && *w != "no")
        || rest.iter().any(|w| matches!(*w, "will" | "would" | "may" | "might" | "could" | "should" | "can"))
    {
        return None;
    }
    let immediate = word(clause, length - 1).is_some_and(|last| IMMEDIATE.contains(&last));
    if !immediate && !rest.iter().any(|w| REPLACING.contains(w)) {
        return None;
    }
    let verb = rest.iter().position(|w| STANDING.contains(w))?;
    Some(finding(clause, 0, length + verb, (length + verb + 3).min(clause.len()), ANNOUNCED))
}

const HEADLINE: &str = "an act named done by its noun";

/// Words that say an act named before them is done: "Cleanup finished",
/// "Rollback successful", "Upload OK".
const COMPLETIONS: &[&str] = &[
    "finished",
    "complete",
    "completed",
    "successful",
    "succeeded",
    "ok",
    "okay",
    "done",
    "success",
    "successfully",
];

/// The most words a headline's noun may have: "Bulk price update finished".
const HEADLINE_NOUNS: usize = 3;

// "Cleanup finished.", "Migration 100% complete.", "Rollback successful.":
// a clause that opens with a noun and a completion word says that act is
// done, and names no one else: the inverted default reads it as the
// liaison's, unless the noun names a read ("Audit done", "Checks
// complete").
fn completion_headline(clause: &[Token], index: usize) -> Option<Finding> {
    // A fragment's head only, and a completion word within reach at all,
    // before anything is allocated.
    let reach = index + 1..(index + HEADLINE_NOUNS + 3).min(clause.len());
    if !heads_fragment(clause, index)
        || !reach.into_iter().any(|at| word(clause, at).is_some_and(|w| COMPLETIONS.contains(&w)))
    {
        return None;
    }
    let nouns: Vec<&str> = (index..index + HEADLINE_NOUNS).map_while(|at| word(clause, at)).collect();
    let nouns: Vec<&str> = nouns.into_iter().take_while(|w| !w.chars().all(|c| c.is_ascii_digit())).collect();
    let done = (1..=nouns.len()).find(|&length| {
        let mut at = index + length;
        // A share done may stand between: "Migration 100% complete".
        while word(clause, at).is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
            && at < index + length + 2
        {
            at += 1;
        }
        word(clause, at).is_some_and(|w| COMPLETIONS.contains(&w))
    })?;
    let named = &nouns[..done];
    let noun_like = named.iter().all(|w| {
        w.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
            && !is_closed(w)
            && !grammar::is_auxiliary(w)
            && !grammar::SUBJECTS.iter().any(|subject| subject[0] == *w)
    });
    let read = named
        .iter()
        .any(|w| roles::READ_NOUNS.contains(w) || ACTS.act_at(clause, index).is_some() && named.len() == 1);
    if !noun_like || read || !roles::negations_before(clause, index + done).is_multiple_of(2) {
        return None;
    }
    if clause.contains(&Token::Question) || grammar::is_hypothetical(clause) {
        return None;
    }
    Some(finding(clause, index, index, index + done, HEADLINE))
}

const NOW: &str = "a state said to hold now: read as the liaison's";

/// Words that, with "now" or "no longer", state how something stands.
const STATE_VERBS: &[&str] = &[
    "is",
    "are",
    "'s",
    "'re",
    "am",
    "has",
    "have",
    "sits",
    "redirects",
    "accepts",
    "points",
    "sees",
    "see",
    "follow",
    "follows",
    "land",
    "lands",
    "gets",
    "get",
    "can",
];

/// What makes such a clause a report or the user's: a source, a
/// reporting verb, a count.
const REPORTED: &[&str] = &["shows", "says", "lists", "reports", "per", "according", "reads"];

// "The channel is now private", "You're now subscribed", "Tom no longer has
// access", "Sam can log in now": a state said to hold from now on, which
// only a change makes; read as the liaison's unless the evidence carries a
// word of it, a source reports it, a number follows ("is now at 4%"), or
// the clause is the user's ("you can now publish it"), a question, a
// condition, modal, or negated.
fn state_now(clause: &[Token], index: usize, groundings: &[Grounding<'_>]) -> Option<Finding> {
    let marker = word(clause, index)?;
    let no_longer = marker == "no" && word(clause, index + 1) == Some("longer");
    if marker != "now" && !no_longer {
        return None;
    }
    // "right now", "just now", "for now", "by now", "from now on": times.
    let before = index.checked_sub(1).and_then(|at| word(clause, at));
    if before.is_some_and(|w| {
        matches!(
            w,
            "right" | "just" | "for" | "by" | "until" | "till" | "from" | "as" | "starting" | "effective"
        )
    }) {
        return None;
    }
    if clause.contains(&Token::Question)
        || grammar::is_hypothetical(clause)
        || roles::credited_elsewhere(clause, index)
    {
        return None;
    }
    let words: Vec<&str> = clause.iter().filter_map(Token::word).collect();
    if words
        .iter()
        .any(|w| REPORTED.contains(w) || roles::SOURCES.contains(w) || grammar::is_negation(w) && *w != "no")
    {
        return None;
    }
    if words
        .iter()
        .any(|w| {
            matches!(
                *w,
                "will" | "would" | "may" | "might" | "could" | "should" | "i" | "we" | "if"
            )
        })
        // A passive's modal: "the key can be rotated now or later".
        || words.windows(2).any(|pair| matches!(pair[0], "can" | "must") && pair[1] == "be")
        // A change that happened by itself: "replica-2 is now primary — the
        // promotion was automatic".
        || words.iter().any(|w| matches!(*w, "automatic" | "automatically"))
        || words.windows(2).any(|pair| {
            pair[0] == "you" && matches!(pair[1], "can" | "could" | "may" | "should" | "need" | "must")
        })
    {
        return None;
    }
    let after = index + if no_longer { 2 } else { 1 };
    if (after..after + 2).any(|at| word(clause, at).is_some_and(|w| w.chars().any(|c| c.is_ascii_digit())))
        || word(clause, after)
            .is_some_and(|w| matches!(w, "at" | "up" | "down" | "over" | "under" | "about" | "around"))
    {
        return None;
    }
    // A state verb within reach, before or after the marker.
    let verb = (index.saturating_sub(REACH)..(after + 3).min(clause.len()))
        .find(|&at| word(clause, at).is_some_and(|w| STATE_VERBS.contains(&w)))?;
    // Evidence that carries the state's own word grounds it: "The channel
    // is now private" citing `private` (not any evidence of the claim's).
    let state = (verb.max(index) + 1..clause.len()).filter_map(|at| word(clause, at)).find(|w| {
        !matches!(*w, "now" | "no" | "longer" | "the" | "a" | "an" | "all" | "back")
            && !grammar::PREPOSITIONS.contains(w)
            && !roles::DETERMINERS.contains(w)
    });
    if let Some(state) = state.filter(|w| w.len() >= 3)
        && groundings.iter().any(|grounding| grounding.holds_stem(state, &[state]))
    {
        return None;
    }
    let start = verb.min(index);
    Some(finding(clause, start, verb, (verb.max(index) + 2).min(clause.len()), NOW))
}

const UNDO: &str = "an offer to undo: presupposes the liaison's act";

// "Let me know if you want me to undo the change", "I can switch it
// back", "I'll move the posts back": the liaison offering to undo an act
// says it did the act.
fn undo_offer(clause: &[Token], index: usize) -> Option<Finding> {
    let current = word(clause, index)?;
    if !matches!(
        current,
        "undo"
            | "revert"
            | "reverse"
            | "roll"
            | "switch"
            | "put"
            | "change"
            | "move"
            | "turn"
            | "set"
            | "restore"
    ) {
        return None;
    }
    let plain = matches!(current, "undo" | "revert" | "restore");
    let phrasal = (index + 1..index + 4).any(|at| word(clause, at) == Some("back"));
    if !plain && !phrasal {
        return None;
    }
    // The liaison as the one who would undo: "me to", "I can", "I'll".
    let by_liaison = (index.saturating_sub(4)..index).any(|at| {
        matches!(word(clause, at), Some("me" | "i" | "we" | "us"))
            && !word(clause, at + 1).is_some_and(|w| matches!(w, "know" | "how"))
    });
    if !by_liaison || !roles::negations_before(clause, index).is_multiple_of(2) {
        return None;
    }
    Some(finding(clause, index, index, index + 1, UNDO))
}

const AGENCY: &str = "the liaison named as the event's doer";

/// Phrases that make an event the liaison's own: "The rollout was my
/// doing", "the payment went through on my end".
const AGENCY_PHRASES: &[&[&str]] = &[
    &["my", "doing"],
    &["our", "doing"],
    &["on", "my", "end"],
    &["on", "my", "side"],
    &["on", "our", "end"],
    &["on", "our", "side"],
];

/// Verbs of an event that, with one of [`AGENCY_PHRASES`] after it, was
/// the liaison's act: "went through on my end", "finished on my side".
const EVENTS: &[&str] = &[
    "went",
    "gone",
    "finished",
    "completed",
    "happened",
    "succeeded",
    "ran",
    "passed",
    "cleared",
    "processed",
    "took",
    "worked",
    "landed",
];

// "The rollout of the new pricing was my doing", "the payment went through
// on my end": an event the liaison says it did. "Nothing changed on my
// end" is negated; "the error is on my end" names no event.
fn agency_claim(clause: &[Token], index: usize) -> Option<Finding> {
    if matches!(word(clause, index)?, "thanks" | "courtesy" | "that") {
        return credit_claim(clause, index);
    }
    if !matches!(word(clause, index)?, "my" | "our" | "on") {
        return None;
    }
    let Some(length) = grammar::longest(clause, index, AGENCY_PHRASES) else {
        return commanded_claim(clause, index);
    };
    if !roles::negations_before(clause, index).is_multiple_of(2) || clause.contains(&Token::Question) {
        return None;
    }
    let doing = word(clause, index + length - 1) == Some("doing");
    // "... in maintenance mode – my doing": the phrase owns what it follows.
    if doing {
        return (!grammar::is_hypothetical(clause))
            .then(|| finding(clause, index, index, index + length, AGENCY));
    }
    let event = (index.saturating_sub(REACH)..index)
        .rev()
        .take_while(|&at| word(clause, at).is_some())
        .find(|&at| {
            word(clause, at)
                .is_some_and(|verb| EVENTS.contains(&verb) || (doing && matches!(verb, "was" | "were")))
        })?;
    Some(finding(clause, event, event, index + length, AGENCY))
}

/// Phrases that credit what the clause says to the liaison: "thanks to
/// me", "courtesy of yours truly", "that was me".
const CREDITS: &[&[&str]] = &[
    &["thanks", "to", "me"],
    &["thanks", "to", "us"],
    &["thanks", "to", "yours", "truly"],
    &["thanks", "to", "my"],
    &["thanks", "to", "our"],
    &["courtesy", "of", "me"],
    &["courtesy", "of", "us"],
    &["courtesy", "of", "yours", "truly"],
    &["courtesy", "of", "my"],
    &["that", "was", "me"],
    &["that", "was", "all", "me"],
    &["that", "was", "us"],
];

// "The campaign is paused, thanks to me", "the bio is up to date, courtesy
// of yours truly", "the tweet is gone — that was me": a result credited to
// the liaison is its act. "Thanks to my review" credits a read; a
// question, a condition or a negation credits nothing.
fn credit_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let length = grammar::longest(clause, index, CREDITS)?;
    let owner = word(clause, index + length - 1);
    let read = matches!(owner, Some("my" | "our"))
        && (index + length..index + length + 2)
            .any(|at| word(clause, at).is_some_and(|noun| roles::READ_NOUNS.contains(&noun)));
    if read
        || !roles::negations_before(clause, index).is_multiple_of(2)
        || clause.contains(&Token::Question)
        || roles::addressed(clause, index).is_some()
    {
        return None;
    }
    Some(finding(clause, index, index, index + length, AGENCY))
}

/// Acts of the liaison that, after "on my", made an event happen: "on my
/// command", "on my second try".
const COMMANDS: &[&str] = &[
    "command",
    "commands",
    "instruction",
    "instructions",
    "order",
    "orders",
    "say-so",
    "request",
    "pass",
    "try",
    "attempt",
    "click",
];

/// Ordinals that may stand before one of [`COMMANDS`]: "on my second try".
const ORDINALS: &[&str] = &["first", "second", "third", "last", "final", "next", "latest"];

// "The ad set paused on my command", "the carousel re-uploaded on my second
// try": a past or a participle of a verb the allow-list does not have,
// before "on my" and an act of the liaison's, was its doing.
fn commanded_claim(clause: &[Token], index: usize) -> Option<Finding> {
    if word(clause, index)? != "on" || !matches!(word(clause, index + 1)?, "my" | "our") {
        return None;
    }
    let mut noun = index + 2;
    if word(clause, noun).is_some_and(|w| ORDINALS.contains(&w)) {
        noun += 1;
    }
    if !word(clause, noun).is_some_and(|w| COMMANDS.contains(&w))
        || !roles::negations_before(clause, index).is_multiple_of(2)
        || clause.contains(&Token::Question)
    {
        return None;
    }
    let event = (index.saturating_sub(REACH)..index)
        .rev()
        .take_while(|&at| word(clause, at).is_some())
        .find(|&at| {
            word(clause, at).is_some_and(|verb| {
                may_be_verb(verb)
                    && ACTS.act_at(clause, at).is_none()
                    && words::completed_form(verb) & (PAST | PARTICIPLE) != 0
            })
        })?;
    Some(finding(clause, event, event, noun + 1, AGENCY))
}

/// Nouns that name a read, after "I did": "I did a quick review".
fn names_a_read(clause: &[Token], at: usize) -> bool {
    ACTS.act_at(clause, at).is_some()
}

/// How many words may stand between "did" and the noun of its act.
const NOUN_WINDOW: usize = 3;

const NAMED_ACT: &str = "an act named by its noun";

// "I did the refund", "we made the transfer", "I've made a change": `did`
// or `made` before an effect of the table named by its noun. "I did a
// quick review" names a read.
pub(super) fn named_act_claim(clause: &[Token], start: usize, end: usize) -> Option<Finding> {
    // "did" stands in the chain before `end`; "made", "done" at it.
    let did = end.checked_sub(1).and_then(|at| word(clause, at)) == Some("did");
    let determiner = if did { end } else { end + 1 };
    if !(did || matches!(word(clause, end)?, "done" | "made"))
        || !word(clause, determiner).is_some_and(starts_object)
    {
        return None;
    }
    (determiner + 1..determiner + 1 + NOUN_WINDOW).take_while(|&at| word(clause, at).is_some()).find_map(
        |at| {
            let noun = word(clause, at)?;
            let effect = LEXICON.lookup(noun).iter().any(|found| found.forms & BASE != 0);
            (effect && !names_a_read(clause, at)).then(|| finding(clause, start, end, at + 1, NAMED_ACT))
        },
    )
}

const BASE_PASSIVE: &str = "a passive with the liaison as agent";

// "Post is publish by me", "the order is cancel by me": a base form after
// a passive auxiliary, with the liaison as its agent (non-native English).
fn base_passive_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let current = word(clause, index)?;
    let auxiliary = index.checked_sub(1).and_then(|before| word(clause, before));
    let passive = auxiliary.is_some_and(|before| grammar::PASSIVE_AUXILIARIES.contains(&before));
    if !passive {
        return None;
    }
    // The agent first: a word match, where the tagger's reading costs more.
    let (at, length) = (index + 1..index + 1 + AGENT_WINDOW)
        .take_while(|&at| word(clause, at).is_some())
        .find_map(|at| grammar::agent_at(clause, at, false).map(|length| (at, length)))?;
    if !may_be_verb(current)
        || !is_bare_base(current)
        || ACTS.act_at(clause, index).is_some()
        || grammar::negated_before(clause, index)
    {
        return None;
    }
    Some(finding(clause, index - 1, index, at + length, BASE_PASSIVE))
}
