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
//! Parsing is strict and reports the JSON path of the first error, in
//! document order (`$.posts[3].likes: must be a non-negative integer or
//! null`). `likes` may be absent or null for unmeasured posts and at most
//! [`MAX_LIKES`]; ids are 1 to 200 characters with no whitespace at either
//! end, and job ids are not `.` or `..`; `publishedAt` and `updatedAt` must
//! be RFC 3339 when present. Job documents keep any fields; only `id` is
//! required. No value nests more than [`MAX_DEPTH`] arrays or objects.
//!
//! The document is read as a stream ([`parse_stream`]): each post and job
//! is checked and handed to a [`DocumentSink`] as soon as it is read, so
//! an importer never holds the whole document; [`WorkspaceDocument`] is the
//! sink that keeps everything in memory (fixtures, tests, small documents).

use crate::time::parse_rfc3339;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

/// Largest `likes` accepted: the largest integer the store holds.
pub const MAX_LIKES: u64 = i64::MAX as u64;

/// Deepest nesting of arrays and objects inside one post, job, feed or
/// takeaways value.
pub const MAX_DEPTH: usize = 64;

/// Job ids no source is asked for: a URL library drops them as path
/// segments (the request would go to the collection), and import refuses
/// them.
pub fn is_reserved_job_id(id: &str) -> bool {
    matches!(id, "." | "..")
}

const ROOT_KEYS: [&str; 6] = ["workspaceId", "updatedAt", "posts", "takeaways", "feed", "jobs"];

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

/// Everything in a document but its posts and jobs.
#[derive(Clone, Debug, PartialEq)]
pub struct DocumentHead {
    /// The workspace id.
    pub workspace_id: String,
    /// RFC 3339 time of the last update, when known.
    pub updated_at: Option<String>,
    /// Takeaways object (or null).
    pub takeaways: Value,
    /// The operator feed object, normalised.
    pub feed: Map<String, Value>,
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

impl DocumentError {
    /// The post at `index` repeats an earlier post's id.
    pub fn repeated_post_id(index: usize) -> Self {
        Self { path: format!("$.posts[{index}].postId"), rule: "repeats an earlier postId".into() }
    }

    /// The job at `index` repeats an earlier job's id.
    pub fn repeated_job_id(index: usize) -> Self {
        Self { path: format!("$.jobs[{index}].id"), rule: "repeats an earlier job id".into() }
    }
}

/// Where the posts and jobs of a document go as they are read, in document
/// order. A sink decides uniqueness (ids repeat across the stream).
pub trait DocumentSink {
    /// What stops the reading: a [`DocumentError`] or the sink's own.
    type Error: From<DocumentError>;

    /// The post at `index` in `$.posts`, checked.
    fn post(&mut self, index: usize, post: Post) -> Result<(), Self::Error>;

    /// The job at `index` in `$.jobs`, checked, with its `id`.
    fn job(&mut self, index: usize, id: String, job: Map<String, Value>) -> Result<(), Self::Error>;
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
            if text.trim() != text {
                return fail(path, "must not start or end with whitespace");
            }
            Ok(text.clone())
        }
        Some(_) => fail(path, "must be a non-empty string of at most 200 characters"),
        None => fail(path, "is required"),
    }
}

