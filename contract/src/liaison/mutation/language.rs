//! Which language a text is in: the detector judges only languages it has
//! a lexicon for, and the validator refuses the rest as
//! `unsupported_language` (docs/contract.md §5.7), so an effect claimed in
//! French ("C'est publié.") is not waved through because no French word is
//! in the tables. The rule holds whatever the stretch's length.
//!
//! A text is cut into stretches at sentence ends, commas, colons,
//! parentheses and quotes, after removing every string a successful call
//! returned (tool data may be in any language). In each stretch:
//! - a **name** is not judged: a run of two or more capitalised words
//!   ("Café Müller", "São Paulo"), or one capitalised word that does not
//!   start a sentence ("in Lyon"). A capitalised word after a sentence end
//!   or a colon starts a sentence and is judged ("Hecho.", "Status:
//!   Publicado");
//! - letters mostly of another script than Latin make it foreign (its
//!   language named by `whatlang`, reliable on scripts);
//! - a stretch where English function words or endings make up a fifth of
//!   the words is English, without asking the identifier (most stretches);
//! - any other stretch, one word or many, is foreign when most of its
//!   words (two or more) are not English (`words`), or when the identifier
//!   (`lingua`, reliable on short text) names another language first, at
//!   least [`MIN_LEAD`] times as confident as it is of English, and one of
//!   its words is not English ("Engagement" alone reads as French).
//!
//! `lingua` carries only the models of [`MODELS`] (each model is about 5
//! MB of the binary): English and the languages an answer is most likely
//! to slip into. A language without a model is read as the nearest one
//! that has one, so it is still refused, under that neighbour's name.

use super::words;
use lingua::{Language, LanguageDetector, LanguageDetectorBuilder};
use memchr::memmem;
use rustc_hash::FxHashSet;
use std::sync::LazyLock;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The languages `lingua` tells apart: English (the only one with a
/// lexicon) and, for contrast, the languages an answer most likely slips
/// into. Each needs its cargo feature of `lingua` (contract/Cargo.toml).
const MODELS: [(Language, &str); 7] = [
    (Language::English, "English"),
    (Language::French, "French"),
    (Language::German, "German"),
    (Language::Spanish, "Spanish"),
    (Language::Portuguese, "Portuguese"),
    (Language::Italian, "Italian"),
    (Language::Dutch, "Dutch"),
];

/// The identifier, its models loaded once (about 35 MB of memory).
static DETECTOR: LazyLock<LanguageDetector> = LazyLock::new(|| {
    let languages: Vec<Language> = MODELS.iter().map(|(language, _)| *language).collect();
    LanguageDetectorBuilder::from_languages(&languages).with_preloaded_language_models().build()
});

/// How many times more confident than of English the identifier must be
/// of another language to call a stretch foreign: "done" (English 0.26,
/// Italian 0.26) and "lol" (Italian 0.29, English 0.15) stay English,
/// "Merci" (Italian 0.26, English 0.10) and "Hecho" do not.
const MIN_LEAD: f64 = 2.0;

/// The fewest letters of another script that make a stretch foreign.
const MIN_FOREIGN_LETTERS: usize = 3;

/// The fewest letters a Latin stretch needs to be judged: below it the
/// identifier guesses ("ok" reads as Dutch), and nothing is said anyway.
const MIN_LATIN_LETTERS: usize = 4;

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

/// English interjections the tagger's lexicon does not have: "Ta-da: the
/// newsletter landed".
const INTERJECTIONS: &[&str] = &[
    "ta-da", "tada", "woohoo", "woo-hoo", "yay", "hooray", "hurray", "whoops", "oops", "yikes", "phew",
    "woot",
];

/// Endings English words have and the languages of [`MODELS`] rarely do:
/// `sandboxed`, `posting`, `really`.
const ENGLISH_ENDINGS: &[&str] = &["ed", "ing", "ly", "'s"];

/// [`ENGLISH_WORDS`], for a lookup of each word of a stretch: one hash
/// and one comparison, where a binary search made eight. A fixed table,
/// so the fast hash cannot be flooded by what an answer holds.
static ENGLISH_WORD_SET: LazyLock<FxHashSet<&'static str>> =
    LazyLock::new(|| ENGLISH_WORDS.iter().copied().collect());

fn is_english(word: &str) -> bool {
    ENGLISH_WORD_SET.contains(word)
        || (word.len() > 3 && ENGLISH_ENDINGS.iter().any(|ending| word.ends_with(ending)))
}

/// The English share of a stretch's words, names included, read without
/// allocating: most stretches are English by it, and names only lower it.
fn quickly_english(stretch: impl Iterator<Item = char>) -> bool {
    let (mut words, mut english) = (0usize, 0usize);
    let mut buffer = String::new();
    let mut stretch = stretch.chain(std::iter::once(' ')).peekable();
    while let Some(c) = stretch.next() {
        // A period inside a word is kept, to read the word whole below.
        let dotted = c == '.' && !buffer.is_empty() && stretch.peek().is_some_and(|n| n.is_alphanumeric());
        if dotted || c.is_alphabetic() || c == '\'' || c == '-' || c.is_ascii_digit() {
            buffer.push(c);
        } else if !buffer.is_empty() {
            // A word with a digit is an id or a figure, a dotted name
            // (`sendgrid.net`) is an id too, and another dotted word is
            // its parts.
            if !is_dotted_name(&buffer) {
                for part in buffer.split('.').filter(|part| !part.chars().any(|c| c.is_ascii_digit())) {
                    words += 1;
                    english += usize::from(is_english(part));
                }
            }
            buffer.clear();
        }
    }
    words > 0 && english as f64 >= ENGLISH_SHARE * words as f64
}

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
    quotations: Vec<Quotation>,
}

