//! Scripted capabilities: healthy answers from fixtures, or one fault on
//! cue, with a canary secret planted in every failure body.

use harmonia_host::capability::public_web::{
    PublicWebSource, WebAnswer, WebAnswering, WebFailure, WebResponse, failure_status,
};
use harmonia_host::capability::workspace::{
    ReadFailure, Reading, SourceDocument, WorkspaceRead, WorkspaceSource, read_receipt,
};
use harmonia_host::capability::{CapabilityKind, Receipt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The secret planted in failure bodies; it must never reach an envelope.
pub const CANARY: &str = "HARMONIA-CANARY-5e1f0c27";
/// The fixed read time of the scripted feed.
pub const READ_AT: &str = "2026-11-30T09:05:00Z";
/// The fixed update time of the scripted workspace.
pub const UPDATED_AT: &str = "2026-11-30T09:00:00Z";

/// One way a capability can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An HTTP status with a failure body holding the canary.
    Status(u16),
    /// A 200 whose body is not JSON (and holds the canary).
    GarbageJson,
    /// A 200 with an empty body.
    EmptyBody,
    /// A body over the host's cap.
    OversizedBody,
    /// The capability refuses the request.
    Denied,
    /// No answer until the call's deadline passes.
    NeverAnswers,
}

/// Every fault the suite injects, in order.
pub const FAULTS: [Fault; 11] = [
    Fault::Status(401),
    Fault::Status(403),
    Fault::Status(404),
    Fault::Status(429),
    Fault::Status(500),
    Fault::Status(503),
    Fault::GarbageJson,
    Fault::EmptyBody,
    Fault::OversizedBody,
    Fault::Denied,
    Fault::NeverAnswers,
];

impl Fault {
    /// The check id suffix: `http_401`, `garbage_json`, ...
    pub fn id(self) -> String {
        match self {
            Self::Status(status) => format!("http_{status}"),
            Self::GarbageJson => "garbage_json".into(),
            Self::EmptyBody => "empty_body".into(),
            Self::OversizedBody => "oversized_body".into(),
            Self::Denied => "denied".into(),
            Self::NeverAnswers => "never_answers".into(),
        }
    }
}

/// What the scripted capabilities do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// Answer from the fixtures.
    Healthy,
    /// Fail this way.
    Fault(Fault),
}

/// The script and what was served under it.
#[derive(Debug)]
struct Stage {
    script: Script,
    bodies: Vec<Vec<u8>>,
    reads: Vec<&'static str>,
}

/// The state shared by both scripted capabilities.
#[derive(Debug)]
pub struct Scripts {
    stage: Mutex<Stage>,
    web_body: Vec<u8>,
    workspace: Value,
}

fn failure_body() -> Vec<u8> {
    json!({"error": "upstream failure", "detail": CANARY, "authorization": format!("Bearer {CANARY}")})
        .to_string()
        .into_bytes()
}

fn garbage_body() -> Vec<u8> {
    format!("<html>{CANARY} this is not json {{{{").into_bytes()
}

/// Hold a slow answer until `deadline`, as an upstream that never answers
/// would; the call's task waits, no thread does.
async fn wait_out(deadline: Instant) {
    tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
}

impl Scripts {
    /// Scripts answering healthy reads with `web_body` and the workspace
    /// document `workspace` (the shape `harmonia workspace import` takes).
    pub fn new(web_body: Vec<u8>, workspace: Value) -> Self {
        Self {
            stage: Mutex::new(Stage { script: Script::Healthy, bodies: Vec::new(), reads: Vec::new() }),
            web_body,
            workspace,
        }
    }

    /// Set the script for the next call and forget what was served.
    pub fn set(&self, script: Script) {
        if let Ok(mut stage) = self.stage.lock() {
            *stage = Stage { script, bodies: Vec::new(), reads: Vec::new() };
        }
    }

    fn script(&self) -> Script {
        self.stage.lock().map(|stage| stage.script).unwrap_or(Script::Healthy)
    }

    fn served(&self, read: &'static str, body: &[u8]) {
        if let Ok(mut stage) = self.stage.lock() {
            stage.bodies.push(body.to_vec());
            stage.reads.push(read);
        }
    }

    fn attempted(&self, read: &'static str) {
        if let Ok(mut stage) = self.stage.lock() {
            stage.reads.push(read);
        }
    }