fn job_id(value: Option<&Value>, path: &str) -> Result<String, DocumentError> {
    let id = identifier(value, path)?;
    if is_reserved_job_id(&id) {
        return fail(path, "must not be `.` or `..`");
    }
    Ok(id)
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

/// Keeps a whole document in memory; ids are checked for repeats with a
/// hash set (linear in the number of records).
#[derive(Default)]
struct Collect {
    posts: Vec<Post>,
    post_ids: HashSet<String>,
    jobs: Vec<Map<String, Value>>,
    job_ids: HashSet<String>,
}

impl DocumentSink for Collect {
    type Error = DocumentError;

    fn post(&mut self, index: usize, post: Post) -> Result<(), DocumentError> {
        if !self.post_ids.insert(post.post_id.clone()) {
            return Err(DocumentError::repeated_post_id(index));
        }
        self.posts.push(post);
        Ok(())
    }

    fn job(&mut self, index: usize, id: String, job: Map<String, Value>) -> Result<(), DocumentError> {
        if !self.job_ids.insert(id) {
            return Err(DocumentError::repeated_job_id(index));
        }
        self.jobs.push(job);
        Ok(())
    }
}

impl WorkspaceDocument {
    /// Parse JSON text.
    pub fn parse(text: &str) -> Result<Self, DocumentError> {
        let mut collect = Collect::default();
        let head = parse_stream(serde_json::de::StrRead::new(text), &mut collect)?;
        Ok(Self::assemble(head, collect))
    }

    /// Parse a JSON value.
    pub fn from_value(value: &Value) -> Result<Self, DocumentError> {
        let mut collect = Collect::default();
        let head = match read_document(value, &mut collect) {
            Ok(head) => head,
            Err(Stop::Sink(error)) => return Err(error),
            Err(Stop::Syntax(error)) => return fail("$", &format!("cannot be read: {error}")),
        };
        Ok(Self::assemble(head, collect))
    }

    fn assemble(head: DocumentHead, collect: Collect) -> Self {
        let DocumentHead { workspace_id, updated_at, takeaways, feed } = head;
        Self { workspace_id, updated_at, posts: collect.posts, takeaways, feed, jobs: collect.jobs }
    }

    /// Everything but the posts and jobs.
    pub fn head(&self) -> DocumentHead {
        DocumentHead {
            workspace_id: self.workspace_id.clone(),
            updated_at: self.updated_at.clone(),
            takeaways: self.takeaways.clone(),
            feed: self.feed.clone(),
        }
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
        Some(Value::Number(number)) if number.is_u64() => match number.as_u64() {
            Some(likes) if likes <= MAX_LIKES => Some(likes),
            _ => {
                return fail(
                    &format!("{path}.likes"),
                    &format!("must be at most {MAX_LIKES}, the largest count the store holds"),
                );
            }
        },
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

/// Read a document from JSON text (`StrRead`, `SliceRead`) or a reader
/// (`IoRead`, buffered by the caller), handing each post and job to `sink`
/// as it is read. Memory holds one record at a time, plus the feed and
/// takeaways.
pub fn parse_stream<'de, R, S>(read: R, sink: &mut S) -> Result<DocumentHead, S::Error>
where
    R: serde_json::de::Read<'de>,
    S: DocumentSink,
{
    let mut deserializer = serde_json::Deserializer::new(read);
    let head = match read_document(&mut deserializer, sink) {
        Ok(head) => head,
        Err(Stop::Sink(error)) => return Err(error),
        Err(Stop::Syntax(error)) => return Err(not_json(&error).into()),
    };
    deserializer.end().map_err(|error| not_json(&error))?;
    Ok(head)
}

fn not_json(error: &serde_json::Error) -> DocumentError {
    let rule = match error.classify() {
        serde_json::error::Category::Io => format!("cannot be read: {error}"),
        _ => format!("is not JSON (line {}, column {})", error.line(), error.column()),
    };
    DocumentError { path: "$".into(), rule }
}

/// Why reading stopped: the sink or a rule said so, or the input is not
/// JSON.
enum Stop<S, D> {
    Sink(S),
    Syntax(D),
}

/// The reading's state: the sink, and the first failure (a visitor that
/// fails records it here and aborts the deserializer with a placeholder).
struct Reading<'s, S: DocumentSink> {
    sink: &'s mut S,
    failure: Option<S::Error>,
    too_deep: Cell<bool>,
}

impl<S: DocumentSink> Reading<'_, S> {
    fn stop<E: de::Error>(&mut self, error: S::Error) -> E {
        self.failure = Some(error);
        E::custom("the workspace document broke a rule")
    }

    /// One free-form value at `path`, at most [`MAX_DEPTH`] deep.
    fn value<'de, A: MapAccess<'de>>(&mut self, map: &mut A, path: &str) -> Result<Value, A::Error> {
        let result = map.next_value_seed(Bounded { depth: MAX_DEPTH, too_deep: &self.too_deep });
        result.map_err(|error| self.deep_or(error, path))
    }

    fn deep_or<E: de::Error>(&mut self, error: E, path: &str) -> E {
        if self.too_deep.replace(false) {
            let rule = format!("is nested more than {MAX_DEPTH} arrays or objects deep");
            return self.stop(DocumentError { path: path.into(), rule }.into());
        }
        error
    }

    fn check<T, E: de::Error>(&mut self, result: Result<T, DocumentError>) -> Result<T, E> {
        result.map_err(|error| self.stop(error.into()))
    }
}

fn read_document<'de, D, S>(deserializer: D, sink: &mut S) -> Result<DocumentHead, Stop<S::Error, D::Error>>
where
    D: Deserializer<'de>,
    S: DocumentSink,
{
    let mut reading = Reading { sink, failure: None, too_deep: Cell::new(false) };
    match deserializer.deserialize_any(Root { reading: &mut reading }) {
        Ok(head) => Ok(head),
        Err(error) => Err(reading.failure.take().map_or(Stop::Syntax(error), Stop::Sink)),
    }
}

/// Implements the visits of every JSON type but the expected one: each
/// records `$rule` at the visitor's path and stops.
macro_rules! refuse_other_types {
    // Every scalar a document object may not be.
    () => {
        refuse_other_types!(
            visit_bool(bool),
            visit_i64(i64),
            visit_u64(u64),
            visit_f64(f64),
            visit_str(&str),
            visit_unit()
        );
    };
    ($($method:ident($($arg:ty)?)),*) => {
        $(
            fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
                let error = DocumentError { path: self.path().into(), rule: self.rule().into() };
                Err(self.into_reading().stop(error.into()))
            }
        )*
    };
}

