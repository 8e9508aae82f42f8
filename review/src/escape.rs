//! Untrusted text into HTML. Every string on a review page came from a
//! tool, a plugin or an agent, so every string goes through here.
//!
//! Parts:
//! - [`text`]: escape for element content and quoted attribute values
//!   alike (`&`, `<`, `>`, `"`, `'`), and make invisible characters
//!   visible: bidirectional overrides and isolates, zero-width and other
//!   format characters, and control characters are shown as a `[U+202E]`
//!   token, so a reversed or hidden span cannot mislead the reviewer.
//!   It writes no further than the page's budget ([`crate::bound`]): the
//!   characters past it are left out, saying how many, in place.
//! - [`long`]: the same, with text past a preview length cut and the whole
//!   text behind a `<details>` element, so a 1 MiB string neither hides
//!   the page nor is lost (unless the page's bound cuts it, which it says).
//! - [`json`]: a JSON value written out (pretty) and escaped as [`long`],
//!   serialized into a buffer capped at the page's room, so a value whose
//!   pretty form is huge (deep nesting) is never held whole.
//!
//! Markup is only ever produced by this crate's own literals; nothing
//! untrusted reaches a tag name, an attribute name, a URL or a script.

use crate::bound::Page;
use serde_json::Value;

/// Characters shown as `[U+XXXX]` tokens instead of themselves.
fn is_hidden(character: char) -> bool {
    matches!(character,
        // C0 and C1 controls, but for the line break and the tab.
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // Bidirectional marks, embeddings, overrides and isolates.
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        // Zero-width and other invisible format characters.
        | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}'
        // Line and paragraph separators render as breaks some places, not others.
        | '\u{2028}' | '\u{2029}')
}

/// The most bytes one character becomes (a `[U+XXXX]` token).
const MOST_BYTES_PER_CHARACTER: usize = 40;

/// Append `input` to `out`, escaped (see the module docs), as far as the
/// page's budget has room; past it, a note of the characters left out
/// (once the budget is spent, a string left out whole is marked `[…]`).
pub fn text(out: &mut Page, input: &str) {
    if !input.is_empty() && out.room() < MOST_BYTES_PER_CHARACTER {
        out.push_str("<span class=\"cut\">[…]</span>");
        return;
    }
    for (at, character) in input.char_indices() {
        if out.room() < MOST_BYTES_PER_CHARACTER {
            let left = input[at..].chars().count();
            out.push_str("<span class=\"cut\">[… ");
            out.push_str(&thousands(left));
            out.push_str(" characters left out: the page reached its bound]</span>");
            return;
        }
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            hidden if is_hidden(hidden) => {
                out.push_str("<span class=\"cc\">[U+");
                out.push_str(&format!("{:04X}", u32::from(hidden)));
                out.push_str("]</span>");
            }
            other => out.push(other),
        }
    }
}

/// `input` escaped, as a new string (without a bound).
pub fn escaped(input: &str) -> String {
    let mut out = Page::unbounded();
    text(&mut out, input);
    out.into_string()
}

/// Characters of a string shown before the rest is folded away.
pub const PREVIEW_CHARS: usize = 600;

/// The byte offset after `limit` characters of `input`, if it has more.
pub fn cut_at(input: &str, limit: usize) -> Option<usize> {
    input.char_indices().nth(limit).map(|(at, _)| at)
}

/// Append `input` escaped; past `limit` characters, a preview and the
/// whole text in a `<details>` element. Block content: call it only where
/// a `<div>` may stand (never inside `<p>` or inline elements).
pub fn long(out: &mut Page, input: &str, limit: usize) {
    let Some(cut) = cut_at(input, limit) else {
        out.push_str("<div class=\"text\">");
        text(out, input);
        out.push_str("</div>");
        return;
    };
    let total = input.chars().count();
    out.push_str("<div class=\"text cut\">");
    text(out, &input[..cut]);
    out.push_str("<span class=\"more\" aria-hidden=\"true\">…</span></div>");
    out.push_str("<details class=\"whole\"><summary>Show all ");
    out.push_str(&thousands(total));
    out.push_str(" characters</summary><div class=\"text\">");
    text(out, input);
    out.push_str("</div></details>");
}

