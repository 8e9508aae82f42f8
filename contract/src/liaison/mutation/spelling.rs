//! Misspelt verbs read as the verb they misspell: "revokd", "schedueld",
//! "cheked" are read as "revoked", "scheduled", "checked" before any
//! table is looked up (docs/contract.md §5.7).
//!
//! Only a word the tagger does not know as English, written as a past, a
//! participle or a gerund (it ends in `d` or `ing`), and no prefixed form
//! of an English word, is corrected, and only to such a spelling of the
//! two tables (the allow-list's acts and the effects),
//! within one edit (a transposition is one) for a word of five to seven
//! letters and two for a longer one. When the nearest spellings are an
//! allowed act and an effect at once ("clecked": checked or clicked), the
//! word is left as it is, and an unknown verb of the liaison stays a
//! claim: a hostile answer gains nothing by misspelling an effect toward
//! a read.

use super::acts::ACTS;
use super::lexicon::LEXICON;
use super::words;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::LazyLock;

/// The shortest word corrected: shorter ones are too close to too many.
const MIN_LETTERS: usize = 5;
/// The longest word corrected, so the work per word is bounded.
const MAX_LETTERS: usize = 24;

/// What a spelling of the tables is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Allowed,
    Effect,
}

/// Every spelling of both tables, by first letter.
static SPELLINGS: LazyLock<FxHashMap<char, Vec<(&'static str, Kind)>>> = LazyLock::new(|| {
    let mut by_letter: FxHashMap<char, Vec<(&'static str, Kind)>> = FxHashMap::default();
    let allowed = ACTS.spellings().map(|word| (word, Kind::Allowed));
    let effects = LEXICON.spellings().map(|word| (word, Kind::Effect));
    for (word, kind) in allowed.chain(effects) {
        if let Some(first) = word.chars().next() {
            by_letter.entry(first).or_default().push((word, kind));
        }
    }
    by_letter
});

/// Prefixes that make a new verb of an English one.
const PREFIXES: &[&str] = &[
    "re", "un", "de", "pre", "dis", "mis", "over", "under", "co", "out", "up", "auto", "bulk", "mass",
    "soft", "hard", "hot", "cross", "back", "multi", "sub", "post",
];

/// Whether `word` is an English word with a prefix.
fn derived(word: &str) -> bool {
    PREFIXES.iter().any(|prefix| {
        word.strip_prefix(prefix)
            .is_some_and(|rest| rest.len() >= 3 && words::is_english(rest.trim_start_matches('-')))
    })
}

/// Every spelling of both tables, for the common case: a word spelt as a
/// table has it is never corrected, and costs one hash.
static SPELT: LazyLock<FxHashSet<&'static str>> =
    LazyLock::new(|| ACTS.spellings().chain(LEXICON.spellings()).collect());

/// How many edits a word of `letters` letters may be from its correction.
fn reach(letters: usize) -> usize {
    if letters >= 8 { 2 } else { 1 }
}

/// The spelling of the tables `word` misspells, if it is unknown as
/// English and one spelling (or several of one kind) stands nearest.
pub(super) fn corrected(word: &str) -> Option<&'static str> {
    let letters = word.len();
    if !(MIN_LETTERS..=MAX_LETTERS).contains(&letters) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    // Only a word written as a completed or ongoing verb ("revokd",
    // "cheked", "publsihing") is read as one: nouns ("stats") are not
    // corrected into verbs.
    if !(word.ends_with('d') || word.ends_with("ing")) {
        return None;
    }
    if SPELT.contains(word) {
        return None;
    }
    // Most words are English: one look-up in the tagger's lexicon. A
    // prefixed form of an English word is no misspelling ("reposted" is
    // not "reported", "relaunched" not a read).
    if words::is_english(word) || derived(word) {
        return None;
    }
    let candidates = SPELLINGS.get(&word.chars().next()?)?;
    let reach = reach(letters);
    let last = word.chars().last();
    let mut best: Option<(usize, &'static str, Kind)> = None;
    let mut mixed = false;
    for &(spelling, kind) in candidates {
        let verb_form = spelling.ends_with('d') || spelling.ends_with("ing") || spelling.ends_with("en");
        if !verb_form || spelling.len().abs_diff(letters) > reach || spelling == word {
            continue;
        }
        let edits = strsim::osa_distance(word, spelling);
        if edits > reach {
            continue;
        }
        // Ranked by edits, then by the last letter kept: "revokd" is
        // "revoked" (a past, as written) before "revoke".
        let distance = 2 * edits + usize::from(spelling.chars().last() != last);
        match best {
            Some((nearest, _, _)) if distance > nearest => {}
            Some((nearest, _, found)) if distance == nearest => mixed |= found != kind,
            _ => {
                best = Some((distance, spelling, kind));
                mixed = false;
            }
        }
    }
    best.filter(|_| !mixed).map(|(_, spelling, _)| spelling)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_verbs_of_both_tables_are_read_as_the_verb() {
        for (typo, meant) in [
            ("revokd", "revoked"),
            ("schedueld", "scheduled"),
            ("publsihed", "published"),
            ("delted", "deleted"),
            ("cheked", "checked"),
            ("serched", "searched"),
            ("reveiwed", "reviewed"),
            ("lokked", "looked"),
        ] {
            assert_eq!(corrected(typo), Some(meant), "{typo}");
        }
    }

    #[test]
    fn english_words_short_words_and_ambiguous_ones_are_left_alone() {
        // English words are never corrected, even one edit from a verb.
        for word in ["posted", "pasted", "locked", "looked", "tested", "listed", "lasted"] {
            assert_eq!(corrected(word), None, "{word}");
        }
        // Too short, not letters, or as near to a read as to an effect.
        for word in [
            "a1pproved",
            "x",
            "rvkd",
            "reposted",
            "relaunched",
            "unpublished",
            "stats",
            "clecked",
            "togaled",
            "queted",
        ] {
            assert_eq!(corrected(word), None, "{word}");
        }
    }
}