struct Root<'r, 's, S: DocumentSink> {
    reading: &'r mut Reading<'s, S>,
}

impl<'r, 's, S: DocumentSink> Root<'r, 's, S> {
    fn path(&self) -> &'static str {
        "$"
    }
    fn rule(&self) -> &'static str {
        "must be an object"
    }
    fn into_reading(self) -> &'r mut Reading<'s, S> {
        self.reading
    }
}

impl<'de, S: DocumentSink> Visitor<'de> for Root<'_, '_, S> {
    type Value = DocumentHead;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a workspace document object")
    }

    refuse_other_types!();

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<DocumentHead, A::Error> {
        self.visit_unit()
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DocumentHead, A::Error> {
        let reading = self.reading;
        let mut seen: Vec<String> = Vec::new();
        let (mut workspace_id, mut updated_at) = (None, None);
        let (mut takeaways, mut feed) = (Value::Null, None);
        while let Some(key) = map.next_key::<String>()? {
            let path = format!("$.{key}");
            if !ROOT_KEYS.contains(&key.as_str()) {
                return reading.check(fail(&path, "is not a known field"));
            }
            if seen.contains(&key) {
                return reading.check(fail(&path, "appears more than once"));
            }
            match key.as_str() {
                "workspaceId" => {
                    let value = reading.value(&mut map, &path)?;
                    workspace_id = Some(reading.check(identifier(Some(&value), &path))?);
                }
                "updatedAt" => {
                    let value = reading.value(&mut map, &path)?;
                    updated_at = reading.check(optional_time(Some(&value), &path))?;
                }
                "takeaways" => {
                    takeaways = match reading.value(&mut map, &path)? {
                        value @ (Value::Null | Value::Object(_)) => value,
                        _ => return reading.check(fail(&path, "must be an object or null")),
                    };
                }
                "feed" => {
                    let value = reading.value(&mut map, &path)?;
                    feed = Some(reading.check(parse_feed(Some(&value)))?);
                }
                "posts" => {
                    map.next_value_seed(Records { reading: &mut *reading, kind: RecordKind::Posts })?
                }
                _ => map.next_value_seed(Records { reading: &mut *reading, kind: RecordKind::Jobs })?,
            }
            seen.push(key);
        }
        let workspace_id =
            reading.check(identifier(workspace_id.map(Value::String).as_ref(), "$.workspaceId"))?;
        let feed = match feed {
            Some(feed) => feed,
            None => reading.check(parse_feed(None))?,
        };
        Ok(DocumentHead { workspace_id, updated_at, takeaways, feed })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RecordKind {
    Posts,
    Jobs,
}

/// `$.posts` or `$.jobs`: a list read one record at a time.
struct Records<'r, 's, S: DocumentSink> {
    reading: &'r mut Reading<'s, S>,
    kind: RecordKind,
}

impl<'r, 's, S: DocumentSink> Records<'r, 's, S> {
    fn path(&self) -> &'static str {
        match self.kind {
            RecordKind::Posts => "$.posts",
            RecordKind::Jobs => "$.jobs",
        }
    }
    fn rule(&self) -> &'static str {
        "must be a list"
    }
    fn into_reading(self) -> &'r mut Reading<'s, S> {
        self.reading
    }
}

