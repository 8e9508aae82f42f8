//! Word classes the default-deny pass (`deny`) reads a sentence's roles
//! with: who its subject is, whether a word is used as a noun, and the
//! words that address the user (conditions, recommendations).
//!
//! Parts: [`Subject`] and [`subject_of`]; [`is_noun_use`]; [`addressed`];
//! [`attributive`] ("scheduled posts appear ...").

use super::grammar::{self, CONJUNCTIONS, NEGATING_TO_VERBS, TO_VERBS};
use super::lexicon::LEXICON;
use super::normalize::Token;

/// Who a sentence makes the subject of an effect word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Subject {
    /// None: a fragment ("Posted!"), read as the liaison's.
    Missing,
    /// The liaison (I, we, Nova, ...).
    Liaison,
    /// Another actor: the user, a person, a component ("the scheduler").
    Other,
    /// A thing: a record, an id, a pronoun for one ("it", "act-1").
    Thing,
}

/// Words that name another actor as a subject.
const OTHER_ACTORS: &[&str] = &[
    "you",
    "they",
    "he",
    "she",
    "someone",
    "somebody",
    "anyone",
    "anybody",
    "everyone",
    "everybody",
    "who",
    "people",
    "users",
    "user",
    "workflow",
    "workflows",
    "team",
    "teams",
    "scheduler",
    "operator",
    "system",
    "service",
    "pipeline",
    "platform",
    "host",
    "runtime",
    "admin",
    "admins",
    "colleague",
    "colleagues",
    "client",
    "customer",
    "owner",
    "manager",
    "editor",
    "reviewer",
    "app",
    "bot",
    "linkedin",
    "backend",
    "engine",
    "worker",
    "job",
    "jobs",
    "cron",
    "staff",
    "yourself",
    "themselves",
];

/// Words that make the next word a noun ("the publish button").
pub(super) const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "these", "those", "each", "every", "any", "some", "one", "your", "our",
    "their", "its", "his", "her", "whose", "my", "more", "most", "fewer", "less", "many", "few",
];

/// Prepositions after which an effect word is a complement ("in
/// publishing", "before rescheduling"); not `to` (an infinitive) or `by`
/// (an agent).
const PREPOSITIONS: &[&str] = &[
    "in", "on", "at", "for", "from", "with", "without", "into", "of", "about", "after", "before", "via",
    "like", "than", "over", "under", "around", "since", "until", "during", "towards", "toward", "as",
    "against", "per",
];

/// Words that make what follows them in a clause a condition, not a report.
const CONDITIONS: &[&str] = &["if", "unless", "once", "whenever", "whether", "case", "provided", "assuming"];

/// Condition words that need the user after them ("when you enable").
const USER_CONDITIONS: &[&str] = &["when", "after", "before", "until", "should"];

/// Words that make what follows them a recommendation to the user.
const RECOMMENDATIONS: &[&str] = &[
    "suggest",
    "suggests",
    "suggestion",
    "suggestions",
    "recommend",
    "recommends",
    "recommendation",
    "recommendations",
    "recommending",
    "advise",
    "advice",
    "propose",
    "proposal",
    "consider",
    "worth",
    "please",
    "try",
    "prefer",
    "lean",
    "wait",
    "hold",
    "need",
    "needs",
    "want",
    "wants",
    "rather",
    "tip",
    "idea",
];

/// Verbs that take an `-ing` complement as an instruction ("keep posting").
const GERUND_INSTRUCTIONS: &[&str] =
    &["keep", "start", "begin", "continue", "try", "stop", "avoid", "consider"];

/// Verbs likely to follow a noun phrase as its finite verb: "scheduled
/// posts appear", "posted content performs".
const FINITE_HINTS: &[&str] = &[
    "is", "are", "was", "were", "will", "would", "can", "cannot", "could", "may", "might", "should", "must",
    "do", "does", "did", "has", "have", "had", "get", "gets", "got", "appear", "appears", "show", "shows",
    "move", "moves", "run", "runs", "perform", "performs", "tend", "tends", "work", "works", "stay", "stays",
    "remain", "remains", "need", "needs", "look", "looks", "seem", "seems", "go", "goes", "went", "drive",
    "drives", "draw", "draws", "beat", "beats", "take", "takes", "come", "comes", "count", "counts", "live",
    "lives", "sit", "sits", "hold", "holds", "keep", "keeps", "land", "lands",
];

/// Verbs that, before "that", report what the data says: "I saw that
/// post-3 was pinned", "the feed shows that act-2 was boosted".
const REPORTING: &[&str] = &[
    "saw",
    "see",
    "found",
    "find",
    "noticed",
    "notice",
    "read",
    "shows",
    "show",
    "showed",
    "says",
    "said",
    "reports",
    "reported",
    "notes",
    "noted",
    "indicates",
    "indicate",
    "confirms",
    "confirmed",
    "suggests",
    "means",
    "states",
    "stated",
    "lists",
    "listed",
    "mentions",
    "mentioned",
    // Round eight: what another person wrote or told is their report:
    // "Your manager wrote that the budget was approved".
    "wrote",
    "writes",
    "told",
    "tells",
    "explained",
    "explains",
    "claims",
    "claimed",
    "announced",
    "replied",
    "answered",
    "added",
    "thinks",
    "thought",
    "believes",
    "heard",
    "learned",
    "emailed",
];

/// Whether a reporting verb and "that" stand before `index` in its clause:
/// what follows is what the data says, not the liaison's act.
pub(super) fn reported_from_data(clause: &[Token], index: usize) -> bool {
    (index.saturating_sub(REACH)..index).any(|at| {
        let verb = word(clause, at);
        let that = verb.is_some_and(|verb| REPORTING.contains(&verb)) && word(clause, at + 1) == Some("that");
        // A definition needs no "that": "📌 means it's pinned".
        let means = matches!(verb, Some("means" | "meant" | "mean"));
        // A source as subject needs no "that": "the history shows the bio
        // changed", "Mailchimp reports 4,210 emails delivered".
        let source = verb.is_some_and(|verb| SOURCE_VERBS.contains(&verb))
            && at.checked_sub(1).and_then(|before| word(clause, before)).is_some_and(|subject| {
                !matches!(subject, "i" | "we" | "it" | "this" | "that") && !grammar::is_auxiliary(subject)
            });
        // A finding hedged as an inference from the data: "it looks like
        // the campaign was paused", "seems the post went out at 9".
        let hedged = verb.is_some_and(|verb| HEDGED_FINDINGS.contains(&verb))
            && (matches!(word(clause, at + 1), Some("like" | "that"))
                || at.checked_sub(1).and_then(|before| word(clause, before)) == Some("it"));
        // Round eight: a person cited as the source before a pause reports
        // what follows: "According to Marco, the webhook was disabled"
        // ("According to your instructions, ..." stays a claim).
        let cited =
            verb == Some("according") && word(clause, at + 1) == Some("to") && cites_a_person(clause, at + 2);
        that || means || source || hedged || cited
    }) || cites_a_source(clause)
}

