//! The four shapes of an effect claim, read in one normalised clause:
//! an actor with its verb (and the verbs coordinated with it), a passive
//! with the liaison as agent, an effect noun the liaison owns, and an
//! effect receipt.

use super::Finding;
use super::grammar::{self, CONJUNCTIONS, CONTRASTS, Chain, FINITE};
use super::lexicon::{BASE, LEXICON, Match, PARTICIPLE, PAST, Verb};
use super::normalize::Token;

/// How many words after a verb may hold its object.
const OBJECT_WINDOW: usize = 4;
/// How many words may stand between a participle and its agent.
const AGENT_WINDOW: usize = 6;
/// How many words after "had"/"got" may hold a causative participle.
const CAUSATIVE_WINDOW: usize = 3;
/// Phrases longer than this many words are shown shortened.
const MAX_SHOWN_WORDS: usize = 10;

/// The first claim in `clause`, if any.
pub(super) fn claim_in(clause: &[Token]) -> Option<Finding> {
    let hypothetical = grammar::is_hypothetical(clause);
    (0..clause.len()).find_map(|index| {
        (!hypothetical)
            .then(|| actor_claim(clause, index))
            .flatten()
            .or_else(|| passive_claim(clause, index))
            .or_else(|| reflexive_claim(clause, index))
            .or_else(|| nominal_claim(clause, index))
            .or_else(|| receipt_claim(clause, index))
    })
}

fn word(clause: &[Token], index: usize) -> Option<&str> {
    clause.get(index).and_then(Token::word)
}

/// A finding of `family` over `clause[start..end]`, framed as the
/// liaison's own act; callers that read another frame replace it.
pub(super) fn finding(family: &str, clause: &[Token], start: usize, end: usize) -> Finding {
    let words: Vec<&str> = clause[start..end.min(clause.len())].iter().filter_map(Token::word).collect();
    let phrase = if words.len() > MAX_SHOWN_WORDS {
        format!("{} … {}", words[..3].join(" "), words[words.len() - 3..].join(" "))
    } else {
        words.join(" ")
    };
    Finding { family: family.to_owned(), phrase, frame: "the liaison as subject" }
}

fn framed(mut finding: Finding, frame: &'static str) -> Finding {
    finding.frame = frame;
    finding
}

// An actor and its verb: "I have published", "Nova approved", "let me
// publish", and verbs coordinated with it: "I read the job and published".
fn actor_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let (length, expect) = grammar::actor_at(clause, index)?;
    if grammar::negated_before(clause, index) || grammar::is_reported(clause, index) {
        return None;
    }
    [true, false].into_iter().find_map(|skip_asides| {
        let chain = grammar::walk(clause, index + length, expect, skip_asides);
        if suggests(clause, index + length, &chain) {
            return None;
        }
        chain_claim(clause, index, &chain)
            .or_else(|| causative_claim(clause, index, &chain))
            .or_else(|| coordinated_claim(clause, index, &chain, skip_asides))
    })
}

/// Whether the chain from `start` is a first-person suggestion: "I'd post
/// it on Tuesday", "I would move it to Thursday" (what the liaison would
/// do in the user's place). "I would have approved" stays a claim.
fn suggests(clause: &[Token], start: usize, chain: &Chain) -> bool {
    (start..chain.end).any(|at| matches!(word(clause, at), Some("would" | "'d"))) && !chain.ends_in_have
}

fn chain_claim(clause: &[Token], start: usize, chain: &Chain) -> Option<Finding> {
    if chain.negated || possessive_have(clause, chain) {
        return None;
    }
    let (verb, _, end) = effect_verb_at(clause, chain.end, chain.expect)?;
    Some(finding(&verb.family, clause, start, end))
}

// "I have updated figures for you": `have` right before a participle and
// a bare plural noun is possession, the participle an adjective.
fn possessive_have(clause: &[Token], chain: &Chain) -> bool {
    let have = chain.end.checked_sub(1).and_then(|at| word(clause, at));
    let noun = word(clause, chain.end + 1);
    chain.ends_in_have
        && matches!(have, Some("have" | "has" | "had"))
        && noun.is_some_and(grammar::is_plural_noun)
}

// "I had act-1 approved", "we got it published".
fn causative_claim(clause: &[Token], start: usize, chain: &Chain) -> Option<Finding> {
    let head = word(clause, chain.end)?;
    let causative = chain.ends_in_have || matches!(head, "get" | "gets" | "got" | "gotten" | "getting");
    if chain.negated || !causative || possessive_have(clause, chain) {
        return None;
    }
    let from = if chain.ends_in_have { chain.end } else { chain.end + 1 };
    // A participle right after "have" is a perfect, which `chain_claim`
    // judged with its object ("I've updated my summary"); a causative puts
    // its object first ("I had the banner replaced").
    let perfect = chain.ends_in_have
        && word(clause, chain.end).is_some_and(|head| plain_verb(head, PARTICIPLE).is_some());
    (from + usize::from(perfect)..from + CAUSATIVE_WINDOW)
        .take_while(|&at| word(clause, at).is_some())
        .find_map(|at| {
            let (verb, _) = plain_verb(word(clause, at)?, PARTICIPLE)?;
            Some(finding(&verb.family, clause, start, at + 1))
        })
}