impl<'de, S: DocumentSink> DeserializeSeed<'de> for Records<'_, '_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, S: DocumentSink> Visitor<'de> for Records<'_, '_, S> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list")
    }

    refuse_other_types!();

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let reading = self.reading;
        let mut index = 0;
        loop {
            let path = match self.kind {
                RecordKind::Posts => format!("$.posts[{index}]"),
                RecordKind::Jobs => format!("$.jobs[{index}]"),
            };
            let next = seq.next_element_seed(Bounded { depth: MAX_DEPTH, too_deep: &reading.too_deep });
            let Some(value) = next.map_err(|error| reading.deep_or(error, &path))? else {
                return Ok(());
            };
            let delivered = match self.kind {
                RecordKind::Posts => match parse_post(&value, &path) {
                    Ok(post) => reading.sink.post(index, post),
                    Err(error) => Err(error.into()),
                },
                RecordKind::Jobs => match job_record(value, &path) {
                    Ok((id, job)) => reading.sink.job(index, id, job),
                    Err(error) => Err(error.into()),
                },
            };
            if let Err(error) = delivered {
                return Err(reading.stop(error));
            }
            index += 1;
        }
    }
}

fn job_record(value: Value, path: &str) -> Result<(String, Map<String, Value>), DocumentError> {
    let Value::Object(job) = value else {
        return fail(path, "must be an object");
    };
    let id = job_id(job.get("id"), &format!("{path}.id"))?;
    Ok((id, job))
}

/// Any JSON value, refused beyond `depth` nested arrays or objects.
struct Bounded<'f> {
    depth: usize,
    too_deep: &'f Cell<bool>,
}

