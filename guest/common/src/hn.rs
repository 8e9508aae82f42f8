//! Hacker News search hits as trend signals (docs/contract.md §3.6).
//!
//! Each hit becomes `{title, url, points, comments}`: the title from
//! `title`, else `story_title` (a hit with neither is dropped); the url from
//! `url`, else `https://news.ycombinator.com/item?id=<objectID>` (a hit with
//! neither url nor objectID cannot be cited and is dropped, as is one whose
//! url is longer than an evidence reference may be); points from `points`
//! and comments from `num_comments`, 0 when absent or not a count. Any
//! failure of the source, whatever its status, is `dependency_unavailable`.

use harmonia_guest_sdk::{Evidence, PublicWeb, ToolError};
use serde::Serialize;
use serde_json::Value;

/// The Hacker News search endpoint.
pub const SEARCH_URL: &str = "https://hn.algolia.com/api/v1/search";
/// Dataset-level evidence source.
pub const DATASET_SOURCE: &str = "hacker_news_algolia";
/// Record-level evidence source, one per signal.
pub const STORY_SOURCE: &str = "hacker_news_story";
/// Longest url kept (an evidence reference holds at most 2,000 characters).
pub const MAX_URL_CHARS: usize = 2000;

/// One public signal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Signal {
    /// Story title.
    pub title: String,
    /// Story url, or its Hacker News item page.
    pub url: String,
    /// Points.
    pub points: u64,
    /// Comment count.
    pub comments: u64,
}

fn non_empty(value: &Value) -> Option<&str> {
    value.as_str().filter(|text| !text.trim().is_empty())
}

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// One hit as a signal, or `None` when it must be dropped.
pub fn signal(hit: &Value) -> Option<Signal> {
    let title = non_empty(&hit["title"]).or_else(|| non_empty(&hit["story_title"]))?;
    let url = match non_empty(&hit["url"]) {
        Some(url) => url.to_owned(),
        None => {
            let id = match &hit["objectID"] {
                Value::String(id) if !id.trim().is_empty() => id.clone(),
                Value::Number(id) => id.to_string(),
                _ => return None,
            };
            format!("https://news.ycombinator.com/item?id={id}")
        }
    };
    if url.chars().count() > MAX_URL_CHARS {
        return None;
    }
    Some(Signal {
        title: title.to_owned(),
        url,
        points: count(&hit["points"]),
        comments: count(&hit["num_comments"]),
    })
}

/// Signals from a search response body, at most `limit`.
pub fn signals_from_body(body: &[u8], limit: usize) -> Option<Vec<Signal>> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let hits = value.get("hits")?.as_array()?;
    Some(hits.iter().filter_map(signal).take(limit).collect())
}

/// GET `url` and read its signals.
pub fn search(web: &impl PublicWeb, url: &str, limit: usize) -> Result<Vec<Signal>, ToolError> {
    let response = web.get(url).map_err(ToolError::from_fetch)?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::dependency_unavailable());
    }
    signals_from_body(&response.body, limit).ok_or_else(ToolError::dependency_unavailable)
}

/// The dataset item, then one story item per signal.
pub fn evidence(signals: &[Signal]) -> Vec<Evidence> {
    std::iter::once(Evidence::dataset(DATASET_SOURCE))
        .chain(signals.iter().map(|signal| Evidence::record(STORY_SOURCE, signal.url.clone())))
        .collect()
}

/// Percent-encode a query parameter value (everything but unreserved
/// characters).
pub fn encode_component(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::FetchError;
    use harmonia_guest_sdk::capability::fake::FakeWeb;
    use serde_json::json;

    #[test]
    fn maps_hits_as_the_contract_says() {
        assert_eq!(
            signal(
                &json!({"title": "T", "url": "https://a.example/x", "points": 5, "num_comments": 2, "objectID": "1"})
            ),
            Some(Signal { title: "T".into(), url: "https://a.example/x".into(), points: 5, comments: 2 })
        );
        assert_eq!(
            signal(&json!({"story_title": "S", "objectID": "42"})),
            Some(Signal {
                title: "S".into(),
                url: "https://news.ycombinator.com/item?id=42".into(),
                points: 0,
                comments: 0
            })
        );
        assert_eq!(
            signal(&json!({"title": "T", "url": "", "objectID": 7, "points": null})).unwrap().url,
            "https://news.ycombinator.com/item?id=7"
        );
        assert_eq!(signal(&json!({"url": "https://a.example", "objectID": "1"})), None);
        assert_eq!(signal(&json!({"title": "  ", "story_title": null, "objectID": "1"})), None);
        assert_eq!(signal(&json!({"title": "T"})), None);
        let long = format!("https://a.example/{}", "x".repeat(MAX_URL_CHARS));
        assert_eq!(signal(&json!({"title": "T", "url": long, "objectID": "1"})), None);
    }

    #[test]
    fn any_source_failure_is_dependency_unavailable() {
        for web in [
            FakeWeb::status(500, "{}"),
            FakeWeb::status(404, "{}"),
            FakeWeb::status(429, "{}"),
            FakeWeb::json("not json"),
            FakeWeb::json("{\"nohits\": []}"),
            FakeWeb::failing(FetchError::Denied),
            FakeWeb::failing(FetchError::TooLarge),
            FakeWeb::failing(FetchError::Unavailable),
        ] {
            assert_eq!(search(&web, SEARCH_URL, 5), Err(ToolError::dependency_unavailable()));
        }
        assert_eq!(
            search(&FakeWeb::failing(FetchError::TimedOut), SEARCH_URL, 5),
            Err(ToolError::tool_timeout())
        );
    }

    #[test]
    fn encodes_query_components() {
        assert_eq!(encode_component("rust wasm&x=1/é"), "rust%20wasm%26x%3D1%2F%C3%A9");
    }
}
