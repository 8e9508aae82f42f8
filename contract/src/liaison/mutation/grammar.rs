//! The closed word classes the detector reads claims with: who counts as
//! the liaison, which words may stand between an actor and its verb, and
//! which words negate.
//!
//! The verb after an actor must have the form its last auxiliary asks for
//! ("will publish", "have published", "am publishing"), so a noun that is
//! spelt like a verb ("I have schedule data") is not read as the verb.

use super::lexicon::{ANY, BASE, Forms, GERUND, PARTICIPLE, PAST, THIRD};
use super::normalize::Token;

/// The forms a verb may have right after a subject: "I approve",
/// "Harmonia approves", "we approved".
pub(super) const FINITE: Forms = BASE | THIRD | PAST;

/// The liaison as the subject of a clause: first person, the product, and
/// the liaison's own names and roles.
pub(super) const SUBJECTS: &[&[&str]] = &[
    &["i"],
    &["we"],
    &["harmonia"],
    &["nova"],
    &["the", "liaison"],
    &["the", "liaison", "agent"],
    &["the", "agent"],
    &["the", "assistant"],
    &["the", "ai"],
    &["the", "ai", "agent"],
    &["the", "ai", "assistant"],
    &["the", "bot"],
    &["this", "liaison"],
    &["this", "agent"],
    &["this", "assistant"],
    &["your", "liaison"],
    &["your", "agent"],
    &["your", "assistant"],
    &["our", "liaison"],
    &["our", "agent"],
    &["our", "assistant"],
    &["my", "team"],
    &["our", "team"],
    &["yours", "truly"],
    &["me", "who"],
    &["us", "who"],
];

/// Offers in which the liaison would act: "let me publish", "want me to
/// approve it?". The verb follows in its base form.
const OFFERS: &[&[&str]] = &[
    &["let", "me"],
    &["let", "us"],
    &["allow", "me", "to"],
    &["want", "me", "to"],
    &["wants", "me", "to"],
    &["like", "me", "to"],
    &["need", "me", "to"],
    &["want", "us", "to"],
    &["like", "us", "to"],
];

/// The liaison as the agent of a passive: "published by me".
pub(super) const AGENTS: &[&[&str]] = &[
    &["me"],
    &["us"],
    &["myself"],
    &["ourselves"],
    &["harmonia"],
    &["nova"],
    &["the", "liaison"],
    &["the", "agent"],
    &["the", "assistant"],
    &["the", "ai"],
    &["this", "assistant"],
    &["this", "agent"],
    &["your", "assistant"],
    &["your", "agent"],
    &["our", "assistant"],
    &["our", "agent"],
    &["my", "team"],
    &["our", "team"],
    &["yours", "truly"],
];

/// Words after an agent that make it another actor: "by the Harmonia
/// workflow", "by Harmonia's scheduler".
const COMPONENTS: &[&str] = &[
    "'s",
    "workflow",
    "workflows",
    "scheduler",
    "pipeline",
    "host",
    "runtime",
    "system",
    "service",
    "worker",
    "team",
    "operator",
    "operators",
    "engine",
    "backend",
    "publisher",
    "platform",
    "app",
    "tool",
    "tools",
    "job",
    "jobs",
    "store",
    "api",
];

/// Agents that need a passive auxiliary before the participle ("was
/// published on your behalf"), since an active "the workflow published it
/// on your behalf" names another actor.
const BEHALF: &[&[&str]] = &[
    &["on", "your", "behalf"],
    &["on", "my", "behalf"],
    &["on", "our", "behalf"],
    &["on", "my", "end"],
    &["on", "our", "end"],
    &["from", "my", "end"],
    &["from", "my", "side"],
    &["from", "our", "side"],
    &["through", "me"],
    &["via", "me"],
];

/// Recall rules: a passive's time that is this conversation names the
/// liaison as its agent, as "on your behalf" does: "Keys revoked during
/// the current session", "Invoices voided during our chat".
const THIS_SESSION: &[&[&str]] = &[
    &["during", "this", "session"],
    &["during", "the", "current", "session"],
    &["during", "our", "session"],
    &["during", "this", "chat"],
    &["during", "our", "chat"],
    &["during", "this", "conversation"],
    &["during", "our", "conversation"],
    &["in", "this", "chat"],
    &["in", "this", "session"],
    &["in", "this", "conversation"],
    &["in", "our", "chat"],
];

