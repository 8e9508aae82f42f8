//! `hn_top_story`: the highest-ranked Hacker News front-page story with at
//! least `min_points` points.
//!
//! A template for a Harmonia tool: the logic is a plain function over the
//! `PublicWeb` capability (so it can be tested natively), the contract is
//! a `Descriptor`, and `export_logic!` turns both into a component.

use harmonia_guest_sdk::error::INVALID_INPUT;
use harmonia_guest_sdk::{Descriptor, Evidence, Input, Output, PublicWeb, Scope, ToolError};
use serde_json::{Value, json};

const FRONT_PAGE: &str = "https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=20";

/// The tool's contract: what the host checks at load and shows in `harmonia tools`.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "hn_top_story",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Find the highest-ranked Hacker News front-page story with at least a given number of points.",
        input_schema: json!({
            "type": "object",
            "properties": {"min_points": {"type": ["integer", "null"], "default": 0, "description": "Fewest points; clamped to 0-100000."}},
            "additionalProperties": false
        }),
        // Your own codes first; the runtime codes are added for you.
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT]),
        scope: Scope::Public,
        deadline_ms: 10_000,
        skills: vec!["hn-digest"],
    }
}

/// The tool's logic.
pub fn run(web: &impl PublicWeb, input: &str) -> Result<Output, ToolError> {
    let input = Input::parse(input, &["min_points"])?;
    let min_points = input.clamped_integer("min_points", 0, 0, 100_000)? as u64;
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

// The export: `describe` answers with `descriptor()`, `invoke` runs `run`
// against the host's public web.
harmonia_guest_sdk::export_logic!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWeb;

    const HITS: &str = r#"{"hits": [{"title": "Small", "url": "https://a.example", "points": 5},
                                     {"title": "Big", "url": "https://b.example", "points": 500}]}"#;

    #[test]
    fn finds_the_first_story_over_the_threshold() {
        let output = run(&FakeWeb::json(HITS), r#"{"min_points": 100}"#).unwrap();
        assert_eq!(output.data["title"], "Big");
        assert_eq!(output.evidence[1], Evidence::record("hacker_news_story", "https://b.example"));
    }

    #[test]
    fn refuses_bad_input_and_maps_failures() {
        assert_eq!(run(&FakeWeb::json(HITS), "[]"), Err(ToolError::invalid_input()));
        assert_eq!(run(&FakeWeb::status(503, "{}"), "{}"), Err(ToolError::dependency_unavailable()));
    }
}