    /// Every body served since the last [`Scripts::set`].
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.stage.lock().map(|stage| stage.bodies.clone()).unwrap_or_default()
    }

    /// Every read attempted since the last [`Scripts::set`] (`web`,
    /// `engagement`, `feed`, `job`).
    pub fn reads(&self) -> Vec<&'static str> {
        self.stage.lock().map(|stage| stage.reads.clone()).unwrap_or_default()
    }

    fn healthy_workspace(&self, read: WorkspaceRead<'_>) -> SourceDocument {
        let document = &self.workspace;
        let body = match read {
            WorkspaceRead::Engagement => {
                let measured: Vec<&Value> = document["posts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|post| !post["likes"].is_null())
                    .collect();
                json!({"posts": measured, "takeaways": document["takeaways"]}).to_string()
            }
            WorkspaceRead::Feed => document["feed"].to_string(),
            WorkspaceRead::Job(id) => {
                let mut job = document["jobs"][0].clone();
                job["id"] = json!(id);
                job.to_string()
            }
        };
        let updated_at = (read == WorkspaceRead::Feed).then(|| UPDATED_AT.to_owned());
        SourceDocument { body, updated_at }
    }
}

/// The scripted public web.
#[derive(Debug)]
pub struct ScriptedWeb(pub std::sync::Arc<Scripts>);

impl PublicWebSource for ScriptedWeb {
    fn get(self: Arc<Self>, url: String, deadline: Instant) -> WebAnswering {
        Box::pin(async move {
            let started = Instant::now();
            let (result, slow) = self.scripted();
            if slow {
                wait_out(deadline).await;
            }
            let status = match &result {
                Ok(response) => response.status.to_string(),
                Err(failure) => failure_status(*failure).to_owned(),
            };
            let receipt =
                Receipt::new(CapabilityKind::PublicWeb, url.chars().take(2000).collect(), status, started);
            WebAnswer { result, receipt, mock: false }
        })
    }
}

impl ScriptedWeb {
    /// The scripted answer, and whether it comes only at the deadline.
    fn scripted(&self) -> (Result<WebResponse, WebFailure>, bool) {
        let scripts = &self.0;
        let respond = |status: u16, body: Vec<u8>| {
            scripts.served("web", &body);
            Ok(WebResponse { status, content_type: Some("application/json".into()), body })
        };
        let result = match scripts.script() {
            Script::Healthy => respond(200, scripts.web_body.clone()),
            Script::Fault(Fault::Status(status)) => respond(status, failure_body()),
            Script::Fault(Fault::GarbageJson) => respond(200, garbage_body()),
            Script::Fault(Fault::EmptyBody) => respond(200, Vec::new()),
            Script::Fault(fault) => {
                scripts.attempted("web");
                return match fault {
                    Fault::OversizedBody => (Err(WebFailure::TooLarge), false),
                    Fault::Denied => (Err(WebFailure::Denied), false),
                    _ => (Err(WebFailure::TimedOut), true),
                };
            }
        };
        (result, false)
    }
}

/// The scripted workspace.
#[derive(Debug)]
pub struct ScriptedWorkspace(pub std::sync::Arc<Scripts>);

impl WorkspaceSource for ScriptedWorkspace {
    fn kind(&self) -> &'static str {
        "conformance"
    }

    fn read_at(&self) -> String {
        READ_AT.to_owned()
    }

    fn read<'a>(
        self: Arc<Self>,
        _workspace: &'a str,
        read: WorkspaceRead<'a>,
        deadline: Instant,
    ) -> Reading<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let (result, slow) = self.scripted(read);
            if slow {
                wait_out(deadline).await;
            }
            let receipt = read_receipt(format!("conformance:{}", read.name()), &result, started);
            (result, receipt)
        })
    }
}

impl ScriptedWorkspace {
    /// The scripted read, and whether it comes only at the deadline.
    fn scripted(&self, read: WorkspaceRead<'_>) -> (Result<SourceDocument, ReadFailure>, bool) {
        let scripts = &self.0;
        let name = read.name();
        let document = |body: Vec<u8>| {
            scripts.served(name, &body);
            Ok(SourceDocument { body: String::from_utf8_lossy(&body).into_owned(), updated_at: None })
        };
        let result = match scripts.script() {
            Script::Healthy => {
                let healthy = scripts.healthy_workspace(read);
                scripts.served(name, healthy.body.as_bytes());
                Ok(healthy)
            }
            Script::Fault(Fault::GarbageJson) => document(garbage_body()),
            Script::Fault(Fault::EmptyBody) => document(Vec::new()),
            Script::Fault(fault) => {
                scripts.attempted(name);
                return match fault {
                    Fault::Status(401 | 403) | Fault::Denied => (Err(ReadFailure::Unauthorized), false),
                    Fault::Status(404) if matches!(read, WorkspaceRead::Job(_)) => {
                        (Err(ReadFailure::NotFound), false)
                    }
                    Fault::Status(429) | Fault::Status(500..) | Fault::OversizedBody => {
                        (Err(ReadFailure::Unavailable), false)
                    }
                    Fault::Status(_) => (Err(ReadFailure::Rejected), false),
                    _ => (Err(ReadFailure::TimedOut), true),
                };
            }
        };
        (result, false)
    }
}
