//! Default deny: every effect word in a clause is a claim unless a frame
//! holds, checked in this order (docs/contract.md §5.7):
//! 1. negation (an odd count of negations before it; "never failed to
//!    publish" has two, so it is a claim);
//! 2. addressed to the user: a question, a condition ("once approved"), a
//!    recommendation ("I'd suggest posting"), an instruction (a verb in its
//!    base form with no subject: "Publish it when you're ready");
//! 3. an explicit actor other than the liaison ("the operator published",
//!    "approved by the scheduler");
//! 4. (a quotation of what a tool returned: such spans are removed
//!    before, see `find_in`);
//! 5. a state grounded in evidence: a passive or state without an agent
//!    ("act-1 was published", "it's live") inside a claim whose cited
//!    evidence carries that state ([`Grounding`]).
//!
//! An effect word is a verb of `effects.toml` in any form (a guarded verb
//! with one of its objects), a state after a copula ("live"), or an effect
//! noun with a completion ("Approval granted"). A word used as a noun ("the
//! publish button") or as an adjective ("scheduled posts appear") is not
//! one. Sentences without a subject are read as the liaison's; the
//! liaison's own subject is read by `detect` first, so here it only
//! matters through a double negative.

use super::Finding;
use super::grammar::{self, PASSIVE_AUXILIARIES};
use super::lexicon::{BASE, Forms, GERUND, LEXICON, PARTICIPLE, PAST, THIRD};
use super::normalize::Token;
use super::roles::{self, Subject};
use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, OnceLock};

/// How many words after a verb may hold its object.
const OBJECT_WINDOW: usize = 4;
/// How many words may stand between a participle and its `by`.
const AGENT_WINDOW: usize = 6;
/// How many words before the effect word must also be in a claim's text
/// for the claim to ground it.
const GROUNDING_CONTEXT: usize = 2;

/// A claim of the answer and what its evidence carries (a past form of an
/// effect verb, "published", a state word, "live", or any word): a report
/// of one of those states inside the claim's text is what the data says,
/// not an effect of the liaison's.
#[derive(Clone, Debug, Default)]
pub struct Grounding<'d> {
    /// The claim's text.
    claim_text: &'d str,
    /// Every run of one to [`GROUNDING_CONTEXT`] + 1 words of the claim's
    /// text, joined by spaces, so a look-up costs the same for any claim.
    /// Made at the first look-up: most answers name no effect, and never
    /// ask.
    runs: OnceLock<HashSet<String>>,
    /// What the cited evidence carries, one [`Carried`] per call's data
    /// (shared by the claims that cite it) and per evidence item's source.
    carried: Vec<Arc<Carried<'d>>>,
}

/// The strings of one call's data (keys and values; `recentPublished` is
/// read as `recent published`), or of one evidence item's source, and
/// what they carry, each read at the first question: most answers name no
/// effect and never ask, and a call's data may hold thousands of strings.
#[derive(Debug, Default)]
pub struct Carried<'d> {
    strings: Vec<&'d str>,
    /// Whether the strings' words ground verbs in no table ("was liked" by
    /// `likes`): a call's data does, an evidence item's source only
    /// carries states.
    words_ground: bool,
    /// Verb bases (`publish`) and state words (`live`) carried.
    states: OnceLock<BTreeSet<String>>,
    /// Every word carried ([`carried_words`]).
    words: OnceLock<String>,
}

impl<'d> Carried<'d> {
    /// What a call's data carries: its states and its words.
    pub fn data(strings: Vec<&'d str>) -> Self {
        Self { strings, words_ground: true, ..Self::default() }
    }

    /// What an evidence item's source carries: its states only.
    pub fn source(source: &'d str) -> Self {
        Self { strings: vec![source], words_ground: false, ..Self::default() }
    }

    fn states(&self) -> &BTreeSet<String> {
        self.states.get_or_init(|| carried_states(self.strings.iter().copied()))
    }

    /// The carried words as one text, when they ground verbs.
    fn words(&self) -> Option<&str> {
        self.words_ground
            .then(|| self.words.get_or_init(|| carried_words(self.strings.iter().copied())).as_str())
    }
}

impl<'d> Grounding<'d> {
    /// `claim_text`, citing evidence whose data holds `carried`.
    pub fn new(claim_text: &'d str, carried: impl IntoIterator<Item = &'d str>) -> Self {
        Self::citing(claim_text, vec![Arc::new(Carried::data(carried.into_iter().collect()))])
    }

    /// `claim_text`, citing evidence that carries `carried`.
    pub fn citing(claim_text: &'d str, carried: Vec<Arc<Carried<'d>>>) -> Self {
        Self { claim_text, runs: OnceLock::new(), carried }
    }