/// One string a tool returned, folded, with its searcher: built once for
/// every field of an answer, where `str::match_indices` set a search up
/// for each string and field. Never empty (an empty needle matches
/// everywhere).
#[derive(Clone, Debug)]
struct Quotation {
    finder: memmem::Finder<'static>,
    /// Its length in characters, for the non-ASCII text's letters.
    chars: usize,
    ascii: bool,
}

impl Quotation {
    fn new(folded: &str) -> Self {
        Self {
            finder: memmem::Finder::new(folded.as_bytes()).into_owned(),
            chars: folded.chars().count(),
            ascii: folded.is_ascii(),
        }
    }

    fn len(&self) -> usize {
        self.finder.needle().len()
    }

    fn is_empty(&self) -> bool {
        self.finder.needle().is_empty()
    }

    /// Where it starts in `text`, each match after the one before
    /// (`str::match_indices`): a valid UTF-8 needle matches only at a
    /// character's boundary.
    fn starts_in(&self, text: &str) -> Vec<usize> {
        self.finder.find_iter(text.as_bytes()).collect()
    }
}

/// One character of the text, lowercased, and whether it was a capital.
#[derive(Clone, Copy)]
struct Letter {
    lower: char,
    capital: bool,
}

impl LanguageCheck {
    /// A check that ignores every occurrence of `quotations`.
    pub fn new(quotations: &[&str]) -> Self {
        let quotations = quotations
            .iter()
            .filter(|quotation| {
                quotation.chars().filter(|c| c.is_alphabetic()).count() >= MIN_FOREIGN_LETTERS
            })
            .map(|quotation| {
                let folded: String = quotation.trim().nfkc().flat_map(char::to_lowercase).collect();
                Quotation::new(&folded)
            })
            .filter(|quotation| !quotation.is_empty())
            .collect();
        Self { quotations }
    }

