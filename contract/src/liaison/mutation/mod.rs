//! The mutation-claim detector behind the validator's `mutation_claim` rule
//! (does a text claim that the liaison, which only reads, caused an
//! effect?) and the language check behind `unsupported_language`.
//!
//! Its default is inverted (docs/contract.md §5.7): when the liaison is
//! the actor (first person, its names, or no subject) and a clause says an
//! act is done or under way, any verb outside a closed allow-list of
//! reading and reporting acts is a claim, whatever the verb; a frame may
//! say the sentence is not the liaison's claim. Parts:
//! - `normalize`: the text folded before anything is read (NFKC, format
//!   characters removed, look-alike letters folded to ASCII with the UTS
//!   #39 skeleton, markdown stripped, letters spelt out one by one joined,
//!   case folded) and split into clauses of words; table cells, emoji and
//!   bullets are boundaries, line breaks are not, check marks mark a
//!   clause done; punctuation is never folded into a letter (an em dash
//!   stays a pause), and an emoji standing where a verb stands (glued to
//!   `'d`, right after "I"/"we", or before "by me") is read as the verb
//!   "actioned" ("I 📌'd the post", "Newsletter 📤 by me").
//! - `acts.toml` (read by `acts`): the allow-list, as data: the reading and
//!   reporting acts the liaison may say it did, by act, each verb with its
//!   five forms, guarded verbs with the objects that keep them a read
//!   ("took a look").
//! - `effects.toml` (read by `lexicon`): the effects the contract forbids,
//!   by family, as data: it names a finding's family, and its verbs,
//!   states ("live") and nouns ("approval") make the claims that need no
//!   completion; leetspeak and repeated letters are folded on look-up.
//! - `words`: the part-of-speech tagger's reading (`english-pos-tagger`):
//!   which word is a past, a participle or a gerund of any verb, and which
//!   words are English.
//! - `grammar` and `detect`: the liaison's own shapes with an effect verb,
//!   read first: the liaison (I, we, my team, Harmonia, Nova, the liaison,
//!   the agent, the assistant) as subject in the form its auxiliaries ask
//!   for (offers and futures too; not in an introduction, "Your assistant
//!   here, ...", nor a heading, "Harmonia update — ..."), and the verbs
//!   coordinated with it; a
//!   passive with the liaison as agent; an effect noun the liaison owns
//!   ("my approval"); a receipt. A first-person suggestion ("I'd post it")
//!   is not one.
//! - `roles` and `deny`: every other effect word, with its subject and
//!   voice read, is a claim unless a frame holds: a negation (double
//!   negatives affirm), words addressed to the user (question, condition,
//!   recommendation, instruction, the user's call; a question only over
//!   its own stretch when a statement stands before it, "Pinned it, or
//!   would you rather ...?"), a modal or generic sentence, a gerund as
//!   subject (also of a modal after a long object), another actor (also
//!   after a column's "Invited by —"; a denied "not by me" is no agent),
//!   a process that ran by itself, a report of the data (also a
//!   definition, "means it's pinned", and a status a record displays,
//!   "shows paused"), or a state inside a claim whose cited
//!   evidence carries it ([`Grounding`]). Quotations of what the tools
//!   returned are removed before ([`find_in`]).
//! - `invert`: the inverted default for every verb the tables do not
//!   have: the liaison as subject of a done or ongoing act, fragments,
//!   status lines, clauses marked done, ellipsis ("and I did"), the verbs
//!   after a read heading a fragment ("Checked the calendar and booked
//!   the call"), an `-ed` head before a determiner the tagger reads as an
//!   adjective ("Consolidated the sheets"), completed
//!   passives without an agent, the base forms of non-native English ("I
//!   have change it"); with the same frames.
//! - `shapes`: the liaison's acts in shapes its verbs alone do not show:
//!   causatives ("I had it replaced"), an act named by its noun ("I did
//!   the refund"), "my doing", a change announced from now on, headlines
//!   ("Cleanup finished"), states said to hold now, offers to undo.
//! - `spelling`: a word unknown as English, one or two edits from a verb
//!   of the tables, read as that verb ("revokd", "cheked").
//! - `language`: which stretches of a text are in a language without a
//!   lexicon ([`find_foreign`]), with `lingua` on short text.
//!
//! It reads words, not meaning. The corpora in `tests/claims/` measure it:
//! `corpus.toml` (training, asserted), `gaps.toml` (training sentences it
//! still gets wrong) and the held-out `heldout.toml`, `unseen.toml`,
//! `unseen2.toml` and `unseen3.toml` (figures printed, never asserted);
//! `corpus` (tests only) prints their figures by category, and
//! `frames` (tests only) holds one test per frame with the claims a hostile
//! answer dresses in it.
//!
//! Round seven (read-only role statements, walkthroughs, records and logs;
//! `round_seven_rules_are_claims_and_their_twins_are_not`) added:
//! - a count's label is no act: a participle heading its stretch before a
//!   pause and a number ("Published: 14", "Sent emails this week: 1,240"),
//!   or after a number in a tally that counts records by their noun ("3
//!   scheduled posts, 2 drafts, 1 rejected"); the topic after "Re:";
//! - a gerund is the subject of a verb in `s` before its object ("dragging
//!   a post to another day reschedules it"), or of one up to twelve words
//!   after it;
//! - a finding hedged as an inference ("it looks like", "seems"); more
//!   nouns of a source after "per" (description, changelog, timeline,
//!   lookup, trail, notes, entry, event); "not yet" negates;
//! - a condition inverted with a thing as subject and a modal after it
//!   ("Had the post gone out at 9am, it would have ...");
//! - another actor set apart as a record writes it: an agent after a pause
//!   ("..., by Dana", "(by Dana)"), an actor field ("actor: kai", "Updated
//!   by: customer"), a log line's actor before its verb ("scheduler:
//!   published"); a publication's state sent "from the billing system";
//! - the allow-list reads clicking or going into a view, opening its
//!   settings or menu, giving a list a once-over, pulling a sample,
//!   sanity-checking, finishing going through; a guarded read's object may
//!   stand before it across an adverb or a passive ("the lookup I just
//!   ran", "This summary was prepared by Harmonia"); after an auxiliary a
//!   preposition's word is a verb ("I have given ...");
//! - a present "is scheduled for" reads a record's date (not with a credit
//!   to the liaison); "how" before a present passive names a way; a state
//!   said to hold now under "can be" or done automatically is no claim;
//! - a walkthrough's steps (a base form heading its stretch among stretches
//!   headed by a verb that can only be a base: "3) hit Rotate 4) paste",
//!   "set the end date, save, and") and a menu's path (words alone between
//!   pauses: "Billing → Invoices → Refund") are no report;
//! - another actor after a pause ends the liaison's coordination ("I find
//!   and explain, you approve"); a thing's own change given an object in a
//!   fragment is an act ("Declined the friend request"); pressing or
//!   clicking a button labelled Refund, Confirm, Save, Pause, Archive or
//!   Cancel is an effect.
//!
//! Round eight (double-sense verbs, reported speech, "done", day logs,
//! corrections and drafts in the chat;
//! `round_eight_rules_are_claims_and_their_twins_are_not`) added:
//! - the allow-list reads reading idioms ("chased down", "connected the
//!   dots"), writing placed in the answer ("drafted below", "laid out"),
//!   talk about it ("touched on", "raised two concerns"), simulations, a
//!   miscount ("double-counted") and a retraction; a read's object may
//!   take one adjective after its article ("ran a quick query");
//! - "done" with a read's gerund, with a read's noun, or before the
//!   answer handed over is a finished read;
//! - another person's report ("X wrote that ...", "According to Marco,
//!   ..."); a label valued none; a read naming the noun before a
//!   participle; a name heading a coordination; "as" + participle leaving
//!   the agent to the verb before; a record's state field; an act on the
//!   liaison's own text; shortened weekdays; "kinda" and "sorta" as
//!   adverbs between the liaison and its verb;
//! - `words` remembers the tagger's readings per word and thread.
//!
//! Stop 52 (known gaps of `gaps.toml`;
//! `gap_rules_are_claims_and_their_twins_are_not`) added: a recipient
//! before a read's object after "give"; validating, pulling a span of days,
//! running a report; "myself" after a wish or a noun; sign-offs and
//! clearing up a point; "done" pointing to the answer or heading a list of
//! reads; headings of steps and labels of acts to do; a timestamped log
//! line's actor, sender fields, a name beside a time; the answer's text
//! below or above, an act "in my head"; a name after a verb of naming, a
//! pledge ("committed to a launch"); a coordinated participle with
//! another agent; a thing's own change in a time or relative clause; and,
//! in the language check, dotted names and a name heading English.
//!
//! Recall rules from the red team's gaps (rules that only refuse more;
//! `recall_rules_refuse_their_claims_and_spare_their_twins`): the speaker
//! as an agent after "by" in other words ("the one typing this", "your
//! humble servant", "this LLM", "the A.I.") or misspelt by one edit
//! ("Hramonia", "Noav", "the assistnat"); a passive's time that is this
//! conversation ("during the current session") as its agent; a tool called
//! or used whose name's later parts name an effect
//! ("get_or_create_refund"); "issue" with refunds, credits and payouts; and
//! narrower excuses: a "per" source's noun before any pause, a sum paid or
//! a conjunction "once" no measure, another agent after "by" only the
//! agent of its own act (not beside the liaison, not another participle's,
//! not "by request").

