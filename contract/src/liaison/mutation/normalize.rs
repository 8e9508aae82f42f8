//! Turns an answer's text into clauses of plain lowercase words, so that a
//! claim reads the same however it is typed.
//!
//! In order:
//! 1. Unicode NFKC (full-width and mathematical letters become ASCII).
//! 2. Format characters (general category Cf: zero-width spaces and
//!    joiners, soft hyphens, word joiners, tags) and the invisible Hangul
//!    fillers are removed; every whitespace or control character becomes a
//!    space.
//! 3. Every other non-ASCII character is replaced by its UTS #39 skeleton
//!    (look-alike letters such as Cyrillic `а` become `a`) with combining
//!    marks dropped (`ó` becomes `o`). ASCII is left alone: the skeleton
//!    would fold `m` to `rn` and `I` to `l`; so is punctuation whose
//!    skeleton is a letter (an em dash's is a katakana length mark).
//! 4. Lowercase; markdown emphasis (`*`, `` ` ``, `~`, edge `_`), link
//!    targets (`[text](url)` keeps `text`) and short HTML tags are removed.
//! 5. Letters spelt out one by one are joined: `p-u-b-l-i-s-h-e-d`,
//!    `p.u.b.l.i.s.h` and `p u b l i s h` are `publish` (four letters or
//!    more, one separator throughout; a leading `i` or `a` of a spaced run
//!    stays a word). Leetspeak and repeated letters are folded when a word
//!    is looked up (`lexicon`).
//! 6. Split into clauses at `.`, `!` or `?` not followed by a letter or
//!    digit, at `|` (a table cell is read alone) and at `;` (a `.` glued to the next word is a pause, so
//!    `I.approved` is not two sentences; `2.5` and `14:00` stay one word). Line breaks are ordinary spaces, so an actor and a
//!    verb on two lines stay in one clause. Commas, colons, dashes,
//!    parentheses, ellipses, bullets and symbols (emoji, arrows) become
//!    [`Token::Pause`], except an emoji where a verb stands, read as
//!    [`EMOJI_VERB`] ("I 📌'd it", "I've 🔇 the alerts", "📤 by me"); a clause ended by `?` ends in [`Token::Question`],
//!    one holding a check mark (✓, ✅) in [`Token::Done`] (before it);
//!    other punctuation (quotes, stray hyphens) is dropped.
//! 7. Contractions are expanded (`didn't` → `did not`, `I'm` → `i am`,
//!    `let's` → `let us`); `'s` stays a word of its own (is, has or a
//!    possessive). A lone `l` is read as `i`: look-alikes of `I` fold to
//!    `l`, and `l` is no English word.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// The fewest letters a spelt-out run must have to be joined.
const MIN_SPELT_LETTERS: usize = 4;
use unicode_security::confusable_detection::skeleton;

/// One unit of a clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Token {
    /// A lowercase word.
    Word(String),
    /// A comma, dash, parenthesis or ellipsis: a pause inside the clause.
    Pause,
    /// The clause ended with a question mark (always its last token).
    Question,
    /// The clause holds a check mark (✓, ✅, ☑): it says something is
    /// done. At the clause's end, before [`Token::Question`].
    Done,
}

impl Token {
    /// The word, or `None` for a pause.
    pub(super) fn word(&self) -> Option<&str> {
        match self {
            Self::Word(word) => Some(word),
            Self::Pause | Self::Question | Self::Done => None,
        }
    }
}

/// A clause: the tokens between two sentence breaks.
pub(super) type Clause = Vec<Token>;

/// Hangul fillers: letters (not Cf) that render as nothing.
const INVISIBLE_LETTERS: [char; 4] = ['\u{115F}', '\u{1160}', '\u{3164}', '\u{FFA0}'];

/// The longest link target that is removed, so a scan for its end is bounded.
const MAX_LINK_TARGET_CHARS: usize = 2000;

/// The longest HTML tag that is removed; longer `<...>` spans are kept.
const MAX_TAG_CHARS: usize = 40;

/// `text` as clauses of normalised words.
pub(super) fn clauses(text: &str) -> Vec<Clause> {
    let folded = strip_markup(&fold(text).to_lowercase());
    split(&join_spelt_out(&folded))
}

