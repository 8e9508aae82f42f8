//! The effects table (`effects.toml`, compiled in) as lookups by word.
//!
//! Each verb form is indexed by its spelling without hyphens or
//! underscores, so `re-run`, `rerun` and `re_run` find one entry, and a
//! hyphen slipped into a word (`pub-lished`) does not hide it. A word not
//! found as spelt is looked up again with obfuscation folded: leetspeak
//! digits read as letters (`publ1sh3d`), then runs of one letter squeezed
//! to one (`appppproved`, matched against the table squeezed the same way).

use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::sync::LazyLock;

/// Which forms of a verb a word is: a bit set of the constants below.
pub(super) type Forms = u8;
/// `approve`.
pub(super) const BASE: Forms = 1;
/// `approves`.
pub(super) const THIRD: Forms = 2;
/// `approved` (past tense).
pub(super) const PAST: Forms = 4;
/// `approved` (past participle).
pub(super) const PARTICIPLE: Forms = 8;
/// `approving`.
pub(super) const GERUND: Forms = 16;
/// Any form.
pub(super) const ANY: Forms = BASE | THIRD | PAST | PARTICIPLE | GERUND;

const FORM_ORDER: [Forms; 5] = [BASE, THIRD, PAST, PARTICIPLE, GERUND];

/// One verb of an effect family.
#[derive(Debug)]
pub(super) struct Verb {
    /// The family's name, e.g. `publish`.
    pub family: String,
    /// The verb's base form, e.g. `post`: what evidence must carry, in a
    /// past form, to ground a report of it.
    pub base: String,
    /// Words that must follow for the verb to name the effect; empty when
    /// the verb names it alone.
    pub objects: Vec<Vec<String>>,
    /// Words after the verb that make it a read, not the effect.
    pub benign_objects: Vec<String>,
    /// Names the effect only in the passive with a liaison agent.
    pub passive_only: bool,
    /// With its objects, leaves a state ("went live", "went out").
    pub state: bool,
}

/// A word found in the table: the verb and which of its forms the word is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Match {
    /// Index into [`Lexicon::verbs`].
    pub verb: usize,
    /// The forms this spelling has.
    pub forms: Forms,
}

