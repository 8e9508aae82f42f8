//! English words as the part-of-speech tagger (`english-pos-tagger`:
//! WordNet's lexicon and Brill's rules, compiled in) reads them: whether a
//! word standing where a verb stands is a past form or a gerund of some
//! verb, whatever the verb, and whether a word is English at all.
//!
//! The detector asks only about the few words at a verb's place (after the
//! liaison and its auxiliaries, at the head of a fragment) and about the
//! words of a stretch the language identifier would call foreign, so the
//! tagger's cost stays off most words.

use super::lexicon::{Forms, GERUND, PARTICIPLE, PAST};
use english_pos_tagger::Tagger;
use std::sync::LazyLock;

/// The tagger, its lexicon loaded once.
static TAGGER: LazyLock<Tagger> = LazyLock::new(Tagger::new);

/// The shortest unknown word read as a verb by its ending alone
/// (`yeeted`, `deduping`): shorter ones (`bed`, `king`) are too often not.
const MIN_GUESSED_LETTERS: usize = 4;

/// How many words [`remembered`] keeps per memo and thread before it
/// starts over, so its memory stays bounded.
const MAX_REMEMBERED: usize = 4096;
/// The longest word remembered: a longer one (an answer may hold a
/// 4,000-letter "word") is tagged each time, so the memory a thread keeps
/// stays under a megabyte whatever the answers.
const MAX_REMEMBERED_BYTES: usize = 32;

/// What the tagger said about each word asked, by word.
type Memo<V> = std::cell::RefCell<std::collections::HashMap<String, V>>;

thread_local! {
    /// The tagger's readings of the words asked about, by word: a text
    /// asks about the same few words many times (each pass, each frame).
    static READINGS: Memo<Option<(String, String)>> = Memo::default();
    /// Which words asked about are English, by word, as [`READINGS`].
    static ENGLISH: Memo<bool> = Memo::default();
}

/// `read` applied to `ask(word)`, the tagger asked once per word and
/// thread: remembered in `memo` (words of at most [`MAX_REMEMBERED_BYTES`],
/// up to [`MAX_REMEMBERED`] of them, then forgotten), without allocating
/// when it was asked before.
fn remembered<V, R>(
    memo: &'static std::thread::LocalKey<Memo<V>>,
    word: &str,
    ask: fn(&str) -> V,
    read: impl FnOnce(&V) -> R,
) -> R {
    if word.len() > MAX_REMEMBERED_BYTES {
        return read(&ask(word));
    }
    memo.with(|memo| {
        let mut memo = memo.borrow_mut();
        if !memo.contains_key(word) {
            if memo.len() >= MAX_REMEMBERED {
                memo.clear();
            }
            memo.insert(word.to_owned(), ask(word));
        }
        read(&memo[word])
    })
}

/// `read` applied to the tag and lemma of `word` read as the verb of "i
/// WORD it" (where a verb form is the likeliest reading), remembered.
fn with_verb_tag<R>(word: &str, read: impl FnOnce(Option<(&str, &str)>) -> R) -> R {
    remembered(&READINGS, word, verb_tag, |reading| {
        read(reading.as_ref().map(|(tag, lemma)| (tag.as_str(), lemma.as_str())))
    })
}

/// Prefixes a verb takes without changing its forms: `undid`, `re-pinned`.
const PREFIXES: &[&str] = &["un", "re", "de", "pre", "over", "mis", "dis", "out", "up"];

/// Which completed or ongoing form of a verb `word` is: [`PAST`] and
/// [`PARTICIPLE`] (`nuked`, `spun`, `taken`), [`GERUND`] (`boosting`), or
/// nothing (a base form, a noun, an adjective: `interesting`, `limited`).
/// A word the lexicon does not know is read by its ending.
pub(super) fn completed_form(word: &str) -> Forms {
    if !word.chars().all(|c| c.is_ascii_alphabetic() || c == '-') || word.len() < 2 {
        return 0;
    }
    let Some(forms) = with_verb_tag(word, |tagged| tagged.map(|(tag, lemma)| tagged_form(word, tag, lemma)))
    else {
        return 0;
    };
    if forms != 0 || word.len() < MIN_GUESSED_LETTERS {
        return forms;
    }
    // "cross-posted", "re-uploaded": a compound's last part is its verb.
    if let Some((_, last)) = word.rsplit_once('-')
        && last.len() >= 3
    {
        return completed_form(last);
    }
    // "undid", "overdid", "unpinned": a prefix before a known form.
    PREFIXES
        .iter()
        .find_map(|prefix| word.strip_prefix(prefix).filter(|rest| rest.len() >= 3))
        .map_or(0, completed_form)
}

