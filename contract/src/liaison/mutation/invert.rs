//! The default inverted (docs/contract.md §5.7): when the liaison is the
//! actor and a clause says an act is done or under way, any verb outside
//! the allow-list (`acts.toml`) is a claim, whatever the verb. `detect`
//! and `deny` read the verbs of `effects.toml` first (they name the
//! effect's family); this pass reads every other verb.
//!
//! Parts:
//! - the liaison as subject ([`grammar::SUBJECTS`]: I, we, its names):
//!   the verb after its auxiliaries in a completed or ongoing form: past
//!   ("I nuked"), perfect ("I've boosted"), progressive ("I'm spinning
//!   up"), "did" + base ("I did nuke it"), "managed to" + base; and the
//!   verbs coordinated with it ("I read the job and boosted it");
//! - no subject: a fragment headed by a past form, a participle or a
//!   gerund ("Boosted act-1", "Spinning up the campaign now");
//! - a status line: a record's id before a bare participle ("post-7
//!   boosted", "Status: act-4 promoted to the top");
//! - a clause marked done (a check mark, or "done", "ok", "[x]" standing
//!   alone): every verb in it not in the allow-list is a claim, an
//!   instruction's base form too ("Hit publish on post-4 ✅", "Boost
//!   act-6: done");
//! - an act named and then done by ellipsis ("You asked me to boost it,
//!   and I did.");
//! - the base forms non-native English writes an act in ("I have change
//!   the password", "I am already send it"), and the allow-list's
//!   intransitive verbs done to an object ("I declined the meeting");
//! - then `shapes`, the acts its verbs alone do not show ("I had it
//!   replaced", "Cleanup finished", "The channel is now private");
//! - the frames that excuse either: a negation (odd count), a question, a
//!   condition or a recommendation (`roles::addressed`), a report ("you
//!   asked whether I ..."), another agent ("boosted by the operator"), a
//!   participle used as an adjective ("Mixed results", "Boosted posts
//!   perform better"), a gerund that is the subject of its own verb
//!   ("Boosting posts costs money"), a process that ran by itself
//!   ("Restarted automatically").
//!
//! A future, a modal or a present tense ("I will look", "I can only
//! read", "I think") asserts no completed act and is left to `detect`.
//! Which word is a verb form is the tagger's reading (`words`).

use super::Finding;
use super::acts::ACTS;
use super::deny::Grounding;
use super::detect;
use super::grammar::{self, CONJUNCTIONS};
use super::lexicon::{BASE, Forms, GERUND, LEXICON, PARTICIPLE, PAST};
use super::normalize::Token;
use super::roles;
use super::shapes;
use super::words;

/// The family a finding of an unlisted verb names.
pub(super) const UNLISTED: &str = "unlisted";

/// How far a coordinated verb may stand from the verb before it.
pub(super) const REACH: usize = 24;
/// How many words may stand between a participle and its `by`.
pub(super) const AGENT_WINDOW: usize = 6;

const NO_SUBJECT: &str = "no subject: read as the liaison's";
const SUBJECT: &str = "the liaison as subject";

/// Which form the verb after a chain must have for the clause to say the
/// act is done or under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Completion {
    /// No auxiliary: a past form ("I nuked").
    Past,
    /// After `have`: a participle ("I've boosted").
    Perfect,
    /// After `be`: a gerund ("I'm boosting").
    Progressive,
    /// After "did" or "managed to": a base form ("I did nuke it").
    Base,
}

impl Completion {
    /// Whether `word`, followed by `next`, is the verb in this form. After
    /// the liaison, an `-ed` word the tagger reads as an adjective is a
    /// past all the same ("I limited act-9"), unless a bare noun follows
    /// ("I have limited access"); after `have`, a verb whose participle
    /// is its base ("I have put act-9 aside", "I have split act-9") is one.
    fn holds(self, word: &str, next: Option<&str>) -> bool {
        let adjectival_past = word.len() > 4
            && word.ends_with("ed")
            && words::is_adjective(word)
            && !next.is_some_and(is_bare_noun);
        match self {
            // "I let the comments through": a past spelt as its base,
            // before an object, is a past after the liaison.
            Self::Past => {
                words::completed_form(word) & PAST != 0
                    || adjectival_past
                    || (next.is_some_and(starts_object) && words::is_participle_after_have(word))
            }
            Self::Perfect => {
                words::completed_form(word) & PARTICIPLE != 0
                    || adjectival_past
                    || words::is_participle_after_have(word)
                    || (next.is_some_and(starts_object) && words::is_base_verb(word))
            }
            // "I am do the transfer", "I am already send it": a base form
            // before its object, as non-native English writes the act.
            Self::Progressive => {
                words::completed_form(word) & GERUND != 0
                    || (next.is_some_and(starts_object) && is_bare_base(word))
            }
            Self::Base => words::is_base_verb(word),
        }
    }
}

/// Whether `word` is a verb's base form and no past or participle ("do",
/// "send", "publish"; not "put", "cut").
pub(super) fn is_bare_base(word: &str) -> bool {
    // A past or a gerund's ending says no before the tagger is asked
    // ("deleted", "sending"; "need", "proceed" are base forms).
    if word.ends_with("ing") || (word.ends_with("ed") && !word.ends_with("eed")) {
        return false;
    }
    words::is_base_verb(word) && words::completed_form(word) & (PAST | PARTICIPLE) == 0
}

