//! The Harmonia web internal API as a workspace source.
//!
//! `GET {base}/api/internal/insights`, `GET {base}/api/internal/proactive-feed`
//! and `GET {base}/api/internal/job/{id}` (id percent-encoded as one path
//! segment), each with `Authorization: Bearer <token>` (the token read from
//! the environment variable the config names, at each read) and
//! `x-workspace-id`. A token holding a control character (CR, LF, ...) is
//! a configuration error at start and an unauthorized read (no request)
//! later; the ids `.` and `..` are not found without a request. Statuses map as docs/contract.md §3.4: 401/403 unauthorized,
//! 404 on a job not found, other 4xx except 429 rejected, 429 and 5xx
//! unavailable. Bodies of failures are dropped unread beyond the cap and
//! never passed on. The feed's freshness comes from the body's top-level
//! `updatedAt` string, when present.

use super::config::WorkspaceConfig;
use super::source::{Answer, ReadFailure, Reading, SourceDocument, WorkspaceRead, WorkspaceSource};
use crate::capability::http_client::{HttpAgent, HttpFailure, HttpResponse};
use crate::capability::kind::CapabilityKind;
use crate::capability::receipt::{Receipt, remaining};
use crate::config::ConfigError;
use harmonia_contract::url::{Url, parse_http_url};
use std::sync::Arc;
use std::time::Instant;

/// Where the bearer token comes from, read at each request.
pub type TokenProvider = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// The internal API source.
pub struct HttpSource {
    base: Url,
    token: TokenProvider,
    max_body: u64,
    agent: HttpAgent,
}

impl std::fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSource").field("base", &self.base.as_str()).finish_non_exhaustive()
    }
}

impl HttpSource {
    /// Build from the config (`base_url` required), reading the token from
    /// the environment variable `token_env` names.
    ///
    /// A token that holds a control character (CR, LF, ...) is a
    /// configuration error here, and a later read that finds one is refused
    /// as unauthorized without a request: it could never be sent as one
    /// header line.
    pub fn new(config: &WorkspaceConfig) -> Result<Self, ConfigError> {
        let variable = config.token_env.clone();
        if let Ok(token) = std::env::var(&variable)
            && !is_sendable_token(&token)
        {
            return Err(ConfigError::Invalid(format!(
                "the token in ${variable} (workspace.token_env) holds a control character such as CR or LF; \
                 a bearer token is one line"
            )));
        }
        Self::with_token(config, Arc::new(move || std::env::var(&variable).ok()))
    }

    /// Build from the config with the token from `token` (a secrets manager,
    /// a test).
    pub fn with_token(config: &WorkspaceConfig, token: TokenProvider) -> Result<Self, ConfigError> {
        let base = config
            .base_url
            .as_deref()
            .and_then(parse_http_url)
            .ok_or_else(|| ConfigError::Invalid("workspace.base_url must be an http(s) URL".into()))?;
        Ok(Self {
            base,
            token,
            max_body: u64::from(config.max_body_kib) * 1024,
            agent: HttpAgent::any_address(),
        })
    }

    fn url(&self, read: WorkspaceRead<'_>) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(["api", "internal"]);
            match read {
                WorkspaceRead::Engagement => {
                    segments.push("insights");
                }
                WorkspaceRead::Feed => {
                    segments.push("proactive-feed");
                }
                WorkspaceRead::Job(id) => {
                    segments.extend(["job", id]);
                }
            }
        }
        url
    }
}

/// True when `token` can be sent as one header line: no control character
/// (a CR or LF would end the header; the HTTP client would refuse it).
pub fn is_sendable_token(token: &str) -> bool {
    !token.chars().any(char::is_control)
}

fn status_failure(status: u16, read: WorkspaceRead<'_>) -> ReadFailure {
    match status {
        401 | 403 => ReadFailure::Unauthorized,
        404 if matches!(read, WorkspaceRead::Job(_)) => ReadFailure::NotFound,
        429 => ReadFailure::Unavailable,
        400..=499 => ReadFailure::Rejected,
        _ => ReadFailure::Unavailable,
    }
}

fn updated_at(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value.get("updatedAt")?.as_str().map(str::to_owned)
}

/// One read ready to send: its URL, receipt target, start and token.
struct Request {
    url: Url,
    target: String,
    started: Instant,
    authorization: String,
}

/// What a read comes to before any traffic.
enum Prepared {
    /// Send this request.
    Send(Request),
    /// Answered without a request.
    Answered(Answer),
}

impl Request {
    /// The headers every read sends: the bearer token and the workspace.
    fn headers<'a>(&'a self, workspace: &'a str) -> [(&'a str, &'a str); 2] {
        [("authorization", self.authorization.as_str()), ("x-workspace-id", workspace)]
    }

    fn receipt(&self, status: &str) -> Receipt {
        Receipt::new(CapabilityKind::Workspace, self.target.clone(), status, self.started)
    }
}