/// Steps 1–3: NFKC, invisible characters removed, look-alikes folded.
pub(super) fn fold(text: &str) -> String {
    // ASCII is its own NFKC form and holds no format character.
    if text.is_ascii() {
        return text
            .chars()
            .map(|c| if c.is_ascii_whitespace() || c.is_ascii_control() { ' ' } else { c })
            .collect();
    }
    let mut folded = String::with_capacity(text.len());
    for character in text.nfkc() {
        if character.general_category() == GeneralCategory::Format || INVISIBLE_LETTERS.contains(&character) {
            continue;
        }
        if character.is_whitespace() || character.is_control() {
            folded.push(' ');
        } else if character.is_ascii() {
            folded.push(character);
        } else if character.general_category_group() == GeneralCategoryGroup::Punctuation
            && skeleton(character.encode_utf8(&mut [0; 4])).any(char::is_alphanumeric)
        {
            // Punctuation is never folded into a letter: the skeleton of
            // an em dash is a katakana length mark, a letter, which would
            // join the words around it instead of pausing them.
            folded.push(character);
        } else {
            let mut buffer = [0; 4];
            let prototype = skeleton(character.encode_utf8(&mut buffer));
            folded
                .extend(prototype.filter(|mark| mark.general_category_group() != GeneralCategoryGroup::Mark));
        }
    }
    folded
}

/// Step 4: markdown emphasis, link targets and short HTML tags removed.
fn strip_markup(text: &str) -> String {
    let mut stripped = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(character) = rest.chars().next() {
        let after = &rest[character.len_utf8()..];
        match character {
            '*' | '`' | '~' => {}
            ']' if link_target_length(after).is_some() => {
                stripped.push(' ');
                rest = &after[link_target_length(after).unwrap_or(0)..];
                continue;
            }
            '<' if tag_length(after).is_some() => {
                stripped.push(' ');
                rest = &after[tag_length(after).unwrap_or(0) + 1..];
                continue;
            }
            _ => stripped.push(character),
        }
        rest = after;
    }
    stripped
}

/// The length of `(url)` after a link's `]`: no whitespace inside, so
/// prose in parentheses is never taken for a target.
fn link_target_length(after_bracket: &str) -> Option<usize> {
    let target = after_bracket.strip_prefix('(')?;
    let (end, close) =
        target.char_indices().take(MAX_LINK_TARGET_CHARS).find(|(_, c)| *c == ')' || c.is_whitespace())?;
    (close == ')').then_some(end + 2)
}

/// The length of a bare tag's body before its `>`: `<b>`, `</em>`, `<br/>`.
/// Tags with attributes are left as text, so nothing can hide inside one.
fn tag_length(after_open: &str) -> Option<usize> {
    let end = after_open.char_indices().take(MAX_TAG_CHARS).find(|(_, c)| *c == '>')?.0;
    let name = after_open[..end].trim_matches('/');
    let is_tag = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    is_tag.then_some(end)
}

/// Step 5: runs of single letters with one separator joined into a word.
fn join_spelt_out(text: &str) -> String {
    let characters: Vec<char> = text.chars().collect();
    let letter = |at: usize| characters.get(at).is_some_and(|c| c.is_alphabetic());
    let isolated_before = |at: usize| {
        at == 0 || !(characters[at - 1].is_alphanumeric() || matches!(characters[at - 1], '-' | '.' | '_'))
    };
    let mut joined = String::with_capacity(text.len());
    let mut at = 0;
    while at < characters.len() {
        let separator = characters.get(at + 1).copied().filter(|c| matches!(c, '-' | '.' | '_' | ' '));
        if let Some(separator) = separator.filter(|_| letter(at) && isolated_before(at)) {
            // Letters at at, at+2, at+4, ... while the separator repeats.
            let mut end = at;
            while letter(end + 2)
                && characters.get(end + 1) == Some(&separator)
                && !characters.get(end + 3).is_some_and(|c| c.is_alphanumeric())
            {
                end += 2;
            }
            let count = (end - at) / 2 + 1;
            // "I I I I" is not a word spelt out.
            let varied = (at..=end).step_by(2).any(|index| characters[index] != characters[at]);
            if count >= MIN_SPELT_LETTERS && varied {
                let mut start = at;
                if separator == ' ' && matches!(characters[at], 'i' | 'a') && count > MIN_SPELT_LETTERS {
                    joined.push(characters[at]);
                    joined.push(' ');
                    start = at + 2;
                }
                joined.extend((start..=end).step_by(2).map(|index| characters[index]));
                at = end + 1;
                continue;
            }
        }
        joined.push(characters[at]);
        at += 1;
    }
    joined
}