/// How many words a person cited after "according to" may have.
const CITED_WORDS: usize = 3;

/// What the user asked for is no source: "according to your request".
const ASKED: &[&str] = &[
    "plan",
    "plans",
    "request",
    "requests",
    "instruction",
    "instructions",
    "ask",
    "brief",
    "schedule",
    "wishes",
    "you",
    "me",
    "us",
    "my",
    "our",
];

/// Whether the words from `from` up to a pause name a person or team
/// cited as a source, in at most [`CITED_WORDS`] words, none of them what
/// the user asked for.
fn cites_a_person(clause: &[Token], from: usize) -> bool {
    let pause = (from + 1..=from + CITED_WORDS)
        .find(|&at| clause.get(at).is_some_and(|token| token.word().is_none()));
    pause.is_some_and(|pause| {
        (from..pause).all(|at| {
            word(clause, at).is_some_and(|w| {
                w.bytes().all(|b| b.is_ascii_alphabetic()) && !ASKED.contains(&w) && !grammar::is_auxiliary(w)
            })
        })
    })
}

/// Verbs that hedge what follows as an inference from the data.
const HEDGED_FINDINGS: &[&str] = &["looks", "seems", "appears", "sounds"];

/// Present verbs a source reports with: "the log shows ...".
const SOURCE_VERBS: &[&str] = &["shows", "reports", "lists", "says", "indicates", "records", "confirms"];

/// Where data is read from: "per the billing page", "according to the
/// log".
pub(super) const SOURCES: &[&str] = &[
    "page",
    "tab",
    "log",
    "logs",
    "history",
    "dashboard",
    "feed",
    "report",
    "data",
    "api",
    "export",
    "record",
    "records",
    "statement",
    "audit",
    "settings",
    "console",
    "inbox",
    "calendar",
    "crm",
    "ledger",
    "description",
    "changelog",
    "timeline",
    "lookup",
    "trail",
    "notes",
    "entry",
    "event",
];

/// Whether the clause cites a source: "per" or "according to" before a
/// source within three words ("per the billing page").
fn cites_a_source(clause: &[Token]) -> bool {
    (0..clause.len()).any(|at| {
        let cites = word(clause, at) == Some("per")
            || (word(clause, at) == Some("according") && word(clause, at + 1) == Some("to"));
        // Recall rules: the source's noun stands before any pause ("Per
        // policy, the API key was rotated" cites no API).
        cites && (at + 1..at + 5).map_while(|next| word(clause, next)).any(|noun| SOURCES.contains(&noun))
    })
}

/// Nouns of a read: "Audit done", "Checks complete" report a read.
pub(super) const READ_NOUNS: &[&str] = &[
    "audit",
    "audits",
    "check",
    "checks",
    "review",
    "reviews",
    "scan",
    "scans",
    "search",
    "searches",
    "lookup",
    "lookups",
    "analysis",
    "read",
    "read-through",
    "pass",
    "count",
    "comparison",
    "summary",
    "report",
    "query",
    "queries",
    "research",
    "investigation",
    "inspection",
    "diff",
    "triage",
    "run",
];

/// Phrases that leave a decision to the user: "it's up to you".
const USERS_CALL: &[&[&str]] = &[
    &["up", "to", "you"],
    &["up", "to", "your"],
    &["your", "call"],
    &["your", "decision"],
    &["your", "choice"],
    &["yours", "to"],
    &["is", "yours"],
    &["are", "yours"],
];

/// How many words after a gerund may hold its own finite verb.
const SUBJECT_WINDOW: usize = 12;

/// Whether a gerund at `index` is the subject of a verb of its own:
/// "Publishing on Tuesdays works best", "Boosting posts costs money".
pub(super) fn gerund_is_subject(clause: &[Token], index: usize) -> bool {
    let is_gerund = word(clause, index).is_some_and(|gerund| gerund.len() > 4 && gerund.ends_with("ing"));
    // A word after a determiner is a noun ("locking the comments"), and so
    // is the first plural after the gerund, its object, though spelt like
    // a verb ("Deleting old drafts now"): only a later one is its verb
    // ("Boosting posts costs money").
    if !is_gerund {
        return false;
    }
    if modal_after_gerund(clause, index) {
        return true;
    }
    let mut object_seen = false;
    (index + 1..index + 1 + SUBJECT_WINDOW).take_while(|&at| word(clause, at).is_some()).any(|at| {
        let next = word(clause, at).unwrap_or_default();
        let after_determiner = word(clause, at - 1).is_some_and(|before| DETERMINERS.contains(&before));
        if is_finite_hint(next) && !after_determiner {
            return true;
        }
        if after_determiner || !next.ends_with('s') {
            return false;
        }
        // A verb in `s` before its own object: "dragging a post to another
        // day reschedules it".
        let object_follows = word(clause, at + 1).is_some_and(|after| {
            matches!(after, "it" | "them" | "the" | "your" | "its" | "their" | "our" | "every" | "all")
        });
        if object_follows && super::words::is_third_person(next) {
            return true;
        }
        // After an adverb of frequency a word in `s` is the verb:
        // "Offboarding normally includes ...".
        let after_adverb = word(clause, at - 1).is_some_and(|before| GENERIC_ADVERBS.contains(&before));
        if after_adverb && super::words::is_third_person(next) {
            return true;
        }
        if !object_seen {
            object_seen = true;
            return matches!(next, "happens" | "costs" | "frees" | "keeps" | "helps" | "hurts" | "lowers");
        }
        super::words::is_third_person(next)
    })
}

/// How far a modal may stand after a gerund whose long object ends before
/// it.
const MODAL_WINDOW: usize = 16;

/// Modals that, after a gerund and its object with no subject of their
/// own between, make the gerund their subject: "Halving the posting
/// frequency on LinkedIn to 3 a week would match ...".
const SUBJECT_MODALS: &[&str] = &["would", "could", "might", "may", "should", "will", "can", "must"];

