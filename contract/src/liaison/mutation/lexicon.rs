//! The effects table (`effects.toml`, compiled in) as lookups by word.
//!
//! Each verb form is indexed by its spelling without hyphens or
//! underscores, so `re-run`, `rerun` and `re_run` find one entry, and a
//! hyphen slipped into a word (`pub-lished`) does not hide it.

use serde::Deserialize;
use std::collections::HashMap;
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
    /// Words that must follow for the verb to name the effect; empty when
    /// the verb names it alone.
    pub objects: Vec<Vec<String>>,
    /// Words after the verb that make it a read, not the effect.
    pub benign_objects: Vec<String>,
    /// Names the effect only in the passive with a liaison agent.
    pub passive_only: bool,
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
    by_word: HashMap<String, Vec<Match>>,
    /// Possessives that make an effect noun the liaison's own.
    pub possessives: Vec<Vec<String>>,
    /// Effect nouns after a possessive.
    pub nouns: Vec<Vec<String>>,
    /// Receipt kinds (`approval`).
    pub receipt_kinds: Vec<String>,
    /// Receipt nouns (`receipt`).
    pub receipt_nouns: Vec<String>,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Guarded {
    forms: String,
    objects: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nominal {
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
            by_word: HashMap::new(),
            possessives: table.nominal.possessives.iter().map(|p| phrase(p)).collect(),
            nouns: table.nominal.nouns.iter().map(|n| phrase(n)).collect(),
            receipt_kinds: table.receipt.kinds,
            receipt_nouns: table.receipt.nouns,
        };
        for family in table.family {
            let verb = |objects, benign_objects, passive_only| Verb {
                family: family.name.clone(),
                objects,
                benign_objects,
                passive_only,
            };
            for forms in &family.verbs {
                lexicon.add(forms, verb(Vec::new(), family.benign_objects.clone(), false))?;
            }
            for word in &family.passive_only {
                lexicon.add_word(word, PARTICIPLE, verb(Vec::new(), Vec::new(), true));
            }
            for guarded in &family.guarded {
                let objects = guarded.objects.iter().map(|object| phrase(object)).collect();
                lexicon.add(&guarded.forms, verb(objects, Vec::new(), false))?;
            }
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

    /// The verbs `word` is a form of.
    pub(super) fn lookup(&self, word: &str) -> &[Match] {
        self.by_word.get(&key(word)).map_or(&[], Vec::as_slice)
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
    fn malformed_tables_are_refused() {
        assert!(Lexicon::parse("nonsense").is_err());
        let short = "[[family]]\nname = \"x\"\nverbs = [\"a b\"]\n[nominal]\npossessives = []\nnouns = []\n[receipt]\nkinds = []\nnouns = []\n";
        assert!(Lexicon::parse(short).unwrap_err().contains("five forms"));
        let unknown = short.replace("verbs = [\"a b\"]", "verbs = []\nextra = 1");
        assert!(Lexicon::parse(&unknown).is_err());
    }
}