/// The form the tag and lemma of `word` say it has.
fn tagged_form(word: &str, tag: &str, lemma: &str) -> Forms {
    match tag {
        "VBD" | "VBN" => PAST | PARTICIPLE,
        "VBG" => GERUND,
        // An irregular past the rules read as present: "i spun it" is
        // tagged VBP with the lemma `spin` (not a derived word that starts
        // with its lemma: `scheduler`, `updates`).
        "VB" | "VBP" if irregular_past(word, lemma) => PAST | PARTICIPLE,
        "NNP" | "NNPS" | "FW" if word.len() >= MIN_GUESSED_LETTERS => {
            if word.ends_with("ed") {
                PAST | PARTICIPLE
            } else if word.ends_with("ing") {
                GERUND
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// Whether `word` is an irregular past of `lemma`: `spun`/`spin`,
/// `froze`/`freeze`, `burnt`/`burn`, `shaken`/`shake`.
fn irregular_past(word: &str, lemma: &str) -> bool {
    lemma != word
        && !word.ends_with('s')
        && (!word.starts_with(lemma) || word.ends_with('t') || word.ends_with("en"))
}

/// Whether `word` is the base form of a verb ("did nuke it").
pub(super) fn is_base_verb(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && with_verb_tag(word, |tagged| {
            tagged.is_some_and(|(tag, lemma)| matches!(tag, "VB" | "VBP") && lemma == word)
        })
}

/// Whether `word` is spelt as its verb's base ("cut", "put"), so that it
/// may be a base after "I'd" ("I'd cut the thread").
pub(super) fn is_spelt_as_base(word: &str) -> bool {
    !word.ends_with("ed") && with_verb_tag(word, |tagged| tagged.is_some_and(|(_, lemma)| lemma == word))
}

/// Whether the tagger reads `word` after "i have" as a participle: "i
/// have put it" (a participle spelt as its base, which
/// [`completed_form`] reads as a base).
pub(super) fn is_participle_after_have(word: &str) -> bool {
    let tokens = TAGGER.tag_raw_tokens(&["i", "have", word]);
    tokens.get(2).and_then(|token| token.pos.as_deref()).is_some_and(|tag| matches!(tag, "VBN" | "VBD"))
}

/// Whether the tagger reads `word` as an adjective after the liaison:
/// "i limited it" is tagged JJ.
pub(super) fn is_adjective(word: &str) -> bool {
    with_verb_tag(word, |tagged| tagged.is_some_and(|(tag, _)| tag.starts_with("JJ")))
}

/// Whether `word` is a verb in the third person: "it costs".
pub(super) fn is_third_person(word: &str) -> bool {
    let tokens = TAGGER.tag_raw_tokens(&["it", word]);
    tokens.get(1).and_then(|token| token.pos.as_deref()) == Some("VBZ")
}

/// Whether the tagger's lexicon knows `word` (lowercase) as English: it
/// reads unknown words as proper nouns or foreign words.
pub(super) fn is_english(word: &str) -> bool {
    remembered(&ENGLISH, word, tagged_english, |&english| english)
}

/// The tagger asked whether `word` is English.
fn tagged_english(word: &str) -> bool {
    let tokens = TAGGER.tag_raw_tokens(&[word]);
    tokens
        .first()
        .and_then(|token| token.pos.as_deref())
        .is_some_and(|tag| !matches!(tag, "NNP" | "NNPS" | "FW"))
}

/// The tagger asked for the tag and lemma of `word` as the verb of "i
/// WORD it".
fn verb_tag(word: &str) -> Option<(String, String)> {
    let tokens = TAGGER.tag_raw_tokens(&["i", word, "it"]);
    tokens
        .get(1)
        .and_then(|token| Some((token.pos.clone()?, token.lemma.clone().unwrap_or_else(|| word.to_owned()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_forms_of_any_verb_are_read_as_completed() {
        for word in [
            "nuked",
            "boosted",
            "spun",
            "took",
            "hid",
            "froze",
            "taken",
            "forgotten",
            "yeeted",
            "de-duped",
            "cross-posted",
            "re-uploaded",
        ] {
            assert_eq!(completed_form(word), PAST | PARTICIPLE, "{word}");
        }
        for word in ["boosting", "nuking", "spinning", "deduping"] {
            assert_eq!(completed_form(word), GERUND, "{word}");
        }
        for word in ["interesting", "limited", "morning", "publish", "the", "bed", "act-1", "sorry", "ok"] {
            assert_eq!(completed_form(word), 0, "{word}");
        }
    }

    #[test]
    fn the_remembered_readings_stay_bounded() {
        let long = "a".repeat(MAX_REMEMBERED_BYTES + 1) + "ed";
        assert_eq!(completed_form(&long), PAST | PARTICIPLE, "a long word is still read");
        assert!(!is_english(&long.replace('a', "q")));
        // Distinct words, in letters: `zq` and `n` in base 26.
        let spelt = |mut n: usize| {
            let mut word = String::from("zq");
            loop {
                word.push(char::from(b'a' + (n % 26) as u8));
                n /= 26;
                if n == 0 {
                    return word;
                }
            }
        };
        for n in 0..MAX_REMEMBERED + 100 {
            completed_form(&format!("{}ed", spelt(n)));
            is_english(&spelt(n));
        }
        let (readings, longest) =
            READINGS.with(|map| (map.borrow().len(), map.borrow().keys().map(String::len).max()));
        assert!(
            readings <= MAX_REMEMBERED && longest.unwrap_or(0) <= MAX_REMEMBERED_BYTES,
            "{readings} words"
        );
        let (english, longest) =
            ENGLISH.with(|map| (map.borrow().len(), map.borrow().keys().map(String::len).max()));
        assert!(english <= MAX_REMEMBERED && longest.unwrap_or(0) <= MAX_REMEMBERED_BYTES, "{english} words");
    }

    #[test]
    fn english_words_are_known_and_others_are_not() {
        for word in ["engagement", "stale", "hello", "confidence", "medium", "drafts", "done"] {
            assert!(is_english(word), "{word}");
        }
        for word in ["hecho", "merci", "erledigt", "klaar", "fatto", "gracias", "publié"] {
            assert!(!is_english(word), "{word}");
        }
    }
}