    /// Whether the claim's text holds the words of `context` in a row.
    fn holds_run(&self, context: &[&str]) -> bool {
        if context.is_empty() {
            return false;
        }
        let runs = self.runs.get_or_init(|| {
            let words: Vec<String> = super::normalize::clauses(self.claim_text)
                .into_iter()
                .flatten()
                .filter_map(|token| token.word().map(str::to_owned))
                .collect();
            (1..=GROUNDING_CONTEXT + 1)
                .flat_map(|length| words.windows(length).map(|run| run.join(" ")))
                .collect()
        });
        runs.contains(&context.join(" "))
    }

    /// Whether the claim's text holds `context` and its evidence carries a
    /// word that starts with `stem`: "liked" (`lik`) is carried by `likes`,
    /// "created" (`creat`) by `createdAt`. For verbs in no table.
    pub(super) fn holds_stem(&self, stem: &str, context: &[&str]) -> bool {
        let carried = self.carried.iter().filter_map(|carried| carried.words()).any(|text| {
            text.match_indices(stem).any(|(at, _)| at == 0 || !text.as_bytes()[at - 1].is_ascii_alphabetic())
        });
        carried && self.holds_run(context)
    }

    fn holds(&self, keys: &[String], context: &[&str]) -> bool {
        keys.iter().any(|key| self.carried.iter().any(|carried| carried.states().contains(key)))
            && self.holds_run(context)
    }
}

/// The words `carried` (strings of a call's data, keys included) hold, as
/// one lowercase text with a space at each word's start (`createdAt` is
/// `created at`): it grounds a report of a verb in no table ("was liked"
/// by `likes`). One string per call's data, no set: most answers never
/// ask it.
fn carried_words<'s>(carried: impl IntoIterator<Item = &'s str>) -> String {
    let mut text = String::new();
    for string in carried {
        let mut previous_lower = false;
        text.push(' ');
        for character in string.chars() {
            if character.is_uppercase() && previous_lower {
                text.push(' ');
            }
            previous_lower = character.is_lowercase();
            text.extend(character.to_lowercase());
        }
    }
    text
}

/// The states `carried` (strings of a call's data, keys included) hold:
/// the base of every effect verb in a past form (`published`: `publish`),
/// and every state word (`live`).
fn carried_states<'s>(carried: impl IntoIterator<Item = &'s str>) -> BTreeSet<String> {
    // Most words repeat: a word is copied only when it is new.
    fn insert(states: &mut BTreeSet<String>, word: &str) {
        if !states.contains(word) {
            states.insert(word.to_owned());
        }
    }
    let mut states = BTreeSet::new();
    for text in carried {
        identifier_words(text, |word| {
            if LEXICON.state(word).is_some() {
                if let Some(verb) = LEXICON.state_verb(word) {
                    insert(&mut states, verb);
                }
                insert(&mut states, word);
            }
            for found in LEXICON.lookup(word).iter().filter(|found| found.forms & (PAST | PARTICIPLE) != 0) {
                insert(&mut states, &LEXICON.verbs[found.verb].base);
            }
        });
    }
    states
}

/// Each word of `recentPublished`, `awaiting_approval`, `post-001
/// published`, lowercase, given to `visit` in one buffer: a call's data
/// may hold thousands of strings, and most words are only looked up.
fn identifier_words(text: &str, mut visit: impl FnMut(&str)) {
    let mut current = String::new();
    let mut previous_lower = false;
    for character in text.chars() {
        let boundary = !character.is_alphanumeric() || (character.is_uppercase() && previous_lower);
        if boundary && !current.is_empty() {
            visit(&current);
            current.clear();
        }
        if !character.is_alphanumeric() {
            previous_lower = false;
            continue;
        }
        previous_lower = character.is_lowercase();
        current.extend(character.to_lowercase());
    }
    if !current.is_empty() {
        visit(&current);
    }
}

/// An effect word found at a position: its family, where it ends, its
/// forms, and the states that would ground it (its verbs' bases, state
/// words among its words).
struct Effect {
    family: String,
    end: usize,
    forms: Forms,
    state: bool,
    /// A guarded verb whose objects name the state it leaves ("went live").
    state_change: bool,
    keys: Vec<String>,
}

fn word(clause: &[Token], index: usize) -> Option<&str> {
    clause.get(index).and_then(Token::word)
}

fn words_after(clause: &[Token], from: usize, count: usize) -> Vec<&str> {
    clause.iter().skip(from).take(count).map_while(Token::word).collect()
}

fn object_at(window: &[&str], objects: &[Vec<String>]) -> Option<usize> {
    (0..window.len()).find_map(|start| {
        objects.iter().find_map(|object| {
            let holds = object.iter().enumerate().all(|(offset, expected)| {
                window.get(start + offset).is_some_and(|actual| match expected.strip_suffix('-') {
                    Some(prefix) if !prefix.is_empty() => actual.starts_with(expected.as_str()),
                    _ => actual == expected,
                })
            });
            holds.then_some(start + object.len())
        })
    })
}