/// Steps 6–7: clauses of words and pauses.
fn split(text: &str) -> Vec<Clause> {
    let characters: Vec<char> = text.chars().collect();
    let mut clauses = vec![Clause::new()];
    let mut word = String::new();
    let mut done = false;
    let mut skip_to = 0;
    for (index, &character) in characters.iter().enumerate() {
        if index < skip_to {
            continue;
        }
        let next = characters.get(index + 1).copied();
        let previous = index.checked_sub(1).map(|before| characters[before]);
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        let inside_word = match character {
            c if c.is_alphanumeric() => true,
            '\'' | '-' | '_' => true,
            '.' | ':' => digit(previous) && digit(next),
            _ => false,
        };
        if inside_word {
            word.push(character);
            continue;
        }
        flush(&mut word, clauses.last_mut());
        if character == '&' {
            word.push_str("and");
            flush(&mut word, clauses.last_mut());
        }
        let ellipsis = character == '.' && (next == Some('.') || previous == Some('.'));
        let glued = next.is_some_and(char::is_alphanumeric);
        if CHECK_MARKS.contains(&character) {
            done = true;
        }
        match character {
            '.' if ellipsis || glued => push_pause(clauses.last_mut()),
            '.' | '!' | '?' | ';' | '|' if clauses.last().is_some_and(|clause| !clause.is_empty()) => {
                if let Some(clause) = clauses.last_mut() {
                    if std::mem::take(&mut done) {
                        clause.push(Token::Done);
                    }
                    if character == '?' {
                        clause.push(Token::Question);
                    }
                }
                clauses.push(Clause::new());
            }
            ',' | ':' | '(' | ')' | '[' | ']' | '\u{2014}' | '\u{2013}' | '\u{2026}' | '\u{2022}'
            | '\u{00B7}' => push_pause(clauses.last_mut()),
            // A currency sign before a figure is part of the amount.
            '$' | '\u{00A3}' | '\u{20AC}' | '\u{00A5}' if digit(next) => {}
            c if !c.is_ascii() && is_symbol(c) => match emoji_verb(&characters, index, clauses.last()) {
                Some(end) => {
                    if let Some(clause) = clauses.last_mut() {
                        clause.push(Token::Word(EMOJI_VERB.to_owned()));
                    }
                    skip_to = end;
                }
                None => push_pause(clauses.last_mut()),
            },
            c if is_symbol(c) => push_pause(clauses.last_mut()),
            _ => {}
        }
    }
    flush(&mut word, clauses.last_mut());
    if done && let Some(clause) = clauses.last_mut() {
        clause.push(Token::Done);
    }
    clauses.retain(|clause| clause.iter().any(|token| token.word().is_some()));
    clauses
}

/// The verb an emoji standing for one is read as: an act no table lists.
pub(super) const EMOJI_VERB: &str = "actioned";