pub(super) const PASSIVE_AUXILIARIES: &[&str] =
    &["is", "are", "was", "were", "be", "been", "being", "'s", "got", "gets", "get", "gotten"];

/// Words that negate what follows them in a chain or a passive clause.
pub(super) const NEGATIONS: &[&str] = &[
    "not", "never", "no", "neither", "nor", "nothing", "none", "nobody", "unable", "without", "hardly",
    "cannot",
];

/// Words that end a verb's direct object: a read named after one of them
/// ("drafts on request") is not the verb's object.
pub(super) const PREPOSITIONS: &[&str] = &[
    "on", "for", "to", "at", "in", "into", "with", "after", "before", "from", "by", "of", "about", "via",
    "because", "as",
];

/// Words that, right after a verb, say nothing was affected.
const EMPTY_OBJECTS: &[&str] = &["nothing", "none", "no", "neither", "nobody", "zero", "0", "anything"];

/// Auxiliaries and the verb form each asks for next.
pub(super) const AUXILIARIES: &[(&str, Forms)] = &[
    ("will", BASE),
    ("would", BASE),
    ("shall", BASE),
    ("should", BASE),
    ("can", BASE),
    ("could", BASE),
    ("may", BASE),
    ("might", BASE),
    ("must", BASE),
    ("do", BASE),
    ("does", BASE),
    ("did", BASE),
    ("to", BASE),
    ("'d", BASE | PARTICIPLE),
    ("have", PARTICIPLE),
    ("has", PARTICIPLE),
    ("had", PARTICIPLE),
    ("having", PARTICIPLE),
    ("am", GERUND),
    ("is", GERUND),
    ("are", GERUND),
    ("was", GERUND),
    ("were", GERUND),
    ("be", GERUND),
    ("been", GERUND),
    ("'s", GERUND | PARTICIPLE),
];

/// Verbs that lead to another verb through `to`: "going to", "able to".
pub(super) const TO_VERBS: &[&str] = &[
    "going",
    "about",
    "able",
    "managed",
    "manage",
    "decided",
    "decide",
    "proceeded",
    "proceed",
    "tried",
    "try",
    "trying",
    "attempted",
    "want",
    "wants",
    "wanted",
    "like",
    "love",
    "plan",
    "plans",
    "planned",
    "planning",
    "intend",
    "intends",
    "intended",
    "need",
    "needs",
    "needed",
    "hope",
    "happy",
    "glad",
    "ready",
    "set",
    "supposed",
    "allowed",
    "permitted",
    "authorized",
    "authorised",
    "expected",
    "scheduled",
    "have",
    "has",
    "had",
    "got",
    "get",
    "used",
    "willing",
    "here",
    "continue",
    "continued",
    "began",
    "begin",
    "started",
    "start",
    "offered",
    "offer",
    "promise",
    "promised",
    "prepared",
    "seem",
    "seems",
    "seemed",
    "appear",
    "appears",
    "appeared",
];

/// Verbs that take another verb in `-ing`: "started publishing".
pub(super) const GERUND_VERBS: &[&str] = &[
    "start",
    "starts",
    "started",
    "begin",
    "began",
    "begun",
    "keep",
    "keeps",
    "kept",
    "continue",
    "continued",
    "finish",
    "finished",
];

/// Verbs that lead to another verb through `to` and deny it: "unable to".
/// Each counts as a negation, so "never failed to publish" is a claim.
pub(super) const NEGATING_TO_VERBS: &[&str] = &[
    "unable",
    "refuse",
    "refused",
    "decline",
    "declined",
    "fail",
    "failed",
    "forbidden",
    "prohibited",
    "forget",
    "forgot",
    "neglect",
    "neglected",
];

/// Verbs of "go ahead and ..." and "went and ...".
const GO: &[&str] = &["go", "goes", "went", "gone", "going"];