impl Bounded<'_> {
    fn nested<E: de::Error>(&self) -> Result<Self, E> {
        match self.depth.checked_sub(1) {
            Some(depth) => Ok(Bounded { depth, too_deep: self.too_deep }),
            None => {
                self.too_deep.set(true);
                Err(E::custom("nested too deeply"))
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.nested()?;
        let mut items = Vec::new();
        while let Some(item) =
            seq.next_element_seed(Bounded { depth: inner.depth, too_deep: inner.too_deep })?
        {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.nested()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Bounded { depth: inner.depth, too_deep: inner.too_deep })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
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
            (r#"{"workspaceId": "w", "posts": {}}"#, "$.posts"),
            (r#"{"workspaceId": "w", "jobs": null}"#, "$.jobs"),
            (r#"{"workspaceId": "w", "jobs": [{"id": "j"}, {"id": "j"}]}"#, "$.jobs[1].id"),
            (r#"{"workspaceId": "w", "takeaways": [1]}"#, "$.takeaways"),
            (r#"{"workspaceId": "w", "feed": null}"#, "$.feed"),
            (r#"{"workspaceId": "w", "workspaceId": "v"}"#, "$.workspaceId"),
            (r#"{"workspaceId": "w"} trailing"#, "$"),
            // Errors come in document order.
            (r#"{"posts": [{"postId": 1}], "workspaceId": 2}"#, "$.posts[0].postId"),
        ];
        for (text, path) in cases {
            assert_eq!(WorkspaceDocument::parse(text).unwrap_err().path, path, "{text}");
            // A value cannot hold a repeated key: that case is text only.
            if let Ok(value) = serde_json::from_str::<Value>(text)
                && !text.contains(r#""workspaceId": "v""#)
            {
                assert_eq!(WorkspaceDocument::from_value(&value).unwrap_err().path, path, "{text}");
            }
        }
    }

    fn rule_at(text: &str) -> (String, String) {
        let error = WorkspaceDocument::parse(text).unwrap_err();
        (error.path, error.rule)
    }

    #[test]
    fn likes_above_the_stored_range_are_refused_not_clamped() {
        let largest =
            format!(r#"{{"workspaceId": "w", "posts": [{{"postId": "p", "likes": {MAX_LIKES}}}]}}"#);
        assert_eq!(WorkspaceDocument::parse(&largest).unwrap().posts[0].likes, Some(MAX_LIKES));
        for likes in [MAX_LIKES + 1, u64::MAX] {
            let text = format!(r#"{{"workspaceId": "w", "posts": [{{"postId": "p", "likes": {likes}}}]}}"#);
            let (path, rule) = rule_at(&text);
            assert_eq!(path, "$.posts[0].likes");
            assert!(rule.contains("at most 9223372036854775807"), "{rule}");
        }
    }

    #[test]
    fn ids_with_surrounding_whitespace_are_refused_not_trimmed() {
        for (text, path) in [
            (r#"{"workspaceId": " w"}"#, "$.workspaceId"),
            (r#"{"workspaceId": "w", "posts": [{"postId": "p\n"}]}"#, "$.posts[0].postId"),
            (r#"{"workspaceId": "w", "jobs": [{"id": "\tjob-1"}]}"#, "$.jobs[0].id"),
            (
                r#"{"workspaceId": "w", "feed": {"recentPublished": [{"postId": "p "}]}}"#,
                "$.feed.recentPublished[0].postId",
            ),
        ] {
            assert_eq!(
                rule_at(text),
                (path.to_owned(), "must not start or end with whitespace".to_owned()),
                "{text}"
            );
        }
        let inner =
            WorkspaceDocument::parse(r#"{"workspaceId": "w s", "posts": [{"postId": "a b"}]}"#).unwrap();
        assert_eq!(inner.posts[0].post_id, "a b");
    }

    #[test]
    fn job_ids_dot_and_dot_dot_are_refused() {
        for id in [".", ".."] {
            let text = format!(r#"{{"workspaceId": "w", "jobs": [{{"id": "{id}"}}]}}"#);
            assert_eq!(rule_at(&text).0, "$.jobs[0].id", "{id}");
        }
        assert!(WorkspaceDocument::parse(r#"{"workspaceId": "w", "jobs": [{"id": "..."}]}"#).is_ok());
    }

    #[test]
    fn a_too_deep_document_says_so() {
        for depth in [MAX_DEPTH + 1, 200, 100_000] {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            for (text, path) in [
                (format!(r#"{{"workspaceId": "w", "jobs": [{{"id": "j", "x": {nested}}}]}}"#), "$.jobs[0]"),
                (format!(r#"{{"workspaceId": "w", "posts": [{nested}]}}"#), "$.posts[0]"),
                (format!(r#"{{"workspaceId": "w", "takeaways": {{"x": {nested}}}}}"#), "$.takeaways"),
                (format!(r#"{{"workspaceId": "w", "feed": {{"goals": {nested}}}}}"#), "$.feed"),
            ] {
                let (found, rule) = rule_at(&text);
                assert_eq!(found, path, "{depth}");
                assert!(rule.contains("nested more than 64"), "{rule}");
            }
        }
        let fits = format!("{}{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        let text = format!(r#"{{"workspaceId": "w", "jobs": [{{"id": "j", "x": {fits}}}]}}"#);
        assert!(WorkspaceDocument::parse(&text).is_ok());
    }

    #[test]
    fn text_and_value_parses_agree() {
        let value: Value = serde_json::from_str(GOOD).unwrap();
        assert_eq!(WorkspaceDocument::parse(GOOD).unwrap(), WorkspaceDocument::from_value(&value).unwrap());
    }
}