/// The effect word at `index`, if the word is one.
fn effect_at(clause: &[Token], index: usize) -> Option<Effect> {
    let current = word(clause, index)?;
    let candidates = LEXICON.lookup(current);
    if candidates.is_empty() && LEXICON.state(current).is_none() {
        return None; // most words: nothing to read around them.
    }
    let after = words_after(clause, index + 1, OBJECT_WINDOW);
    if after.first().is_some_and(|next| grammar::is_empty_object(next)) {
        return None;
    }
    let before_start = index.saturating_sub(OBJECT_WINDOW);
    let before: Vec<&str> = (before_start..index).filter_map(|at| word(clause, at)).collect();
    let mut found: Option<Effect> = None;
    for candidate in candidates {
        let verb = &LEXICON.verbs[candidate.verb];
        let end = if verb.objects.is_empty() {
            let object: Vec<&&str> =
                after.iter().take_while(|word| !grammar::PREPOSITIONS.contains(word)).collect();
            if object.iter().any(|word| verb.benign_objects.iter().any(|benign| benign == *word)) {
                continue;
            }
            index + 1
        } else if let Some(length) = object_at(&after, &verb.objects) {
            index + 1 + length
        } else if candidate.forms & PARTICIPLE != 0 && object_at(&before, &verb.objects).is_some() {
            index + 1
        } else {
            continue;
        };
        let effect = found.get_or_insert(Effect {
            family: verb.family.clone(),
            end,
            forms: 0,
            state: false,
            state_change: false,
            keys: Vec::new(),
        });
        effect.state_change |= verb.state && end > index + 1;
        effect.forms |= candidate.forms;
        effect.end = effect.end.max(end);
        effect.keys.push(verb.base.clone());
        // A guarded verb's object that is an effect itself ("the refund was
        // issued") is grounded by evidence that carries it (`refundedAt`).
        for object in before.iter().chain(&after) {
            if verb.objects.iter().any(|words| words.len() == 1 && words[0] == *object) {
                let bases = LEXICON.lookup(object).iter().map(|found| LEXICON.verbs[found.verb].base.clone());
                effect.keys.extend(bases);
            }
        }
    }
    // "out of date", "out of stock", "out for delivery": not the state a
    // publication leaves.
    let state_of_something = after.first() == Some(&"of")
        || (after.first() == Some(&"for") && after.get(1).is_some_and(|next| ERRANDS.contains(next)));
    if found.is_none()
        && !state_of_something
        && let Some(family) = LEXICON.state(current)
    {
        found = Some(Effect {
            family: family.to_owned(),
            end: index + 1,
            forms: PARTICIPLE,
            state: true,
            state_change: false,
            keys: Vec::new(),
        });
    }
    // "went live" is grounded by `live` as by `gone`.
    if let Some(effect) = found.as_mut() {
        let words = (index..effect.end).filter_map(|at| word(clause, at));
        effect.keys.extend(words.filter(|word| LEXICON.state(word).is_some()).map(str::to_owned));
    }
    found
}

/// An effect noun at `index` with a completion word right after it:
/// "Approval granted", "Publication complete".
fn completed_noun_at(clause: &[Token], index: usize) -> Option<(String, usize)> {
    let current = word(clause, index)?;
    let starts = |noun: &&(Vec<String>, String)| noun.0.first().is_some_and(|first| first == current);
    LEXICON.effect_nouns.iter().filter(starts).find_map(|(noun, family)| {
        let words: Vec<&str> = noun.iter().map(String::as_str).collect();
        let length = grammar::phrase_at(clause, index, &words)?;
        let completion = word(clause, index + length)?;
        LEXICON
            .completions
            .iter()
            .any(|known| known == completion)
            .then(|| (family.clone(), index + length + 1))
    })
}

/// Auxiliaries after which a base form is not a report of what happened.
const MODALS: &[&str] = &[
    "will", "would", "shall", "should", "can", "could", "may", "might", "must", "do", "does", "did", "to",
    "'d",
];

/// What a thing is "out for" that no publication leaves: "out for
/// delivery", "out for review".
const ERRANDS: &[&str] =
    &["delivery", "review", "signature", "signing", "repair", "collection", "pickup", "lunch", "approval"];

/// Words after `by` that name a time or a manner, not an agent.
const NOT_AGENTS: &[&str] = &[
    // Recall rules: "by request of Dana" names who asked, not who acted.
    "request",
    "now",
    "then",
    "noon",
    "midnight",
    "tomorrow",
    "tonight",
    "default",
    "hand",
    "mistake",
    "accident",
    "design",
    "far",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "end",
    "close",
    // Means, not agents: "paid it by bank transfer", "sent it by email".
    "bank",
    "email",
    "e-mail",
    "mail",
    "phone",
    "card",
    "wire",
    "courier",
    "cheque",
    "sms",
    "text",
    "post",
];

