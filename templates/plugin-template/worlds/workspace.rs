//! `posts_by_weekday`: how many measured posts were published on each UTC
//! weekday, counting only posts with at least `min_likes` likes.
//!
//! The template's workspace example (`harmonia new TOOL --lang rust --world
//! workspace` writes it as `src/lib.rs`; `src/lib.rs` includes it in its unit
//! tests). The logic is a plain function over the `Workspace` capability,
//! whose `engagement()` returns the text of `{"posts": [...], "takeaways":
//! ...}`: every measured post as `{"postId", "text", "likes",
//! "publishedAt"}` (docs/plugin-authors.md, section 7.7, lists every field
//! of every read).

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INVALID_INPUT};
use harmonia_guest_sdk::input::{Clamped, object_schema};
use harmonia_guest_sdk::time::parse_rfc3339;
use harmonia_guest_sdk::{Descriptor, Evidence, Output, Scope, ToolError, Workspace};
use serde::Deserialize;
use serde_json::{Value, json};

/// The weekdays, Monday first.
pub const WEEKDAYS: [&str; 7] =
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// Fewest likes a post needs to count: its default and range, used by the
/// schema and by `run`.
pub type MinLikes = Clamped<0, 0, 1_000_000_000>;

/// The tool's input. The SDK parses the call's text into it and answers
/// `invalid_input` itself when it does not fit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Fewest likes.
    pub min_likes: MinLikes,
}

/// The tool's contract: what the host checks at load and shows in `harmonia tools`.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "posts_by_weekday",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Count the workspace's measured posts by the UTC weekday they were published on.",
        input_schema: object_schema(
            json!({"min_likes": MinLikes::schema("Fewest likes a post needs to count")}),
            &[],
        ),
        // Your own codes first; the runtime codes are added for you. A
        // workspace tool declares `authorization_failed`: the workspace
        // refuses a caller with no workspace bound, or another tenant's.
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT, AUTHORIZATION_FAILED]),
        scope: Scope::Workspace,
        deadline_ms: 10_000,
        skills: vec!["posting-schedule"],
    }
}

/// The UTC weekday (0 is Monday) of an RFC 3339 time.
pub fn utc_weekday(text: &str) -> Option<usize> {
    let time = parse_rfc3339(text)?;
    // 1970-01-01, day 0 of Unix time, was a Thursday (3 when Monday is 0).
    Some((time.unix_seconds.div_euclid(86_400) + 3).rem_euclid(7) as usize)
}

/// The tool's logic.
pub fn run(workspace: &impl Workspace, input: Input) -> Result<Output, ToolError> {
    let min_likes = input.min_likes.get() as u64;
    // A read failure becomes the contract's code (`from_read`): unauthorized
    // is `authorization_failed`, rejected `provider_request_rejected`,
    // timed out `tool_timeout`, the rest `dependency_unavailable`.
    let text = workspace.engagement().map_err(ToolError::from_read)?;
    let document: Value = serde_json::from_str(&text).map_err(|_| ToolError::dependency_unavailable())?;
    let posts = document["posts"].as_array().ok_or_else(ToolError::dependency_unavailable)?;
    let mut counts = [0u64; 7];
    for post in posts {
        if post["likes"].as_u64().unwrap_or(0) < min_likes {
            continue;
        }
        if let Some(weekday) = post["publishedAt"].as_str().and_then(utc_weekday) {
            counts[weekday] += 1;
        }
    }
    let by_weekday: Vec<Value> = WEEKDAYS
        .iter()
        .zip(counts)
        .map(|(weekday, posts)| json!({"weekday": weekday, "posts": posts}))
        .collect();
    let data = json!({"minLikes": min_likes, "counted": counts.iter().sum::<u64>(), "byWeekday": by_weekday});
    Ok(Output::new(data, vec![Evidence::dataset("harmonia_engagement")]))
}

// The export: `describe` answers with `descriptor()`, `invoke` parses the
// input into `Input` and runs `run` against the host's workspace.
harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::ReadError;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    const POSTS: &str = r#"{"posts": [
        {"postId": "p1", "text": "a", "likes": 10, "publishedAt": "2026-11-02T14:05:00Z"},
        {"postId": "p2", "text": "b", "likes": 50, "publishedAt": "2026-11-03T00:30:00+01:00"},
        {"postId": "p3", "text": "c", "likes": 5, "publishedAt": "2026-11-08T09:00:00Z"},
        {"postId": "p4", "text": "d", "likes": 99, "publishedAt": null}], "takeaways": null}"#;

    fn call(workspace: &FakeWorkspace, input: &str) -> Result<Output, ToolError> {
        harmonia_guest_sdk::invoke(input, |input| run(workspace, input))
    }

    fn with_posts() -> FakeWorkspace {
        FakeWorkspace { engagement: Some(Ok(POSTS.into())), ..FakeWorkspace::default() }
    }

    #[test]
    fn counts_by_utc_weekday() {
        let output = call(&with_posts(), "{}").unwrap();
        assert_eq!(output.data["counted"], 3);
        assert_eq!(output.data["byWeekday"][0], json!({"weekday": "Monday", "posts": 2}));
        assert_eq!(output.data["byWeekday"][6], json!({"weekday": "Sunday", "posts": 1}));
        let filtered = call(&with_posts(), r#"{"min_likes": 10}"#).unwrap();
        assert_eq!(filtered.data["counted"], 2);
    }

    #[test]
    fn maps_read_failures() {
        let failing = |failure| FakeWorkspace { failure: Some(failure), ..FakeWorkspace::default() };
        assert_eq!(call(&failing(ReadError::Unauthorized), "{}"), Err(ToolError::authorization_failed()));
        assert_eq!(call(&failing(ReadError::Rejected), "{}"), Err(ToolError::provider_request_rejected()));
        assert_eq!(call(&failing(ReadError::TimedOut), "{}"), Err(ToolError::tool_timeout()));
        assert_eq!(call(&with_posts(), "[]"), Err(ToolError::invalid_input()));
    }
}