    /// The first stretch of `text` in a language without a lexicon.
    pub fn find(&self, text: &str) -> Option<Foreign> {
        if text.is_ascii() {
            return self.find_ascii(text);
        }
        let mut letters: Vec<Letter> = Vec::with_capacity(text.len());
        for character in text.nfkc().filter(|c| c.general_category() != GeneralCategory::Format) {
            let capital = character.is_uppercase();
            letters.extend(character.to_lowercase().map(|lower| Letter { lower, capital }));
        }
        if !self.quotations.is_empty() {
            let lower: String = letters.iter().map(|letter| letter.lower).collect();
            for quotation in &self.quotations {
                blank_out(&mut letters, &lower, quotation);
            }
        }
        stretches(letters.iter().map(|letter| letter.lower), |range, sentence_start| {
            judge(&letters[range], sentence_start)
        })
    }

    /// [`Self::find`] for ASCII text (most answers): its bytes are its
    /// letters, NFKC leaves it as it is, and a stretch is read without
    /// allocating until it might be foreign.
    fn find_ascii(&self, text: &str) -> Option<Foreign> {
        let mut lower = text.to_ascii_lowercase();
        // A quotation longer than the text cannot be in it (a call's data
        // may hold many long strings): it is not searched for.
        let length = lower.len();
        for quotation in
            self.quotations.iter().filter(|quotation| quotation.ascii && quotation.len() <= length)
        {
            for at in quotation.starts_in(&lower) {
                lower.replace_range(at..at + quotation.len(), &" ".repeat(quotation.len()));
            }
        }
        stretches(lower.chars(), |range, sentence_start| {
            let stretch = &lower[range.clone()];
            let letters = stretch.bytes().filter(u8::is_ascii_alphabetic).count();
            if letters < MIN_LATIN_LETTERS || quickly_english(stretch.chars()) {
                return None;
            }
            let letters: Vec<Letter> = text.as_bytes()[range]
                .iter()
                .zip(stretch.bytes())
                .map(|(original, folded)| Letter {
                    lower: char::from(folded),
                    capital: original.is_ascii_uppercase(),
                })
                .collect();
            judge(&letters, sentence_start)
        })
    }
}

/// Cuts `characters` into stretches at [`is_stretch_break`] and judges
/// each (its range of positions, and whether it starts a sentence) until
/// one is foreign.
fn stretches(
    characters: impl Iterator<Item = char>,
    mut judge: impl FnMut(std::ops::Range<usize>, bool) -> Option<Foreign>,
) -> Option<Foreign> {
    let mut sentence_start = true;
    let (mut start, mut alphanumeric) = (0, false);
    let mut at = 0;
    let mut characters = characters.peekable();
    let mut previous = ' ';
    while let Some(character) = characters.next() {
        // Stop 52: a period between two letters or digits joins the parts
        // of one name (`sendgrid.net`, `CHANGELOG.md`, `1.8.0`), not two
        // sentences; [`words_of`] drops such a word as in no language.
        let joins = character == '.'
            && previous.is_alphanumeric()
            && characters.peek().is_some_and(|next| next.is_alphanumeric());
        previous = character;
        if is_stretch_break(character) && !joins {
            if let Some(foreign) = judge(start..at, sentence_start) {
                return Some(foreign);
            }
            // A capital after these starts a sentence, not a name.
            sentence_start =
                matches!(character, '.' | '!' | '?' | ':' | '\n' | ';') || (sentence_start && !alphanumeric);
            start = at + 1;
            alphanumeric = false;
        } else {
            alphanumeric |= character.is_alphanumeric();
        }
        at += 1;
    }
    judge(start..at, sentence_start)
}

