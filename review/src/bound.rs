//! How large a page may grow, and the page being written, which keeps to
//! it.
//!
//! Every byte of a page's input came from a tool, a plugin or an agent,
//! and without a bound the markup grows faster than the input: an evidence
//! id cited 200,000 times (4 bytes each) made a CSS rule, a tip line and a
//! details line each (some 500 bytes), a `<` became `&lt;`, a raw DEL a
//! 32-byte `[U+007F]` token, nested arrays pretty JSON's indentation, and
//! a 0.92 MiB request made a 97 MiB page. So a page written for an input
//! of `n` bytes is at most [`PAGE_FACTOR`] × `n` + [`PAGE_BASE`] bytes
//! (4 × its input + 256 KiB), whatever the input holds.
//!
//! How that holds, by construction rather than by estimate:
//! - the page is a [`Page`], whose budget is that bound less
//!   [`RESERVE`];
//! - text from the input goes in only through [`crate::escape`], which
//!   writes no further than the budget and says, in place, how many
//!   characters it left out (once the budget is spent, a string left out
//!   whole is marked `[…]`); JSON values are serialized into a buffer
//!   capped at the room left, so not even the text to be cut is held whole;
//! - every list whose length follows the input (trace entries, evidence
//!   cards, claims, cited ids, receipts, notes) asks [`Page::has_room`]
//!   before each item, and once there is none ends with a line saying how
//!   many items are not shown and why; the style rules of claims take at
//!   most a quarter of the room;
//! - so what is written past the budget is at most one item's own markup
//!   and the notes and closing tags after it, which [`RESERVE`] covers.
//!
//! The work is bounded as well as the bytes: only the first
//! [`MAX_MARKED_CLAIMS`] claims are looked for and marked in the answer
//! text, and a claim's details list at most [`MAX_IDS_SHOWN`] of the ids
//! it cites (a valid answer makes at most 20 claims of at most 8 ids).

use std::fmt;

/// A page is at most this many times the bytes of its input ...
pub const PAGE_FACTOR: usize = 4;
/// ... plus this many bytes (the stylesheet, the headings, the notes).
pub const PAGE_BASE: usize = 256 * 1024;
/// What the budget keeps back from the bound: the markup an item begun
/// with room may still write past it, the notes of the sections after it
/// and the document's close.
pub const RESERVE: usize = 16 * 1024;
/// Room an item needs for it to be begun.
pub const ITEM_ROOM: usize = 2 * 1024;
/// Claims looked for and marked in the answer text, with a tip and style
/// rules; the others are listed, unmarked.
pub const MAX_MARKED_CLAIMS: usize = 100;
/// Cited ids listed for one claim; the rest are counted.
pub const MAX_IDS_SHOWN: usize = 32;

/// The bound of a page written for `input_bytes` of input.
pub fn page_bound(input_bytes: usize) -> usize {
    input_bytes.saturating_mul(PAGE_FACTOR).saturating_add(PAGE_BASE)
}

/// A page being written, and the budget it keeps to (see the module docs).
#[derive(Debug)]
pub struct Page {
    out: String,
    bound: usize,
    budget: usize,
}

impl Page {
    /// A page for `input_bytes` of input.
    pub fn for_input(input_bytes: usize) -> Self {
        let bound = page_bound(input_bytes);
        Self { out: String::new(), bound, budget: bound - RESERVE }
    }

    /// A page without a budget: for pages of the program's own making
    /// (the index of the demo's scenarios).
    pub fn unbounded() -> Self {
        Self { out: String::new(), bound: usize::MAX, budget: usize::MAX }
    }

    /// Append markup of this crate's own making (or text already escaped).
    pub fn push_str(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// Append one character of markup.
    pub fn push(&mut self, markup: char) {
        self.out.push(markup);
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// True when nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Bytes of text the budget still has room for.
    pub fn room(&self) -> usize {
        self.budget.saturating_sub(self.out.len())
    }

    /// True when there is room to begin one more item of a list.
    pub fn has_room(&self) -> bool {
        self.room() >= ITEM_ROOM
    }

    /// The page's bound (`usize::MAX` for an unbounded page).
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// `⚠ N more <what> are not shown …`: the line that ends a list cut
    /// at the budget.
    pub fn not_shown(&mut self, left: usize, what: &str) {
        self.out.push_str(&format!(
            "<p class=\"missing\">⚠ {} more {what} not shown: the page reached its bound of {} bytes \
             ({PAGE_FACTOR} × its input + {} KiB).</p>",
            crate::escape::thousands(left),
            crate::escape::thousands(self.bound),
            PAGE_BASE / 1024
        ));
    }

    /// The page written.
    pub fn into_string(self) -> String {
        self.out
    }
}

impl fmt::Write for Page {
    fn write_str(&mut self, markup: &str) -> fmt::Result {
        self.out.push_str(markup);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_the_bound_less_the_reserve() {
        let mut page = Page::for_input(1_000);
        assert_eq!(page.bound(), 4_000 + 256 * 1024);
        assert_eq!(page.room(), 4_000 + 256 * 1024 - RESERVE);
        page.push_str(&"x".repeat(page.room() - ITEM_ROOM));
        assert!(page.has_room());
        page.push('x');
        assert!(!page.has_room());
        assert_eq!(page_bound(usize::MAX), usize::MAX);
    }
}
