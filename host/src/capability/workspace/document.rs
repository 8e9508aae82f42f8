//! The workspace JSON document: what `harmonia workspace import` loads and
//! what the mock source serves.
//!
//! ```json
//! {"workspaceId": "ws_demo", "updatedAt": "2026-11-30T09:00:00Z",
//!  "posts": [{"postId": "p1", "text": "...", "likes": 120, "publishedAt": "2026-11-02T14:05:00Z"}],
//!  "takeaways": {"topPostId": "p1", "pattern": "..."},
//!  "feed": {"pendingItems": [], "jobHealth": {"active": 1, "failed": 0}, "goals": [],
//!           "recentPublished": [{"postId": "p1", "publishedAt": "..."}]},
//!  "jobs": [{"id": "job-1", "...": "the stored job document, with any fields"}]}
//! ```
//!
//! Parsing is strict and reports the JSON path of the first error
//! (`$.posts[3].likes: must be a non-negative integer or null`). `likes` may
//! be absent or null for unmeasured posts; `publishedAt` and `updatedAt`
//! must be RFC 3339 when present. Job documents keep any fields; only `id`
//! is required.

use harmonia_tool_common::time::parse_rfc3339;
use serde_json::{Map, Value, json};

/// A post.
#[derive(Clone, Debug, PartialEq)]
pub struct Post {
    /// Unique id within the workspace.
    pub post_id: String,
    /// The post's text.
    pub text: String,
    /// Measured likes; `None` when unmeasured.
    pub likes: Option<u64>,
    /// RFC 3339 publication time, when known.
    pub published_at: Option<String>,
}

/// A whole workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkspaceDocument {
    /// The workspace id.
    pub workspace_id: String,
    /// RFC 3339 time of the last update, when known.
    pub updated_at: Option<String>,
    /// Every post, measured or not, in document order.
    pub posts: Vec<Post>,
    /// Takeaways object (or null).
    pub takeaways: Value,
    /// The operator feed object.
    pub feed: Map<String, Value>,
    /// Stored job documents, each with a unique `id`.
    pub jobs: Vec<Map<String, Value>>,
}

/// The first error in a document, with its JSON path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {rule}")]
pub struct DocumentError {
    /// JSON path such as `$.posts[3].likes`.
    pub path: String,
    /// The rule broken.
    pub rule: String,
}

fn fail<T>(path: &str, rule: &str) -> Result<T, DocumentError> {
    Err(DocumentError { path: path.to_owned(), rule: rule.to_owned() })
}

fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, DocumentError> {
    value.as_object().map_or_else(|| fail(path, "must be an object"), Ok)
}

fn only_keys(map: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), DocumentError> {
    match map.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => fail(&format!("{path}.{key}"), "is not a known field"),
        None => Ok(()),
    }
}

fn identifier(value: Option<&Value>, path: &str) -> Result<String, DocumentError> {
    match value {
        Some(Value::String(text)) if !text.trim().is_empty() && text.chars().count() <= 200 => {
            Ok(text.clone())
        }
        Some(_) => fail(path, "must be a non-empty string of at most 200 characters"),
        None => fail(path, "is required"),
    }
}

fn optional_time(value: Option<&Value>, path: &str) -> Result<Option<String>, DocumentError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if parse_rfc3339(text).is_some() => Ok(Some(text.clone())),
        Some(_) => fail(path, "must be an RFC 3339 time or null"),
    }
}

fn list<'v>(value: Option<&'v Value>, path: &str) -> Result<&'v [Value], DocumentError> {
    match value {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => fail(path, "must be a list"),
    }
}

fn count(value: Option<&Value>, path: &str) -> Result<u64, DocumentError> {
    match value {
        Some(Value::Number(number)) if number.is_u64() => Ok(number.as_u64().unwrap_or_default()),
        _ => fail(path, "must be a non-negative integer"),
    }
}

impl WorkspaceDocument {
    /// Parse JSON text.
    pub fn parse(text: &str) -> Result<Self, DocumentError> {
        let value: Value = serde_json::from_str(text).map_err(|error| DocumentError {
            path: "$".into(),
            rule: format!("is not JSON (line {}, column {})", error.line(), error.column()),
        })?;
        Self::from_value(&value)
    }