/// Whether a modal follows the gerund at `index` within [`MODAL_WINDOW`]
/// words, before any pause or pronoun that could be its own subject.
fn modal_after_gerund(clause: &[Token], index: usize) -> bool {
    for at in index + 1..index + 1 + MODAL_WINDOW {
        let Some(next) = word(clause, at) else { return false };
        if SUBJECT_MODALS.contains(&next) {
            return at > index + 1;
        }
        if matches!(
            next,
            "i" | "we" | "you" | "it" | "they" | "he" | "she" | "this" | "that" | "which" | "who"
        ) {
            return false;
        }
    }
    false
}

/// Adverbs of frequency that make a present passive generic.
const GENERIC_ADVERBS: &[&str] =
    &["usually", "always", "typically", "normally", "generally", "often", "sometimes", "automatically"];

/// Whether the present passive whose chain runs from `chain` to the
/// participle at `index` states what generally happens: a bare plural
/// subject ("Posts are ranked by likes") or a gerund heading the clause
/// ("Renaming a campaign is done from its settings page"); "now",
/// "already" or "just" make it a report again.
pub(super) fn is_generic(clause: &[Token], chain: usize, index: usize) -> bool {
    let words: Vec<&str> = (chain..index).filter_map(|at| word(clause, at)).collect();
    let present = words.iter().any(|w| matches!(*w, "is" | "are" | "get" | "gets"))
        && words.iter().all(|w| matches!(*w, "is" | "are" | "get" | "gets") || GENERIC_ADVERBS.contains(w))
        && !words.is_empty();
    let reported = (index + 1..clause.len().min(index + 4))
        .chain(chain.saturating_sub(2)..chain)
        .any(|at| matches!(word(clause, at), Some("now" | "already" | "just" | "finally")));
    if !present || reported {
        return false;
    }
    let subject = chain.checked_sub(1).and_then(|at| word(clause, at));
    let before_subject = chain.checked_sub(2).and_then(|at| word(clause, at));
    let bare_plural = subject.is_some_and(|noun| {
        noun.len() > 3 && noun.ends_with('s') && noun.chars().all(|c| c.is_ascii_alphabetic())
    }) && before_subject.is_none_or(|before| !DETERMINERS.contains(&before));
    // "... is how the bid is changed", "where posts are pinned": a way.
    let way = (chain.saturating_sub(4)..chain).any(|at| matches!(word(clause, at), Some("how" | "where")));
    if way {
        return true;
    }
    let gerund_head = (0..chain).find_map(|at| word(clause, at)).is_some_and(|head| head.ends_with("ing"))
        && gerund_is_subject(clause, (0..chain).find(|&at| word(clause, at).is_some()).unwrap_or(0));
    bare_plural || gerund_head
}

/// Words that say a process acted by itself: "Restarted automatically".
const BY_ITSELF: &[&[&str]] = &[
    &["automatically"],
    &["itself"],
    &["themselves"],
    &["by", "itself"],
    &["on", "its", "own"],
    &["on", "their", "own"],
    &["as", "scheduled"],
];

/// How many words after an effect may say it ran by itself.
const BY_ITSELF_WINDOW: usize = 6;

/// Whether the clause says the act at `index` ran by itself: "the job
/// restarted automatically", "Retried on its own at 02:00".
pub(super) fn by_itself(clause: &[Token], index: usize) -> bool {
    (index + 1..clause.len().min(index + 1 + BY_ITSELF_WINDOW))
        .any(|at| grammar::longest(clause, at, BY_ITSELF).is_some())
}

/// Whether `word` is likely a finite verb after a noun phrase.
pub(super) fn is_finite_hint(word: &str) -> bool {
    FINITE_HINTS.contains(&word)
}

/// Words that are never the noun of an attributive participle.
const FUNCTION_WORDS: &[&str] = &[
    "it",
    "them",
    "him",
    "her",
    "me",
    "us",
    "you",
    "everything",
    "all",
    "out",
    "up",
    "off",
    "on",
    "over",
    "back",
    "through",
    "down",
    "away",
    "and",
    "or",
    "but",
    "to",
    "so",
    "now",
    "then",
    "too",
    "again",
    "yes",
    "no",
    "not",
];

/// How far back a negation, a condition, a recommendation or the actor of
/// a coordinated verb may stand: a bound keeps the pass linear in the
/// clause's length.
const REACH: usize = 24;

fn word(clause: &[Token], index: usize) -> Option<&str> {
    clause.get(index).and_then(Token::word)
}

/// Whether `word` belongs to the chain between a subject and its verb:
/// auxiliaries, adverbs, negations, "going to"-style verbs.
fn is_chain_word(clause: &[Token], at: usize, current: &str) -> bool {
    let next = word(clause, at + 1);
    grammar::AUXILIARIES.iter().any(|(auxiliary, _)| *auxiliary == current)
        || grammar::is_adverb(current)
        || grammar::is_negation(current)
        || (next == Some("to") && (TO_VERBS.contains(&current) || NEGATING_TO_VERBS.contains(&current)))
        || (grammar::GERUND_VERBS.contains(&current) && next.is_some_and(|next| next.ends_with("ing")))
        || matches!(current, "go" | "goes" | "went" | "ahead" | "there" | "been" | "being" | "got" | "get")
}

/// Where the chain before `index` starts: the first of the auxiliaries,
/// adverbs and negations standing right before it.
pub(super) fn chain_start(clause: &[Token], index: usize) -> usize {
    let mut start = index;
    while start > index.saturating_sub(REACH) {
        match word(clause, start - 1) {
            Some(before) if is_chain_word(clause, start - 1, before) => start -= 1,
            _ => break,
        }
    }
    start
}

/// How far after an effect an agent set apart by a pause, or a record's
/// actor field, may stand.
const SET_APART_REACH: usize = 14;

