//! Which language a text is in: the detector judges only languages it has
//! a lexicon for, and the validator refuses the rest as
//! `unsupported_language` (docs/contract.md §5.7), so an effect claimed in
//! French is not waved through because no French word is in the table.
//!
//! A text is cut into stretches at sentence ends, commas, colons and
//! parentheses, after removing every string a successful call returned
//! (tool data may be in any language). A stretch is foreign when its
//! letters are mostly not Latin (the lexicons' script), or when it has
//! at least [`MIN_WORDS`] words, few English function words, and the
//! language identifier (`whatlang`, trigram tables) names a language not
//! in [`LANGUAGES`] with some confidence. Short stretches (a name, an id, "Merci!")
//! are never judged.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use whatlang::Lang;

/// The languages with a lexicon (`effects.toml` is English). Adding one is
/// a data change: its table, and its code here.
const LANGUAGES: &[Lang] = &[Lang::Eng];

/// The fewest words a Latin-script stretch needs to be judged.
const MIN_WORDS: usize = 4;

/// The fewest letters of another script that make a stretch foreign.
const MIN_FOREIGN_LETTERS: usize = 3;

/// English function words: a stretch where they make up this share of the
/// words is English, whatever its names ("Tag #Frühling peaked at 14:00").
const ENGLISH_SHARE: f64 = 0.2;

const ENGLISH_WORDS: &[&str] = &[
    "the", "an", "is", "are", "was", "were", "we", "you", "it", "to", "of", "and", "in", "on", "for", "with",
    "at", "by", "from", "this", "that", "has", "have", "be", "been", "not", "no", "my", "your", "our", "as",
    "or", "will", "can", "here", "there", "what", "which", "who", "its", "their", "all", "one", "over",
    "than", "more", "most", "per", "about", "after", "before", "up", "out", "just", "now", "only", "also",
    "but", "if", "so", "then", "when", "how", "why", "do", "does", "did", "would", "should", "could", "me",
    "us", "they", "them", "he", "she", "his", "her", "these", "those", "some", "any", "each", "every", "two",
    "three", "into", "yet", "still", "very", "too", "a", "i",
];

/// Endings English words have and the languages whatlang confuses it with
/// rarely do: `sandboxed`, `posting`, `really`.
const ENGLISH_ENDINGS: &[&str] = &["ed", "ing", "ly", "'s"];

fn is_english(word: &str) -> bool {
    ENGLISH_WORDS.contains(&word)
        || (word.len() > 3 && ENGLISH_ENDINGS.iter().any(|ending| word.ends_with(ending)))
}

/// How sure the identifier must be that a stretch is in another language
/// (its confidence: how far the best language is ahead of the next).
const MIN_CONFIDENCE: f64 = 0.25;

/// A stretch this long without one English function word is judged
/// foreign on any non-English guess, however unsure.
const MIN_WORDS_WITHOUT_ENGLISH: usize = 5;

/// A stretch of text in a language without a lexicon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// The language's English name, e.g. `French`.
    pub language: &'static str,
    /// The stretch's first words.
    pub phrase: String,
}

/// How many words of a stretch a reason shows.
const SHOWN_WORDS: usize = 6;

/// The first stretch of `text` in a language without a lexicon, ignoring
/// every occurrence of `quotations` (what the tools returned).
pub fn find_foreign(text: &str, quotations: &[&str]) -> Option<Foreign> {
    LanguageCheck::new(quotations).find(text)
}

/// The language check with the tools' strings folded once, for judging
/// several fields of one answer.
#[derive(Clone, Debug, Default)]
pub struct LanguageCheck {
    quotations: Vec<String>,
}

impl LanguageCheck {
    /// A check that ignores every occurrence of `quotations`.
    pub fn new(quotations: &[&str]) -> Self {
        let quotations = quotations
            .iter()
            .filter(|quotation| {
                quotation.chars().filter(|c| c.is_alphabetic()).count() >= MIN_FOREIGN_LETTERS
            })
            .map(|quotation| quotation.trim().nfkc().flat_map(char::to_lowercase).collect())
            .collect();
        Self { quotations }
    }

    /// The first stretch of `text` in a language without a lexicon.
    pub fn find(&self, text: &str) -> Option<Foreign> {
        let mut folded: String = text
            .nfkc()
            .filter(|c| c.general_category() != GeneralCategory::Format)
            .flat_map(char::to_lowercase)
            .collect();
        for quotation in &self.quotations {
            if quotation.len() <= folded.len() && folded.contains(quotation.as_str()) {
                folded = folded.replace(quotation.as_str(), " ");
            }
        }
        folded.split(is_stretch_break).find_map(judge)
    }
}

/// Latin letters: ASCII, Latin-1, Latin Extended A and B, and Latin
/// Extended Additional (Vietnamese).
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}')
}

fn is_stretch_break(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | ';' | ':' | ',' | '(' | ')' | '|' | '\n' | '"' | '\u{201C}' | '\u{201D}')
        || matches!(
            c,
            '\u{3002}' | '\u{FF01}' | '\u{FF1F}' | '\u{FF0C}' | '\u{3001}' | '\u{0964}' | '\u{061F}'
        )
}

fn judge(stretch: &str) -> Option<Foreign> {
    let words: Vec<&str> = stretch
        .split(|c: char| !(c.is_alphabetic() || c == '\'' || c == '-' || c.is_ascii_digit()))
        .filter(|word| !word.is_empty() && word.chars().all(|c| !c.is_ascii_digit()))
        .collect();
    let phrase = || words.iter().take(SHOWN_WORDS).copied().collect::<Vec<_>>().join(" ");
    let foreign_letters = stretch.chars().filter(|c| c.is_alphabetic() && !is_latin(*c)).count();
    let latin_letters = stretch.chars().filter(|c| c.is_alphabetic()).count() - foreign_letters;
    if foreign_letters >= MIN_FOREIGN_LETTERS && foreign_letters > latin_letters {
        let language = whatlang::detect(stretch).map_or("another script", |info| info.lang().eng_name());
        return Some(Foreign { language, phrase: phrase() });
    }
    if words.len() < MIN_WORDS {
        return None;
    }
    let english = words.iter().filter(|word| is_english(word)).count();
    if english as f64 >= ENGLISH_SHARE * words.len() as f64 {
        return None;
    }
    let info = whatlang::detect(&words.join(" "))?;
    let sure =
        info.confidence() >= MIN_CONFIDENCE || (english == 0 && words.len() >= MIN_WORDS_WITHOUT_ENGLISH);
    (sure && !LANGUAGES.contains(&info.lang()))
        .then(|| Foreign { language: info.lang().eng_name(), phrase: phrase() })
}