/// Adverbs allowed between an actor and its verb, besides words in `-ly`.
const ADVERBS: &[&str] = &[
    // Round eight: hedges of speech ("I kinda cancelled the 3pm").
    "kinda",
    "sorta",
    "everywhere",
    "elsewhere",
    "anywhere",
    "somewhere",
    "already",
    "just",
    "now",
    "then",
    "also",
    "finally",
    "today",
    "yesterday",
    "tonight",
    "earlier",
    "still",
    "even",
    "again",
    "once",
    "soon",
    "later",
    "too",
    "all",
    "both",
    "hereby",
    "right",
    "away",
    "here",
    "myself",
    "ourselves",
    "themselves",
    "indeed",
    "since",
    "thus",
    "therefore",
    "meanwhile",
    "first",
    "next",
    "instead",
    "anyway",
    "ahead",
    "actually",
    "only",
    "each",
    "very",
    "quite",
    "duly",
];

/// "-ly" words that are verbs, never adverbs.
const LY_VERBS: &[&str] = &["apply", "reply", "supply", "rely", "comply", "multiply", "imply", "ally", "fly"];

/// Words that join two verb phrases of one subject.
pub(super) const CONJUNCTIONS: &[&str] = &["and", "but", "or", "nor", "plus", "yet", "&"];

/// Conjunctions after which a new verb phrase does not share a negation.
pub(super) const CONTRASTS: &[&str] = &["but", "yet"];

/// Words that start a clause with another subject: the scan for more verbs
/// of the same subject stops there.
const CLAUSE_STARTS: &[&str] = &[
    "you", "he", "she", "they", "someone", "somebody", "everyone", "anyone", "nobody", "that", "which",
    "who", "whom", "whose", "because", "so", "although", "though", "while", "whereas", "if", "unless",
    "when", "whenever", "after", "before", "until", "where", "whether", "once",
];

/// Words that end a negation's reach backwards through a clause.
pub(super) const SCOPE_BREAKS: &[&str] = &["but", "yet", "whereas", "while", "although", "though", "however"];

/// The longest parenthetical skipped between an actor and its verb.
const MAX_ASIDE: usize = 6;
/// The most words a chain may hold.
const MAX_CHAIN: usize = 12;

fn word(clause: &[Token], index: usize) -> Option<&str> {
    clause.get(index).and_then(Token::word)
}

/// The length of `phrase` when `clause` holds it at `index`.
pub(super) fn phrase_at(clause: &[Token], index: usize, phrase: &[&str]) -> Option<usize> {
    let held =
        phrase.iter().enumerate().all(|(offset, expected)| word(clause, index + offset) == Some(expected));
    held.then_some(phrase.len())
}

/// The length of the longest of `phrases` that `clause` holds at `index`.
/// Its lists are asked at almost every word, so a phrase is compared in
/// full only when its first word has the length and first letter of the
/// word at `index`: most phrases cost two byte comparisons, not a call to
/// `memcmp`.
pub(super) fn longest(clause: &[Token], index: usize, phrases: &[&[&str]]) -> Option<usize> {
    let first = word(clause, index)?;
    let (length, letter) = (first.len(), first.as_bytes().first().copied());
    phrases
        .iter()
        .filter(|phrase| {
            phrase
                .first()
                .is_some_and(|head| head.len() == length && head.as_bytes().first().copied() == letter)
        })
        .filter_map(|phrase| phrase_at(clause, index, phrase))
        .max()
}

/// Nouns the liaison calls itself by after "your" or "this": "your
/// trusty assistant", "this bot".
const SELF_NOUNS: &[&str] =
    &["assistant", "agent", "bot", "sidekick", "helper", "liaison", "ai", "robot", "copilot"];

/// Words of the liaison's playful self-descriptions before one of
/// [`SELF_NOUNS`]: "your friendly neighbourhood agent".
const SELF_DESCRIPTIONS: &[&str] = &[
    "trusty",
    "trusted",
    "friendly",
    "humble",
    "faithful",
    "loyal",
    "little",
    "neighbourhood",
    "neighborhood",
    "resident",
    "digital",
    "virtual",
    "favourite",
    "favorite",
    "robot",
    "ai",
];

