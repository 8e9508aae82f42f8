//! The public web's built-in fixture for mock mode: a set of Hacker News
//! stories, stamped `provenance: mock`. It answers `/api/v1/search`: with
//! `query` it keeps stories whose title contains any word of the query
//! (case-insensitive); `tags` keeps stories with that tag; `hitsPerPage`
//! bounds the hits. Any other path is a 404.

use harmonia_contract::url::Url;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The stories the fixture serves (also the conformance suite's default
/// public web body).
pub const HN_STORIES_JSON: &str = include_str!("../../../fixtures/hn_stories.json");

fn hn_hits() -> &'static [Value] {
    static HITS: OnceLock<Vec<Value>> = OnceLock::new();
    HITS.get_or_init(|| {
        let value: Value = serde_json::from_str(HN_STORIES_JSON).unwrap_or(Value::Null);
        value["hits"].as_array().cloned().unwrap_or_default()
    })
}

/// A status and a JSON body for `url`.
pub fn public_web_response(url: &Url) -> (u16, Vec<u8>) {
    if url.path() != "/api/v1/search" {
        return (404, br#"{"message":"not found"}"#.to_vec());
    }
    let parameter =
        |name: &str| url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned());
    let per_page =
        parameter("hitsPerPage").and_then(|text| text.parse::<usize>().ok()).unwrap_or(20).min(1000);
    let words: Vec<String> =
        parameter("query").unwrap_or_default().split_whitespace().map(str::to_lowercase).collect();
    let tags = parameter("tags").unwrap_or_default();
    let hits: Vec<Value> = hn_hits()
        .iter()
        .filter(|hit| {
            let hit_tags = hit["_tags"].as_array().map(Vec::as_slice).unwrap_or_default();
            tags.is_empty() || hit_tags.iter().any(|tag| tag.as_str() == Some(tags.as_str()))
        })
        .filter(|hit| {
            let title =
                hit["title"].as_str().or(hit["story_title"].as_str()).unwrap_or_default().to_lowercase();
            words.is_empty() || words.iter().any(|word| title.contains(word.as_str()))
        })
        .take(per_page)
        .cloned()
        .collect();
    let body = json!({"hits": hits, "nbHits": hits.len(), "page": 0, "hitsPerPage": per_page});
    (200, body.to_string().into_bytes())
}