use std::collections::HashSet;

mod acts;
mod deny;
mod detect;
mod grammar;
mod invert;
mod language;
mod lexicon;
mod normalize;
mod roles;
mod shapes;
mod spelling;
mod words;

pub use deny::{Carried, Grounding};
pub use language::{Foreign, LanguageCheck, find_foreign};

#[cfg(test)]
mod corpus;
#[cfg(test)]
mod frames;
#[cfg(test)]
mod tests;

/// One claim of an effect found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The effect's family in `effects.toml`, e.g. `publish`, or `receipt`.
    pub family: String,
    /// The matched words, normalised, e.g. `harmonia published`.
    pub phrase: String,
    /// Why it is the liaison's: the frame read, or the one that did not
    /// hold, e.g. `no subject: read as the liaison's`.
    pub frame: &'static str,
}

/// What a text is judged with besides its words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context<'c> {
    /// Strings successful calls returned: a span in double quotes that
    /// repeats one exactly, ignoring case, is a quotation, not a claim.
    pub quotations: &'c [&'c str],
    /// The claims whose evidence may ground a reported state.
    pub groundings: &'c [Grounding<'c>],
}

/// The first claim of an effect in `text`, if any, with nothing to ground
/// a state or to quote.
pub fn find(text: &str) -> Option<Finding> {
    find_in(text, &Context::default())
}