/// How many self-descriptions may stand before the noun.
const MAX_SELF_DESCRIPTIONS: usize = 3;

/// The liaison as a subject at `index`, its length: one of [`SUBJECTS`],
/// or "your" or "this" before up to three self-descriptions and a noun
/// the liaison calls itself by ("your AI sidekick", "this bot").
pub(super) fn liaison_subject(clause: &[Token], index: usize) -> Option<usize> {
    let length = named_subject(clause, index)?;
    let next = word(clause, index + length);
    let closed = |at: usize| clause.get(at).is_none_or(|token| *token == Token::Pause);
    // "Your assistant here, ...": an introduction, no subject of what
    // follows the pause.
    if next == Some("here") && closed(index + length + 1) {
        return None;
    }
    // "Harmonia update — ...": a heading, the base form a noun after a
    // name that would ask for "updates".
    let named = !matches!(word(clause, index), Some("i" | "we"));
    if named && next.is_some_and(super::invert::is_bare_base) && closed(index + length + 1) {
        return None;
    }
    Some(length)
}

/// The liaison's subject at `index`, before [`liaison_subject`]'s
/// exceptions.
fn named_subject(clause: &[Token], index: usize) -> Option<usize> {
    if let Some(length) = longest(clause, index, SUBJECTS) {
        return Some(length);
    }
    if !matches!(word(clause, index)?, "your" | "this") {
        return None;
    }
    for at in index + 1..=index + 1 + MAX_SELF_DESCRIPTIONS {
        let current = word(clause, at)?;
        let noun_follows = word(clause, at + 1).is_some_and(|next| SELF_NOUNS.contains(&next));
        if SELF_NOUNS.contains(&current) && !noun_follows {
            return Some(at + 1 - index);
        }
        if !SELF_DESCRIPTIONS.contains(&current) && !SELF_NOUNS.contains(&current) {
            return None;
        }
    }
    None
}

/// An actor at `index`: its length and the forms its verb may have.
pub(super) fn actor_at(clause: &[Token], index: usize) -> Option<(usize, Forms)> {
    if let Some(length) = longest(clause, index, OFFERS) {
        return Some((length, BASE));
    }
    liaison_subject(clause, index).map(|length| (length, FINITE))
}

/// A liaison agent after `by` at `index` ("by me"), or an agent phrase
/// ("on your behalf") when `passive` holds: the phrase's length.
pub(super) fn agent_at(clause: &[Token], index: usize, passive: bool) -> Option<usize> {
    if passive
        && let Some(length) = longest(clause, index, BEHALF).or_else(|| longest(clause, index, THIS_SESSION))
    {
        return Some(length);
    }
    if word(clause, index) != Some("by") {
        return None;
    }
    let length = longest(clause, index + 1, AGENTS).or_else(|| speaker_agent(clause, index + 1))?;
    let next = word(clause, index + 1 + length);
    (!next.is_some_and(|next| COMPONENTS.contains(&next))).then_some(length + 1)
}

/// Words ending in `s` that are no plural noun: "I have closed this
/// ticket" is no possession of "this".
const NOT_PLURALS: &[&str] = &[
    "this", "his", "its", "hers", "ours", "yours", "theirs", "is", "was", "has", "does", "thus", "always",
    "perhaps", "unless", "whereas", "across", "less", "plus", "various", "previous", "us",
];

/// Whether `word` may be a plural noun: "I have updated figures".
pub(super) fn is_plural_noun(word: &str) -> bool {
    word.len() > 3
        && word.ends_with('s')
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && !NOT_PLURALS.contains(&word)
}

/// Whether a passive auxiliary stands within three words before `index`.
pub(super) fn passive_auxiliary_before(clause: &[Token], index: usize) -> bool {
    (index.saturating_sub(3)..index)
        .any(|before| word(clause, before).is_some_and(|w| PASSIVE_AUXILIARIES.contains(&w)))
}

