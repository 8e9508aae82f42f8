//! `hn_top_story`: the highest-ranked Hacker News front-page story with at
//! least `min_points` points.
//!
//! A template for a Harmonia tool: the logic is a plain function over the
//! `PublicWeb` capability and a typed input (so it can be tested natively),
//! the contract is a `Descriptor`, and `export!` turns both into a
//! component.
//!
//! This is the `public-tool` world's example; `worlds/workspace.rs` is the
//! `workspace-tool` world's (`harmonia new TOOL --lang rust --world
//! workspace` writes it as `src/lib.rs`), whose logic is unit-tested here.

use harmonia_guest_sdk::error::INVALID_INPUT;
use harmonia_guest_sdk::input::{Clamped, object_schema};
use harmonia_guest_sdk::{Descriptor, Evidence, Output, PublicWeb, Scope, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

const FRONT_PAGE: &str = "https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=20";

/// Fewest points: its default and range, used by the schema and by `run`.
pub type MinPoints = Clamped<0, 0, 100_000>;

/// The tool's input. The SDK parses the call's text into it and answers
/// `invalid_input` itself when it does not fit (not an object, a field
/// this struct does not name, a value of the wrong type).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Fewest points.
    pub min_points: MinPoints,
}

/// The tool's contract: what the host checks at load and shows in `harmonia tools`.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "hn_top_story",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Find the highest-ranked Hacker News front-page story with at least a given number of points.",
        input_schema: object_schema(json!({"min_points": MinPoints::schema("Fewest points")}), &[]),
        // Your own codes first; the runtime codes are added for you.
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT]),
        scope: Scope::Public,
        deadline_ms: 10_000,
        skills: vec!["hn-digest"],
    }
}

/// The tool's logic.
pub fn run(web: &impl PublicWeb, input: Input) -> Result<Output, ToolError> {
    let min_points = input.min_points.get() as u64;
    let response = web.get(FRONT_PAGE).map_err(ToolError::from_fetch)?;
    if response.status != 200 {
        return Err(ToolError::dependency_unavailable());
    }
    let body: Value =
        serde_json::from_slice(&response.body).map_err(|_| ToolError::dependency_unavailable())?;
    let hits = body["hits"].as_array().ok_or_else(ToolError::dependency_unavailable)?;
    let top = hits.iter().find(|hit| {
        hit["title"].is_string()
            && hit["url"].is_string()
            && hit["points"].as_u64().unwrap_or(0) >= min_points
    });
    let mut evidence = vec![Evidence::dataset("hacker_news_algolia")];
    let data = match top {
        Some(hit) => {
            let url = hit["url"].as_str().unwrap_or_default();
            evidence.push(Evidence::record("hacker_news_story", url));
            json!({"found": true, "title": hit["title"], "url": url, "points": hit["points"]})
        }
        None => json!({"found": false}),
    };
    Ok(Output::new(data, evidence))
}

// The export: `describe` answers with `descriptor()`, `invoke` parses the
// input into `Input` and runs `run` against the host's public web.
harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);

// The workspace example's logic and tests, natively (`cargo test`).
#[cfg(test)]
#[path = "../worlds/workspace.rs"]
mod workspace_example;

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWeb;

    /// Parse the input as the component does, then run.
    fn call(web: &FakeWeb, input: &str) -> Result<Output, ToolError> {
        harmonia_guest_sdk::invoke(input, |input| run(web, input))
    }

    const HITS: &str = r#"{"hits": [{"title": "Small", "url": "https://a.example", "points": 5},
                                     {"title": "Big", "url": "https://b.example", "points": 500}]}"#;

    #[test]
    fn finds_the_first_story_over_the_threshold() {
        let output = call(&FakeWeb::json(HITS), r#"{"min_points": 100}"#).unwrap();
        assert_eq!(output.data["title"], "Big");
        assert_eq!(output.evidence[1], Evidence::record("hacker_news_story", "https://b.example"));
    }

    #[test]
    fn refuses_bad_input_and_maps_failures() {
        assert_eq!(call(&FakeWeb::json(HITS), "[]"), Err(ToolError::invalid_input()));
        assert_eq!(call(&FakeWeb::json(HITS), r#"{"points": 1}"#), Err(ToolError::invalid_input()));
        assert_eq!(call(&FakeWeb::status(503, "{}"), "{}"), Err(ToolError::dependency_unavailable()));
    }
}