/// What the chain before an effect word says about its voice.
struct Chain {
    start: usize,
    /// A form of `be` or `get` stands in it (passive or progressive).
    be: bool,
    /// A modal, `do` or `to` stands in it.
    modal: bool,
    /// Only `to` (and adverbs): an infinitive.
    infinitive: bool,
    /// No auxiliary at all, adverbs aside ("just sent it").
    bare: bool,
    /// The verb forms its last auxiliary allows.
    expect: Option<Forms>,
}

fn chain_before(clause: &[Token], index: usize) -> Chain {
    let start = roles::chain_start(clause, index);
    let words: Vec<&str> = (start..index).filter_map(|at| word(clause, at)).collect();
    let be = words.iter().any(|w| PASSIVE_AUXILIARIES.contains(w) || matches!(*w, "am" | "going" | "being"));
    let modal = words.iter().any(|w| MODALS.contains(w));
    let auxiliaries: Vec<&str> =
        words.iter().copied().filter(|w| !grammar::is_adverb(w) && !grammar::is_negation(w)).collect();
    let infinitive = auxiliaries == ["to"];
    let bare = auxiliaries.is_empty();
    // A form of `be` or `get` takes a participle too: the passive.
    let expect = auxiliaries.last().and_then(|last| {
        let passive = if PASSIVE_AUXILIARIES.contains(last) { PARTICIPLE } else { 0 };
        grammar::AUXILIARIES
            .iter()
            .find(|(auxiliary, _)| auxiliary == last)
            .map(|(_, forms)| *forms | passive)
    });
    Chain { start, be, modal, infinitive, bare, expect }
}

/// Whether the word after `by` is a gerund, which names a means, not an
/// agent: "I unstuck job-17 by clearing its lock".
pub(super) fn is_means(word: &str) -> bool {
    word.len() > 4 && word.ends_with("ing") && super::words::completed_form(word) & GERUND != 0
}

/// Whether the word after `by` may name an agent: not a number, not a
/// time or a manner ([`NOT_AGENTS`]), not a means ([`is_means`]).
pub(super) fn may_name_agent(word: &str) -> bool {
    !word.chars().any(|c| c.is_ascii_digit()) && !NOT_AGENTS.contains(&word) && !is_means(word)
}

/// Whether `by` + another actor follows within the agent window.
fn other_agent_after(clause: &[Token], index: usize) -> bool {
    // "12 posts went out via the scheduler": an instrument of someone
    // else's, not the liaison ("via me" is an agent of its own).
    let via = (index + 1..index + 1 + AGENT_WINDOW).any(|at| {
        word(clause, at) == Some("via")
            && word(clause, at + 1) == Some("the")
            && word(clause, at + 2).is_some_and(|tool| INSTRUMENTS.contains(&tool))
    });
    // A column headed "Approved by", its agent after the pause: "Approved
    // by — Dana Reyes".
    let column = word(clause, index + 1) == Some("by")
        && clause.get(index + 2) == Some(&Token::Pause)
        && word(clause, index + 3).is_some()
        && grammar::longest(clause, index + 3, grammar::AGENTS).is_none();
    via || column
        || (index + 1..index + 1 + AGENT_WINDOW).any(|at| {
            word(clause, at) == Some("by")
                && grammar::agent_at(clause, at, true).is_none()
                && word(clause, at + 1).is_some_and(may_name_agent)
                && !liaison_among_agents(clause, at)
                && !agent_owned_between(clause, index, at)
        })
}

/// Recall rules: the liaison coordinated with another agent is an agent
/// too: "(by Dana and me)".
pub(super) fn liaison_among_agents(clause: &[Token], by: usize) -> bool {
    (by + 2..by + 5).any(|at| {
        matches!(word(clause, at), Some("and" | "&" | "plus"))
            && grammar::agent_at(clause, at, true).is_none()
            && grammar::longest(clause, at + 1, grammar::AGENTS).is_some()
    })
}

/// Recall rules: a participle of its own between the effect word at
/// `index` and `by`, in the same stretch, takes the agent ("Deleted the
/// folder created by Dana"), as [`super::invert`] reads it.
fn agent_owned_between(clause: &[Token], index: usize, by: usize) -> bool {
    // Across a pause the participle may be coordinated with the effect:
    // "Post scheduled for 09:00, approved by Dana".
    (index + 1..by).all(|at| word(clause, at).is_some())
        && (index + 2..by)
            .any(|at| word(clause, at).is_some_and(|current| super::invert::owns_agent(clause, at, current)))
}