impl HttpSource {
    /// The request for `read`, or the answer when none may be sent.
    fn prepare(&self, read: WorkspaceRead<'_>, deadline: Instant) -> Prepared {
        let started = Instant::now();
        let url = self.url(read);
        let target = format!("http:GET {}", url.path());
        let receipt = |status: &str| Receipt::new(CapabilityKind::Workspace, target.clone(), status, started);
        if let WorkspaceRead::Job(id) = read
            && harmonia_contract::workspace_document::is_reserved_job_id(id)
        {
            return Prepared::Answered((Err(ReadFailure::NotFound), receipt("invalid_job_id")));
        }
        let token = match (self.token)() {
            Some(token) if !token.is_empty() => token,
            _ => return Prepared::Answered((Err(ReadFailure::Unauthorized), receipt("no_token"))),
        };
        if !is_sendable_token(&token) {
            return Prepared::Answered((Err(ReadFailure::Unauthorized), receipt("invalid_token")));
        }
        if remaining(deadline).is_none() {
            return Prepared::Answered((Err(ReadFailure::TimedOut), receipt("timed_out")));
        }
        Prepared::Send(Request { url, target, started, authorization: format!("Bearer {token}") })
    }

    /// The answer for what the GET returned.
    fn conclude(
        prepared: &Request,
        read: WorkspaceRead<'_>,
        response: Result<HttpResponse, HttpFailure>,
    ) -> Answer {
        match response {
            Err(failure) => {
                let read_failure = if failure == HttpFailure::TimedOut {
                    ReadFailure::TimedOut
                } else {
                    ReadFailure::Unavailable
                };
                (Err(read_failure), prepared.receipt(failure.as_status()))
            }
            Ok(response) if (200..300).contains(&response.status) => {
                let status = response.status.to_string();
                match String::from_utf8(response.body) {
                    Ok(body) => {
                        let receipt = prepared.receipt(&status).with_body(body.as_bytes());
                        let updated_at = if read == WorkspaceRead::Feed { updated_at(&body) } else { None };
                        (Ok(SourceDocument { body, updated_at }), receipt)
                    }
                    Err(_) => (Err(ReadFailure::Unavailable), prepared.receipt("malformed_body")),
                }
            }
            Ok(response) => {
                (Err(status_failure(response.status, read)), prepared.receipt(&response.status.to_string()))
            }
        }
    }
}

impl WorkspaceSource for HttpSource {
    fn kind(&self) -> &'static str {
        "http"
    }

    fn read<'a>(
        self: Arc<Self>,
        workspace: &'a str,
        read: WorkspaceRead<'a>,
        deadline: Instant,
    ) -> Reading<'a> {
        Box::pin(async move {
            let prepared = match self.prepare(read, deadline) {
                Prepared::Send(request) => request,
                Prepared::Answered(answer) => return answer,
            };
            let headers = prepared.headers(workspace);
            let response = self.agent.get(prepared.url.clone(), &headers, deadline, self.max_body).await;
            Self::conclude(&prepared, read, response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_statuses_as_the_contract_says() {
        let job = WorkspaceRead::Job("j");
        assert_eq!(status_failure(401, job), ReadFailure::Unauthorized);
        assert_eq!(status_failure(403, WorkspaceRead::Feed), ReadFailure::Unauthorized);
        assert_eq!(status_failure(404, job), ReadFailure::NotFound);
        assert_eq!(status_failure(404, WorkspaceRead::Feed), ReadFailure::Rejected);
        assert_eq!(status_failure(400, job), ReadFailure::Rejected);
        assert_eq!(status_failure(422, job), ReadFailure::Rejected);
        assert_eq!(status_failure(429, job), ReadFailure::Unavailable);
        assert_eq!(status_failure(500, job), ReadFailure::Unavailable);
        assert_eq!(status_failure(503, job), ReadFailure::Unavailable);
        assert_eq!(status_failure(302, job), ReadFailure::Unavailable);
    }

    #[test]
    fn tokens_with_control_characters_are_not_sendable() {
        for token in ["tok\r\nx-injected: 1", "tok\n", "\rtok", "t\u{0}k", "t\u{7f}k"] {
            assert!(!is_sendable_token(token), "{token:?}");
        }
        for token in ["tok_live_123", "a.b-c~d+e/f==", "with space"] {
            assert!(is_sendable_token(token), "{token:?}");
        }
    }

    #[test]
    fn job_ids_are_one_encoded_segment() {
        let config =
            WorkspaceConfig { base_url: Some("http://127.0.0.1:9000/base/".into()), ..Default::default() };
        let source = HttpSource::new(&config).unwrap();
        assert_eq!(
            source.url(WorkspaceRead::Job("a/b ?#%")).as_str(),
            "http://127.0.0.1:9000/base/api/internal/job/a%2Fb%20%3F%23%25"
        );
        assert_eq!(
            source.url(WorkspaceRead::Feed).as_str(),
            "http://127.0.0.1:9000/base/api/internal/proactive-feed"
        );
    }
}