// Further verbs of the same subject after `and`, `but`, `or` or a pause.
// A verb without its own auxiliary shares a negation it could continue
// ("I did not approve, publish or delete anything"), except after a
// contrast ("I did not approve act-1 but published it").
fn coordinated_claim(clause: &[Token], start: usize, main: &Chain, skip_asides: bool) -> Option<Finding> {
    let mut at = main.end;
    while at < clause.len() {
        let current = word(clause, at);
        let new_subject = current.is_some_and(|w| grammar::starts_clause(w) || grammar::is_auxiliary(w));
        if new_subject || grammar::actor_at(clause, at).is_some() {
            return None;
        }
        let joins = current.is_none_or(|joiner| CONJUNCTIONS.contains(&joiner));
        if !joins {
            at += 1;
            continue;
        }
        let mut contrast = false;
        while at < clause.len() && word(clause, at).is_none_or(|joiner| CONJUNCTIONS.contains(&joiner)) {
            contrast |= word(clause, at).is_some_and(|joiner| CONTRASTS.contains(&joiner));
            at += 1;
        }
        let chain = grammar::walk(clause, at, FINITE | main.expect, skip_asides);
        // Stop 52: a participle with another agent after it is that
        // agent's passive, no verb of the liaison's ("I can see three
        // invites, all sent by Maria").
        let others = |end: usize| {
            word(clause, end) == Some("by")
                && grammar::agent_at(clause, end, true).is_none()
                && word(clause, end + 1)
                    .is_some_and(|agent| !matches!(agent, "me" | "us" | "myself" | "hand" | "mistake"))
        };
        if let Some((verb, forms, end)) =
            effect_verb_at(clause, chain.end, chain.expect).filter(|&(_, _, end)| !others(end))
        {
            let shares_negation = !chain.has_auxiliary && !contrast && forms & main.expect != 0;
            let negated = chain.negated || (shares_negation && main.negated);
            if !negated {
                return Some(finding(&verb.family, clause, start, end));
            }
        }
        at = chain.end.max(at + 1);
    }
    None
}

/// An effect verb at `index` in one of `expect`'s forms, with its object
/// where it needs one: the verb, the word's forms, and where the claim ends.
fn effect_verb_at(clause: &[Token], index: usize, expect: u8) -> Option<(&'static Verb, u8, usize)> {
    let head = word(clause, index)?;
    let after = index + 1;
    // A record's id is no verb: "... and post-77 uses #springsale".
    if grammar::is_record_id(head) || word(clause, after).is_some_and(grammar::is_empty_object) {
        return None;
    }
    LEXICON.lookup(head).iter().filter(|found| found.forms & expect != 0).find_map(|found: &Match| {
        let verb = &LEXICON.verbs[found.verb];
        if verb.passive_only {
            return None;
        }
        if verb.objects.is_empty() {
            let window = words_after(clause, after, OBJECT_WINDOW);
            // Only the direct object, up to its first preposition, can make it a read.
            let mut object = window.iter().take_while(|word| !grammar::PREPOSITIONS.contains(word));
            let benign = object.any(|word| verb.benign_objects.iter().any(|benign| benign == word))
                || super::roles::names_no_effect(clause, index);
            return (!benign).then_some((verb, found.forms, after));
        }
        let end = object_end(clause, after, &verb.objects)?;
        // "took the liberty of checking": an object that introduces an act
        // takes that act's verdict, and a read is none.
        let introduces = end > after && word(clause, end - 1) == Some("of");
        if introduces && super::acts::ACTS.act_at(clause, end).is_some() {
            return None;
        }
        Some((verb, found.forms, end))
    })
}

/// A verb that names its effect alone (not guarded, not passive-only).
fn plain_verb(word: &str, forms: u8) -> Option<(&'static Verb, u8)> {
    LEXICON.lookup(word).iter().find_map(|found| {
        let verb = &LEXICON.verbs[found.verb];
        let plain = verb.objects.is_empty() && !verb.passive_only;
        (plain && found.forms & forms != 0).then_some((verb, found.forms))
    })
}

/// The words after `from`, up to `count`, stopping at a pause.
fn words_after(clause: &[Token], from: usize, count: usize) -> Vec<&str> {
    clause.iter().skip(from).take(count).map_while(Token::word).collect()
}

/// Where one of `objects` ends when it starts within the object window
/// after `from`. An object ending in `-` (`act-`) matches any word it starts.
pub(super) fn object_end(clause: &[Token], from: usize, objects: &[Vec<String>]) -> Option<usize> {
    let window = words_after(clause, from, OBJECT_WINDOW);
    (0..window.len()).find_map(|start| {
        objects.iter().find_map(|object| {
            let holds = object.iter().enumerate().all(|(offset, expected)| {
                window.get(start + offset).is_some_and(|actual| match expected.strip_suffix('-') {
                    Some(prefix) if !prefix.is_empty() => {
                        actual.starts_with(expected.as_str()) || *actual == prefix
                    }
                    _ => actual == expected,
                })
            });
            holds.then_some(from + start + object.len())
        })
    })
}

