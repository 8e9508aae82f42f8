//! Untrusted text into HTML. Every string on a review page came from a
//! tool, a plugin or an agent, so every string goes through here.
//!
//! Parts:
//! - [`text`]: escape for element content and quoted attribute values
//!   alike (`&`, `<`, `>`, `"`, `'`), and make invisible characters
//!   visible: bidirectional overrides and isolates, zero-width and other
//!   format characters, and control characters are shown as a `[U+202E]`
//!   token, so a reversed or hidden span cannot mislead the reviewer.
//! - [`long`]: the same, with text past a preview length cut and the whole
//!   text behind a `<details>` element, so a 1 MiB string neither hides
//!   the page nor is lost.
//! - [`json`]: a JSON value written out (pretty) and escaped as [`long`].
//!
//! Markup is only ever produced by this crate's own literals; nothing
//! untrusted reaches a tag name, an attribute name, a URL or a script.

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

/// Append `input` to `out`, escaped (see the module docs).
pub fn text(out: &mut String, input: &str) {
    out.reserve(input.len());
    for character in input.chars() {
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

/// `input` escaped, as a new string.
pub fn escaped(input: &str) -> String {
    let mut out = String::new();
    text(&mut out, input);
    out
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
pub fn long(out: &mut String, input: &str, limit: usize) {
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

/// `value` as pretty JSON, escaped as by [`long`], in a `<pre>`-like block.
pub fn json(out: &mut String, value: &Value, limit: usize) {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push_str("<div class=\"json\">");
    long(out, &pretty, limit);
    out.push_str("</div>");
}

/// A short, one-line rendering of a JSON value for a table cell: strings
/// as themselves, anything else as compact JSON, cut at `limit`.
pub fn scalar(out: &mut String, value: &Value, limit: usize) {
    let shown = match value {
        Value::String(text) => text.clone(),
        Value::Null => "—".to_owned(),
        other => other.to_string(),
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
        let mut out = String::new();
        long(&mut out, &"é".repeat(10), 4);
        assert!(out.starts_with("<div class=\"text cut\">éééé<span"), "{out}");
        assert!(out.contains("Show all 10 characters") && out.contains(&"é".repeat(10)), "{out}");
        let mut short = String::new();
        long(&mut short, "abcd", 4);
        assert_eq!(short, "<div class=\"text\">abcd</div>");
        assert_eq!(thousands(1_048_576), "1,048,576");
        assert_eq!(thousands(999), "999");
    }
}