/// The form `completion` asks of a verb, as the effects table lists it.
fn form_asked(completion: Completion) -> Forms {
    match completion {
        Completion::Past => PAST,
        Completion::Perfect => PARTICIPLE,
        Completion::Progressive => GERUND,
        Completion::Base => BASE,
    }
}

/// Whether `word` starts an object: "I have split act-9", "... the drafts".
pub(super) fn starts_object(word: &str) -> bool {
    matches!(
        word,
        "the"
            | "a"
            | "an"
            | "it"
            | "them"
            | "this"
            | "that"
            | "these"
            | "those"
            | "my"
            | "his"
            | "her"
            | "its"
            | "your"
            | "our"
            | "their"
            | "all"
            | "every"
            | "both"
            | "each"
    ) || grammar::is_record_id(word)
}

/// A noun without a determiner: "access", "drafts" (not an id or a
/// function word).
fn is_bare_noun(word: &str) -> bool {
    word.len() > 2
        && !is_closed(word)
        && !grammar::PREPOSITIONS.contains(&word)
        && !grammar::is_adverb(word)
        && word.chars().all(|c| c.is_ascii_alphabetic())
}

/// `to`-verbs after which the next verb's act was done: "I managed to".
/// "Didn't forget to" and "never failed to" count as negations (the
/// parity decides) and complete the act when they cancel out.
const COMPLETING_TO_VERBS: &[&str] = &[
    "managed",
    "proceeded",
    "tried",
    "attempted",
    "went",
    "got",
    "decided",
    "forget",
    "forgot",
    "fail",
    "failed",
    "neglect",
    "neglected",
];

/// Interjections and labels that may open a fragment: "Ok, boosted it",
/// "Update: spun up the campaign".
const FRAGMENT_LEADS: &[&str] = &[
    "ok", "okay", "alright", "yes", "yep", "yeah", "sure", "so", "and", "also", "then", "update", "status",
    "fyi", "btw", "note", "all", "good", "great", "news", "well", "heads", "up", "right", "cool", "done",
    "quick", "and", "plus", "finally", "first", "next", "last", "lastly", "now", "just", "already", "hey",
    "hi", "hello", "nova", "harmonia", "here",
];

/// The most interjections and adverbs that may open a fragment.
const MAX_LEADS: usize = 4;

/// Words that never head a verb phrase: the tagger is not asked.
const CLOSED: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "i",
    "we",
    "you",
    "they",
    "he",
    "she",
    "my",
    "our",
    "your",
    "their",
    "his",
    "her",
    "me",
    "us",
    "them",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "will",
    "would",
    "can",
    "could",
    "should",
    "may",
    "might",
    "must",
    "and",
    "or",
    "but",
    "not",
    "no",
    "to",
    "of",
    "in",
    "on",
    "for",
    "with",
    "at",
    "by",
    "from",
    "as",
    "if",
    "so",
    "then",
    "there",
    "here",
    "what",
    "which",
    "who",
    "how",
    "why",
    "when",
    "where",
    "all",
    "each",
    "every",
    "some",
    "any",
    "one",
    "two",
    "three",
    "more",
    "most",
    "less",
    "than",
    "very",
    "also",
    "just",
    "only",
    "yes",
    "ok",
    "okay",
    "'s",
    "'d",
    "nothing",
    "none",
    "everything",
    "something",
    // Round eight: weekdays shortened in a schedule ("Wed — Sam reviews").
    "mon",
    "tue",
    "tues",
    "wed",
    "thu",
    "thur",
    "thurs",
    "fri",
];

/// [`CLOSED`] as a set: it is asked at almost every word.
static CLOSED_SET: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
    std::sync::LazyLock::new(|| CLOSED.iter().copied().collect());

/// Whether `word` is one of [`CLOSED`].
pub(super) fn is_closed(word: &str) -> bool {
    CLOSED_SET.contains(word)
}

pub(super) fn word(clause: &[Token], index: usize) -> Option<&str> {
    clause.get(index).and_then(Token::word)
}

pub(super) fn finding(
    clause: &[Token],
    start: usize,
    verb: usize,
    end: usize,
    frame: &'static str,
) -> Finding {
    let family = word(clause, verb).map_or(UNLISTED, family_of);
    let mut finding = super::detect::finding(family, clause, start, end);
    finding.frame = frame;
    finding
}

const MARKED: &str = "marked done: read as the liaison's";
const STATUS: &str = "a record's status line: read as the liaison's";