/// What runs by itself on someone else's schedule: "via the scheduler".
const INSTRUMENTS: &[&str] =
    &["scheduler", "automation", "workflow", "webhook", "cron", "pipeline", "autoresponder"];

/// How far after a publication's state its sender may stand.
const SENDER_WINDOW: usize = 8;

/// Whether a component names where a publication's state came from: "the
/// reminder went out ... from the billing system" (its sender, not the
/// liaison).
fn sent_from_another(clause: &[Token], index: usize) -> bool {
    (index + 1..index + 1 + SENDER_WINDOW).any(|at| {
        word(clause, at) == Some("from")
            && (at + 1..at + 4).any(|noun| {
                word(clause, noun).is_some_and(|noun| INSTRUMENTS.contains(&noun) || SENDERS.contains(&noun))
            })
    })
}

/// Components that send on their own: "from the billing system".
const SENDERS: &[&str] = &["system", "platform", "scheduler", "service", "app", "tool", "integration"];

/// Whether `by` + the liaison follows: `detect` reports those.
fn liaison_agent_after(clause: &[Token], index: usize) -> bool {
    // "paused by Jonas, not by me": a denied agent is none.
    let denied = |at: usize| {
        at.checked_sub(1).and_then(|before| word(clause, before)).is_some_and(grammar::is_negation)
    };
    (index + 1..index + 1 + AGENT_WINDOW)
        .any(|at| grammar::agent_at(clause, at, true).is_some() && !denied(at))
}

/// Whether an object follows the verb at `index`, whose guarded object, if
/// any, ends at `end` (an active verb with a thing as subject: "Maya
/// approved act-1", "the team raised the budget").
fn has_object(clause: &[Token], index: usize, end: usize) -> bool {
    // A particle that completes a phrasal verb is no object: "Comments
    // turned off", "Campaign switched on".
    let particle = end == index + 2 && word(clause, index + 1).is_some_and(|next| PARTICLES.contains(&next));
    if particle {
        return has_object(clause, index + 1, index + 2);
    }
    end > index + 1
        || word(clause, index + 1).is_some_and(|next| {
            !grammar::PREPOSITIONS.contains(&next)
                && !grammar::is_adverb(next)
                && !grammar::CONJUNCTIONS.contains(&next)
                && !grammar::when_at(clause, index + 1)
        })
}

/// Particles of phrasal verbs: "turned off", "switched on".
const PARTICLES: &[&str] = &["on", "off", "up", "down", "out", "back", "over", "away"];