/// Whether `word` is an auxiliary ("was", "will"): met after an object, it
/// starts a clause with a subject of its own ("act-1 was approved").
pub(super) fn is_auxiliary(word: &str) -> bool {
    AUXILIARIES.iter().any(|(auxiliary, _)| *auxiliary == word && *auxiliary != "to")
}

pub(super) fn is_negation(word: &str) -> bool {
    NEGATIONS.contains(&word)
}

pub(super) fn is_empty_object(word: &str) -> bool {
    EMPTY_OBJECTS.contains(&word)
}

pub(super) fn starts_clause(word: &str) -> bool {
    CLAUSE_STARTS.contains(&word)
}

/// Whether `word` is a record's id, letters and digits joined by a hyphen
/// ("post-77", "job-7", "AS-2"): a thing named, never a verb.
pub(super) fn is_record_id(word: &str) -> bool {
    word.contains('-') && word.chars().any(|c| c.is_ascii_digit())
}

pub(super) fn is_adverb(word: &str) -> bool {
    ADVERBS.contains(&word) || (word.len() > 4 && word.ends_with("ly") && !LY_VERBS.contains(&word))
}

/// Months, as a date's word.
const MONTHS: &[&str] = &[
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];

/// Whether `word` names a time, not a thing: a number, a date or a clock
/// time ("3", "10:15", "2026-12-05"), a month, "today", "utc". After a
/// participle it is no object: "Ticket SUP-902 closed 10:15 today".
pub(super) fn is_when(word: &str) -> bool {
    let time = word.contains([':', '-', '/'])
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().all(|c| c.is_ascii_digit() || matches!(c, ':' | '-' | '.' | '/'));
    time || MONTHS.contains(&word)
        || matches!(word, "today" | "yesterday" | "tonight" | "utc" | "gmt" | "am" | "pm")
}

/// Whether the words from `at` say when: a time (see [`is_when`]), or a
/// number before a month ("3 Dec"); "412 likes" is a count.
pub(super) fn when_at(clause: &[Token], at: usize) -> bool {
    word(clause, at).is_some_and(|current| {
        is_when(current)
            || (current.chars().all(|c| c.is_ascii_digit())
                && word(clause, at + 1).is_some_and(|next| MONTHS.contains(&next)))
    })
}

/// Whether the clause speaks for the user: "if I were you, I'd approve".
pub(super) fn is_hypothetical(clause: &[Token]) -> bool {
    (0..clause.len())
        .any(|at| longest(clause, at, COUNTERFACTUALS).is_some() || inverted_condition(clause, at))
}

/// An unreal condition or wish of the liaison's: what it would do if it
/// could is no act ("If I could post, I'd have published it", "I wish I
/// could pause it", "If I were able to approve drafts").
const COUNTERFACTUALS: &[&[&str]] = &[
    &["if", "i", "were", "you"],
    &["if", "i", "could"],
    &["if", "we", "could"],
    &["if", "i", "were"],
    &["if", "we", "were"],
    &["if", "only", "i"],
    &["wish", "i", "could"],
    &["wish", "we", "could"],
    &["wish", "i", "were"],
];

/// How far an inverted condition's modal may stand after it.
const INVERTED_REACH: usize = 16;

/// "Were I able to change budgets", "Had I the access": a condition
/// inverted at the start of the clause or after a pause; with a thing as
/// subject, a modal after it makes it one ("Had the post gone out at 9,
/// it would have clashed", "Were the campaign paused, ... would roll
/// over").
pub(super) fn inverted_condition(clause: &[Token], at: usize) -> bool {
    let opens = matches!(word(clause, at), Some("were" | "had"))
        && at.checked_sub(1).is_none_or(|before| clause[before].word().is_none());
    if !opens {
        return false;
    }
    if matches!(word(clause, at + 1), Some("i" | "we")) {
        return true;
    }
    matches!(
        word(clause, at + 1),
        Some("the" | "this" | "that" | "your" | "its" | "our" | "their" | "a" | "an")
    ) && (at + 2..clause.len().min(at + INVERTED_REACH))
        .any(|next| matches!(word(clause, next), Some("would" | "could" | "might")))
}