/// Every occurrence of `quotation` in `letters` replaced by spaces. The
/// search runs on the lowercase text as a string (its bytes), each match
/// mapped back to its letters.
fn blank_out(letters: &mut [Letter], lower: &str, quotation: &Quotation) {
    if quotation.len() > lower.len() {
        return;
    }
    for byte in quotation.starts_in(lower) {
        let start = if lower.is_ascii() { byte } else { lower[..byte].chars().count() };
        letters[start..start + quotation.chars].iter_mut().for_each(|letter| letter.lower = ' ');
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

/// One word of a stretch and whether it starts with a capital.
struct Word {
    text: String,
    capital: bool,
}

fn words_of(stretch: &[Letter]) -> Vec<Word> {
    let mut words = Vec::new();
    let mut current = Word { text: String::new(), capital: false };
    for (at, letter) in stretch.iter().enumerate() {
        let c = letter.lower;
        // A period inside a word is kept, to read it whole below.
        let dotted = c == '.'
            && !current.text.is_empty()
            && stretch.get(at + 1).is_some_and(|next| next.lower.is_alphanumeric());
        if dotted {
            current.text.push('.');
        } else if c.is_alphabetic() || c == '\'' || c == '-' || c.is_ascii_digit() {
            if current.text.is_empty() {
                current.capital = letter.capital;
            }
            current.text.push(c);
        } else if !current.text.is_empty() {
            words.push(std::mem::replace(&mut current, Word { text: String::new(), capital: false }));
        }
    }
    if !current.text.is_empty() {
        words.push(current);
    }
    // A dotted name (`sendgrid.net`, `CHANGELOG.md`, `1.8.0`) is in no
    // language; another dotted word is its parts, each judged
    // (`He.publicado.todo` is Spanish).
    let words = words.into_iter().filter(|word| !is_dotted_name(&word.text)).flat_map(|word| {
        if !word.text.contains('.') {
            return vec![word];
        }
        word.text
            .split('.')
            .enumerate()
            .map(|(index, part)| Word { text: part.to_owned(), capital: index == 0 && word.capital })
            .collect()
    });
    // Ids and figures (`act-1`, `v2`) are in no language.
    words.filter(|word| !word.text.is_empty() && !word.text.chars().any(|c| c.is_ascii_digit())).collect()
}

/// Whether `word` is a verb in the third person present ("shows",
/// "reports"), which the tagger alone may read as a plural noun.
fn present_verb(word: &str) -> bool {
    words::is_third_person(word) || word.strip_suffix('s').is_some_and(words::is_base_verb)
}

/// The endings that make a dotted word a name: top-level domains and file
/// extensions an answer names.
const NAME_ENDINGS: &[&str] = &[
    "com", "net", "org", "io", "dev", "app", "ai", "co", "us", "uk", "eu", "de", "fr", "es", "it", "nl",
    "ca", "au", "info", "biz", "md", "txt", "csv", "json", "toml", "yaml", "yml", "xml", "html", "htm", "js",
    "ts", "rs", "py", "rb", "go", "java", "sh", "log", "pdf", "png", "jpg", "jpeg", "gif", "svg", "zip",
    "gz", "tar", "xlsx", "docx", "pptx", "wasm", "lock", "env", "conf", "cfg", "ini", "sql",
];

/// Whether `word` (lowercase, periods inside) is a domain, a file name or a
/// version: every part non-empty, and the last a [`NAME_ENDINGS`] entry or
/// every part a number.
fn is_dotted_name(word: &str) -> bool {
    // Most words have no period: they are asked at every word of every
    // stretch, so without a list of their parts.
    let Some((_, last)) = word.rsplit_once('.') else {
        return false;
    };
    word.split('.').all(|part| !part.is_empty())
        && (NAME_ENDINGS.contains(&last)
            || word.split('.').all(|part| part.chars().all(|c| c.is_ascii_digit())))
}

/// The words of a stretch that are not names: a run of two or more
/// capitalised words is a name, and so is one capitalised word that does
/// not start a sentence.
fn without_names(words: Vec<Word>, sentence_start: bool) -> Vec<String> {
    let mut kept = Vec::with_capacity(words.len());
    let mut at = 0;
    while at < words.len() {
        let run = words[at..].iter().take_while(|word| word.capital).count();
        let initial = at == 0 && sentence_start;
        if run >= 2 || (run == 1 && !initial) {
            at += run;
            continue;
        }
        kept.push(words[at].text.clone());
        at += 1;
    }
    kept
}

fn judge(stretch: &[Letter], sentence_start: bool) -> Option<Foreign> {
    let foreign_letters = stretch.iter().filter(|l| l.lower.is_alphabetic() && !is_latin(l.lower)).count();
    let latin_letters = stretch.iter().filter(|l| is_latin(l.lower)).count();
    if foreign_letters >= MIN_FOREIGN_LETTERS && foreign_letters > latin_letters {
        let text: String = stretch.iter().map(|l| l.lower).collect();
        let language = whatlang::detect(&text).map_or("another script", |info| info.lang().eng_name());
        let phrase = text.split_whitespace().take(SHOWN_WORDS).collect::<Vec<_>>().join(" ");
        return Some(Foreign { language, phrase });
    }
    if latin_letters < MIN_LATIN_LETTERS || quickly_english(stretch.iter().map(|letter| letter.lower)) {
        return None;
    }
    let words = words_of(stretch);
    let head = words.first().filter(|word| word.capital).map(|word| word.text.clone());
    let words = without_names(words, sentence_start);
    if words.iter().map(|word| word.chars().filter(|c| c.is_alphabetic()).count()).sum::<usize>()
        < MIN_LATIN_LETTERS
    {
        return None;
    }
    let english = words.iter().filter(|word| is_english(word)).count();
    if english as f64 >= ENGLISH_SHARE * words.len() as f64 {
        return None;
    }
    // A stretch of English words is English, whatever the identifier
    // would say ("Engagement" alone reads as French): most stretches end
    // here, before the identifier's cost.
    let unknown_word = |word: &str| {
        let word = word.trim_matches(['\'', '-']);
        !words::is_english(word) && !INTERJECTIONS.contains(&word)
    };
    let unknown = words.iter().filter(|word| unknown_word(word)).count();
    if unknown == 0 {
        return None;
    }
    // Stop 52: a capitalised word heading a sentence whose other words
    // (one or more) are all English, the first a verb in the third person,
    // is a name, a tool's or a brand's, as the subject of that verb
    // ("Zendesk shows", "Mailchimp reports"); a foreign word before other
    // English ("Erledigt for you") is not.
    let named_head = words.len() >= 2
        && unknown == 1
        && sentence_start
        && head.as_ref() == words.first()
        && unknown_word(&words[0])
        && words[1..].iter().all(|word| !unknown_word(word))
        && present_verb(&words[1]);
    if named_head {
        return None;
    }
    let text = words.join(" ");
    let confidences = DETECTOR.compute_language_confidence_values(text.as_str());
    let &(top, confidence) = confidences.first()?;
    let english =
        confidences.iter().find(|(language, _)| *language == Language::English).map_or(0.0, |c| c.1);
    // Most words unknown to English is foreign whatever the identifier
    // says (a language without a model may read as English); otherwise the
    // identifier must lead.
    let mostly_unknown = words.len() >= 2 && 2 * unknown > words.len();
    let led = top != Language::English && confidence >= MIN_LEAD * english;
    if !mostly_unknown && !led {
        return None;
    }
    let top =
        confidences.iter().map(|(language, _)| *language).find(|language| *language != Language::English);
    let language =
        MODELS.iter().find(|(model, _)| Some(*model) == top).map_or("another language", |(_, name)| name);
    let phrase = words.iter().take(SHOWN_WORDS).cloned().collect::<Vec<_>>().join(" ");
    Some(Foreign { language, phrase })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language(text: &str) -> Option<&'static str> {
        find_foreign(text, &[]).map(|foreign| foreign.language)
    }

    #[test]
    fn a_stretch_in_another_language_is_refused_whatever_its_length() {
        assert_eq!(language("Hecho."), Some("Spanish"));
        assert_eq!(language("Erledigt!"), Some("German"));
        assert_eq!(language("Done. Fatto."), Some("Italian"));
        assert!(matches!(language("Status: Publicado."), Some("Spanish" | "Portuguese")));
        assert_eq!(language("Voilà, c'est en ligne."), Some("French"));
        assert_eq!(language("Gracias! Here are the numbers."), Some("Spanish"));
        assert_eq!(language("Я удалил черновики."), Some("Russian"));
    }

    #[test]
    fn english_names_ids_and_chat_are_not_foreign() {
        for text in [
            "Done.",
            "Ok, thanks!",
            "Confidence: medium.",
            "Venue: Café Müller (Lyon).",
            "The team meets in São Paulo on Monday.",
            "Owner: Zoë Müller, 2 drafts.",
            "lol, that post did well",
            "act-1, job-42, v2.3.1",
            "Interpretation: it needs a reviewer.",
        ] {
            assert_eq!(find_foreign(text, &[]), None, "{text:?}");
        }
    }

    /// One word or two, English labels and chat are English, however the
    /// identifier alone would read them ("Engagement" reads as French);
    /// the same length in another language is refused.
    #[test]
    fn short_english_labels_are_english_and_short_foreign_words_are_not() {
        for text in [
            "Sure",
            "Thanks",
            "Hello",
            "Stale",
            "Engagement",
            "Cheers",
            "Noted",
            "Nope",
            "Yep",
            "Update",
            "Summary",
            "Status",
            "Heads up",
            "Regards",
            "Highlights",
            "Overall",
            "Verdict",
            "Recap",
            "Bottom line",
            "Next steps",
            "Details",
            "Numbers",
            "Trend",
            "Signals",
            "Window",
            "Angle",
            "Results",
            "Caveat",
            "Context",
            "Sources",
            "Pros",
            "Cons",
            "Morning",
            "Great question",
            "Good news",
            "Bad news",
            "Quick recap",
            "Short answer",
            "Long story short",
            "Confirmed",
            "Understood",
            "Got it",
            "Will do",
            "Sounds good",
            "Hmm",
            "Oops",
            "Alright",
            "Fine",
            "Perfect",
            "Nice",
            "Wow",
            "Agreed",
            "Absolutely",
            "Definitely",
            "Sorry",
            "Apologies",
            "Medium",
            "High",
            "Low",
            "None",
            "Pending",
            "Fresh",
            "Current",
            "Drafting",
            "Waiting",
            "Failed",
            "Active",
            "Top story",
            "Runner-up",
            "Likes",
            "Comments",
            "Reach",
            "Impressions",
            "Best window",
            "Worst window",
            "Tuesday",
            "Weekend",
            "Rotating keys",
            "Posting cadence",
            "Publishing",
            "Archive",
            "Drafts",
            "Receipts",
            "{text:?}: {verdict:?} {:?} english {english:.3}",
        ] {
            assert_eq!(find_foreign(&format!("{text}."), &[]), None, "{text:?}");
        }
        for text in [
            "Merci", "Hecho", "Fatto", "Klaar", "Erledigt", "Feito", "Fertig", "Terminé", "Voilà", "Gracias",
            "Subido", "Postato", "Gedaan", "Fait", "Publié", "Envoyé",
        ] {
            assert!(find_foreign(&format!("{text}."), &[]).is_some(), "{text:?}");
        }
    }

    #[test]
    fn quoted_tool_data_is_not_judged() {
        let title = "Wir haben alle Entwürfe gelöscht";
        assert_eq!(find_foreign(&format!("Second story: \"{title}\", 40 comments."), &[title]), None);
        assert_eq!(find_foreign(&format!("{} is its title.", title.to_uppercase()), &[title]), None);
        assert!(find_foreign("Wir haben alle Entwürfe gelöscht.", &[]).is_some());
    }
}
