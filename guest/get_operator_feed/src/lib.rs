//! `get_operator_feed`: pending items, job health, goals and recent posts.
//!
//! No input (`{}`). Data `{pendingItems, jobHealth: {active, failed},
//! goals, recentPublished: [{postId, publishedAt}], freshness: {state,
//! readAt}}`. `state` is `current` when the workspace was updated within 15
//! minutes of the read (either side), `stale` otherwise, and `unavailable`
//! when the source gives no valid update time. Evidence: `harmonia_feed`.

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INVALID_INPUT};
use harmonia_guest_sdk::{Descriptor, Evidence, FeedRead, NoInput, Output, Scope, ToolError, Workspace};
use harmonia_tool_common::time::parse_rfc3339;
use serde_json::{Map, Value, json};

/// Most seconds between update and read for the feed to be `current`.
pub const CURRENT_WITHIN_SECONDS: i64 = 15 * 60;

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "get_operator_feed",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Read the operator feed: pending items, job health, goals and recently published posts, with freshness.",
        input_schema: NoInput::schema(),
        errors: Descriptor::errors_with_runtime(&[INVALID_INPUT, AUTHORIZATION_FAILED]),
        scope: Scope::Workspace,
        deadline_ms: 30_000,
        skills: vec!["signal-watch", "posting-schedule"],
    }
}

/// `current`, `stale` or `unavailable`.
pub fn freshness_state(read: &FeedRead) -> &'static str {
    let updated = read.updated_at.as_deref().and_then(parse_rfc3339);
    match (updated, parse_rfc3339(&read.read_at)) {
        (Some(updated), Some(read_at))
            if (read_at.unix_seconds - updated.unix_seconds).abs() <= CURRENT_WITHIN_SECONDS =>
        {
            "current"
        }
        (Some(_), Some(_)) => "stale",
        _ => "unavailable",
    }
}

fn list(feed: &Map<String, Value>, key: &str) -> Option<Vec<Value>> {
    match feed.get(key) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => Some(items.clone()),
        Some(_) => None,
    }
}

fn count(health: &Map<String, Value>, key: &str) -> Option<u64> {
    match health.get(key) {
        None | Some(Value::Null) => Some(0),
        Some(value) => value.as_u64(),
    }
}

/// The data object from the feed document; `None` when it is malformed.
fn feed_data(read: &FeedRead) -> Option<Value> {
    let document: Value = serde_json::from_str(&read.document).ok()?;
    let feed = document.as_object()?;
    let empty = Map::new();
    let health = match feed.get("jobHealth") {
        None | Some(Value::Null) => &empty,
        Some(value) => value.as_object()?,
    };
    let recent: Vec<Value> = list(feed, "recentPublished")?
        .iter()
        .map(|entry| {
            let entry = entry.as_object()?;
            let post_id = entry.get("postId")?.as_str()?;
            let published_at = entry.get("publishedAt").cloned().unwrap_or(Value::Null);
            (published_at.is_null() || published_at.is_string())
                .then(|| json!({"postId": post_id, "publishedAt": published_at}))
        })
        .collect::<Option<_>>()?;
    Some(json!({
        "pendingItems": list(feed, "pendingItems")?,
        "jobHealth": {"active": count(health, "active")?, "failed": count(health, "failed")?},
        "goals": list(feed, "goals")?,
        "recentPublished": recent,
        "freshness": {"state": freshness_state(read), "readAt": read.read_at},
    }))
}

/// Run the tool on `input` against `workspace`.
pub fn run(workspace: &impl Workspace, _input: NoInput) -> Result<Output, ToolError> {
    let read = workspace.feed().map_err(ToolError::from_read)?;
    let data = feed_data(&read).ok_or_else(ToolError::dependency_unavailable)?;
    Ok(Output::new(data, vec![Evidence::dataset("harmonia_feed")]))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::ReadError;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    fn read(updated_at: Option<&str>, read_at: &str) -> FeedRead {
        let document = json!({"pendingItems": [{"id": "d1"}], "jobHealth": {"active": 2, "failed": 1}, "goals": [],
            "recentPublished": [{"postId": "p1", "publishedAt": "2026-11-20T19:00:00Z"}]});
        FeedRead {
            document: document.to_string(),
            updated_at: updated_at.map(str::to_owned),
            read_at: read_at.to_owned(),
        }
    }

    #[test]
    fn judges_freshness_against_the_read() {
        let at = "2026-11-30T09:15:00Z";
        assert_eq!(freshness_state(&read(Some("2026-11-30T09:00:00Z"), at)), "current");
        assert_eq!(freshness_state(&read(Some("2026-11-30T08:59:59Z"), at)), "stale");
        assert_eq!(freshness_state(&read(Some("2026-11-30T10:00:00+01:00"), at)), "current");
        assert_eq!(freshness_state(&read(None, at)), "unavailable");
        assert_eq!(freshness_state(&read(Some("yesterday"), at)), "unavailable");
    }

    #[test]
    fn returns_the_feed_with_freshness() {
        let workspace = FakeWorkspace {
            feed: Some(Ok(read(Some("2026-11-30T09:00:00Z"), "2026-11-30T09:05:00Z"))),
            ..Default::default()
        };
        let output = run(&workspace, NoInput {}).unwrap();
        assert_eq!(
            Value::Object(output.data),
            json!({"pendingItems": [{"id": "d1"}], "jobHealth": {"active": 2, "failed": 1}, "goals": [],
                "recentPublished": [{"postId": "p1", "publishedAt": "2026-11-20T19:00:00Z"}],
                "freshness": {"state": "current", "readAt": "2026-11-30T09:05:00Z"}})
        );
        assert_eq!(output.evidence, vec![Evidence::dataset("harmonia_feed")]);
    }

    #[test]
    fn malformed_feeds_and_failures_map_to_contract_codes() {
        for document in [
            "nope",
            "[]",
            r#"{"pendingItems": {}}"#,
            r#"{"jobHealth": {"active": -1}}"#,
            r#"{"recentPublished": [{"x": 1}]}"#,
        ] {
            let feed = FeedRead {
                document: document.into(),
                updated_at: None,
                read_at: "2026-11-30T09:05:00Z".into(),
            };
            let workspace = FakeWorkspace { feed: Some(Ok(feed)), ..Default::default() };
            assert_eq!(run(&workspace, NoInput {}), Err(ToolError::dependency_unavailable()), "{document}");
        }
        let workspace = FakeWorkspace { failure: Some(ReadError::Unauthorized), ..Default::default() };
        assert_eq!(run(&workspace, NoInput {}), Err(ToolError::authorization_failed()));
    }
}