// "act-1 was published by me", "approved by Harmonia", "sent on your
// behalf", "the budget was raised by me". A guarded verb needs one of its
// objects just before it (its subject) or after it ("taken care of").
fn passive_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let participle = word(clause, index)?;
    let verb = LEXICON.lookup(participle).iter().find_map(|found| {
        let verb = &LEXICON.verbs[found.verb];
        let before = index.saturating_sub(OBJECT_WINDOW);
        let named = verb.objects.is_empty()
            || object_end(clause, before, &verb.objects).is_some_and(|end| end <= index)
            || object_end(clause, index + 1, &verb.objects).is_some();
        (named && found.forms & PARTICIPLE != 0).then_some(verb)
    })?;
    let has_auxiliary = grammar::passive_auxiliary_before(clause, index);
    // Recall rules: a participle right after a plural noun heading the
    // clause is a passive too ("Keys revoked during the current session").
    let reduced = index >= 1
        && word(clause, index - 1).is_some_and(grammar::is_plural_noun)
        && (0..index - 1).all(|at| {
            word(clause, at)
                .is_some_and(|w| matches!(w, "the" | "all" | "any") || w.chars().all(|c| c.is_ascii_digit()))
        });
    let (agent, length) = (index + 1..clause.len().min(index + 1 + AGENT_WINDOW))
        .find_map(|at| grammar::agent_at(clause, at, has_auxiliary || reduced).map(|length| (at, length)))?;
    let denied = (index + 1..agent).any(|at| word(clause, at).is_some_and(grammar::is_negation));
    // Round eight: a label whose value counts nothing: "Changes made by
    // me: none".
    if denied || grammar::negated_in_scope(clause, index) || super::roles::valued_none(clause, agent + length)
    {
        return None;
    }
    Some(framed(finding(&verb.family, clause, index, agent + length), "the liaison as agent"))
}

/// Words of wishing before an infinitive: "I'd love to", "I'd rather".
const WISHES: &[&str] = &["love", "like", "want", "prefer", "happy", "glad", "rather"];

/// Determiners and possessives, after which a word is a noun.
const DETERMINERS: &[&str] =
    &["the", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her", "your", "my", "our"];

// "Published it myself": the actor named after the verb.
fn reflexive_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let (verb, _) = plain_verb(word(clause, index)?, BASE | PAST)?;
    let window = words_after(clause, index + 1, OBJECT_WINDOW);
    let at = window.iter().position(|word| matches!(*word, "myself" | "ourselves"))?;
    if grammar::negated_in_scope(clause, index) || window[..at].iter().any(|word| grammar::is_negation(word))
    {
        return None;
    }
    // Stop 52: a wish's infinitive is no act ("I'd love to retry job-17
    // myself, but ..."), and a word after a determiner or a possessive
    // within two words is a noun ("looked up job-52's error message
    // myself").
    let before = |back: usize| index.checked_sub(back).and_then(|at| word(clause, at));
    let wished = before(1) == Some("to") && before(2).is_some_and(|wish| WISHES.contains(&wish));
    let noun = (1..=2).filter_map(before).any(|w| DETERMINERS.contains(&w) || w.ends_with("'s"));
    if wished || noun {
        return None;
    }
    Some(finding(&verb.family, clause, index, index + 2 + at))
}

// "my approval", "Nova's sign-off".
fn nominal_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let possessive = LEXICON
        .possessives
        .iter()
        .filter_map(|possessive| {
            let words: Vec<&str> = possessive.iter().map(String::as_str).collect();
            grammar::phrase_at(clause, index, &words)
        })
        .max()?;
    // One adjective may stand between: "my final approval".
    let noun_end = (index + possessive..index + possessive + 2).find_map(|at| {
        LEXICON.nouns.iter().find_map(|noun| {
            let words: Vec<&str> = noun.iter().map(String::as_str).collect();
            grammar::phrase_at(clause, at, &words).map(|length| at + length)
        })
    })?;
    if grammar::negated_in_scope(clause, index) {
        return None;
    }
    Some(framed(finding("approve", clause, index, noun_end), "the liaison's own effect"))
}

// "an approval receipt", "execution-receipt".
fn receipt_claim(clause: &[Token], index: usize) -> Option<Finding> {
    let current = word(clause, index)?;
    let (kind, noun) = match current.split_once('-') {
        Some((kind, noun)) => (kind, Some(noun)),
        None => (current, word(clause, index + 1)),
    };
    let is_receipt = LEXICON.receipt_kinds.iter().any(|known| known == kind)
        && noun.is_some_and(|noun| LEXICON.receipt_nouns.iter().any(|known| known == noun));
    if !is_receipt {
        return None;
    }
    let counted_as_none = index
        .checked_sub(1)
        .and_then(|at| word(clause, at))
        .is_some_and(|before| matches!(before, "0" | "zero"));
    if counted_as_none || grammar::negated_in_scope(clause, index) {
        return None;
    }
    let end = if current.contains('-') { index + 1 } else { index + 2 };
    Some(framed(finding("receipt", clause, index, end), "a receipt claims its effect"))
}