/// Whether the actor at `index` is reported: "whether I approved", "you
/// asked if I published".
pub(super) fn is_reported(clause: &[Token], index: usize) -> bool {
    let before = |back: usize| index.checked_sub(back).and_then(|at| word(clause, at));
    let asked = [
        "ask",
        "asks",
        "asked",
        "asking",
        "wonder",
        "wondered",
        "wondering",
        "know",
        "check",
        "checked",
        "see",
    ];
    before(1) == Some("whether")
        || (before(1) == Some("if") && before(2).is_some_and(|verb| asked.contains(&verb)))
}

/// Whether a negation stands right before the actor at `index`: "neither I
/// nor Nova", "not even I".
/// A negation closed by a pause is an interjection: "No, I already
/// unpinned it" negates nothing.
pub(super) fn negated_before(clause: &[Token], index: usize) -> bool {
    (index.saturating_sub(2)..index)
        .any(|at| word(clause, at).is_some_and(is_negation) && clause.get(at + 1) != Some(&Token::Pause))
}

/// How many words back a negation reaches: the bound keeps the detector
/// linear in a clause's length.
const NEGATION_REACH: usize = 24;

/// Whether a negation reaches `index` from earlier in its clause: "nothing
/// was published by me". The reach ends at a contrast ("but"), at a
/// new coordinated clause (", and") and after [`NEGATION_REACH`] words.
pub(super) fn negated_in_scope(clause: &[Token], index: usize) -> bool {
    let mut at = index;
    while at > index.saturating_sub(NEGATION_REACH) {
        at -= 1;
        let Some(current) = word(clause, at) else {
            // A pause before a new subject ends the reach: "Don't worry
            // about it, I issued the refund".
            if word(clause, at + 1)
                .is_some_and(|next| matches!(next, "i" | "we" | "it" | "they" | "he" | "she"))
            {
                return false;
            }
            continue;
        };
        if SCOPE_BREAKS.contains(&current) {
            return false;
        }
        let after_pause = at > 0 && clause[at - 1] == Token::Pause;
        if after_pause && matches!(current, "and" | "so" | "then") {
            return false;
        }
        if is_negation(current) && word(clause, at + 1) != Some("only") {
            return true;
        }
    }
    false
}

/// The words between an actor and its verb, read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Chain {
    /// Where the chain stopped: the verb's position, if any.
    pub end: usize,
    /// The forms the verb may have.
    pub expect: Forms,
    /// A negation stood in the chain.
    pub negated: bool,
    /// An auxiliary stood in the chain.
    pub has_auxiliary: bool,
    /// The chain's last auxiliary was a form of `have` (for "I had it approved").
    pub ends_in_have: bool,
}

/// Reads auxiliaries, adverbs, negations, "going to"-style verbs and
/// pauses from `start`, expecting a verb of the `expect` forms after them.
/// With `skip_asides`, a pause closed by another within a few words is
/// skipped whole ("I, as asked, published"); without, only the pause is
/// ("I, published it, and"). Callers try both.
pub(super) fn walk(clause: &[Token], start: usize, expect: Forms, skip_asides: bool) -> Chain {
    let mut chain = Chain { end: start, expect, negated: false, has_auxiliary: false, ends_in_have: false };
    let mut at = start;
    let mut steps = 0;
    while at < clause.len() && steps < MAX_CHAIN {
        steps += 1;
        let Some(current) = word(clause, at) else {
            at = if skip_asides { aside_end(clause, at) } else { at + 1 };
            continue;
        };
        let next = word(clause, at + 1);
        if next == Some("to") && (TO_VERBS.contains(&current) || NEGATING_TO_VERBS.contains(&current)) {
            chain.negated |= NEGATING_TO_VERBS.contains(&current);
            chain.expect = BASE;
            chain.has_auxiliary = true;
            at += 2;
        } else if GO.contains(&current) && next == Some("ahead") && word(clause, at + 2) == Some("and") {
            chain.expect = ANY;
            at += 3;
        } else if GO.contains(&current) && next == Some("and") {
            chain.expect = ANY;
            at += 2;
        } else if let Some(length) =
            longest(clause, at, &[&["the", "one", "who"], &["the", "ones", "who"], &["the", "one", "that"]])
        {
            chain.expect = FINITE;
            at += length;
        } else if GERUND_VERBS.contains(&current) && next.is_some_and(|next| next.ends_with("ing")) {
            chain.expect = GERUND;
            chain.has_auxiliary = true;
            at += 1;
        } else if current == "not" && next == Some("only") {
            at += 2;
        } else if is_negation(current) {
            chain.negated = true;
            at += 1;
        } else if let Some((_, forms)) = AUXILIARIES.iter().find(|(auxiliary, _)| *auxiliary == current) {
            chain.expect = *forms;
            chain.has_auxiliary = true;
            chain.ends_in_have = matches!(current, "have" | "has" | "had" | "having");
            at += 1;
        } else if is_adverb(current) {
            at += 1;
        } else {
            break;
        }
    }
    chain.end = at;
    chain
}

