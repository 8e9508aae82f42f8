//! `get_engagement_insights`: what content works, from measured posts.
//!
//! No input (`{}`). Data `{topPosts: [{postId, text, likes, publishedAt}],
//! takeaways}`: the ten posts with most likes, ties most recent first.
//! Evidence: `harmonia_engagement`, then `harmonia_measured_post` per post.

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INVALID_INPUT};
use harmonia_guest_sdk::{Descriptor, Evidence, NoInput, Output, Scope, ToolError, Workspace};
use harmonia_tool_common::posts::{by_likes_then_recency, parse_engagement};
use serde_json::json;

/// Posts returned.
pub const TOP_POSTS: usize = 10;

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "get_engagement_insights",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Read the workspace's ten best-performing measured posts and its engagement takeaways.",
        input_schema: NoInput::schema(),
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT, AUTHORIZATION_FAILED]),
        scope: Scope::Workspace,
        deadline_ms: 30_000,
        skills: vec!["engagement-insights", "posting-schedule"],
    }
}

/// Run the tool on `input` against `workspace`.
pub fn run(workspace: &impl Workspace, _input: NoInput) -> Result<Output, ToolError> {
    let document = workspace.engagement().map_err(ToolError::from_read)?;
    let mut engagement = parse_engagement(&document).ok_or_else(ToolError::dependency_unavailable)?;
    engagement.posts.sort_by(by_likes_then_recency);
    engagement.posts.truncate(TOP_POSTS);
    let top_posts: Vec<_> = engagement
        .posts
        .iter()
        .map(|post| json!({"postId": post.post_id, "text": post.text, "likes": post.likes, "publishedAt": post.published_at}))
        .collect();
    let evidence = std::iter::once(Evidence::dataset("harmonia_engagement"))
        .chain(
            engagement
                .posts
                .iter()
                .map(|post| Evidence::record("harmonia_measured_post", post.post_id.clone())),
        )
        .collect();
    Ok(Output::new(json!({"topPosts": top_posts, "takeaways": engagement.takeaways}), evidence))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::ReadError;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    fn workspace(document: &str) -> FakeWorkspace {
        FakeWorkspace { engagement: Some(Ok(document.to_owned())), ..Default::default() }
    }

    #[test]
    fn returns_the_top_ten_ties_most_recent_first() {
        let mut posts: Vec<_> = (0..12)
            .map(|i| json!({"postId": format!("p{i}"), "text": "t", "likes": 100 - i, "publishedAt": "2026-11-01T00:00:00Z"}))
            .collect();
        posts.push(
            json!({"postId": "tie-old", "text": "t", "likes": 100, "publishedAt": "2026-10-01T00:00:00Z"}),
        );
        posts.push(
            json!({"postId": "tie-new", "text": "t", "likes": 100, "publishedAt": "2026-12-01T00:00:00Z"}),
        );
        posts.push(json!({"postId": "unmeasured", "text": "t", "likes": null}));
        let document = json!({"posts": posts, "takeaways": {"pattern": "x"}}).to_string();
        let output = run(&workspace(&document), NoInput {}).unwrap();
        let ids: Vec<&str> = output.data["topPosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["postId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["tie-new", "p0", "tie-old", "p1", "p2", "p3", "p4", "p5", "p6", "p7"]);
        assert_eq!(output.data["takeaways"], json!({"pattern": "x"}));
        assert_eq!(output.evidence.len(), 11);
        assert_eq!(output.evidence[0], Evidence::dataset("harmonia_engagement"));
        assert_eq!(output.evidence[1], Evidence::record("harmonia_measured_post", "tie-new"));
    }

    #[test]
    fn maps_read_errors() {
        for (failure, expected) in [
            (ReadError::Unauthorized, ToolError::authorization_failed()),
            (ReadError::Rejected, ToolError::provider_request_rejected()),
            (ReadError::Unavailable, ToolError::dependency_unavailable()),
            (ReadError::TimedOut, ToolError::tool_timeout()),
        ] {
            let workspace = FakeWorkspace { failure: Some(failure), ..Default::default() };
            assert_eq!(run(&workspace, NoInput {}), Err(expected));
        }
        assert_eq!(run(&workspace("garbage"), NoInput {}), Err(ToolError::dependency_unavailable()));
        let call = harmonia_guest_sdk::invoke(r#"{"x": 1}"#, |input| run(&workspace("{}"), input));
        assert_eq!(call, Err(ToolError::invalid_input()));
    }
}