/// Where an emoji at `index` that stands where a verb stands ends (after
/// its `'d`): glued to `'d` or `'ed` ("I 📌'd the post"), right after the
/// liaison as subject and before a word ("I've 🔇 the alerts"), or right
/// before `by me` or `by us` ("Newsletter 📤 by me"). Any other emoji is a
/// pause. It looks at most a few characters and the clause's last two
/// words.
fn emoji_verb(characters: &[char], index: usize, clause: Option<&Clause>) -> Option<usize> {
    let at = |offset: usize| characters.get(index + offset).copied();
    let apostrophe = |c: Option<char>| matches!(c, Some('\'' | '\u{2019}'));
    let ends = |offset: usize| at(offset).is_none_or(|c| !c.is_alphanumeric());
    if apostrophe(at(1)) && at(2) == Some('d') && ends(3) {
        return Some(index + 3);
    }
    if apostrophe(at(1)) && at(2) == Some('e') && at(3) == Some('d') && ends(4) {
        return Some(index + 4);
    }
    let after: String = characters[index + 1..].iter().take(7).collect::<String>().to_lowercase();
    let by_liaison = ["by me", "by us"].iter().any(|by| {
        after
            .trim_start()
            .strip_prefix(by)
            .is_some_and(|rest| rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
    });
    let words: Vec<&str> = clause.map_or_else(Vec::new, |clause| {
        clause.iter().rev().take(2).map(|token| token.word().unwrap_or("")).collect()
    });
    let liaison = |word: &str| matches!(word, "i" | "we");
    let after_subject = match words.as_slice() {
        [last, before] => {
            liaison(last) || (matches!(*last, "have" | "has" | "had" | "just") && liaison(before))
        }
        [last] => liaison(last),
        _ => false,
    };
    let word_follows = after.starts_with(' ') && after.trim_start().starts_with(char::is_alphabetic);
    (by_liaison || (after_subject && word_follows)).then_some(index + 1)
}

/// Whether `c` is a symbol (emoji, arrows, `+`, `=`): a pause. ASCII is
/// answered without the general-category table.
fn is_symbol(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
    } else {
        c.general_category_group() == GeneralCategoryGroup::Symbol
    }
}

/// Check marks: a clause holding one says something is done.
const CHECK_MARKS: &[char] = &['\u{2713}', '\u{2714}', '\u{2705}', '\u{2611}', '\u{1F197}'];

fn push_pause(clause: Option<&mut Clause>) {
    if let Some(clause) = clause
        && clause.last().is_some_and(|token| *token != Token::Pause)
    {
        clause.push(Token::Pause);
    }
}

fn flush(word: &mut String, clause: Option<&mut Clause>) {
    let raw = std::mem::take(word);
    let Some(clause) = clause else { return };
    let trimmed = raw.trim_matches(|c| matches!(c, '\'' | '-' | '_'));
    if trimmed.is_empty() {
        return;
    }
    for part in expand(trimmed) {
        clause.push(Token::Word(part));
    }
}

/// Words after which `'d` is "would" or "had": pronouns and the
/// liaison's names ("I'd", "Nova'd").
const D_CONTRACTORS: &[&str] = &[
    "i",
    "l",
    "you",
    "we",
    "they",
    "he",
    "she",
    "it",
    "that",
    "this",
    "who",
    "there",
    "what",
    "where",
    "how",
    "when",
    "why",
    "nobody",
    "somebody",
    "someone",
    "everyone",
    "everybody",
    "nova",
    "harmonia",
    "u",
];