/// The effects table, indexed.
#[derive(Debug)]
pub(super) struct Lexicon {
    /// Every verb.
    pub verbs: Vec<Verb>,
    by_word: FxHashMap<String, Vec<Match>>,
    /// Possessives that make an effect noun the liaison's own.
    pub possessives: Vec<Vec<String>>,
    /// Effect nouns after a possessive.
    pub nouns: Vec<Vec<String>>,
    /// Receipt kinds (`approval`).
    pub receipt_kinds: Vec<String>,
    /// Receipt nouns (`receipt`).
    pub receipt_nouns: Vec<String>,
    /// State words (`live`): the family whose effect leaves them, and the
    /// verb they also ground, if any (`publication` grounds `publish`).
    pub states: FxHashMap<String, (String, Option<String>)>,
    /// Effect nouns (`approval`, `green light`) and their family.
    pub effect_nouns: Vec<(Vec<String>, String)>,
    /// Words that, after an effect noun, say the effect happened (`granted`).
    pub completions: Vec<String>,
    by_squeezed: FxHashMap<String, Vec<Match>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    family: Vec<Family>,
    nominal: Nominal,
    receipt: Receipt,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Family {
    name: String,
    verbs: Vec<String>,
    #[serde(default)]
    benign_objects: Vec<String>,
    #[serde(default)]
    passive_only: Vec<String>,
    #[serde(default)]
    guarded: Vec<Guarded>,
    #[serde(default)]
    states: Vec<String>,
    #[serde(default)]
    nouns: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Guarded {
    forms: String,
    objects: Vec<String>,
    /// The verb with these objects leaves a state ("went live"): with a
    /// thing as subject it reports that state, not another actor's act.
    #[serde(default)]
    state: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nominal {
    completions: Vec<String>,
    possessives: Vec<String>,
    nouns: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Receipt {
    kinds: Vec<String>,
    nouns: Vec<String>,
}

const TABLE: &str = include_str!("effects.toml");

/// The compiled-in table. Its shape is checked by this module's tests, so
/// the parse cannot fail in a tested build.
pub(super) static LEXICON: LazyLock<Lexicon> =
    LazyLock::new(|| Lexicon::parse(TABLE).unwrap_or_else(|error| panic!("effects.toml: {error}")));

/// The spelling a word is looked up by.
pub(super) fn key(word: &str) -> String {
    word.chars().filter(|c| !matches!(c, '-' | '_')).collect()
}

/// `word` with every run of one character squeezed to one: `appppproved`
/// is `aproved`, as `approved` is.
pub(super) fn squeeze(word: &str) -> String {
    let mut squeezed = String::with_capacity(word.len());
    for character in word.chars() {
        if !squeezed.ends_with(character) {
            squeezed.push(character);
        }
    }
    squeezed
}

/// `word` with leetspeak digits read as letters, when it mixes letters and
/// digits: `publ1sh3d` is `published`. Ids (`act-1`, `job-42`) fold too,
/// but to nothing in the table.
pub(super) fn unleet(word: &str) -> Option<String> {
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    (has_digit && letters >= 2).then(|| {
        word.chars()
            .map(|c| match c {
                '0' => 'o',
                '1' => 'i',
                '3' => 'e',
                '4' => 'a',
                '5' => 's',
                '7' => 't',
                other => other,
            })
            .collect()
    })
}

/// The shortest word the squeezed lookup is tried for: below it, a
/// squeezed spelling is too often another word (`ad` for `add`).
const MIN_SQUEEZED_LETTERS: usize = 5;

/// A phrase as the normaliser's words: `nova's` is `nova` then `'s`.
fn phrase(text: &str) -> Vec<String> {
    text.split_whitespace()
        .flat_map(|word| match word.strip_suffix("'s") {
            Some(owner) => vec![owner.to_owned(), "'s".to_owned()],
            None => vec![word.to_owned()],
        })
        .collect()
}

impl Lexicon {
    fn parse(text: &str) -> Result<Self, String> {
        let table: Table = toml::from_str(text).map_err(|error| error.to_string())?;
        let mut lexicon = Lexicon {
            verbs: Vec::new(),
            by_word: FxHashMap::default(),
            possessives: table.nominal.possessives.iter().map(|p| phrase(p)).collect(),
            nouns: table.nominal.nouns.iter().map(|n| phrase(n)).collect(),
            receipt_kinds: table.receipt.kinds,
            receipt_nouns: table.receipt.nouns,
            states: FxHashMap::default(),
            effect_nouns: Vec::new(),
            completions: table.nominal.completions,
            by_squeezed: FxHashMap::default(),
        };
        for family in table.family {
            for state in &family.states {
                let (word, verb) = match state.split_once(':') {
                    Some((word, verb)) => (word, Some(verb.to_owned())),
                    None => (state.as_str(), None),
                };
                lexicon.states.insert(word.to_owned(), (family.name.clone(), verb));
            }
            for noun in &family.nouns {
                lexicon.effect_nouns.push((phrase(noun), family.name.clone()));
            }
            let verb = |base: &str, objects, benign_objects, passive_only| Verb {
                family: family.name.clone(),
                base: base.split_whitespace().next().unwrap_or_default().to_owned(),
                objects,
                benign_objects,
                passive_only,
                state: false,
            };
            for forms in &family.verbs {
                lexicon.add(forms, verb(forms, Vec::new(), family.benign_objects.clone(), false))?;
            }
            for word in &family.passive_only {
                lexicon.add_word(word, PARTICIPLE, verb(word, Vec::new(), Vec::new(), true));
            }
            for guarded in &family.guarded {
                let objects = guarded.objects.iter().map(|object| phrase(object)).collect();
                let mut guarded_verb = verb(&guarded.forms, objects, Vec::new(), false);
                guarded_verb.state = guarded.state;
                lexicon.add(&guarded.forms, guarded_verb)?;
            }
        }
        for (word, matches) in &lexicon.by_word {
            lexicon.by_squeezed.entry(squeeze(word)).or_default().extend(matches.iter().copied());
        }
        Ok(lexicon)
    }

    fn add(&mut self, forms: &str, verb: Verb) -> Result<(), String> {
        let words: Vec<&str> = forms.split_whitespace().collect();
        if words.len() != FORM_ORDER.len() {
            return Err(format!("`{forms}` must list five forms"));
        }
        let index = self.verbs.len();
        self.verbs.push(verb);
        for (word, form) in words.into_iter().zip(FORM_ORDER) {
            let matches = self.by_word.entry(key(word)).or_default();
            match matches.iter_mut().find(|found| found.verb == index) {
                Some(found) => found.forms |= form,
                None => matches.push(Match { verb: index, forms: form }),
            }
        }
        Ok(())
    }

    fn add_word(&mut self, word: &str, forms: Forms, verb: Verb) {
        let index = self.verbs.len();
        self.verbs.push(verb);
        self.by_word.entry(key(word)).or_default().push(Match { verb: index, forms });
    }

    /// Every spelling of the table's verbs.
    pub(super) fn spellings(&self) -> impl Iterator<Item = &str> {
        self.by_word.keys().map(String::as_str)
    }

    /// The verbs `word` is a form of, obfuscation folded when the word as
    /// spelt is not in the table.
    pub(super) fn lookup(&self, word: &str) -> &[Match] {
        // The common case, a plain word, costs one hash and no allocation.
        if !word.contains(['-', '_']) {
            if let Some(found) = self.by_word.get(word) {
                return found;
            }
            let doubled = word.as_bytes().windows(2).any(|pair| pair[0] == pair[1]);
            let digits = word.contains(|c: char| c.is_ascii_digit());
            if !doubled && !digits {
                return &[];
            }
            // A word with doubled letters and no digits (`will`, `approoved`)
            // is spelt as its key and has nothing to unleet: only its
            // squeezed spelling is left to try.
            if !digits {
                if word.chars().count() < MIN_SQUEEZED_LETTERS {
                    return &[];
                }
                return self.by_squeezed.get(&squeeze(word)).map_or(&[], Vec::as_slice);
            }
        }
        let spelt = key(word);
        if let Some(found) = self.by_word.get(&spelt) {
            return found;
        }
        let unleeted = unleet(&spelt);
        let folded = unleeted.as_deref().unwrap_or(&spelt);
        if let Some(found) = unleeted.as_ref().and_then(|word| self.by_word.get(word)) {
            return found;
        }
        // `1` stands for `l` as often as for `i`: `de1eted`.
        if spelt.contains('1') {
            let ell = spelt.replace('1', "l");
            let ell = unleet(&ell).unwrap_or(ell);
            if let Some(found) = self.by_word.get(&ell) {
                return found;
            }
        }
        if folded.chars().count() < MIN_SQUEEZED_LETTERS {
            return &[];
        }
        self.by_squeezed.get(&squeeze(folded)).map_or(&[], Vec::as_slice)
    }

    /// The family whose effect leaves state `word` (`live`), if any.
    pub(super) fn state(&self, word: &str) -> Option<&str> {
        self.states.get(word).map(|(family, _)| family.as_str())
    }

    /// The verb a state word also grounds (`publication`: `publish`).
    pub(super) fn state_verb(&self, word: &str) -> Option<&str> {
        self.states.get(word).and_then(|(_, verb)| verb.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_covers_every_family_of_the_seed() {
        let lexicon = Lexicon::parse(TABLE).unwrap();
        let families: std::collections::BTreeSet<&str> =
            lexicon.verbs.iter().map(|verb| verb.family.as_str()).collect();
        for family in [
            "approve",
            "publish",
            "schedule",
            "retry",
            "delete",
            "change",
            "credentials",
            "write",
            "verify",
            "handle",
        ] {
            assert!(families.contains(family), "{family}");
        }
        assert!(!lexicon.receipt_kinds.is_empty() && !lexicon.nouns.is_empty());
    }

    #[test]
    fn words_are_found_by_every_form_and_spelling() {
        let forms = |word: &str| LEXICON.lookup(word).iter().fold(0, |all, found| all | found.forms);
        assert_eq!(forms("approved"), PAST | PARTICIPLE);
        assert_eq!(forms("approving"), GERUND);
        assert_eq!(forms("re-run") & BASE, BASE);
        assert_eq!(forms("re_ran"), PAST);
        assert_eq!(forms("pub-lished"), PAST | PARTICIPLE);
        assert_eq!(forms("set"), BASE | PAST | PARTICIPLE);
        assert_eq!(forms("schedule"), BASE);
        assert_eq!(forms("approval"), 0);
    }

    #[test]
    fn obfuscated_spellings_are_folded() {
        let forms = |word: &str| LEXICON.lookup(word).iter().fold(0, |all, found| all | found.forms);
        assert_eq!(forms("publ1sh3d"), PAST | PARTICIPLE);
        assert_eq!(forms("appppproved"), PAST | PARTICIPLE);
        assert_eq!(forms("reeeetried"), PAST | PARTICIPLE);
        assert_eq!(forms("de1eted"), PAST | PARTICIPLE);
        assert_eq!(forms("act-1"), 0);
        assert_eq!(forms("ad"), 0, "too short to squeeze");
    }

    #[test]
    fn malformed_tables_are_refused() {
        assert!(Lexicon::parse("nonsense").is_err());
        let short = "[[family]]\nname = \"x\"\nverbs = [\"a b\"]\n[nominal]\ncompletions = []\npossessives = []\nnouns = []\n[receipt]\nkinds = []\nnouns = []\n";
        assert!(Lexicon::parse(short).unwrap_err().contains("five forms"));
        let unknown = short.replace("verbs = [\"a b\"]", "verbs = []\nextra = 1");
        assert!(Lexicon::parse(&unknown).is_err());
    }
}