/// Whether another actor is named for the effect at `index` in a shape a
/// record or a log writes: an agent after a pause ("invited as an Editor
/// on 3 May, by Dana", "paused since 10:02 (by Dana)"), an actor field of
/// the record ("actor: kai", "Updated by: customer"), or a log line's
/// actor before its verb ("scheduler: published post_8812"). The liaison
/// named there is no other actor.
pub(super) fn agent_set_apart(clause: &[Token], index: usize) -> bool {
    let named = |at: usize| {
        word(clause, at).is_some_and(|agent| {
            super::deny::may_name_agent(agent)
                && !grammar::is_negation(agent)
                && grammar::longest(clause, at, grammar::AGENTS).is_none()
                && !matches!(
                    agent,
                    "me" | "myself" | "us" | "the" | "a" | "an" | "mistake" | "default" | "hand"
                )
        })
    };
    let logged = index >= 2
        && clause[index - 1] == Token::Pause
        && word(clause, index - 2).is_some_and(|actor| OTHER_ACTORS.contains(&actor));
    // Stop 52: a timestamped log line names its actor, any name, between
    // its time and its verb ("09:14 — Maria: paused Spring Promo").
    let timestamped = index >= 4
        && clause[index - 1] == Token::Pause
        && named(index - 2)
        && clause[index - 3] == Token::Pause
        && word(clause, index - 4).is_some_and(is_time);
    logged
        || timestamped
        || (index + 1..clause.len().min(index + 1 + SET_APART_REACH)).any(|at| {
            let after_pause = clause[at] == Token::Pause
                && word(clause, at + 1) == Some("by")
                && named(at + 2)
                && !super::deny::liaison_among_agents(clause, at + 1);
            // Stop 52: a record writes its actor beside the time, set apart
            // ("deleted (Priya, 11:40)").
            let beside_time = clause[at] == Token::Pause
                && named(at + 1)
                && !word(clause, at + 1).is_some_and(|label| TIME_LABELS.contains(&label))
                && clause.get(at + 2) == Some(&Token::Pause)
                && word(clause, at + 3).is_some_and(is_time);
            // Stop 52: a record's sender, author or owner field too
            // ("(sender: Sam)").
            let field =
                matches!(word(clause, at), Some("actor" | "by" | "user" | "sender" | "author" | "owner"))
                    && clause.get(at + 1) == Some(&Token::Pause)
                    && named(at + 2);
            after_pause || beside_time || field
        })
}

/// A record's labels for a time, which name no actor: "When: 09:14".
const TIME_LABELS: &[&str] = &["when", "time", "date", "at", "on", "updated", "changed", "since"];

/// Whether `word` is a time of day: "09:14", "22:10".
fn is_time(word: &str) -> bool {
    word.len() <= 5 && word.contains(':') && word.bytes().all(|b| b.is_ascii_digit() || b == b':')
}

/// How far around a word another step of a walkthrough may stand.
const STEP_REACH: usize = 10;