/// Contractions and slang spelt out as the words they stand for.
fn expand(word: &str) -> Vec<String> {
    let owned = |words: &[&str]| words.iter().map(|word| (*word).to_owned()).collect();
    match word {
        "l" => return owned(&["i"]),
        "cannot" => return owned(&["can", "not"]),
        "let's" => return owned(&["let", "us"]),
        "gonna" => return owned(&["going", "to"]),
        "wanna" => return owned(&["want", "to"]),
        "gotta" => return owned(&["got", "to"]),
        _ => {}
    }
    if let Some(stem) = word.strip_suffix("n't") {
        let stem = match stem {
            "ca" => "can",
            "wo" => "will",
            "sha" => "shall",
            "ai" => "is",
            other => other,
        };
        return owned(&[stem, "not"]);
    }
    if let Some((head, tail)) = word.split_once('\'') {
        let tail = match tail {
            "m" => "am",
            "ve" => "have",
            "ll" => "will",
            "re" => "are",
            // "DM'd", "Bitly'd": after a word that is no pronoun or
            // name, `'d` is a past's ending.
            "d" if !D_CONTRACTORS.contains(&head) && head.len() >= 2 => return vec![format!("{head}ed")],
            "d" => "'d",
            "s" => "'s",
            _ => return owned(&[word]),
        };
        let head = if head == "l" { "i" } else { head };
        return owned(&[head, tail]);
    }
    owned(&[word])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        clauses(text)
            .into_iter()
            .map(|clause| {
                let tokens = clause.iter().filter(|token| **token != Token::Done);
                tokens.map(|token| token.word().unwrap_or(",").to_owned()).collect::<Vec<_>>()
            })
            .collect()
    }

    fn joined(text: &str) -> String {
        words(text).into_iter().map(|clause| clause.join(" ")).collect::<Vec<_>>().join(" | ")
    }

    #[test]
    fn invisible_and_look_alike_characters_fold_to_ascii() {
        assert_eq!(joined("I pub\u{200B}lished act-1"), "i published act-1");
        assert_eq!(joined("H\u{0430}rmonia app\u{00AD}roved"), "harmonia approved");
        assert_eq!(joined("ｐｕｂｌｉｓｈｅｄ 𝐚𝐩𝐩𝐫𝐨𝐯𝐞𝐝"), "published approved");
        assert_eq!(joined("appro\u{0301}ved appróved"), "approved approved");
        assert_eq!(joined("\u{0399} approved"), "i approved");
        assert_eq!(joined("pub\u{3164}lished p\u{2060}ost\u{FEFF}ed"), "published posted");
        assert_eq!(joined("I\u{00A0}approved\u{2028}it"), "i approved it");
    }

    #[test]
    fn ascii_is_never_folded() {
        assert_eq!(joined("Harmonia m I 0 1"), "harmonia m i 0 1");
    }

    #[test]
    fn line_breaks_do_not_end_a_clause_but_stops_do() {
        assert_eq!(words("Harmonia\npublished act-1."), vec![vec!["harmonia", "published", "act-1"]]);
        assert_eq!(words("Fine. We executed act-2"), vec![vec!["fine"], vec!["we", "executed", "act-2"]]);
        assert_eq!(joined("Score 2.5; v1.2 at 14:00"), "score 2.5 | v1.2 at 14:00");
        assert_eq!(joined("I.approved approve/publish"), "i , approved approve publish");
        assert_eq!(joined("went ahead & sent"), "went ahead and sent");
        assert_eq!(joined("I... published it"), "i , published it");
    }

    #[test]
    fn markdown_and_tags_are_stripped() {
        assert_eq!(joined("**I** _approved_ `act-1`"), "i approved act-1");
        assert_eq!(joined("[I published](https://x.test/a.b) it"), "i published it");
        assert_eq!(joined("I <b>approved</b> it<br/>"), "i approved it");
        assert_eq!(joined("[a](I approved it) <a approved>"), "a , i approved it , a approved ,");
        assert_eq!(joined("pub**lish**ed"), "published");
    }

    #[test]
    fn contractions_are_spelt_out() {
        assert_eq!(
            joined("I've, we'll, didn't, can't, won't, cannot"),
            "i have , we will , did not , can not , will not , can not"
        );
        assert_eq!(joined("I’m gonna; let's; Nova's"), "i am going to | let us | nova 's");
    }

    #[test]
    fn spelt_out_letters_are_joined() {
        assert_eq!(joined("I p-u-b-l-i-s-h-e-d it"), "i published it");
        assert_eq!(joined("I p.u.b.l.i.s.h.e.d it"), "i published it");
        assert_eq!(joined("I p u b l i s h e d act-2"), "i published act-2");
        assert_eq!(joined("e.g. v1.2.3 a-b x y"), "e , g | v1.2.3 a-b x y");
        assert_eq!(joined("I I I I approved"), "i i i i approved");
    }

    #[test]
    fn tables_bullets_symbols_and_questions() {
        assert_eq!(joined("| act-1 | published |"), "act-1 | published");
        assert_eq!(joined("✅ Published • act-2 → approved"), "published , act-2 , approved");
        assert_eq!(clauses("Is it live?")[0].last(), Some(&Token::Question));
        assert_eq!(clauses("act-3 boosted ✓")[0].last(), Some(&Token::Done));
        assert_eq!(clauses("✅ Done? Yes.")[0][1..], [Token::Done, Token::Question]);
    }

    #[test]
    fn hostile_input_stays_linear_and_bounded() {
        let long = "<".repeat(10_000) + &"](".repeat(10_000) + &"\u{FDFA}".repeat(1000);
        assert!(!clauses(&long).is_empty());
        assert!(clauses("").is_empty());
        assert!(clauses("... ;;; !!! , ,").is_empty(), "punctuation alone makes no clause");
    }
}