    /// Parse a JSON value.
    pub fn from_value(value: &Value) -> Result<Self, DocumentError> {
        let root = object(value, "$")?;
        only_keys(root, &["workspaceId", "updatedAt", "posts", "takeaways", "feed", "jobs"], "$")?;
        let workspace_id = identifier(root.get("workspaceId"), "$.workspaceId")?;
        let updated_at = optional_time(root.get("updatedAt"), "$.updatedAt")?;
        let mut posts = Vec::new();
        for (index, item) in list(root.get("posts"), "$.posts")?.iter().enumerate() {
            let path = format!("$.posts[{index}]");
            let post = parse_post(item, &path)?;
            if posts.iter().any(|earlier: &Post| earlier.post_id == post.post_id) {
                return fail(&format!("{path}.postId"), "repeats an earlier postId");
            }
            posts.push(post);
        }
        let takeaways = match root.get("takeaways") {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Object(map)) => Value::Object(map.clone()),
            Some(_) => return fail("$.takeaways", "must be an object or null"),
        };
        let feed = parse_feed(root.get("feed"))?;
        let mut jobs: Vec<Map<String, Value>> = Vec::new();
        for (index, item) in list(root.get("jobs"), "$.jobs")?.iter().enumerate() {
            let path = format!("$.jobs[{index}]");
            let job = object(item, &path)?;
            let id = identifier(job.get("id"), &format!("{path}.id"))?;
            if jobs.iter().any(|earlier| earlier.get("id").and_then(Value::as_str) == Some(&id)) {
                return fail(&format!("{path}.id"), "repeats an earlier job id");
            }
            jobs.push(job.clone());
        }
        Ok(Self { workspace_id, updated_at, posts, takeaways, feed, jobs })
    }

    /// The measured posts (likes known), in document order.
    pub fn measured_posts(&self) -> impl Iterator<Item = &Post> {
        self.posts.iter().filter(|post| post.likes.is_some())
    }

    /// The engagement document served to tools.
    pub fn engagement_json(&self) -> String {
        engagement_json(self.measured_posts(), &self.takeaways)
    }

    /// The stored job with this id.
    pub fn job(&self, id: &str) -> Option<&Map<String, Value>> {
        self.jobs.iter().find(|job| job.get("id").and_then(Value::as_str) == Some(id))
    }
}

/// `{"posts": [...], "takeaways": ...}` from measured posts.
pub fn engagement_json<'p>(posts: impl Iterator<Item = &'p Post>, takeaways: &Value) -> String {
    let posts: Vec<Value> = posts
        .map(|post| {
            json!({"postId": post.post_id, "text": post.text, "likes": post.likes, "publishedAt": post.published_at})
        })
        .collect();
    json!({"posts": posts, "takeaways": takeaways}).to_string()
}

fn parse_post(value: &Value, path: &str) -> Result<Post, DocumentError> {
    let post = object(value, path)?;
    only_keys(post, &["postId", "text", "likes", "publishedAt"], path)?;
    let text = match post.get("text") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(_) => return fail(&format!("{path}.text"), "must be a string"),
    };
    let likes = match post.get("likes") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) if number.is_u64() => number.as_u64(),
        Some(_) => return fail(&format!("{path}.likes"), "must be a non-negative integer or null"),
    };
    Ok(Post {
        post_id: identifier(post.get("postId"), &format!("{path}.postId"))?,
        text,
        likes,
        published_at: optional_time(post.get("publishedAt"), &format!("{path}.publishedAt"))?,
    })
}

