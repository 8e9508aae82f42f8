//! The allow-list (`acts.toml`, compiled in) as look-ups by word: the
//! reading and reporting acts the liaison may say it did, and the words
//! that stand where a verb would but name no act.
//!
//! A word is looked up by its spelling without hyphens or underscores, as
//! in `lexicon` (`double-checked` is `doublechecked`).

use super::lexicon::{LEXICON, key};
use super::normalize::Token;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use std::sync::LazyLock;

/// How many words after a guarded verb may hold its object.
const OBJECT_WINDOW: usize = 4;
/// The forms of "give", whose object stands after its recipient.
const GIVING: &[&str] = &["give", "gives", "gave", "given", "giving"];

/// A guarded verb's objects (each a run of words) and its act's index.
type Guard = (Vec<Vec<String>>, usize);

/// The allow-list, indexed.
#[derive(Debug, Default)]
pub(super) struct Acts {
    /// Every form of every verb allowed with any object, and every word.
    plain: FxHashMap<String, usize>,
    /// Forms of guarded verbs: their objects (each a run of words; one
    /// ending in `_` matches any word it starts, `get_`), and the act.
    guarded: FxHashMap<String, Vec<Guard>>,
    /// The acts' names (`read`, `report`), indexed by the maps above.
    names: Vec<String>,
    /// Forms of verbs that name no act alone ("engagement declined") but
    /// one when the liaison does them to an object ("I declined the
    /// meeting").
    intransitive: FxHashSet<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    act: Vec<Act>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Act {
    name: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    guarded: Vec<Guarded>,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    intransitive: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Guarded {
    forms: String,
    objects: Vec<String>,
}

const TABLE: &str = include_str!("acts.toml");

/// The compiled-in table. Its shape is checked by this module's tests, so
/// the parse cannot fail in a tested build.
pub(super) static ACTS: LazyLock<Acts> =
    LazyLock::new(|| Acts::parse(TABLE).unwrap_or_else(|error| panic!("acts.toml: {error}")));

/// The five forms of a verb entry, checked.
fn forms(entry: &str) -> Result<Vec<&str>, String> {
    let words: Vec<&str> = entry.split_whitespace().collect();
    if words.len() == 5 { Ok(words) } else { Err(format!("`{entry}` must list five forms")) }
}

impl Acts {
    fn parse(text: &str) -> Result<Self, String> {
        let table: Table = toml::from_str(text).map_err(|error| error.to_string())?;
        let mut acts = Acts::default();
        for act in table.act {
            let name = acts.names.len();
            acts.names.push(act.name);
            for entry in &act.verbs {
                for form in forms(entry)? {
                    acts.plain.insert(key(form), name);
                }
            }
            for word in &act.words {
                acts.plain.insert(key(word), name);
            }
            for entry in &act.intransitive {
                for form in forms(entry)? {
                    acts.plain.insert(key(form), name);
                    acts.intransitive.insert(key(form));
                }
            }
            for guarded in &act.guarded {
                let objects: Vec<Vec<String>> = guarded
                    .objects
                    .iter()
                    .map(|object| object.split_whitespace().map(str::to_owned).collect())
                    .collect();
                for form in forms(&guarded.forms)? {
                    acts.guarded.entry(key(form)).or_default().push((objects.clone(), name));
                }
            }
        }
        Ok(acts)
    }

    /// Whether the word at `index` is a guarded verb whose object stands
    /// just before it, as in a status line: "numbers pulled", "summary
    /// written".
    pub(super) fn act_with_object_before(&self, clause: &[Token], index: usize) -> bool {
        let Some(word) = clause.get(index).and_then(Token::word) else { return false };
        // A relative clause leaves the liaison between the object and its
        // verb: "the export I pulled", "the numbers we pulled".
        // So does a passive: "this summary was prepared by Harmonia". An
        // adverb may stand before the verb: "the lookup I just ran".
        let at = |back: usize| index.checked_sub(back).and_then(|at| clause[at].word());
        let adverb = at(1).is_some_and(|w| matches!(w, "just" | "already" | "also" | "then"));
        let skipped = usize::from(adverb);
        let index_end = match at(skipped + 1) {
            Some("i" | "we" | "was" | "were" | "is" | "are") => index - skipped - 1,
            Some("been") if matches!(at(skipped + 2), Some("has" | "have" | "had")) => index - skipped - 2,
            _ => index,
        };
        let before: Vec<&str> = clause[index_end.saturating_sub(OBJECT_WINDOW)..index_end]
            .iter()
            .filter_map(Token::word)
            .collect();
        self.guarded.get(&key(word)).is_some_and(|guards| {
            guards.iter().any(|(objects, _)| {
                objects.iter().any(|object| {
                    // "a lookup" names "the lookup" and "this summary" too,
                    // after a determiner of their own.
                    let (object, determined) = match object.first().map(String::as_str) {
                        Some("a" | "an" | "the" | "this") if object.len() > 1 => (&object[1..], true),
                        _ => (&object[..], false),
                    };
                    let determiner = before.len().checked_sub(object.len() + 1).map(|at| before[at]);
                    object.len() <= before.len()
                        && object.iter().zip(&before[before.len() - object.len()..]).all(|(a, b)| a == b)
                        && (!determined
                            || matches!(
                                determiner,
                                Some("a" | "an" | "the" | "this" | "that" | "my" | "our")
                            ))
                })
            })
        })
    }

    /// Whether `word` is a form of a verb that is an act when the liaison
    /// does it to an object.
    pub(super) fn is_intransitive(&self, word: &str) -> bool {
        self.intransitive.contains(word)
    }

    /// Every spelling of the allow-list's verbs and words, plain and
    /// guarded.
    pub(super) fn spellings(&self) -> impl Iterator<Item = &str> {
        self.plain.keys().chain(self.guarded.keys()).map(String::as_str)
    }

    /// The act the word at `index` of `clause` names, if the allow-list
    /// has it: any form of a plain verb, a listed word, or a guarded verb
    /// with one of its objects after it.
    pub(super) fn act_at(&self, clause: &[Token], index: usize) -> Option<&str> {
        let word = clause.get(index)?.word()?;
        // Recall rules: calling or using a tool whose name's later parts
        // name an effect ("get_or_create_refund") is no read.
        if CALLS.contains(&word) && effect_tool_after(clause, index) {
            return None;
        }
        let spelt = if word.contains(['-', '_']) { key(word) } else { word.to_owned() };
        let plain = self.plain.get(&spelt).map(|&act| self.names[act].as_str());
        // A preposition's word that is also a guarded read with its object
        // is that read: "going through the log".
        if plain.is_some_and(|act| act != "preposition") || !self.guarded.contains_key(&spelt) {
            return plain;
        }
        // After an auxiliary it is a verb, not a preposition: "I have given
        // act-9 ..." needs the read's object.
        let verb = index.checked_sub(1).and_then(|at| clause[at].word()).is_some_and(|before| {
            matches!(before, "have" | "has" | "had" | "'ve" | "was" | "were" | "been" | "am" | "'m")
        });
        let plain = plain.filter(|_| !verb);
        // Stop 52: a verb of giving names its recipient before its object
        // ("Gave the audit log a read"), so its object may end two words
        // further.
        let window = OBJECT_WINDOW + if GIVING.contains(&spelt.as_str()) { 2 } else { 0 };
        let after: Vec<&str> = clause.iter().skip(index + 1).take(window).map_while(Token::word).collect();
        self.guarded
            .get(&spelt)?
            .iter()
            .find_map(|(objects, act)| {
                let found = (0..after.len()).any(|start| {
                    objects.iter().any(|object| {
                        // An object after its own article may take one
                        // adjective between ("ran a quick query", "took a
                        // closer look"): the article, then the rest one
                        // word later; an effect's word is no adjective of a
                        // read ("called the publish tool").
                        let adjective = usize::from(
                            object.len() > 1
                                && matches!(object[0].as_str(), "a" | "an" | "the")
                                && after.get(start) == Some(&object[0].as_str())
                                && after.get(start + 1).is_some_and(|between| {
                                    *between != object[1] && LEXICON.lookup(between).is_empty()
                                }),
                        );
                        object.iter().enumerate().all(|(offset, expected)| {
                            let at = start + offset + if offset > 0 { adjective } else { 0 };
                            after.get(at).is_some_and(|actual| match expected.strip_suffix('_') {
                                Some(prefix) if !prefix.is_empty() => actual.starts_with(expected.as_str()),
                                _ => actual == expected,
                            })
                        })
                    })
                });
                found.then(|| self.names[*act].as_str())
            })
            .or(plain)
    }

    /// Every entry as a sentence the liaison may say, and, for a guarded
    /// verb, one it may not (tests only).
    #[cfg(test)]
    pub(in super::super) fn examples() -> Vec<(String, Option<String>)> {
        let table: Table = toml::from_str(TABLE).unwrap();
        let mut examples = Vec::new();
        for act in table.act {
            for entry in &act.verbs {
                let [_, _, past, participle, gerund] = forms(entry).unwrap()[..] else { unreachable!() };
                examples.push((format!("I {past} the feed."), None));
                examples.push((format!("I have {participle} the numbers."), None));
                examples.push((format!("{} the feed now.", capitalised(gerund)), None));
            }
            for word in &act.words {
                examples.push((format!("{} the feed, job-42 looks fine.", capitalised(word)), None));
            }
            for entry in &act.intransitive {
                let [_, _, past, participle, _] = forms(entry).unwrap()[..] else { unreachable!() };
                let refused = format!("I have {participle} the numbers.");
                examples.push((format!("Engagement {past} on Tuesday."), Some(refused)));
            }
            for guarded in &act.guarded {
                let [_, _, past, participle, _] = forms(&guarded.forms).unwrap()[..] else { unreachable!() };
                for object in &guarded.objects {
                    let object = match object.strip_suffix('_') {
                        Some(prefix) => format!("{prefix}_job_status"),
                        None => object.clone(),
                    };
                    let refused = format!("I have {participle} act-9 today.");
                    examples.push((format!("I {past} {object}."), Some(refused)));
                }
            }
        }
        examples
    }
}

#[cfg(test)]
fn capitalised(word: &str) -> String {
    let mut characters = word.chars();
    characters.next().map(|first| first.to_uppercase().chain(characters).collect()).unwrap_or_default()
}

/// Verbs of calling a tool: a tool named after them is the act's object.
const CALLS: &[&str] = &[
    "call",
    "calls",
    "called",
    "calling",
    "use",
    "uses",
    "used",
    "using",
    "invoke",
    "invokes",
    "invoked",
    "invoking",
    "run",
    "runs",
    "ran",
    "running",
    "hit",
    "hits",
    "hitting",
    "request",
    "requests",
    "requested",
    "requesting",
    "trigger",
    "triggers",
    "triggered",
    "triggering",
    "execute",
    "executes",
    "executed",
    "executing",
];

/// Verbs a tool's name may end in that change what it touches, beside the
/// effect table's: "find_and_replace", "get_or_create_refund".
const TOOL_EFFECTS: &[&str] = &[
    "create",
    "replace",
    "write",
    "insert",
    "upsert",
    "overwrite",
    "forget",
    "set",
    "put",
    "patch",
    "remove",
];

/// The lengths of an effect a tool name's part may end in: bounded, so a
/// long word costs a few look-ups.
const MIN_SUFFIX: usize = 6;
const MAX_SUFFIX: usize = 12;

/// Whether the word after the call at `index` (or the one after "the")
/// names a tool whose later parts hold an effect's base form: joined by
/// `_` ("get_orders_reimburse"; a part may end in an effect of six letters
/// or more, "search_contacts_gdprforget").
fn effect_tool_after(clause: &[Token], index: usize) -> bool {
    let at = index + 1 + usize::from(clause.get(index + 1).and_then(Token::word) == Some("the"));
    let Some(name) = clause.get(at).and_then(Token::word) else { return false };
    let effect = |part: &str| {
        let base = |verb: &str| {
            TOOL_EFFECTS.contains(&verb)
                || LEXICON.lookup(verb).iter().any(|found| found.forms & super::lexicon::BASE != 0)
        };
        base(part)
            || (MIN_SUFFIX..=MAX_SUFFIX.min(part.len().saturating_sub(1))).any(|length| {
                let from = part.len() - length;
                part.is_char_boundary(from) && base(&part[from..])
            })
    };
    name.contains('_') && name.split('_').skip(1).any(effect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_malformed_tables_are_refused() {
        let acts = Acts::parse(TABLE).unwrap();
        assert!(acts.plain.len() > 500 && acts.guarded.len() > 50);
        assert!(Acts::parse("nonsense").is_err());
        assert!(
            Acts::parse("[[act]]\nname = \"x\"\nverbs = [\"a b\"]\n").unwrap_err().contains("five forms")
        );
        assert!(Acts::parse("[[act]]\nname = \"x\"\nextra = 1\n").is_err());
    }

    #[test]
    fn guarded_acts_need_their_object() {
        let clause = |text: &str| super::super::normalize::clauses(text).remove(0);
        assert_eq!(ACTS.act_at(&clause("i took a quick look"), 1), Some("look"));
        assert_eq!(ACTS.act_at(&clause("i took it down"), 1), None);
        assert_eq!(ACTS.act_at(&clause("i called get_job_status once"), 1), Some("read"));
        assert_eq!(ACTS.act_at(&clause("i double-checked it"), 1), Some("look"));
        assert_eq!(ACTS.act_at(&clause("based on the data"), 0), Some("preposition"));
        assert_eq!(ACTS.act_at(&clause("i nuked it"), 1), None);
    }
}