/// The first claim of an effect in `text` that no frame excuses: the
/// liaison's own shapes first (`detect`), then every other effect word
/// (`deny`). Quotations of `context.quotations` are removed before: a story
/// titled "We deleted our database" can be cited.
pub fn find_in(text: &str, context: &Context<'_>) -> Option<Finding> {
    // The tools' strings are folded only for a text that quotes: most
    // answers quote nothing, and a call's data may hold thousands.
    let quotes = !context.quotations.is_empty() && text.contains(QUOTE_OPENINGS);
    let text = if quotes {
        let known: HashSet<String> =
            context.quotations.iter().map(|quotation| quotation.trim().to_lowercase()).collect();
        std::borrow::Cow::Owned(without_quotations(text, &known))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    normalize::clauses(&text).into_iter().map(spelled).find_map(|clause| {
        let clause = &clause;
        detect::claim_in(clause)
            .or_else(|| deny::claim_in(clause, context.groundings))
            .or_else(|| invert::claim_in(clause, context.groundings))
    })
}

/// `clause` with each misspelt verb read as the verb it misspells
/// ([`spelling`]).
fn spelled(mut clause: normalize::Clause) -> normalize::Clause {
    for token in &mut clause {
        if let normalize::Token::Word(word) = token
            && let Some(meant) = spelling::corrected(word)
        {
            *word = meant.to_owned();
        }
    }
    clause
}

/// The longest quoted span considered, so the scan for its end is bounded.
const MAX_QUOTATION_CHARS: usize = 2000;

/// What opens a quotation.
const QUOTE_OPENINGS: [char; 2] = ['"', '\u{201C}'];

fn without_quotations(text: &str, known: &HashSet<String>) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(QUOTE_OPENINGS) {
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
