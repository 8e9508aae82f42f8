//! `fetch_trend_signals`: the Hacker News front page as trend signals.
//!
//! Input `{"limit": n}`, default 6, clamped to 1–10. Data
//! `{signals, count}`; evidence: `hacker_news_algolia`, then one
//! `hacker_news_story` per signal with its url.

use harmonia_guest_sdk::error::INVALID_INPUT;
use harmonia_guest_sdk::input::{Clamped, object_schema};
use harmonia_guest_sdk::{Descriptor, Output, PublicWeb, Scope, ToolError};
use harmonia_tool_common::hn;
use serde::Deserialize;
use serde_json::json;

/// Signals wanted: the default and the range, in the schema and in `run`.
pub type Limit = Clamped<6, 1, 10>;

/// The tool's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    /// Signals wanted.
    pub limit: Limit,
}

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "fetch_trend_signals",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Fetch the current Hacker News front page as live tech trend signals (title, url, points, comments).",
        input_schema: object_schema(json!({"limit": Limit::schema("Signals wanted")}), &[]),
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT]),
        scope: Scope::Public,
        deadline_ms: 20_000,
        skills: vec!["trend-scan", "signal-watch"],
    }
}

/// Run the tool on `input` against `web`.
pub fn run(web: &impl PublicWeb, input: FetchInput) -> Result<Output, ToolError> {
    let limit = input.limit.get();
    let url = format!("{}?tags=front_page&hitsPerPage={limit}", hn::SEARCH_URL);
    let signals = hn::search(web, &url, limit as usize)?;
    let evidence = hn::evidence(&signals);
    Ok(Output::new(json!({"signals": signals, "count": signals.len()}), evidence))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWeb;

    fn call(web: &FakeWeb, input: &str) -> Result<Output, ToolError> {
        harmonia_guest_sdk::invoke(input, |input| run(web, input))
    }

    const BODY: &str = r#"{"hits": [
        {"objectID": "1", "title": "One", "url": "https://a.example/1", "points": 10, "num_comments": 3},
        {"objectID": "2", "comment_text": "no title"},
        {"objectID": "3", "story_title": "Three"}]}"#;

    #[test]
    fn asks_for_the_front_page_with_the_clamped_limit() {
        for (input, limit) in
            [("{}", 6), (r#"{"limit": 0}"#, 1), (r#"{"limit": 50}"#, 10), (r#"{"limit": 3}"#, 3)]
        {
            let web = FakeWeb::json(BODY);
            call(&web, input).unwrap();
            assert_eq!(
                web.requested.borrow().as_slice(),
                [format!("https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage={limit}")]
            );
        }
    }

    #[test]
    fn returns_signals_count_and_evidence() {
        let output = call(&FakeWeb::json(BODY), "{}").unwrap();
        assert_eq!(
            serde_json::Value::Object(output.data),
            json!({"signals": [
                {"title": "One", "url": "https://a.example/1", "points": 10, "comments": 3},
                {"title": "Three", "url": "https://news.ycombinator.com/item?id=3", "points": 0, "comments": 0}],
                "count": 2})
        );
        let references: Vec<_> =
            output.evidence.iter().map(|e| (e.source.as_str(), e.reference.as_deref())).collect();
        assert_eq!(
            references,
            [
                ("hacker_news_algolia", None),
                ("hacker_news_story", Some("https://a.example/1")),
                ("hacker_news_story", Some("https://news.ycombinator.com/item?id=3")),
            ]
        );
    }

    #[test]
    fn bad_input_is_invalid_input() {
        for input in ["[]", "", r#"{"limit": "3"}"#, r#"{"limit": 2.5}"#, r#"{"query": "x"}"#] {
            assert_eq!(call(&FakeWeb::json(BODY), input), Err(ToolError::invalid_input()), "{input}");
        }
    }
}
