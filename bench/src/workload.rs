//! The realistic workload: a workspace of 1,000 measured posts, mock
//! public signals, and the same data offered to the tools' logic natively.

use harmonia_contract::url::parse_http_url;
use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_guest_sdk::{FeedRead, FetchError, PublicWeb, ReadError, Response, Workspace};
use harmonia_host::capability::public_web::mock;
use serde_json::{Value, json};

/// Posts in the benchmark workspace.
pub const POSTS: usize = 1_000;

/// The benchmark workspace.
pub fn document(posts: usize) -> WorkspaceDocument {
    let posts: Vec<Value> = (0..posts)
        .map(|i| {
            let offset = ["Z", "+02:00", "-05:00"][i % 3];
            json!({"postId": format!("post-{i:04}"), "text": format!("Post number {i} about sandboxed tools"),
                "likes": (i * 37) % 500, "publishedAt": format!("2026-{:02}-{:02}T{:02}:{:02}:00{offset}", 1 + i % 11, 1 + i % 28, i % 24, i % 60)})
        })
        .collect();
    let jobs: Vec<Value> = (0..20)
        .map(|i| json!({"id": format!("job-{i}"), "title": format!("Job {i}"), "stage": "drafting", "status": "running",
            "drafts": [{"text": "draft"}], "actions": [{"id": "a1", "type": "publish_post", "state": "pending",
            "approvalState": "awaiting", "requiresApproval": true, "risk": "low"}], "receipts": []}))
        .collect();
    let pending: Vec<Value> =
        (0..10).map(|i| json!({"id": format!("pending-{i}"), "kind": "draft_review"})).collect();
    let value = json!({"workspaceId": "ws_bench", "updatedAt": "2026-11-30T09:00:00Z", "posts": posts,
        "takeaways": {"pattern": "bench"},
        "feed": {"pendingItems": pending, "jobHealth": {"active": 3, "failed": 1}, "goals": [], "recentPublished": []},
        "jobs": jobs});
    WorkspaceDocument::from_value(&value).unwrap_or_else(|error| panic!("bench workspace: {error}"))
}

/// Each tool with its input.
pub const CALLS: [(&str, &str); 6] = [
    ("fetch_trend_signals", r#"{"limit": 10}"#),
    ("search_trend_signals", r#"{"query": "agents"}"#),
    ("get_engagement_insights", "{}"),
    ("get_operator_feed", "{}"),
    ("get_job_status", r#"{"job_id": "job-7"}"#),
    ("suggest_posting_windows", "{}"),
];

/// The mock public web, natively.
pub struct NativeWeb;

impl PublicWeb for NativeWeb {
    fn get(&self, url: &str) -> Result<Response, FetchError> {
        let url = parse_http_url(url).ok_or(FetchError::InvalidUrl)?;
        let (status, body) = mock::public_web_response(&url);
        Ok(Response { status, content_type: Some("application/json".into()), body })
    }
}

/// The benchmark workspace, natively: the same documents the host serves.
pub struct NativeWorkspace {
    document: WorkspaceDocument,
    engagement: String,
}

impl NativeWorkspace {
    pub fn new(document: WorkspaceDocument) -> Self {
        Self { engagement: document.engagement_json(), document }
    }
}

impl Workspace for NativeWorkspace {
    fn engagement(&self) -> Result<String, ReadError> {
        Ok(self.engagement.clone())
    }

    fn feed(&self) -> Result<FeedRead, ReadError> {
        Ok(FeedRead {
            document: Value::Object(self.document.feed.clone()).to_string(),
            updated_at: self.document.updated_at.clone(),
            read_at: harmonia_contract::time::now_rfc3339(),
        })
    }

    fn job(&self, id: &str) -> Result<String, ReadError> {
        self.document.job(id).map(|job| Value::Object(job.clone()).to_string()).ok_or(ReadError::NotFound)
    }
}

/// Run `tool`'s logic natively, its input parsed as the component parses
/// it; true when it succeeded.
pub fn run_native(tool: &str, input: &str, workspace: &NativeWorkspace) -> bool {
    use harmonia_guest_sdk::invoke;
    match tool {
        "fetch_trend_signals" => invoke(input, |input| fetch_trend_signals::run(&NativeWeb, input)).is_ok(),
        "search_trend_signals" => invoke(input, |input| search_trend_signals::run(&NativeWeb, input)).is_ok(),
        "get_engagement_insights" => {
            invoke(input, |input| get_engagement_insights::run(workspace, input)).is_ok()
        }
        "get_operator_feed" => invoke(input, |input| get_operator_feed::run(workspace, input)).is_ok(),
        "get_job_status" => invoke(input, |input| get_job_status::run(workspace, input)).is_ok(),
        "suggest_posting_windows" => {
            invoke(input, |input| suggest_posting_windows::run(workspace, input)).is_ok()
        }
        _ => false,
    }
}