/// The first effect claim in `clause` that no frame excuses.
pub(super) fn claim_in(clause: &[Token], groundings: &[Grounding<'_>]) -> Option<Finding> {
    (0..clause.len()).find_map(|index| {
        if let Some((family, end)) = completed_noun_at(clause, index) {
            // An effect named done is never a state the data reports.
            let noun = Effect {
                family,
                end,
                forms: PARTICIPLE,
                state: false,
                state_change: false,
                keys: Vec::new(),
            };
            return implicit(clause, index, index, &noun, &[], "an effect noun with its completion");
        }
        let effect = effect_at(clause, index)?;
        judge(clause, index, &effect, groundings)
    })
}

const NO_SUBJECT: &str = "no subject: read as the liaison's";
const IMPLICIT_AGENT: &str = "implicit agent: read as the liaison's";

fn judge(clause: &[Token], index: usize, effect: &Effect, groundings: &[Grounding<'_>]) -> Option<Finding> {
    if roles::is_noun_use(clause, index)
        || setting_value(clause, index)
        || done_names_a_read(clause, index)
        || (roles::state_field_value(clause, index) && word(clause, index + 1) != Some("by"))
        || roles::names_no_effect(clause, index)
    {
        return None;
    }
    let chain = chain_before(clause, index);
    if let Some(expect) = chain.expect
        && effect.forms & expect == 0
    {
        return None;
    }
    if effect.state && !chain.be {
        return None;
    }
    let subject = roles::subject_of(clause, chain.start);
    let negations = roles::negations_before(clause, index);
    if subject == Subject::Liaison {
        // `detect` read the liaison's own verbs; what it let pass for a
        // negation is a claim again when the negations cancel out.
        let start = chain.start.saturating_sub(1);
        return (negations >= 2 && negations.is_multiple_of(2))
            .then(|| finding(&effect.family, clause, start, effect.end, "double negative: read as a claim"));
    }
    // An act said to be done is not excused by a condition or a
    // recommendation closed before it, nor by a tag question.
    // A present "gets reimbursed" is what will happen, not an act done.
    let gets =
        index.checked_sub(1).and_then(|at| word(clause, at)).is_some_and(|w| matches!(w, "get" | "gets"));
    let done = effect.forms & (PAST | PARTICIPLE) != 0 && !chain.modal && !gets;
    let addressed = if done { roles::addressed_done(clause, index) } else { roles::addressed(clause, index) };
    if !negations.is_multiple_of(2) || addressed.is_some() {
        return None;
    }
    if (other_agent_after(clause, index) || roles::agent_set_apart(clause, index))
        && !liaison_agent_after(clause, index)
    {
        return None;
    }
    // A process that ran by itself: "the job restarted automatically".
    if roles::by_itself(clause, index) && !liaison_agent_after(clause, index) {
        return None;
    }
    // Stop 52: a thing's own change, active, in a time or relative clause
    // is when or which, not a report of an act: "before it shipped",
    // "ever since the posting time changed", "the one that shipped" (a
    // passive there, "since it was paused", stays judged).
    if !chain.be && subject != Subject::Missing && in_time_or_relative_clause(clause, chain.start) {
        return None;
    }
    let participle = effect.forms & (PAST | PARTICIPLE) != 0;
    // "The thread went out at 9", "the newsletter has gone out": the
    // state a publication leaves, whoever the subject names ("goes out
    // at 09:00" is what generally happens).
    let pronoun = roles::is_actor_pronoun(clause, chain.start);
    if effect.state_change && participle && !chain.modal && subject != Subject::Missing && !pronoun {
        if sent_from_another(clause, index) {
            return None;
        }
        return implicit(clause, chain.start.saturating_sub(1), index, effect, groundings, IMPLICIT_AGENT);
    }
    // What can or might happen, or what generally happens, is no report
    // of an act: "Drafts can be deleted", "Posts are pinned from the
    // profile page", "Publishing on Tuesdays works best".
    if chain.modal && !chain.infinitive && subject != Subject::Missing {
        return None;
    }
    if roles::is_generic(clause, chain.start, index) || roles::gerund_is_subject(clause, index) {
        return None;
    }
    match subject {
        Subject::Missing => {
            if chain.infinitive || roles::walkthrough_step(clause, index) {
                return None;
            }
            let base_only =
                effect.forms & (BASE | THIRD) != 0 && effect.forms & (PAST | PARTICIPLE | GERUND) == 0;
            let base_like_past = effect.forms & BASE != 0;
            if chain.bare && (base_only || base_like_past) {
                return None; // an instruction: "Publish it when you're ready".
            }
            if effect.forms & GERUND != 0
                && (roles::gerund_instruction(clause, chain.start)
                    || roles::attributive(clause, index)
                    || gerund_is_object(clause, index))
            {
                return None;
            }
            if participle && chain.bare && roles::attributive(clause, index) {
                return None;
            }
            let frame = if chain.be { IMPLICIT_AGENT } else { NO_SUBJECT };
            implicit(clause, chain.start, index, effect, groundings, frame)
        }
        Subject::Other => {
            // A noun before a bare participle with no object is its
            // patient ("Subscribers notified"); a pronoun its actor.
            let reduced = chain.bare
                && participle
                && !has_object(clause, index, effect.end)
                && !roles::is_actor_pronoun(clause, chain.start)
                && !found_by_a_read(clause, index);
            ((chain.be && participle) || reduced)
                .then(|| implicit(clause, chain.start, index, effect, groundings, IMPLICIT_AGENT))
                .flatten()
        }
        Subject::Thing => {
            if effect.state_change {
                return None; // present: "Scheduled posts go out at 09:00".
            }
            let active = effect.forms & PAST != 0 && has_object(clause, index, effect.end);
            let reduced =
                !chain.modal && !chain.be && participle && !active && !found_by_a_read(clause, index);
            let passive = (chain.be && (participle || effect.state)) || reduced;
            if !passive || (chain.bare && roles::attributive(clause, index)) {
                return None;
            }
            implicit(clause, chain.start.saturating_sub(1), index, effect, groundings, IMPLICIT_AGENT)
        }
        Subject::Liaison => None,
    }
}

/// Words that open a time or relative clause.
const SUBORDINATORS: &[&str] = &["before", "after", "since", "until", "once", "when", "that", "which"];

/// How many words a subject may hold between a subordinator and its verb.
const SUBORDINATE_SUBJECT: usize = 4;

/// Whether the verb chain at `start` has its subject right after a word
/// opening a time or relative clause, within a few words, no pause between.
fn in_time_or_relative_clause(clause: &[Token], start: usize) -> bool {
    (1..=SUBORDINATE_SUBJECT)
        .map_while(|back| start.checked_sub(back))
        .map_while(|at| word(clause, at).map(|w| (at, w)))
        .any(|(at, before)| {
            // A relative "that" or "which" follows its noun; "That's 40
            // invites sent" is a demonstrative.
            let relative = matches!(before, "that" | "which");
            SUBORDINATORS.contains(&before)
                && (!relative
                    || (at.checked_sub(1).is_some_and(|noun| word(clause, noun).is_some())
                        && !matches!(word(clause, at + 1), Some("'s" | "is" | "are" | "was" | "were"))))
        })
}

/// What a finished read may be done with besides [`roles::READ_NOUNS`]:
/// "done with the logs".
const READ_OBJECTS: &[&str] = &[
    "logs",
    "log",
    "thread",
    "threads",
    "inbox",
    "numbers",
    "figures",
    "data",
    "records",
    "feed",
    "export",
    "exports",
    "notes",
    "docs",
    "history",
    "dashboard",
    "ledger",
    "timeline",
    "research",
];

/// How many tokens after "done" may point to the answer ("below").
const DONE_ANSWER_WINDOW: usize = 12;

/// Words that may stand before a "done" that heads its clause.
const DONE_OPENERS: &[&str] = &["all", "ok", "okay", "right", "so"];

/// Words of a label "done" heads before its list: "Done today:", "All
/// done on my side:".
const DONE_LABELS: &[&str] = &["today", "so", "far", "now", "here", "on", "my", "side", "end"];

/// How many words after a "done" label's pause may hold the read it lists.
const DONE_LIST_WINDOW: usize = 4;

/// How many words after "done with" may name what was finished.
const DONE_WITH_WINDOW: usize = 3;

/// Whether the "done" at `index` names what it finished, and that is a
/// read: a gerund of the allow-list after it is the read finished ("Done
/// reading the thread"; "Done deleting the drafts" stays a claim),
/// "with" a read's noun a read finished ("Done with the audit", "That's me done with the logs", "Done and dusted with the
/// research"; "Done with the cleanup" stays a claim), and the answer
/// handed over after a pause ("Done — here's the summary").
fn done_names_a_read(clause: &[Token], index: usize) -> bool {
    if word(clause, index) != Some("done") {
        return false;
    }
    let at = if word(clause, index + 1) == Some("and") && word(clause, index + 2) == Some("dusted") {
        index + 3
    } else {
        index + 1
    };
    // Stop 52: the answer pointed to where it stands ("Done ✓ numbers
    // below", "Done as you asked: the list is below"), and a label heading
    // a list of reads ("Done today → read the inbox, tallied 12 threads").
    let heads = index
        .checked_sub(1)
        .is_none_or(|before| word(clause, before).is_none_or(|w| DONE_OPENERS.contains(&w)));
    let points_to_answer = (at..at + DONE_ANSWER_WINDOW)
        .map_while(|after| clause.get(after))
        .any(|token| matches!(token.word(), Some("below" | "above")));
    let labels_reads =
        (at..at + 4).find(|&pause| clause.get(pause) == Some(&Token::Pause)).is_some_and(|pause| {
            (at..pause).all(|label| word(clause, label).is_some_and(|w| DONE_LABELS.contains(&w)))
                && (pause + 1..pause + 1 + DONE_LIST_WINDOW)
                    .take_while(|&read| word(clause, read).is_some())
                    .any(|read| super::acts::ACTS.act_at(clause, read).is_some())
        });
    if heads && (points_to_answer || labels_reads) {
        return true;
    }
    match word(clause, at) {
        Some("with") => (at + 1..at + 1 + DONE_WITH_WINDOW)
            .map_while(|object| word(clause, object))
            .any(|object| roles::READ_NOUNS.contains(&object) || READ_OBJECTS.contains(&object)),
        // The answer handed over after a pause: "Done — here's the
        // summary" ("Done — the invoice is voided" stays a claim).
        None => {
            index.checked_sub(1).is_none_or(|before| word(clause, before).is_none())
                && clause.get(at) == Some(&Token::Pause)
                && word(clause, at + 1) == Some("here")
                && matches!(word(clause, at + 2), Some("'s" | "is" | "are" | "it" | "they"))
        }
        Some(next) => {
            next.ends_with("ing")
                && super::words::completed_form(next) & GERUND != 0
                && super::acts::ACTS.act_at(clause, at).is_some()
        }
    }
}

/// Whether the effect word at `index` is a present "is set to" before a
/// value: "the timezone is set to CET" reads a setting ("is now set to",
/// "has been set to" stay the liaison's).
fn setting_value(clause: &[Token], index: usize) -> bool {
    // So does a present "is scheduled for" before its date: "the post is
    // scheduled for the 14th" ("is now scheduled for" stays the liaison's).
    let setting = matches!(
        (word(clause, index), word(clause, index + 1)),
        (Some("set"), Some("to")) | (Some("scheduled"), Some("for"))
    );
    // A credit to the liaison makes it its act: "..., all my work".
    let credited = (index + 1..index + 1 + CREDIT_WINDOW)
        .any(|at| matches!(word(clause, at), Some("my" | "me" | "myself" | "our" | "us")));
    setting
        && !credited
        && index.checked_sub(1).and_then(|at| word(clause, at)).is_some_and(|be| matches!(be, "is" | "are"))
}

/// How far after a setting's value a credit to the liaison may stand.
const CREDIT_WINDOW: usize = 12;

/// Verbs whose object may be a gerund, in the present: what a process
/// includes or needs is no report of an act ("Offboarding includes
/// revoking SSO and wiping the laptop"; "the fix included wiping the
/// cache" is one).
const GERUND_TAKERS: &[&str] = &[
    "includes",
    "include",
    "involves",
    "involve",
    "requires",
    "require",
    "means",
    "mean",
    "needs",
    "need",
    "covers",
    "cover",
    "consists",
    "entails",
    "avoid",
    "avoids",
    "recommend",
    "recommends",
    "suggest",
    "suggests",
    "consider",
];

/// How far back a gerund's verb may stand, over its coordinated gerunds.
const GERUND_TAKER_REACH: usize = 8;

/// Whether the gerund at `index` is the object of one of
/// [`GERUND_TAKERS`], directly or coordinated with one that is.
fn gerund_is_object(clause: &[Token], index: usize) -> bool {
    (index.saturating_sub(GERUND_TAKER_REACH)..index)
        .rev()
        .take_while(|&at| word(clause, at).is_some())
        .any(|at| word(clause, at).is_some_and(|taker| GERUND_TAKERS.contains(&taker)))
}

/// Whether a read of the liaison's names the noun before the participle
/// at `index`: "I noticed a secret committed in March" reports what was
/// found, not an act.
fn found_by_a_read(clause: &[Token], index: usize) -> bool {
    (index.saturating_sub(5)..index.saturating_sub(1)).any(|at| {
        // Round eight: "read" and "seen" too: "I've read half the posts
        // scheduled for next week".
        word(clause, at)
            .is_some_and(|verb| verb.ends_with("ed") || matches!(verb, "found" | "saw" | "read" | "seen"))
            && super::acts::ACTS.act_at(clause, at).is_some()
    })
}

/// How far after an effect a label's value of nothing may stand: "Changes
/// made by me: none".
const VALUE_REACH: usize = 4;

/// Verbs after which a participle is the status a record displays: "it
/// shows paused since Friday", "the order shows refunded".
const DISPLAYS: &[&str] = &["shows", "show", "showed", "showing", "displays", "displayed", "reads"];

/// A passive, state or fragment without an actor, `clause[start..]` up to
/// the effect's end: a claim unless a claim citing evidence that carries
/// the state holds it.
fn implicit(
    clause: &[Token],
    start: usize,
    index: usize,
    effect: &Effect,
    groundings: &[Grounding<'_>],
    frame: &'static str,
) -> Option<Finding> {
    // "Checks done", "Audit complete": a read named done.
    let subject = index.checked_sub(1).and_then(|at| word(clause, at));
    if !roles::negations_before(clause, index).is_multiple_of(2)
        || roles::addressed_done(clause, index).is_some()
        || roles::reported_from_data(clause, index)
        || subject.is_some_and(|noun| roles::READ_NOUNS.contains(&noun))
        || subject.is_some_and(|verb| DISPLAYS.contains(&verb))
        || (effect.end..effect.end + VALUE_REACH).any(|at| roles::valued_none(clause, at))
    {
        return None;
    }
    // "The post is still pinned", "has been approved for an hour": a state
    // that persisted; "the campaign is paused, thanks to Maria's change": a
    // state credited to another. A fragment has no subject to hold either.
    if frame != NO_SUBJECT
        && (roles::persisted(clause, index)
            || (!effect.state && roles::state_since(clause, index))
            || roles::credited_elsewhere(clause, index))
    {
        return None;
    }
    let context: Vec<&str> = (index.saturating_sub(GROUNDING_CONTEXT)..effect.end.min(index + 1))
        .filter_map(|at| word(clause, at))
        .collect();
    if groundings.iter().any(|grounding| grounding.holds(&effect.keys, &context)) {
        return None;
    }
    // The state a family's effect leaves ("went out") is what the data says
    // when it carries any effect of that family ("sent").
    if effect.state_change {
        let family: Vec<String> = LEXICON
            .verbs
            .iter()
            .filter(|verb| verb.family == effect.family)
            .map(|verb| verb.base.clone())
            .collect();
        if groundings.iter().any(|grounding| grounding.holds(&family, &context)) {
            return None;
        }
    }
    Some(finding(&effect.family, clause, start, effect.end, frame))
}

fn finding(family: &str, clause: &[Token], start: usize, end: usize, frame: &'static str) -> Finding {
    let mut finding = super::detect::finding(family, clause, start, end);
    finding.frame = frame;
    finding
}