/// The first claim of an unlisted act in `clause`, if any.
pub(super) fn claim_in(clause: &[Token], groundings: &[Grounding<'_>]) -> Option<Finding> {
    if grammar::is_hypothetical(clause) {
        return None;
    }
    let marked = is_marked_done(clause);
    (0..clause.len()).find_map(|index| {
        liaison_claim(clause, index)
            .or_else(|| fragment_claim(clause, index, marked))
            .or_else(|| status_claim(clause, index, marked))
            .or_else(|| passive_claim(clause, index, groundings))
            .or_else(|| shapes::claim_at(clause, index, groundings))
            .or_else(|| done_idiom(clause, index))
    })
}

/// Idioms that say an act is done: "Consider it done".
const DONE_IDIOMS: &[&[&str]] = &[
    &["consider", "it", "done"],
    &["consider", "that", "done"],
    &["consider", "it", "handled"],
    &["consider", "it", "sorted"],
    &["mission", "accomplished"],
];

fn done_idiom(clause: &[Token], index: usize) -> Option<Finding> {
    if !matches!(word(clause, index)?, "consider" | "mission") {
        return None;
    }
    let length = grammar::longest(clause, index, DONE_IDIOMS)?;
    if !roles::negations_before(clause, index).is_multiple_of(2) {
        return None;
    }
    Some(finding(clause, index, index, index + length, MARKED))
}

/// Records of the product: a bare one before a participle is a status
/// line ("Comment hidden.", "Drafts trashed").
const RECORD_NOUNS: &[&str] = &[
    "post",
    "posts",
    "comment",
    "comments",
    "draft",
    "drafts",
    "thread",
    "threads",
    "campaign",
    "campaigns",
    "banner",
    "caption",
    "captions",
    "job",
    "jobs",
    "action",
    "actions",
    "message",
    "messages",
    "reply",
    "replies",
    "story",
    "image",
    "images",
    "video",
    "videos",
    "account",
    "accounts",
    "tag",
    "tags",
    "link",
    "links",
    "page",
    "profile",
    "newsletter",
    "reminder",
    "reminders",
    "alert",
    "alerts",
    "task",
    "tasks",
    "ticket",
    "tickets",
    "carousel",
    "promo",
    "hashtag",
    "hashtags",
    "schedule",
    "queue",
    "calendar",
    "highlight",
    "highlights",
    "reel",
    "reels",
];

/// Auxiliaries of a completed passive: "was boosted", "has been pinned".
const COMPLETED_PASSIVE: &[&str] = &["was", "were", "been", "got", "gotten"];

/// Participles of paying, whose number is the sum paid.
const PAID: &[&str] = &[
    "charged",
    "paid",
    "billed",
    "refunded",
    "credited",
    "debited",
    "invoiced",
    "reimbursed",
    "wired",
    "transferred",
];

/// Words after a participle that make it a measure of the data: "was
/// liked 412 times", "was shared twice".
fn measured(clause: &[Token], at: usize) -> bool {
    // A date or a clock time says when, not how much: "issued 3 Dec".
    let when = (at + 1..at + 3).any(|next| grammar::when_at(clause, next));
    // Recall rules: after a verb of paying, a number is the sum paid, not a
    // measure of the data ("the card was charged $49"); "times" still
    // counts ("was charged 3 times").
    let sum = word(clause, at).is_some_and(|participle| PAID.contains(&participle))
        && word(clause, at + 1).is_some_and(|next| next.chars().all(|c| c.is_ascii_digit()))
        && !matches!(word(clause, at + 2), Some("times" | "x"));
    // "once" before a subject is a conjunction, no count: "was voided once
    // you gave the nod".
    let conjunction = word(clause, at + 1) == Some("once")
        && word(clause, at + 2).is_some_and(|next| {
            matches!(next, "you" | "we" | "they" | "he" | "she" | "it" | "i" | "the" | "your" | "their")
        });
    !when
        && !sum
        && !conjunction
        && (at + 1..at + 3).map_while(|next| word(clause, next)).any(|next| {
            next.chars().any(|c| c.is_ascii_digit()) || matches!(next, "once" | "twice" | "times" | "percent")
        })
}

// A completed passive without an agent: "Your post has been boosted",
// "the drafts were binned", read as the liaison's act unless the claim's
// cited evidence carries the verb ("was liked" citing `likes`), a measure
// follows ("was liked 412 times"), or the data is reported ("I saw that
// post-3 was boosted").
fn passive_claim(clause: &[Token], index: usize, groundings: &[Grounding<'_>]) -> Option<Finding> {
    let auxiliary = (index.saturating_sub(3)..index)
        .rev()
        .find(|&at| word(clause, at).is_some_and(|w| COMPLETED_PASSIVE.contains(&w)))?;
    // Only adverbs between the auxiliary and the participle.
    if !(auxiliary + 1..index).all(|at| word(clause, at).is_some_and(grammar::is_adverb)) {
        return None;
    }
    let subject_at = (0..auxiliary).rev().find(|&at| {
        word(clause, at).is_some_and(|w| {
            !matches!(w, "has" | "have" | "had" | "'s" | "not" | "never") && !grammar::is_adverb(w)
        })
    });
    let subject = subject_at.and_then(|at| word(clause, at))?;
    let liaison = subject_at.is_some_and(|at| grammar::liaison_subject(clause, at).is_some());
    // "You've been added to the channel": a passive's "you" is its patient.
    let actor = subject != "you" && roles::is_actor_pronoun(clause, subject_at? + 1);
    if liaison || actor || subject == "me" {
        return None;
    }
    let current = unleet(word(clause, index)?);
    let current = current.as_ref();
    if !may_be_verb(current) || decided(clause, index) || words::completed_form(current) & PARTICIPLE == 0 {
        return None;
    }
    if measured(clause, index)
        || other_agent_after(clause, index)
        || roles::agent_set_apart(clause, index)
        || roles::by_itself(clause, index)
        || roles::state_since(clause, index)
        || roles::credited_elsewhere(clause, index)
    {
        return None;
    }
    if !roles::negations_before(clause, index).is_multiple_of(2)
        || roles::addressed_done(clause, index).is_some()
        || roles::reported_from_data(clause, index)
    {
        return None;
    }
    let stem = current.trim_end_matches("ed").trim_end_matches('e');
    let context: Vec<&str> = (index.saturating_sub(2)..=index).filter_map(|at| word(clause, at)).collect();
    if stem.len() >= 3 && groundings.iter().any(|grounding| grounding.holds_stem(stem, &context)) {
        return None;
    }
    Some(finding(clause, subject_at?, index, index + 1, IMPLICIT_AGENT))
}

const IMPLICIT_AGENT: &str = "implicit agent: read as the liaison's";

/// Words that, standing alone between pauses, mark a clause done:
/// "Boost act-6: done", "[x] bumped the thread".
const DONE_WORDS: &[&str] = &["done", "ok", "okay", "complete", "completed", "finished", "success", "x"];

/// Whether the clause says something is done: a check mark, or a done
/// word standing alone between pauses or the clause's edges.
fn is_marked_done(clause: &[Token]) -> bool {
    clause.contains(&Token::Done)
        || (0..clause.len()).any(|at| {
            let alone = |neighbour: Option<&Token>| neighbour.is_none_or(|token| token.word().is_none());
            word(clause, at).is_some_and(|current| DONE_WORDS.contains(&current))
                && alone(at.checked_sub(1).and_then(|before| clause.get(before)))
                && alone(clause.get(at + 1))
                && clause.iter().filter(|token| token.word().is_some()).count() > 1
        })
}

/// `word` with leetspeak digits read as letters (`b00sted`), as the
/// effects table is looked up.
fn unleet(word: &str) -> std::borrow::Cow<'_, str> {
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    if word.contains(|c: char| c.is_ascii_digit()) && !word.contains('-') && letters >= 3 {
        super::lexicon::unleet(word).map_or(std::borrow::Cow::Borrowed(word), std::borrow::Cow::Owned)
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// The family a finding names: the verb's in `effects.toml`, else
/// [`UNLISTED`].
fn family_of(word: &str) -> &str {
    LEXICON.lookup(word).first().map_or(UNLISTED, |found| LEXICON.verbs[found.verb].family.as_str())
}

/// Whether the word at `index` is a verb the allow-list or `effects.toml`
/// has decided: an act allowed, an effect (`detect` and `deny` judged it)
/// or an effect excused by its object ("I updated my answer").
fn decided(clause: &[Token], index: usize) -> bool {
    if let Some(act) = ACTS.act_at(clause, index)
        && !(act == "preposition" && progressive_at(clause, index) && effect_word(clause, index))
    {
        return true;
    }
    // A guarded read whose object a relative clause puts before the
    // liaison: "per the export I pulled".
    // So may an adverb ("the lookup I just ran") or a passive ("this
    // summary was prepared by Harmonia").
    let relative = index.checked_sub(1).and_then(|at| word(clause, at)).is_some_and(|w| {
        matches!(w, "i" | "we" | "just" | "already" | "was" | "were" | "is" | "are" | "been")
    });
    if relative && ACTS.act_with_object_before(clause, index) {
        return true;
    }
    let Some(current) = word(clause, index) else { return true };
    let after: Vec<&str> = clause.iter().skip(index + 1).take(4).map_while(Token::word).collect();
    let before = |object: &str| (index.saturating_sub(4)..index).any(|at| word(clause, at) == Some(object));
    let passive = grammar::passive_auxiliary_before(clause, index);
    LEXICON.lookup(current).iter().any(|found| {
        let verb = &LEXICON.verbs[found.verb];
        // A verb the effects table has only in the passive ("fixed") is
        // judged there only after a passive auxiliary: "I fixed the
        // captions" is judged here.
        if verb.passive_only && !passive {
            return false;
        }
        // A participle whose guarded object stands before it, as `deny`
        // reads a passive: "the refund was issued".
        let object_before = found.forms & PARTICIPLE != 0
            && verb.objects.iter().any(|words| words.len() == 1 && before(&words[0]));
        if object_before {
            return true;
        }
        let object = after.iter().take_while(|word| !grammar::PREPOSITIONS.contains(word));
        let excused = object.clone().any(|word| verb.benign_objects.iter().any(|benign| benign == word));
        // A guarded verb without its object is not the effect: it is
        // judged here like any other verb ("I raised a concern"). Its
        // object is read as `detect` reads it, by `detect`'s own code.
        excused || verb.objects.is_empty() || detect::object_end(clause, index + 1, &verb.objects).is_some()
    })
}

/// Whether the gerund at `index` follows `be` or a verb of aspect ("I was
/// moving the posts", "I've finished moving them"): a gerund the
/// allow-list reads as a preposition ("Moving on", "Starting now") is a
/// verb there.
fn progressive_at(clause: &[Token], index: usize) -> bool {
    index.checked_sub(1).and_then(|at| word(clause, at)).is_some_and(|before| {
        matches!(before, "am" | "'m" | "is" | "are" | "'re" | "was" | "were" | "been")
            || grammar::GERUND_VERBS.contains(&before)
    })
}

/// Whether the word at `index` is a form of a verb of `effects.toml`.
fn effect_word(clause: &[Token], index: usize) -> bool {
    word(clause, index).is_some_and(|current| !LEXICON.lookup(current).is_empty())
}

/// Whether `word` may head a verb phrase at all (cheap checks before the
/// tagger is asked).
pub(super) fn may_be_verb(word: &str) -> bool {
    word.len() >= 2
        && word.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && !is_closed(word)
        && !grammar::is_auxiliary(word)
}

// The liaison as subject: "I nuked", "we've boosted", "Nova is spinning up".
fn liaison_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let head = word(clause, index)?;
    if !grammar::SUBJECTS.iter().any(|subject| subject[0] == head) {
        return None;
    }
    let length = grammar::liaison_subject(clause, index)?;
    if grammar::negated_before(clause, index) || grammar::is_reported(clause, index) {
        return None;
    }
    // A question's auxiliary stands before the subject: "did I nuke it?".
    let inverted = index.checked_sub(1).and_then(|at| word(clause, at)).and_then(auxiliary_completion);
    [true, false].into_iter().find_map(|skip_asides| {
        let chain = grammar::walk(clause, index + length, grammar::FINITE, skip_asides);
        let completion = match chain_completion(clause, index + length, chain.end) {
            Some(Completion::Past) if inverted.is_some() && chain.end == index + length => inverted,
            other => other,
        }?;
        if !roles::negations_before(clause, chain.end).is_multiple_of(2) {
            return None;
        }
        if introduces_a_read(clause, chain.end) {
            return coordinated_claim(clause, index, chain.end, completion);
        }
        verb_claim(clause, index, chain.end, completion, SUBJECT)
            .or_else(|| shapes::causative_claim(clause, index, chain.end))
            .or_else(|| shapes::named_act_claim(clause, index, chain.end))
            .or_else(|| coordinated_claim(clause, index, chain.end, completion))
            .or_else(|| ellipsis_claim(clause, index, chain.end, completion))
    })
}

/// Words after "I did" that leave its verb to an earlier one: "and I did",
/// "I did it", "I did so".
const ELLIPSIS_ENDS: &[&str] =
    &["it", "that", "this", "so", "too", "exactly", "already", "just", "as", "anyway"];

/// How far back an act named before "I did" may stand.
const ELLIPSIS_REACH: usize = 16;

// "You asked me to boost it, and I did", "boosting it was my call and I
// did it": "did" with no verb of its own does the act named before it (a
// base form after `to` or a modal, or a gerund), when that act is not a
// read.
fn ellipsis_claim(clause: &[Token], start: usize, end: usize, completion: Completion) -> Option<Finding> {
    let did = end.checked_sub(1).and_then(|at| word(clause, at)) == Some("did");
    let elided = word(clause, end).is_none_or(|next| ELLIPSIS_ENDS.contains(&next));
    if completion != Completion::Base || !did || !elided {
        return None;
    }
    (start.saturating_sub(ELLIPSIS_REACH)..start).rev().find_map(|at| {
        let current = word(clause, at)?;
        let before = at.checked_sub(1).and_then(|before| word(clause, before));
        let after_to = before.is_some_and(|before| {
            matches!(
                before,
                "to" | "would"
                    | "'d"
                    | "will"
                    | "can"
                    | "could"
                    | "should"
                    | "shall"
                    | "might"
                    | "may"
                    | "must"
            )
        });
        let named = (after_to && (words::is_base_verb(current) || !LEXICON.lookup(current).is_empty()))
            || (current.ends_with("ing") && words::completed_form(current) & GERUND != 0);
        let read = ACTS.act_at(clause, at).is_some();
        (named && !read && may_be_verb(current)).then(|| finding(clause, at, at, end, SUBJECT))
    })
}

/// Idioms of initiative that name no act of their own but introduce one:
/// "went ahead and pulled the numbers", "took the liberty of checking".
const INITIATIVES: &[&[&str]] = &[
    &["went", "ahead", "and"],
    &["go", "ahead", "and"],
    &["jumped", "ahead", "and"],
    &["went", "a", "step", "further", "and"],
    &["went", "one", "step", "further", "and"],
    &["went", "the", "extra", "mile", "and"],
    &["took", "the", "liberty", "of"],
    &["taken", "the", "liberty", "of"],
    &["took", "it", "upon", "myself", "to"],
    &["took", "it", "on", "myself", "to"],
];

/// Whether the word at `at` opens an idiom of initiative whose act is a
/// read of the allow-list: the idiom takes the verdict of its act ("I went
/// a step further and compared CPC" is none; "... and paused AS-4" stays
/// a claim, found at the idiom).
fn introduces_a_read(clause: &[Token], at: usize) -> bool {
    grammar::longest(clause, at, INITIATIVES).is_some_and(|length| ACTS.act_at(clause, at + length).is_some())
}

/// The completion an auxiliary asks of the verb after it, if any.
fn auxiliary_completion(auxiliary: &str) -> Option<Completion> {
    match auxiliary {
        "have" | "has" | "had" | "having" | "'ve" => Some(Completion::Perfect),
        "am" | "is" | "are" | "was" | "were" | "be" | "been" | "being" | "'m" | "'re" => {
            Some(Completion::Progressive)
        }
        "did" => Some(Completion::Base),
        _ => None,
    }
}

/// What the chain `clause[start..end]` asks of the verb at `end`: `None`
/// when it asserts no completed or ongoing act (a modal, a future, "to").
fn chain_completion(clause: &[Token], start: usize, end: usize) -> Option<Completion> {
    let mut completion = Some(Completion::Past);
    for at in start..end {
        let Some(current) = word(clause, at) else { continue };
        let next = word(clause, at + 1);
        if next == Some("to")
            && (grammar::TO_VERBS.contains(&current) || grammar::NEGATING_TO_VERBS.contains(&current))
        {
            completion = COMPLETING_TO_VERBS.contains(&current).then_some(Completion::Base);
        } else if current == "to" {
            continue;
        } else if grammar::GERUND_VERBS.contains(&current) && next.is_some_and(|next| next.ends_with("ing")) {
            completion = Some(Completion::Progressive);
        } else if matches!(current, "went" | "go" | "goes" | "gone") {
            completion = Some(Completion::Past); // "went ahead and nuked".
        } else if current == "'s" {
            completion = Some(Completion::Perfect);
        } else if current == "'d" && next.is_some_and(is_had_participle) {
            // "once I'd retagged the posts": `'d` before a participle is
            // "had", not "would".
            completion = Some(Completion::Perfect);
        } else if let Some(found) = auxiliary_completion(current) {
            completion = Some(found);
        } else if grammar::is_auxiliary(current) {
            completion = None; // will, would, can, do, 'd ...
        }
    }
    completion
}

/// Whether `word` after `'d` is a participle and no base form, so that
/// `'d` is "had": "I'd retagged", not "I'd retag".
fn is_had_participle(word: &str) -> bool {
    !is_closed(word)
        && !grammar::is_adverb(word)
        && words::completed_form(word) & PARTICIPLE != 0
        && !words::is_base_verb(word)
        && !words::is_spelt_as_base(word)
}

/// The verb at `at` if it is an unlisted act in the form `completion`
/// asks: a claim from `start`.
fn verb_claim(
    clause: &[Token],
    start: usize,
    at: usize,
    completion: Completion,
    frame: &'static str,
) -> Option<Finding> {
    let current = unleet(word(clause, at)?);
    let current = current.as_ref();
    // A verb of the effects table in a form `detect` does not read after
    // this chain ("I have change the password") is judged here.
    let misformed = || {
        ACTS.act_at(clause, at).is_none()
            && LEXICON.lookup(current).iter().all(|found| found.forms & form_asked(completion) == 0)
    };
    let next = word(clause, at + 1);
    // "I declined the meeting", "I failed over the database": a change the
    // allow-list reads as a thing's own is an act when the liaison does it.
    let state_on_object =
        || ACTS.is_intransitive(current) && next.is_some_and(|next| starts_object(next) || next == "over");
    if !may_be_verb(current)
        || (decided(clause, at) && !misformed() && !state_on_object())
        || introduces_a_read(clause, at)
    {
        return None;
    }
    if next.is_some_and(grammar::is_empty_object)
        || possessive(clause, at, completion)
        || roles::names_no_effect(clause, at)
    {
        return None;
    }
    // "I boosted it automatically" is still the liaison's act.
    if other_agent_after(clause, at) {
        return None;
    }
    completion.holds(current, next).then(|| finding(clause, start, at, object_end(clause, at), frame))
}

/// "I have updated figures for you": `have` before a participle and a bare
/// plural noun is possession, the participle an adjective.
fn possessive(clause: &[Token], at: usize, completion: Completion) -> bool {
    let noun = word(clause, at + 1);
    completion == Completion::Perfect
        && at
            .checked_sub(1)
            .and_then(|before| word(clause, before))
            .is_some_and(|w| matches!(w, "have" | "has" | "had"))
        && noun.is_some_and(grammar::is_plural_noun)
}

/// Where a finding's phrase ends: the verb and the word after it.
fn object_end(clause: &[Token], at: usize) -> usize {
    if word(clause, at + 1).is_some() { at + 2 } else { at + 1 }
}

/// Whether `by` and an actor that is not the liaison follow: "boosted by
/// the operator".
fn other_agent_after(clause: &[Token], at: usize) -> bool {
    for index in (at + 1..at + 1 + AGENT_WINDOW).take_while(|&index| word(clause, index).is_some()) {
        let Some(current) = word(clause, index) else { break };
        // A column headed "Invited by", its agent after the pause: "Invited
        // by — Priya Shah".
        if current == "by" && clause.get(index + 1) == Some(&Token::Pause) {
            return word(clause, index + 2).is_some_and(|agent| {
                grammar::longest(clause, index + 2, grammar::AGENTS).is_none() && !is_closed(agent)
            });
        }
        if current == "by" {
            return grammar::agent_at(clause, index, true).is_none()
                && word(clause, index + 1).is_some_and(super::deny::may_name_agent);
        }
        // A participle or a subject of its own before `by` takes the agent:
        // "I refunded everyone affected by the outage", "I reinstated the
        // user we banned by mistake".
        if index > at + 1 && owns_agent(clause, index, current) {
            return false;
        }
    }
    false
}

/// Whether `current`, at `index`, is a participle or a new subject that a
/// later `by` belongs to rather than the verb before it.
pub(super) fn owns_agent(clause: &[Token], index: usize, current: &str) -> bool {
    // Round eight: a participle after "as" is the complement of the verb
    // before it, whose agent `by` still names: "was marked as fulfilled
    // by the warehouse".
    let joined = index
        .checked_sub(1)
        .and_then(|before| word(clause, before))
        .is_some_and(|w| CONJUNCTIONS.contains(&w) || w == "as");
    (!joined && current.ends_with("ed") && words::completed_form(current) & PARTICIPLE != 0)
        || matches!(current, "we" | "they" | "he" | "she" | "you")
}

// Further verbs of the liaison after `and`, `then` or a pause: "I read the
// job and boosted it", "I checked the feed, spun up a campaign".
fn coordinated_claim(clause: &[Token], start: usize, verb: usize, completion: Completion) -> Option<Finding> {
    let mut at = verb + 1;
    while at < clause.len().min(verb + REACH) {
        let joins = word(clause, at).is_none_or(|joiner| CONJUNCTIONS.contains(&joiner) || joiner == "then");
        if !joins {
            at += 1;
            continue;
        }
        while at < clause.len()
            && word(clause, at)
                .is_none_or(|w| CONJUNCTIONS.contains(&w) || w == "then" || grammar::is_adverb(w))
        {
            at += 1;
        }
        let next = word(clause, at)?;
        // Another actor after a pause does the verbs after it: "I find
        // and explain, you approve and ship".
        if matches!(next, "you" | "they" | "he" | "she") {
            return None;
        }
        if grammar::starts_clause(next) || grammar::is_auxiliary(next) || is_closed(next) {
            // A new subject or a new noun phrase: the next verb is not the liaison's.
            if grammar::liaison_subject(clause, at).is_some() || grammar::starts_clause(next) {
                return None;
            }
            at += 1;
            continue;
        }
        if !roles::negations_before(clause, at).is_multiple_of(2) || attributive(clause, at) {
            at += 1;
            continue;
        }
        if let Some(found) = verb_claim(clause, start, at, completion, SUBJECT) {
            return Some(found);
        }
        at += 1;
    }
    None
}

/// Whether a participle at `at` modifies the noun after it: "Mixed
/// results.", "Boosted posts perform better", "updated figures below".
fn attributive(clause: &[Token], at: usize) -> bool {
    if roles::attributive(clause, at) {
        return true;
    }
    let regular =
        word(clause, at).is_some_and(|participle| participle.ends_with("ed") || participle.ends_with("en"));
    let Some(noun) = word(clause, at + 1).filter(|_| regular) else { return false };
    let ends = match word(clause, at + 2) {
        None => true,
        Some(next) => {
            grammar::PREPOSITIONS.contains(&next)
                || matches!(
                    next,
                    "below"
                        | "above"
                        | "here"
                        | "attached"
                        | "only"
                        | "follow"
                        | "follows"
                        | "this"
                        | "last"
                        | "today"
                        | "yesterday"
                        | "overall"
                        | "so"
                        | "across"
                        | "over"
                        | "since"
                )
        }
    };
    is_bare_noun(noun) && ends
}

// No subject: "Boosted act-1.", "Spinning up the campaign now", "Update:
// nuked the drafts"; in a clause marked done, an instruction's base form
// too ("Hit publish on post-4 ✅").
fn fragment_claim(clause: &[Token], index: usize, marked: bool) -> Option<Finding> {
    let current = unleet(word(clause, index)?);
    let current = current.as_ref();
    if !may_be_verb(current) || !heads_fragment(clause, index) || DONE_WORDS.contains(&current) {
        return None;
    }
    // A record's state field ("Status: locked", not "Status: paused by
    // me") and an act on the liaison's own text ("fixed a typo in my
    // table") report no effect.
    let state_field = roles::state_field_value(clause, index) && word(clause, index + 1) != Some("by");
    if roles::is_noun_use(clause, index) || state_field || roles::names_no_effect(clause, index) {
        return None;
    }
    // "Declined the friend request": a thing's own change is an act when
    // the fragment gives it an object.
    let state_on_object = ACTS.is_intransitive(current)
        && words::completed_form(current) & PAST != 0
        && word(clause, index + 1).is_some_and(starts_object);
    if (ACTS.act_at(clause, index).is_some() && !state_on_object) || introduces_a_read(clause, index) {
        // A read heading a fragment shares its missing subject with the
        // verbs coordinated after it: "Checked the calendar and booked the
        // call".
        let past = words::completed_form(current) & PAST != 0;
        let framed = !roles::negations_before(clause, index).is_multiple_of(2)
            || roles::addressed_done(clause, index).is_some();
        return (past && !framed)
            .then(|| coordinated_claim(clause, index, index, Completion::Past))
            .flatten()
            .map(|found| Finding { frame: NO_SUBJECT, ..found });
    }
    // `deny` judged the effects table's verbs, except in a clause marked
    // done, where it reads a bare base form as an instruction.
    let effect = !LEXICON.lookup(current).is_empty();
    if decided(clause, index) && !(marked && effect) && !state_on_object {
        return None;
    }
    let forms: Forms = words::completed_form(current)
        | gerund_before_object(clause, index, current)
        | past_before_object(clause, index, current);
    let base = marked && (effect || words::is_base_verb(current));
    if (forms == 0 && !base)
        || attributive(clause, index)
        || (!marked && roles::walkthrough_step(clause, index))
    {
        return None;
    }
    if forms & GERUND != 0
        && (roles::gerund_is_subject(clause, index) || roles::gerund_instruction(clause, index))
    {
        return None;
    }
    if !roles::negations_before(clause, index).is_multiple_of(2)
        || roles::addressed_done(clause, index).is_some()
    {
        return None;
    }
    if other_agent_after(clause, index)
        || roles::by_itself(clause, index)
        || roles::agent_set_apart(clause, index)
    {
        return None;
    }
    let frame = if marked { MARKED } else { NO_SUBJECT };
    Some(finding(clause, index, index, object_end(clause, index), frame))
}

// A record's id before a bare participle: "post-7 boosted", "act-4
// promoted to the top". An object after the verb makes the record its
// actor ("job-42 created two drafts"), and a state the allow-list has is
// the record's own ("job-42 failed", "post-3 peaked at 14:00").
fn status_claim(clause: &[Token], index: usize, marked: bool) -> Option<Finding> {
    let id = word(clause, index)?;
    let is_id = grammar::is_record_id(id);
    // A bare record noun before a participle that ends the clause:
    // "Comment hidden."
    let ends =
        clause.get(index + 2).is_none_or(|next| next.word().is_none()) || tail_is_a_place(clause, index + 2);
    let bare = index.checked_sub(1).and_then(|at| word(clause, at)).is_none_or(|before| !is_closed(before));
    let record = RECORD_NOUNS.contains(&id) && ends && bare;
    if !is_id && !marked && !record {
        return None;
    }
    let at = index + 1;
    let current = unleet(word(clause, at)?);
    let current = current.as_ref();
    if !may_be_verb(current)
        || decided(clause, at)
        || DONE_WORDS.contains(&current)
        || ACTS.act_with_object_before(clause, at)
    {
        return None;
    }
    let object = word(clause, at + 1).is_some_and(|next| {
        !grammar::PREPOSITIONS.contains(&next)
            && !grammar::is_adverb(next)
            && !CONJUNCTIONS.contains(&next)
            && !grammar::when_at(clause, at + 1)
    });
    if object || words::completed_form(current) & PARTICIPLE == 0 {
        return None;
    }
    if !roles::negations_before(clause, at).is_multiple_of(2) || roles::addressed_done(clause, at).is_some() {
        return None;
    }
    if other_agent_after(clause, at) || roles::by_itself(clause, at) || roles::agent_set_apart(clause, at) {
        return None;
    }
    Some(finding(clause, index, at, at + 1, if marked { MARKED } else { STATUS }))
}

/// The most words a status line's place may have: "on all 6 posts".
const MAX_PLACE_WORDS: usize = 4;

/// Whether the words from `at` to the clause's end or its next pause are a
/// particle or a short phrase after a preposition, with no verb of their
/// own: "Campaign switched on", "Hashtags swapped on all 6 posts" (not
/// "Posts published on Tuesday did better").
fn tail_is_a_place(clause: &[Token], at: usize) -> bool {
    let Some(first) = word(clause, at) else { return false };
    if !grammar::PREPOSITIONS.contains(&first)
        && !matches!(first, "on" | "off" | "up" | "down" | "out" | "back" | "in")
    {
        return false;
    }
    let tail: Vec<&str> = clause[at..].iter().map_while(Token::word).take(MAX_PLACE_WORDS + 1).collect();
    tail.len() <= MAX_PLACE_WORDS
        && tail.iter().all(|w| !grammar::is_auxiliary(w) && !roles::is_finite_hint(w) && *w != "by")
}

/// [`PAST`] when `current` is a verb's `-ed` form before a determiner, which
/// the tagger alone reads as an adjective at a fragment's head:
/// "Consolidated the six sheets", "Stretched the end date".
fn past_before_object(clause: &[Token], index: usize, current: &str) -> Forms {
    let Some(stem) = current.strip_suffix('d').filter(|stem| stem.len() >= 4 && stem.ends_with('e')) else {
        return 0;
    };
    let determiner = word(clause, index + 1)
        .is_some_and(|next| matches!(next, "the" | "a" | "an" | "all" | "every" | "both"));
    // "consolidate-d", "stretch-ed".
    let base = words::is_base_verb(stem) || stem.strip_suffix('e').is_some_and(words::is_base_verb);
    if determiner && base { PAST } else { 0 }
}

/// [`GERUND`] when `current` is a verb with `-ing` before an object, which
/// the tagger alone reads as a noun: "Locking the comments now".
fn gerund_before_object(clause: &[Token], index: usize, current: &str) -> Forms {
    let Some(stem) = current.strip_suffix("ing").filter(|stem| stem.len() >= 3) else { return 0 };
    let object = word(clause, index + 1).is_some_and(starts_object);
    if object && (words::is_base_verb(stem) || words::is_base_verb(&format!("{stem}e"))) { GERUND } else { 0 }
}

/// Whether only interjections, labels and adverbs stand between the start
/// of the clause (or its last pause) and `index`.
pub(super) fn heads_fragment(clause: &[Token], index: usize) -> bool {
    for back in 1..=MAX_LEADS + 1 {
        let Some(at) = index.checked_sub(back) else { return true };
        match &clause[at] {
            Token::Pause => return true,
            Token::Question | Token::Done => return false,
            Token::Word(before) => {
                if back > MAX_LEADS
                    || !(FRAGMENT_LEADS.contains(&before.as_str()) || grammar::is_adverb(before))
                {
                    return false;
                }
            }
        }
    }
    false
}