/// Whether the word at `index` heads its stretch: at the clause's start,
/// after a pause, a step's number ("3) hit Rotate") or "then".
fn heads_stretch(clause: &[Token], index: usize) -> bool {
    index.checked_sub(1).is_none_or(|at| {
        clause[at].word().is_none_or(|before| {
            matches!(before, "then" | "and" | "or") || before.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// Whether `word` has no past, participle or gerund reading.
fn no_completed_form(word: &str) -> bool {
    use super::lexicon::{GERUND, PARTICIPLE, PAST};
    super::words::completed_form(word) & (PAST | PARTICIPLE | GERUND) == 0
}

/// Whether `word` can only be a verb's base form, not a past or a
/// participle: "save", "paste", "go" (not "set", "hit").
fn plain_base(word: &str) -> bool {
    word.bytes().all(|b| b.is_ascii_alphabetic())
        && super::words::is_base_verb(word)
        && no_completed_form(word)
}

/// Whether the word at `index` is a step of a walkthrough or a menu path
/// rather than a report: a verb's base form heading its stretch among
/// other stretches headed by a verb that can only be a base form ("1) Go
/// to Settings 2) pick API keys 3) hit Rotate", "Then set the end date,
/// save, and ..."), or a word standing alone between pauses beside another
/// such word that is no past, participle or gerund, a menu's items
/// ("Billing → Invoices → Refund").
pub(super) fn walkthrough_step(clause: &[Token], index: usize) -> bool {
    let Some(current) = word(clause, index) else { return false };
    if !heads_stretch(clause, index) {
        return false;
    }
    let around = || {
        (index.saturating_sub(STEP_REACH)..clause.len().min(index + STEP_REACH))
            .filter(move |&at| at != index)
    };
    let step = super::words::is_spelt_as_base(current)
        && !current.ends_with("ing")
        && !current.ends_with("ed")
        && around().any(|at| heads_stretch(clause, at) && word(clause, at).is_some_and(plain_base));
    let alone = |at: usize| {
        word(clause, at).is_some()
            && at.checked_sub(1).is_none_or(|before| clause[before].word().is_none())
            && clause.get(at + 1).is_none_or(|after| after.word().is_none())
    };
    // A menu's item is a word, alone between pauses, that is no past,
    // participle or gerund; a path has one on each side or two on one.
    let menu_item = |at: Option<usize>| {
        at.is_some_and(|at| {
            alone(at)
                && word(clause, at)
                    .is_some_and(|w| w.bytes().any(|b| b.is_ascii_alphabetic()) && no_completed_form(w))
        })
    };
    let (before, after) = (menu_item(index.checked_sub(2)), menu_item(Some(index + 2)));
    let item = alone(index)
        && ((before && (after || menu_item(index.checked_sub(4)))) || (after && menu_item(Some(index + 4))));
    step || item
}

/// Whether the word before `chain` is a pronoun for a person: "you
/// approved", "someone cancelled".
pub(super) fn is_actor_pronoun(clause: &[Token], chain: usize) -> bool {
    let before = chain.checked_sub(1).and_then(|at| word(clause, at));
    before.is_some_and(|before| {
        matches!(
            before,
            "you" | "they" | "he" | "she" | "someone" | "somebody" | "anyone" | "everyone" | "who"
        )
    })
}

/// Whether the word at `at` is a name heading its stretch before a past
/// verb: that verb's actor, and the actor of the verbs coordinated with it
/// ("Priya wrote the reply and sent it"; "Checked the feed and sent it"
/// has none). A name is a word the tagger does not know as English.
fn names_a_person(clause: &[Token], at: usize) -> bool {
    let heads = at.checked_sub(1).is_none_or(|before| clause[before].word().is_none());
    heads
        && word(clause, at).is_some_and(|name| {
            name.len() >= 3
                && name.bytes().all(|b| b.is_ascii_alphabetic())
                && !super::invert::is_closed(name)
                && !grammar::is_adverb(name)
        })
        && word(clause, at + 1)
            .is_some_and(|verb| super::words::completed_form(verb) & super::lexicon::PAST != 0)
        && word(clause, at).is_some_and(|name| !super::words::is_english(name))
}

fn is_other_actor(word: &str) -> bool {
    let agentive = word.len() > 4
        && ["er", "or", "ers", "ors", "ist", "ists"].iter().any(|suffix| word.ends_with(suffix))
        && !word.chars().any(|c| c.is_ascii_digit());
    OTHER_ACTORS.contains(&word) || agentive
}

fn is_liaison(clause: &[Token], at: usize) -> bool {
    let starts = at.saturating_sub(3)..=at;
    starts
        .into_iter()
        .any(|start| grammar::liaison_subject(clause, start).is_some_and(|length| start + length == at + 1))
}

/// The subject of the effect word whose chain starts at `chain`: the word
/// before the chain, or, after a conjunction, the first actor earlier in
/// the same stretch between pauses ("the operator approved and published").
pub(super) fn subject_of(clause: &[Token], chain: usize) -> Subject {
    let Some(before) = chain.checked_sub(1) else { return Subject::Missing };
    let Some(current) = word(clause, before) else { return Subject::Missing };
    if CONJUNCTIONS.contains(&current) {
        let mut at = before;
        while at > before.saturating_sub(REACH) {
            at -= 1;
            let Some(earlier) = word(clause, at) else { break };
            if is_liaison(clause, at) {
                return Subject::Liaison;
            }
            if is_other_actor(earlier) || names_a_person(clause, at) {
                return Subject::Other;
            }
        }
        return Subject::Missing;
    }
    if is_liaison(clause, before) {
        Subject::Liaison
    } else if is_other_actor(current) {
        Subject::Other
    } else {
        Subject::Thing
    }
}

/// Whether the word at `index` is used as a noun or a complement: after a
/// determiner ("the publish button") or a preposition ("in publishing").
pub(super) fn is_noun_use(clause: &[Token], index: usize) -> bool {
    let before = index.checked_sub(1).and_then(|at| word(clause, at));
    before.is_some_and(|before| DETERMINERS.contains(&before) || PREPOSITIONS.contains(&before))
        || possessed(clause, index)
        || is_count_label(clause, index)
        || is_topic(clause, index)
}

/// How many words a count's label may have after its participle: "Sent
/// emails this week: 1,240".
const LABEL_WORDS: usize = 4;

/// How far back a tally's other count may stand.
const TALLY_REACH: usize = 8;

/// Whether the word at `index` labels a count: at the head of its stretch
/// with at most [`LABEL_WORDS`] words and a pause before a number
/// ("Published: 14", "Sent emails this week: 1,240"), or right after a
/// number and closing its stretch ("2 drafts, 1 rejected"). A tally names
/// how many records are in a state, not who put them there.
fn is_count_label(clause: &[Token], index: usize) -> bool {
    let is_number = |at: usize| word(clause, at).is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
    // Round eight: a label's value may be a count of nothing: "Touched:
    // nothing", "Deleted: none".
    let is_value = |at: usize| is_number(at) || word(clause, at).is_some_and(|w| ZERO_VALUES.contains(&w));
    let heads = index.checked_sub(1).is_none_or(|at| clause[at].word().is_none());
    let labels = heads
        && (index + 1..index + 2 + LABEL_WORDS).any(|at| {
            clause.get(at) == Some(&Token::Pause)
                && is_value(at + 1)
                && clause.get(at + 2).is_none_or(|after| after.word().is_none())
                && word(clause, index + 1).is_none_or(|first| !DETERMINERS.contains(&first))
                && (index + 1..at).all(|inside| {
                    word(clause, inside).is_some_and(|w| {
                        w.bytes().all(|b| b.is_ascii_alphabetic())
                            && !grammar::is_auxiliary(w)
                            && !is_finite_hint(w)
                    })
                })
        });
    // A tally's other stretch counts records by their noun: "3 scheduled
    // posts, 2 drafts, 1 rejected" (not "Invites: 18 sent, 0 failed").
    let tallied = (index.saturating_sub(TALLY_REACH)..index.saturating_sub(2)).any(|at| {
        clause[at] == Token::Pause
            && is_number(at + 1)
            && word(clause, at + 2).is_some_and(grammar::is_plural_noun)
            && clause.get(at + 3).is_none_or(|after| after.word().is_none())
    });
    let counted = index.checked_sub(1).is_some_and(is_number)
        && index.checked_sub(2).is_none_or(|at| clause[at].word().is_none())
        && clause.get(index + 1).is_none_or(|next| next.word().is_none())
        && tallied;
    labels || counted
}

/// A record's field whose value is the state it shows: "Status: locked".
const STATE_FIELDS: &[&str] = &["status", "state"];

/// Whether the word at `index` is the value of a record's state field:
/// "Status: locked", "| status: refunded |" report what the record shows
/// ("status: done" says an act was done).
pub(super) fn state_field_value(clause: &[Token], index: usize) -> bool {
    index >= 2
        && clause[index - 1] == Token::Pause
        && word(clause, index - 2).is_some_and(|field| STATE_FIELDS.contains(&field))
        && word(clause, index)
            .is_some_and(|value| !matches!(value, "done" | "completed" | "complete" | "success"))
}

/// The liaison's own text, after "my": "a typo in my table".
const OWN_TEXT: &[&str] = &[
    "table",
    "summary",
    "answer",
    "reply",
    "message",
    "list",
    "numbers",
    "figures",
    "note",
    "notes",
    "calculation",
    "calculations",
    "math",
    "maths",
    "estimate",
    "breakdown",
    "wording",
];

/// How many words after an effect word may hold the liaison's own text.
const OWN_TEXT_WINDOW: usize = 6;

/// Whether the effect word at `index` acts on the liaison's own answer,
/// "my" before one of [`OWN_TEXT`] (one adjective may stand between)
/// within [`OWN_TEXT_WINDOW`] words of its object: "fixed a typo in my
/// table", "corrected my own numbers". The liaison's text is not a store.
pub(super) fn on_own_text(clause: &[Token], index: usize) -> bool {
    // The object ends at a verb or a conjunction: "\"I approved act-1\" is
    // my answer" acts on act-1.
    let object = |at: &usize| {
        word(clause, *at).is_some_and(|w| !grammar::is_auxiliary(w) && !CONJUNCTIONS.contains(&w))
    };
    // Stop 52: so is the text the answer places "below" or "above" ("in
    // the list below"), and an act done "in my head".
    (index + 1..index + 1 + OWN_TEXT_WINDOW).take_while(object).any(|at| {
        let own_noun = |at: usize| word(clause, at).is_some_and(|noun| OWN_TEXT.contains(&noun));
        let placed = |at: usize| matches!(word(clause, at), Some("below" | "above"));
        let mine = word(clause, at) == Some("my") && (own_noun(at + 1) || own_noun(at + 2));
        let shown = matches!(word(clause, at), Some("the" | "this")) && own_noun(at + 1) && placed(at + 2);
        let thought = word(clause, at) == Some("in")
            && word(clause, at + 1) == Some("my")
            && word(clause, at + 2) == Some("head");
        mine || shown || thought
    })
}

/// Whether the effect word at `index` names no effect for a reason of its
/// own words: an act on the liaison's own text ([`on_own_text`]), or one
/// of the idioms of [`idiom_names_no_effect`].
pub(super) fn names_no_effect(clause: &[Token], index: usize) -> bool {
    on_own_text(clause, index) || idiom_names_no_effect(clause, index)
}

/// What may stand after "clear" and before "up" when clearing up is
/// explaining: "Let me clear something up".
const CLEARED_UP: &[&str] = &["something", "things", "that", "this", "confusion"];

/// Verbs of naming, after which a word is a name: "labelled 'Sent'".
const NAMING: &[&str] = &["labelled", "labeled", "named", "called", "titled", "entitled"];

/// The names that sign a message.
const SIGNATURES: &[&str] = &["your", "harmonia", "nova", "the"];

/// Stop 52: idioms whose effect word names no effect, read in the two or
/// three words after it:
/// - a message's closing formulae: "signing off" with nothing after it
///   but a pause ("Signing off — remember ..."), and "signed" between
///   pauses before a signature ("(signed, your assistant)"); signing off
///   on something, or signing a contract, stays an effect;
/// - a word right after a verb of naming is a name ("labelled 'Sent'"),
///   and committing to a plan or to doing is a pledge;
/// - clearing up a point is explaining it: "clear" with "something",
///   "things", "that", "this" or "confusion", then "up"; clearing the
///   queue stays an effect.
fn idiom_names_no_effect(clause: &[Token], index: usize) -> bool {
    let ends = |at: usize| clause.get(at).is_none_or(|token| token.word().is_none());
    // A word right after a verb of naming is the name, a label's text:
    // "Payouts are labelled 'Sent'".
    if index.checked_sub(1).and_then(|at| word(clause, at)).is_some_and(|w| NAMING.contains(&w)) {
        return true;
    }
    match word(clause, index) {
        Some("sign" | "signs" | "signing" | "signed") if word(clause, index + 1) == Some("off") => {
            ends(index + 2)
        }
        Some("signed") => {
            index.checked_sub(1).is_none_or(|at| clause[at].word().is_none())
                && clause.get(index + 1) == Some(&Token::Pause)
                && word(clause, index + 2).is_some_and(|name| SIGNATURES.contains(&name))
        }
        // "Steps I took:", "the steps we followed:": a heading of steps,
        // which are judged one by one after it.
        Some("took" | "followed")
            if clause.get(index + 1) == Some(&Token::Pause)
                && matches!(word(clause, index.wrapping_sub(1)), Some("i" | "we"))
                && word(clause, index.wrapping_sub(2)) == Some("steps") =>
        {
            true
        }
        // Committing to a plan or to doing something is a pledge: "The
        // team committed to a Friday launch" ("committed the change to
        // main" and "committed to main" stay effects).
        Some("commit" | "commits" | "committed" | "committing") if word(clause, index + 1) == Some("to") => {
            word(clause, index + 2)
                .is_some_and(|w| matches!(w, "a" | "an") || (w.len() > 4 && w.ends_with("ing")))
        }
        Some("clear" | "clears" | "cleared" | "clearing") => {
            let up_at = match (word(clause, index + 1), word(clause, index + 2)) {
                (Some("a"), Some("few" | "couple")) => index + 4,
                _ => index + 2,
            };
            word(clause, up_at - 1).is_some_and(|what| CLEARED_UP.contains(&what))
                && word(clause, up_at) == Some("up")
        }
        _ => after_to_do_label(clause, index),
    }
}

/// Nouns a label of acts still to do heads: "Changes to make:".
const TO_DO_NOUNS: &[&str] = &["changes", "steps", "things", "fixes", "edits", "tasks", "actions", "options"];

/// How many words a label of acts still to do may hold before its pause.
const TO_DO_LABEL_WINDOW: usize = 6;

/// Stop 52: an act right after a label of acts still to do ("Changes to
/// make in Shopify: set the price to $39") is one of them, not done: the
/// label's noun with "to" and a verb, up to a few words, then a pause.
fn after_to_do_label(clause: &[Token], index: usize) -> bool {
    let Some(pause) = index.checked_sub(1).filter(|&at| clause[at] == Token::Pause) else { return false };
    (pause.saturating_sub(TO_DO_LABEL_WINDOW)..pause.saturating_sub(2)).any(|at| {
        word(clause, at).is_some_and(|noun| TO_DO_NOUNS.contains(&noun))
            && word(clause, at + 1) == Some("to")
            && (at..pause).all(|inside| word(clause, inside).is_some())
            && at.checked_sub(1).is_none_or(|before| word(clause, before).is_none())
    })
}

/// A label's value that counts nothing.
const ZERO_VALUES: &[&str] = &["none", "nothing", "zero", "nil", "n/a"];

/// Whether a label's value after the pause at `at` counts nothing and ends
/// its stretch: "Changes made by me: none".
pub(super) fn valued_none(clause: &[Token], at: usize) -> bool {
    clause.get(at) == Some(&Token::Pause)
        && word(clause, at + 1).is_some_and(|w| ZERO_VALUES.contains(&w))
        && clause.get(at + 2).is_none_or(|after| after.word().is_none())
}

/// Whether the word at `index` is the topic of an email subject's "Re:"
/// ("Re: pricing").
fn is_topic(clause: &[Token], index: usize) -> bool {
    index >= 2
        && clause[index - 1] == Token::Pause
        && word(clause, index - 2) == Some("re")
        && index.checked_sub(3).is_none_or(|at| clause[at].word().is_none())
}

/// Whether the word at `index` stands between a noun's possessive `'s` and
/// the noun it modifies: "the French account's pinned post says", where
/// `'s` is no "is" or "has" ("the post's pinned", "Nova's pinned the post"
/// are).
fn possessed(clause: &[Token], index: usize) -> bool {
    let before = |back: usize| index.checked_sub(back).and_then(|at| word(clause, at));
    let owner = before(2).is_some_and(|owner| {
        owner.chars().all(|c| c.is_ascii_alphabetic())
            && !super::invert::is_closed(owner)
            && grammar::liaison_subject(clause, index - 2).is_none()
            && !matches!(owner, "nova" | "harmonia" | "who" | "where" | "how" | "what")
    });
    let noun = word(clause, index + 1).is_some_and(|noun| {
        noun.chars().all(|c| c.is_ascii_alphabetic())
            && !super::invert::is_closed(noun)
            && !FUNCTION_WORDS.contains(&noun)
            && !PREPOSITIONS.contains(&noun)
            && !grammar::PREPOSITIONS.contains(&noun)
            && !grammar::is_adverb(noun)
    });
    before(1) == Some("'s") && owner && noun && word(clause, index + 2).is_some()
}

/// Whether a perfect passive at `index` says how long a state has held:
/// "its lock has been held since 02:00" reports the state, not an act.
/// "Its status has been approved for an hour" says how long, as "since"
/// does.
pub(super) fn state_since(clause: &[Token], index: usize) -> bool {
    index.checked_sub(1).and_then(|at| word(clause, at)) == Some("been")
        && (index + 1..index + 3).any(|at| {
            word(clause, at) == Some("since") || (word(clause, at) == Some("for") && lasting(clause, at + 1))
        })
}

/// Units of a duration: "for an hour", "for 3 days".
const DURATIONS: &[&str] = &[
    "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years",
    "while",
];

/// Whether a duration starts at `at`: "an hour", "3 days", "a while".
fn lasting(clause: &[Token], at: usize) -> bool {
    (at..at + 3).any(|unit| word(clause, unit).is_some_and(|w| DURATIONS.contains(&w)))
}

/// Forms of `be` and verbs of staying that, before "still", say a state
/// persisted.
const STILL_STATES: &[&str] = &["is", "are", "was", "were", "'s", "'re", "remains", "remained", "stays"];

/// Whether the effect word at `index` follows "is still": "the post is
/// still pinned", "it's still live" report a state that has persisted,
/// which no act of the liaison's made.
pub(super) fn persisted(clause: &[Token], index: usize) -> bool {
    let before = |back: usize| index.checked_sub(back).and_then(|at| word(clause, at));
    before(1) == Some("still") && before(2).is_some_and(|be| STILL_STATES.contains(&be))
}

/// Phrases that credit a state to whoever they name: "thanks to Maria's
/// change", "courtesy of the scheduler".
const CREDITS: &[&[&str]] = &[&["thanks", "to"], &["courtesy", "of"], &["going", "by"]];

/// Who a credit may name and still be the liaison.
const LIAISON_CREDITED: &[&str] = &["me", "my", "us", "our", "yours", "myself", "ourselves"];

/// Openings that thank the user for an act: "Thanks for raising the
/// budget", "Appreciate you restarting job-17".
const THANKS: &[&[&str]] = &[
    &["thanks", "for"],
    &["thank", "you", "for"],
    &["appreciate", "you"],
    &["appreciate", "your"],
    &["nice", "work"],
    &["good", "call"],
];

/// Gerunds after a thanks that credit the liaison or name no act: "thanks
/// for letting me", "thanks for waiting".
const NOT_CREDITING: &[&str] = &["letting", "allowing", "having", "trusting", "asking", "bearing"];

/// Whether the clause credits its state to someone other than the
/// liaison: a credit naming another actor ("the campaign is paused,
/// thanks to Maria's change"; "courtesy of the scheduler"), or a thanks
/// to the user for an act that is not a read ("Thanks for raising the
/// budget, the ad set is no longer limited"). Bounded: a credit is looked
/// for within [`REACH`] words of `index`, a thanks in the clause's first
/// [`REACH`] words.
pub(super) fn credited_elsewhere(clause: &[Token], index: usize) -> bool {
    let credit = (index.saturating_sub(REACH)..clause.len().min(index + REACH)).any(|at| {
        grammar::longest(clause, at, CREDITS).is_some_and(|length| {
            word(clause, at + length).is_some_and(|who| !LIAISON_CREDITED.contains(&who))
        })
    });
    credit
        || (0..clause.len().min(REACH)).any(|at| {
            grammar::longest(clause, at, THANKS).is_some_and(|length| {
                word(clause, at + length).is_some_and(|act| {
                    act.len() > 4
                        && act.ends_with("ing")
                        && !NOT_CREDITING.contains(&act)
                        && super::acts::ACTS.act_at(clause, at + length).is_none()
                })
            })
        })
}

/// Whether a gerund at `index` after the chain from `chain` is an
/// instruction ("keep posting") rather than a fragment.
pub(super) fn gerund_instruction(clause: &[Token], chain: usize) -> bool {
    word(clause, chain).is_some_and(|first| GERUND_INSTRUCTIONS.contains(&first))
}

/// Whether the clause, before `index`, makes the effect a condition, a
/// recommendation to the user, or asks a question.
pub(super) fn addressed(clause: &[Token], index: usize) -> Option<&'static str> {
    addressed_to(clause, index, false)
}

/// Tags that make a statement look like a question: "Boosted it, right?".
const QUESTION_TAGS: &[&str] =
    &["right", "ok", "okay", "yeah", "yes", "no", "correct", "alright", "eh", "huh", "yep"];

/// [`addressed`] for an act said to be done: a tag question does not make
/// the statement a question ("Boosted it, right?"), and a condition, a
/// recommendation or the user's call closed by a pause does not reach the
/// act after it ("If you're wondering, boosted it", "Recommendation:
/// already pinned it").
pub(super) fn addressed_done(clause: &[Token], index: usize) -> Option<&'static str> {
    addressed_to(clause, index, true)
}

fn addressed_to(clause: &[Token], index: usize, done: bool) -> Option<&'static str> {
    if clause.last() == Some(&Token::Question) {
        let tagged = done && {
            let words = clause.iter().rev().skip(1).take_while(|token| token.word().is_some());
            let tail: Vec<&str> = words.filter_map(Token::word).collect();
            !tail.is_empty() && tail.len() <= 2 && tail.iter().all(|word| QUESTION_TAGS.contains(word))
        };
        let statement = done && statement_before_question(clause, index);
        if !(tagged || statement) {
            return Some("a question");
        }
    }
    let stretch_start = if done {
        (index.saturating_sub(REACH)..index)
            .rev()
            .find(|&at| clause[at] == Token::Pause)
            .map_or(index.saturating_sub(REACH), |at| at + 1)
    } else {
        index.saturating_sub(REACH)
    };
    let window = stretch_start..clause.len().min(index + REACH);
    if window.into_iter().any(|at| grammar::longest(clause, at, USERS_CALL).is_some()) {
        return Some("the user's call");
    }
    let mut at = index;
    while at > stretch_start.max(index.saturating_sub(REACH)) {
        at -= 1;
        let Some(current) = word(clause, at) else { continue };
        if CONDITIONS.contains(&current) || grammar::inverted_condition(clause, at) {
            return Some("a condition");
        }
        let user_follows = (at + 1..at + 4).any(|next| matches!(word(clause, next), Some("you" | "your")));
        if USER_CONDITIONS.contains(&current) && user_follows {
            return Some("a condition");
        }
        if RECOMMENDATIONS.contains(&current) {
            return Some("a recommendation to the user");
        }
    }
    None
}

/// Words that open a question of their own after a pause: "..., shall I
/// add more?", "..., or would you prefer the afternoon?".
const QUESTION_OPENERS: &[&str] = &[
    "shall", "should", "would", "could", "can", "do", "does", "did", "will", "want", "is", "are", "what",
    "which", "how", "when", "where", "who", "why", "any",
];

/// Words that may lead such a question: "ok or should she be admin?".
const QUESTION_LEADS: &[&str] = &["ok", "okay", "or", "and", "so", "but", "also", "then"];

/// Whether the act at `index` is a statement before a question that has a
/// stretch of its own: a pause stands between them, the question's
/// stretch opens with an auxiliary, modal or wh-word (after at most two
/// leads), and the act's own stretch opens with none ("Boosted it, shall I
/// add more?"; not "Did I boost it, or would you?"). Bounded by [`REACH`].
fn statement_before_question(clause: &[Token], index: usize) -> bool {
    let end = clause.len().min(index + REACH);
    let Some(pause) = (index + 1..end).rev().find(|&at| clause[at] == Token::Pause) else { return false };
    let mut opener = pause + 1;
    while opener < pause + 3 && word(clause, opener).is_some_and(|lead| QUESTION_LEADS.contains(&lead)) {
        opener += 1;
    }
    let asks = word(clause, opener).is_some_and(|first| QUESTION_OPENERS.contains(&first));
    let own_start = (index.saturating_sub(REACH)..index)
        .rev()
        .find(|&at| clause[at] == Token::Pause)
        .map_or(index.saturating_sub(REACH), |at| at + 1);
    let own_asks = word(clause, own_start)
        .is_some_and(|first| QUESTION_OPENERS.contains(&first) || grammar::is_auxiliary(first));
    asks && !own_asks
}

/// Whether the participle at `index` modifies the noun after it, which a
/// finite verb then follows: "scheduled posts appear in the feed".
pub(super) fn attributive(clause: &[Token], index: usize) -> bool {
    let Some(noun) = word(clause, index + 1) else { return false };
    let noun_like = noun.chars().all(|c| c.is_alphabetic() || c == '-')
        && !FUNCTION_WORDS.contains(&noun)
        && !DETERMINERS.contains(&noun)
        && !PREPOSITIONS.contains(&noun)
        && !grammar::PREPOSITIONS.contains(&noun);
    let hinted = (index + 2..index + 4).any(|at| word(clause, at).is_some_and(|w| FINITE_HINTS.contains(&w)));
    // A plural noun followed by a word that can only be its verb: "posted
    // videos earn more".
    let verb_like = word(clause, index + 2).is_some_and(|next| {
        noun.ends_with('s')
            && next.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
            && ![DETERMINERS, PREPOSITIONS, grammar::PREPOSITIONS, FUNCTION_WORDS, grammar::CONJUNCTIONS]
                .iter()
                .any(|class| class.contains(&next))
            && !grammar::is_adverb(next)
            && !matches!(next, "twice" | "again" | "today" | "yesterday" | "tonight" | "earlier" | "already")
    });
    noun_like && (hinted || verb_like)
}

/// Pronouns that, after a pause, start a clause of their own.
const NEW_SUBJECTS: &[&str] = &["it", "i", "we", "you", "they", "he", "she", "this", "that", "everything"];

/// Whether a negation at `at` is an interjection closed by a pause right
/// after it ("No problem, it is done"), which negates nothing later.
fn is_interjection(clause: &[Token], at: usize, index: usize) -> bool {
    // The pause stands before the act: in "Nothing changed ✔" the
    // negation's pause closes the act itself.
    (at + 1..(at + 3).min(index)).any(|next| matches!(clause.get(next), Some(Token::Pause)))
        && word(clause, at + 1).is_none_or(|next| !grammar::is_negation(next))
}

/// Words that may stand between a pause and a new subject without
/// joining the clause before: "..., maybe it is".
const HEDGES: &[&str] = &["maybe", "perhaps", "probably", "possibly", "likely", "so", "then", "now", "also"];

/// How many negations reach `index` from earlier in its clause (back to a
/// contrast such as "but"): an odd count negates the effect, an even one
/// ("never failed to publish") affirms it. "neither ... nor" counts once.
pub(super) fn negations_before(clause: &[Token], index: usize) -> usize {
    let mut count = 0;
    let mut at = index;
    while at > index.saturating_sub(REACH) {
        at -= 1;
        let Some(current) = word(clause, at) else {
            // A pause before a new subject ends the reach: "nothing to
            // worry about, it's been sent".
            // So does one after a hedge: "..., maybe it is not done yet".
            let mut next = at + 1;
            while word(clause, next).is_some_and(|hedge| HEDGES.contains(&hedge)) && next < at + 3 {
                next += 1;
            }
            if word(clause, next).is_some_and(|next| NEW_SUBJECTS.contains(&next)) {
                break;
            }
            continue;
        };
        // "not yet submitted": "yet" after a negation is no contrast.
        let not_yet = current == "yet"
            && at.checked_sub(1).and_then(|before| word(clause, before)).is_some_and(grammar::is_negation);
        if grammar::SCOPE_BREAKS.contains(&current) && !not_yet {
            break;
        }
        let after_pause = at > 0 && clause[at - 1] == Token::Pause;
        if after_pause && matches!(current, "and" | "so" | "then") {
            break;
        }
        // An earlier effect word after a negation of this one's own ends
        // the reach ("did not post, did not publish"); without one, this
        // word shares the earlier one's ("cannot approve, publish").
        if count > 0 && !LEXICON.lookup(current).is_empty() {
            break;
        }
        let negating_to = NEGATING_TO_VERBS.contains(&current) && word(clause, at + 1) == Some("to");
        let negation = grammar::is_negation(current)
            && current != "nor"
            && word(clause, at + 1) != Some("only")
            && !is_interjection(clause, at, index);
        if negation || (negating_to && !grammar::is_negation(current)) {
            count += 1;
        }
    }
    count
}