/// Past a pause at `at`: past the whole aside when another pause closes it
/// within [`MAX_ASIDE`] words, else past the pause alone.
fn aside_end(clause: &[Token], at: usize) -> usize {
    let closing = (at + 1..clause.len().min(at + 2 + MAX_ASIDE)).find(|&index| clause[index] == Token::Pause);
    closing.map_or(at + 1, |index| index + 1)
}

/// Recall rules (docs/contract.md §5.7, "Recall rules from the red team's
/// gaps"): phrases that name the speaker as an agent after "by", beside
/// [`AGENTS`]: "the undersigned", "your humble servant".
const SPEAKER_AGENTS: &[&[&str]] = &[
    &["the", "undersigned"],
    &["yours", "sincerely"],
    &["yours", "faithfully"],
    &["your", "humble", "servant"],
    &["your", "servant"],
    &["the", "present", "writer"],
    &["this", "writer"],
    &["ya", "boy"],
    &["yours", "truly"],
    &["moi"],
    &["mim"],
];

/// Nouns the speaker calls itself by after "this" (or "the"), beside
/// [`SELF_NOUNS`]: "this LLM", "this very model".
const SPEAKER_NOUNS: &[&str] = &[
    "assistant",
    "agent",
    "bot",
    "chatbot",
    "liaison",
    "ai",
    "llm",
    "model",
    "robot",
    "copilot",
    "helper",
    "sidekick",
];

/// Words between "this" and a speaker noun: "this very model", "this here
/// assistant", "this conversational agent".
const SPEAKER_MODIFIERS: &[&str] = &["very", "here", "same", "conversational", "chat", "language", "humble"];

/// Gerunds that tie a noun to this conversation: "the one typing this",
/// "the entity answering you", "the system you're chatting with".
const SPEAKING: &[&str] =
    &["typing", "writing", "answering", "replying", "responding", "chatting", "talking", "speaking"];

/// Nouns of the text being read: "the author of this reply".
const THIS_TEXT: &[&str] = &["reply", "answer", "message", "response", "note", "chat", "text", "summary"];

/// The most words of a noun phrase before the words that tie it to the
/// conversation ("the concierge you're talking to").
const MAX_SPEAKER_WORDS: usize = 3;