/// A writer keeping at most `cap` bytes, refusing the rest.
struct Capped {
    bytes: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let room = self.cap - self.bytes.len();
        if room == 0 {
            return Err(std::io::Error::other("capped"));
        }
        let taken = buffer.len().min(room);
        self.bytes.extend_from_slice(&buffer[..taken]);
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` serialized (pretty or compact), at most `cap` bytes of it, and
/// whether that is all of it.
pub fn serialized(value: &Value, pretty: bool, cap: usize) -> (String, bool) {
    let mut capped = Capped { bytes: Vec::new(), cap };
    let whole = if pretty {
        serde_json::to_writer_pretty(&mut capped, value).is_ok()
    } else {
        serde_json::to_writer(&mut capped, value).is_ok()
    };
    let mut bytes = capped.bytes;
    // A cut may fall inside a character: keep the whole ones.
    if let Err(error) = std::str::from_utf8(&bytes) {
        bytes.truncate(error.valid_up_to());
    }
    (String::from_utf8(bytes).unwrap_or_default(), whole)
}

/// `value` as pretty JSON, escaped as by [`long`], in a `<pre>`-like block;
/// serialized no further than the page has room for.
pub fn json(out: &mut Page, value: &Value, limit: usize) {
    let (pretty, whole) = serialized(value, true, out.room().saturating_add(1));
    out.push_str("<div class=\"json\">");
    long(out, &pretty, limit);
    if !whole {
        out.push_str(
            "<p class=\"missing\">⚠ The rest of this value is left out: the page reached its bound.</p>",
        );
    }
    out.push_str("</div>");
}

/// A short, one-line rendering of a JSON value for a table cell: strings
/// as themselves, anything else as compact JSON, cut at `limit`.
pub fn scalar(out: &mut Page, value: &Value, limit: usize) {
    let shown = match value {
        Value::String(text) => text.clone(),
        Value::Null => "—".to_owned(),
        other => serialized(other, false, limit.saturating_mul(4).saturating_add(4)).0,
    };
    match cut_at(&shown, limit) {
        Some(cut) => {
            text(out, &shown[..cut]);
            out.push('…');
        }
        None => text(out, &shown),
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped_and_controls_shown() {
        let shown = escaped("<script>alert('x')</script> & \"q\" \u{202e}evil\u{200b}");
        assert_eq!(
            shown,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot; \
             <span class=\"cc\">[U+202E]</span>evil<span class=\"cc\">[U+200B]</span>"
        );
        assert_eq!(escaped("line\nbreak\ttab é 🙂"), "line\nbreak\ttab é 🙂");
    }

    #[test]
    fn long_text_is_cut_with_the_whole_behind_details() {
        let mut out = Page::unbounded();
        long(&mut out, &"é".repeat(10), 4);
        let out = out.into_string();
        assert!(out.starts_with("<div class=\"text cut\">éééé<span"), "{out}");
        assert!(out.contains("Show all 10 characters") && out.contains(&"é".repeat(10)), "{out}");
        let mut short = Page::unbounded();
        long(&mut short, "abcd", 4);
        assert_eq!(short.into_string(), "<div class=\"text\">abcd</div>");
        assert_eq!(thousands(1_048_576), "1,048,576");
        assert_eq!(thousands(999), "999");
    }

    /// Hostile: text past the page's budget is left out, the count said;
    /// a value whose pretty form is huge is serialized only to the room.
    #[test]
    fn text_and_json_stop_at_the_budget_and_say_so() {
        let mut page = Page::for_input(0);
        let filler = "x".repeat(page.room() - 1_000);
        page.push_str(&filler);
        text(&mut page, &"<".repeat(10_000));
        let written = page.into_string();
        let shown = &written[filler.len()..];
        assert!(shown.len() < 1_200, "{} bytes past the filler", shown.len());
        assert!(shown.contains("characters left out: the page reached its bound"), "{shown}");
        let left: usize = shown
            .split("[… ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .map(|count| count.replace(',', "").parse().unwrap())
            .unwrap();
        assert_eq!(left + shown.matches("&lt;").count(), 10_000);

        let mut deep = serde_json::json!([]);
        for _ in 0..100 {
            deep = serde_json::json!([deep, [], [], []]);
        }
        let (cut, whole) = serialized(&deep, true, 5_000);
        assert!(!whole && cut.len() == 5_000);
        let (all, whole) = serialized(&serde_json::json!({"é": [1, 2]}), true, 5_000);
        assert!(whole && all.contains('é'));
        let (half, _) = serialized(&serde_json::json!("éé"), false, 3);
        assert_eq!(half, "\"é", "a cut never splits a character");
    }
}