fn parse_feed(value: Option<&Value>) -> Result<Map<String, Value>, DocumentError> {
    let empty = Value::Object(Map::new());
    let feed = object(value.unwrap_or(&empty), "$.feed")?;
    only_keys(feed, &["pendingItems", "jobHealth", "goals", "recentPublished"], "$.feed")?;
    let pending = list(feed.get("pendingItems"), "$.feed.pendingItems")?;
    let goals = list(feed.get("goals"), "$.feed.goals")?;
    let health = match feed.get("jobHealth") {
        None => json!({"active": 0, "failed": 0}),
        Some(value) => {
            let health = object(value, "$.feed.jobHealth")?;
            only_keys(health, &["active", "failed"], "$.feed.jobHealth")?;
            let active = count(health.get("active"), "$.feed.jobHealth.active")?;
            let failed = count(health.get("failed"), "$.feed.jobHealth.failed")?;
            json!({"active": active, "failed": failed})
        }
    };
    let mut recent = Vec::new();
    for (index, item) in list(feed.get("recentPublished"), "$.feed.recentPublished")?.iter().enumerate() {
        let path = format!("$.feed.recentPublished[{index}]");
        let entry = object(item, &path)?;
        only_keys(entry, &["postId", "publishedAt"], &path)?;
        let post_id = identifier(entry.get("postId"), &format!("{path}.postId"))?;
        let published_at = optional_time(entry.get("publishedAt"), &format!("{path}.publishedAt"))?;
        recent.push(json!({"postId": post_id, "publishedAt": published_at}));
    }
    let mut normalised = Map::new();
    normalised.insert("pendingItems".into(), Value::Array(pending.to_vec()));
    normalised.insert("jobHealth".into(), health);
    normalised.insert("goals".into(), Value::Array(goals.to_vec()));
    normalised.insert("recentPublished".into(), Value::Array(recent));
    Ok(normalised)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"workspaceId": "ws_demo", "updatedAt": "2026-11-30T09:00:00Z",
        "posts": [{"postId": "p1", "text": "a", "likes": 120, "publishedAt": "2026-11-02T14:05:00Z"},
                  {"postId": "p2", "text": "b", "likes": null},
                  {"postId": "p3", "text": "c"}],
        "takeaways": {"topPostId": "p1", "pattern": "x"},
        "feed": {"pendingItems": [{"id": "d1"}], "jobHealth": {"active": 1, "failed": 0}, "goals": [],
                 "recentPublished": [{"postId": "p1", "publishedAt": "2026-11-02T14:05:00Z"}]},
        "jobs": [{"id": "job-1", "title": "t", "draft": "secret"}]}"#;

    #[test]
    fn parses_the_documented_shape() {
        let document = WorkspaceDocument::parse(GOOD).unwrap();
        assert_eq!(document.workspace_id, "ws_demo");
        assert_eq!(document.measured_posts().count(), 1);
        assert_eq!(document.job("job-1").unwrap()["draft"], "secret");
        let engagement: Value = serde_json::from_str(&document.engagement_json()).unwrap();
        assert_eq!(engagement["posts"].as_array().unwrap().len(), 1);
        assert_eq!(engagement["takeaways"]["topPostId"], "p1");
    }

    #[test]
    fn reports_the_path_of_the_first_error() {
        let cases = [
            (r#"{"posts": []}"#, "$.workspaceId"),
            (r#"{"workspaceId": "w", "posts": [{"postId": "p", "likes": -1}]}"#, "$.posts[0].likes"),
            (r#"{"workspaceId": "w", "posts": [{"postId": "p", "likes": 1.5}]}"#, "$.posts[0].likes"),
            (
                r#"{"workspaceId": "w", "posts": [{"postId": "p", "publishedAt": "yesterday"}]}"#,
                "$.posts[0].publishedAt",
            ),
            (r#"{"workspaceId": "w", "posts": [{"postId": "p"}, {"postId": "p"}]}"#, "$.posts[1].postId"),
            (r#"{"workspaceId": "w", "jobs": [{"title": "no id"}]}"#, "$.jobs[0].id"),
            (r#"{"workspaceId": "w", "feed": {"jobHealth": {"active": "1"}}}"#, "$.feed.jobHealth.active"),
            (r#"{"workspaceId": "w", "extra": 1}"#, "$.extra"),
            (r#"{"workspaceId": "w", "updatedAt": "2026-13-01T00:00:00Z"}"#, "$.updatedAt"),
            ("[1]", "$"),
            ("{", "$"),
        ];
        for (text, path) in cases {
            assert_eq!(WorkspaceDocument::parse(text).unwrap_err().path, path, "{text}");
        }
    }
}
