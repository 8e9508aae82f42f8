//! The index page: one row per review, its verdict and a link to it
//! (`harmonia demo --html DIR` writes one).

use crate::bound::Page;
use crate::escape::{self, PREVIEW_CHARS};
use crate::page;

/// One review listed on the index.
pub struct IndexRow {
    /// The page's file name, relative to the index (`grounded-job-status.html`).
    /// Only ASCII letters, digits, `.`, `-` and `_` are kept: it becomes a link.
    pub file: String,
    /// What the review is about.
    pub title: String,
    /// Whether the answer was accepted.
    pub accepted: bool,
    /// The rule that refused it.
    pub rule: Option<String>,
    /// The verdict's reason.
    pub reason: Option<String>,
}

/// `file` reduced to characters that are safe in a relative link.
fn safe_file(file: &str) -> String {
    let kept: String =
        file.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')).collect();
    kept.trim_start_matches('.').to_owned()
}

/// The index of `rows`, titled `title`. Its rows are the caller's own
/// list of reviews, so it is not bounded as a review page is.
pub fn index_page(title: &str, rows: &[IndexRow]) -> String {
    let accepted = rows.iter().filter(|row| row.accepted).count();
    let mut out = Page::unbounded();
    page::open_document(&mut out, title, "");
    out.push_str("<header><p class=\"kicker\">Harmonia review</p><h1>");
    escape::text(&mut out, title);
    out.push_str("</h1></header>\n<main id=\"main\"><section aria-labelledby=\"summary-heading\"><h2 id=\"summary-heading\">");
    out.push_str(&format!(
        "{} reviews: {accepted} accepted, {} refused</h2>",
        rows.len(),
        rows.len() - accepted
    ));
    out.push_str("<table class=\"index\"><caption>Each answer's verdict; open a review to see why.</caption><thead><tr>\
         <th scope=\"col\">Review</th><th scope=\"col\">Verdict</th><th scope=\"col\">Reason</th></tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr><td><a href=\"");
        out.push_str(&safe_file(&row.file));
        out.push_str("\">");
        escape::text(&mut out, &row.title);
        out.push_str("</a></td><td>");
        if row.accepted {
            out.push_str("<span class=\"ok\"><span aria-hidden=\"true\">✔</span> Accepted</span>");
        } else {
            out.push_str("<span class=\"bad\"><span aria-hidden=\"true\">✖</span> Refused: <code>");
            escape::text(&mut out, row.rule.as_deref().unwrap_or("unknown"));
            out.push_str("</code></span>");
        }
        out.push_str("</td><td>");
        escape::long(&mut out, row.reason.as_deref().unwrap_or("—"), PREVIEW_CHARS);
        out.push_str("</td></tr>");
    }
    out.push_str("</tbody></table></section></main>\n");
    page::close_document(&mut out);
    out.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_keep_only_safe_characters() {
        assert_eq!(safe_file("javascript:alert(1)"), "javascriptalert1");
        assert_eq!(safe_file("../x.html"), "x.html");
        assert_eq!(safe_file("grounded-job-status.html"), "grounded-job-status.html");
    }
}
