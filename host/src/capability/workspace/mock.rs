//! Built-in fixtures for mock mode: the demo workspace and a set of Hacker
//! News stories. Everything served from here is stamped `provenance: mock`.
//!
//! The mock workspace answers for any workspace id (it is one fixture), and
//! its feed always reads as updated two minutes before the read, so it is
//! `current`. The mock Hacker News answers `/api/v1/search`: with `query`
//! it keeps stories whose title contains any word of the query
//! (case-insensitive); `hitsPerPage` bounds the hits.

use super::document::WorkspaceDocument;
use super::memory::MemorySource;
use crate::capability::url::Url;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The demo workspace document (also what `harmonia demo` imports).
pub const DEMO_WORKSPACE_JSON: &str = include_str!("../../../fixtures/demo_workspace.json");
const HN_STORIES_JSON: &str = include_str!("../../../fixtures/hn_stories.json");

/// The demo workspace, parsed once.
pub fn demo_workspace() -> &'static WorkspaceDocument {
    static DOCUMENT: OnceLock<WorkspaceDocument> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        WorkspaceDocument::parse(DEMO_WORKSPACE_JSON)
            .unwrap_or_else(|error| panic!("built-in fixture: {error}"))
    })
}

fn hn_hits() -> &'static [Value] {
    static HITS: OnceLock<Vec<Value>> = OnceLock::new();
    HITS.get_or_init(|| {
        let value: Value = serde_json::from_str(HN_STORIES_JSON).unwrap_or(Value::Null);
        value["hits"].as_array().cloned().unwrap_or_default()
    })
}

/// The mock workspace source: the demo workspace, stamped mock.
pub fn source() -> MemorySource {
    MemorySource::new(demo_workspace().clone(), true)
}

/// The mock public web: a status and a JSON body for `url`.
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