/// The speaker named as an agent at `index` (after "by"), beyond
/// [`AGENTS`], its length: a phrase of [`SPEAKER_AGENTS`]; the liaison's
/// name misspelt by one edit or prefixed to more ("Hramonia", "Armonia",
/// "Noav", "HarmoniaBot"), also after "the one and only"; "this" (or
/// "your") before a speaker noun, spelt within one edit ("the assistnat");
/// a noun phrase tied to this conversation ("the one typing this", "the
/// A.I. you're chatting with", "the author of this reply").
fn speaker_agent(clause: &[Token], index: usize) -> Option<usize> {
    if let Some(length) = longest(clause, index, SPEAKER_AGENTS) {
        return Some(length);
    }
    let lead = if longest(clause, index, &[&["the", "one", "and", "only"]]).is_some() { 4 } else { 0 };
    if word(clause, index + lead).is_some_and(is_liaison_name) {
        return Some(lead + 1);
    }
    let determiner = word(clause, index)?;
    if !matches!(determiner, "the" | "this" | "your") {
        return None;
    }
    // "this (very) model", "the assistnat".
    let mut at = index + 1;
    while at < index + 1 + MAX_SPEAKER_WORDS
        && word(clause, at).is_some_and(|w| SPEAKER_MODIFIERS.contains(&w))
    {
        at += 1;
    }
    let noun = word(clause, at).is_some_and(|noun| {
        let own = determiner != "the" && SPEAKER_NOUNS.contains(&noun);
        own || ["assistant", "liaison"].iter().any(|name| noun != *name && within_one_edit(noun, name))
            || (determiner != "the"
                && noun.split_once('-').is_some_and(|(head, _)| SPEAKER_NOUNS.contains(&head)))
    });
    if noun {
        return Some(at + 1 - index);
    }
    // "the A.I." spelt out is "the a, i": with what ties it to the chat.
    let spelt_ai = word(clause, index + 1) == Some("a")
        && clause.get(index + 2) == Some(&Token::Pause)
        && word(clause, index + 3) == Some("i");
    if spelt_ai {
        return Some(4);
    }
    let head_end = index + 2;
    // "the author of this reply", "the author of this".
    if word(clause, index + 1).is_some_and(|noun| matches!(noun, "author" | "writer" | "sender"))
        && word(clause, index + 2) == Some("of")
        && word(clause, index + 3) == Some("this")
    {
        let text = word(clause, index + 4).is_some_and(|noun| THIS_TEXT.contains(&noun));
        return Some(if text { 5 } else { 4 });
    }
    // A noun phrase of up to three words tied to the chat after it.
    (head_end..index + 1 + MAX_SPEAKER_WORDS + 1).find_map(|at| {
        if at > head_end && word(clause, at - 1).is_none() {
            return None;
        }
        tied_to_chat(clause, at).map(|length| at + length - index)
    })
}

/// Words at `index` that tie the noun before them to this conversation:
/// "typing this", "answering you", "you're chatting with", "here" after
/// an automation.
fn tied_to_chat(clause: &[Token], index: usize) -> Option<usize> {
    let first = word(clause, index)?;
    if SPEAKING.contains(&first) {
        let next = word(clause, index + 1)?;
        return match next {
            "this" | "you" | "here" | "now" => Some(2),
            "to" | "with" if word(clause, index + 2) == Some("you") => Some(3),
            _ => None,
        };
    }
    if first == "you" {
        let skip = usize::from(matches!(word(clause, index + 1), Some("are" | "'re" | "re")));
        return word(clause, index + 1 + skip)
            .is_some_and(|verb| SPEAKING.contains(&verb))
            .then_some(2 + skip);
    }
    None
}

/// Whether `word` is the liaison's name misspelt by one edit (a
/// transposition included) or with more after it: "hramonia", "armonia",
/// "noav", "harmoniabot", "harmonia-the-liaison". "Nova" is short, so only
/// its transpositions count ("nov" is a month).
fn is_liaison_name(word: &str) -> bool {
    if word.starts_with("harmonia") {
        return true;
    }
    let nova = word.len() == 4 && word != "nova" && {
        let mut letters: Vec<char> = word.chars().collect();
        letters.sort_unstable();
        letters == ['a', 'n', 'o', 'v'] && within_one_edit(word, "nova")
    };
    nova || (word != "harmonia" && within_one_edit(word, "harmonia"))
}

/// Whether `word` is `target` with one letter inserted, deleted or
/// changed, or two neighbours swapped (bounded by the words' lengths).
fn within_one_edit(word: &str, target: &str) -> bool {
    let (a, b) = (word.as_bytes(), target.as_bytes());
    if a.len().abs_diff(b.len()) > 1 || a.len() > 32 {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    match (a.len(), b.len()) {
        (0, 0) => true,
        (m, n) if m == n => a[1..] == b[1..] || (m >= 2 && a[0] == b[1] && a[1] == b[0] && a[2..] == b[2..]),
        (m, n) if m > n => a[1..] == *b,
        _ => *a == b[1..],
    }
}
