//! The workspace's measured posts, from the engagement document
//! `{"posts": [{postId, text, likes, publishedAt}], "takeaways": ...}`.

use crate::time::{UtcTime, parse_rfc3339};
use serde_json::{Map, Value};

/// A post with measured likes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasuredPost {
    /// Post id.
    pub post_id: String,
    /// Post text.
    pub text: String,
    /// Measured likes.
    pub likes: u64,
    /// `publishedAt` as given (may be absent or not RFC 3339).
    pub published_at: Option<String>,
    /// `publishedAt` parsed, when it is RFC 3339.
    pub published: Option<UtcTime>,
}

/// The engagement document.
#[derive(Clone, Debug, PartialEq)]
pub struct Engagement {
    /// Posts with integer likes; posts without are not measured and left out.
    pub posts: Vec<MeasuredPost>,
    /// The takeaways object, or null.
    pub takeaways: Value,
}

fn post(value: &Map<String, Value>) -> Option<Option<MeasuredPost>> {
    let post_id = value.get("postId")?.as_str().filter(|id| !id.is_empty())?.to_owned();
    let likes = match value.get("likes") {
        None | Some(Value::Null) => return Some(None),
        Some(likes) => likes.as_u64()?,
    };
    let text = match value.get("text") {
        None | Some(Value::Null) => String::new(),
        Some(text) => text.as_str()?.to_owned(),
    };
    let published_at = match value.get("publishedAt") {
        None | Some(Value::Null) => None,
        Some(at) => Some(at.as_str()?.to_owned()),
    };
    let published = published_at.as_deref().and_then(parse_rfc3339);
    Some(Some(MeasuredPost { post_id, text, likes, published_at, published }))
}

/// Parse the engagement document; `None` when it is malformed (a source
/// failure, reported as `dependency_unavailable`).
pub fn parse_engagement(text: &str) -> Option<Engagement> {
    let value: Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    let posts = object.get("posts")?.as_array()?;
    let mut measured = Vec::with_capacity(posts.len());
    for item in posts {
        if let Some(post) = post(item.as_object()?)? {
            measured.push(post);
        }
    }
    let takeaways = match object.get("takeaways") {
        None => Value::Null,
        Some(takeaways @ (Value::Null | Value::Object(_))) => takeaways.clone(),
        Some(_) => return None,
    };
    Some(Engagement { posts: measured, takeaways })
}

/// Order by likes (most first), then most recent first (posts without a
/// valid time last), then by post id so the order is total.
pub fn by_likes_then_recency(a: &MeasuredPost, b: &MeasuredPost) -> std::cmp::Ordering {
    b.likes.cmp(&a.likes).then_with(|| b.published.cmp(&a.published)).then_with(|| a.post_id.cmp(&b.post_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_measured_posts_only() {
        let engagement = parse_engagement(
            r#"{"posts": [{"postId": "a", "text": "x", "likes": 3, "publishedAt": "2026-11-02T14:05:00Z"},
                          {"postId": "b", "text": "y", "likes": null},
                          {"postId": "c", "text": "z"}],
                "takeaways": {"k": 1}}"#,
        )
        .unwrap();
        assert_eq!(engagement.posts.len(), 1);
        assert_eq!(engagement.posts[0].published.unwrap().hour(), 14);
        assert_eq!(engagement.takeaways["k"], 1);
    }

    #[test]
    fn malformed_documents_are_refused() {
        for text in [
            "",
            "[]",
            "{}",
            r#"{"posts": {}}"#,
            r#"{"posts": [1]}"#,
            r#"{"posts": [{"likes": 1}]}"#,
            r#"{"posts": [{"postId": "a", "likes": -1}]}"#,
            r#"{"posts": [{"postId": "a", "likes": "1"}]}"#,
            r#"{"posts": [], "takeaways": 3}"#,
        ] {
            assert_eq!(parse_engagement(text), None, "{text}");
        }
    }
}
