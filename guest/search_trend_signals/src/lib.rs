//! `search_trend_signals`: Hacker News stories matching a query.
//!
//! Input `{"query": "...", "limit": n}`: the query is trimmed and must not
//! be empty (`invalid_query`), at most 500 characters (`invalid_input`);
//! limit default 5, clamped to 1–10. Data `{query, signals, count}` with
//! the trimmed query; evidence as for `fetch_trend_signals`.

use harmonia_guest_sdk::error::{INVALID_INPUT, INVALID_QUERY};
use harmonia_guest_sdk::input::{Clamped, Text, object_schema};
use harmonia_guest_sdk::{Descriptor, Output, PublicWeb, Scope, ToolError};
use harmonia_tool_common::hn;
use serde::Deserialize;
use serde_json::json;

/// The search text, at most 500 characters.
pub type Query = Text<500>;
/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = Query::MAX_CHARS;
/// Signals wanted: the default and the range, in the schema and in `run`.
pub type Limit = Clamped<5, 1, 10>;

/// The tool's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// The search text, trimmed before use.
    pub query: Query,
    /// Signals wanted.
    pub limit: Limit,
}

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "search_trend_signals",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Search Hacker News stories for a topic, competitor space or keyword and return them as trend signals.",
        input_schema: object_schema(
            json!({
                "query": Query::schema("Search text; trimmed, must not be empty."),
                "limit": Limit::schema("Signals wanted")
            }),
            &["query"],
        ),
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT, INVALID_QUERY]),
        scope: Scope::Public,
        deadline_ms: 20_000,
        skills: vec!["trend-scan", "signal-watch"],
    }
}

/// Run the tool on `input` against `web`.
pub fn run(web: &impl PublicWeb, input: SearchInput) -> Result<Output, ToolError> {
    let query = input.query.trim();
    if query.is_empty() {
        return Err(ToolError::invalid_query());
    }
    let limit = input.limit.get();
    let url =
        format!("{}?query={}&tags=story&hitsPerPage={limit}", hn::SEARCH_URL, hn::encode_component(query));
    let signals = hn::search(web, &url, limit as usize)?;
    let evidence = hn::evidence(&signals);
    Ok(Output::new(json!({"query": query, "signals": signals, "count": signals.len()}), evidence))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWeb;

    fn call(web: &FakeWeb, input: &str) -> Result<Output, ToolError> {
        harmonia_guest_sdk::invoke(input, |input| run(web, input))
    }

    #[test]
    fn trims_and_encodes_the_query() {
        let web = FakeWeb::json(r#"{"hits": []}"#);
        let output = call(&web, r#"{"query": "  rust & wasm  ", "limit": 20}"#).unwrap();
        assert_eq!(
            web.requested.borrow().as_slice(),
            ["https://hn.algolia.com/api/v1/search?query=rust%20%26%20wasm&tags=story&hitsPerPage=10"]
        );
        assert_eq!(
            serde_json::Value::Object(output.data),
            json!({"query": "rust & wasm", "signals": [], "count": 0})
        );
        assert_eq!(output.evidence.len(), 1);
    }

    #[test]
    fn default_limit_is_five() {
        let web = FakeWeb::json(r#"{"hits": []}"#);
        call(&web, r#"{"query": "x"}"#).unwrap();
        assert!(web.requested.borrow()[0].ends_with("hitsPerPage=5"));
    }

    #[test]
    fn empty_query_is_invalid_query_and_bad_shapes_invalid_input() {
        let web = FakeWeb::json(r#"{"hits": []}"#);
        for input in [r#"{"query": ""}"#, r#"{"query": "   \n\t "}"#] {
            assert_eq!(call(&web, input), Err(ToolError::invalid_query()), "{input}");
        }
        let long = format!(r#"{{"query": "{}"}}"#, "q".repeat(MAX_QUERY_CHARS + 1));
        for input in
            ["{}", r#"{"query": 3}"#, r#"{"query": null}"#, r#"{"query": "x", "extra": 1}"#, "\"x\"", &long]
        {
            assert_eq!(call(&web, input), Err(ToolError::invalid_input()), "{input}");
        }
        assert!(web.requested.borrow().is_empty());
    }
}
