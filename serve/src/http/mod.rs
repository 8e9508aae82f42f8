//! The remote server: MCP streamable HTTP on axum, behind authentication
//! and bounds.
//!
//! Routes:
//! - `/mcp`: the credential's allow-listed tools, without the guard;
//! - `/mcp/skills/<name>`: one skill's tools through a guarded session per
//!   MCP session, its trace as a resource;
//! - `POST /v1/validate`: `{"trace", "answer", "mode"}` → the verdict JSON
//!   of `harmonia validate --json` and the seal's state, traces verified
//!   with this server's key ([`validate`]);
//! - `POST /v1/review`: the same request → the review page of
//!   `harmonia review` (HTML, with its Content-Security-Policy);
//! - `GET /healthz` (the process answers, draining or not) and `GET
//!   /readyz` (serving: not draining, its session ledger reachable, and its
//!   host not refusing calls over its slots' reset; 503 with the reason
//!   otherwise): no credential needed;
//! - `GET /.well-known/oauth-protected-resource[/<path>]`: the RFC 9728
//!   metadata of `[oauth]`, when configured; no credential needed;
//! - `GET /metrics`: the Prometheus text of the host's metrics, without a
//!   credential unless `[metrics] require_token` (absent when
//!   `[metrics] enabled = false`).
//!
//! Every answer, on every route and for every error, says
//! `X-Content-Type-Options: nosniff` (set by the outermost layer, and in
//! the listener's refusal). Every request first passes the `Host` and `Origin` checks ([`origin`]:
//! 403 otherwise). Every other request than the health probes and an open
//! `/metrics` needs `Authorization: Bearer`: without a valid one it gets
//! 401 with `WWW-Authenticate` and never reaches MCP handling; the failure
//! is logged without the token. With `[oauth]`, a JWT also needs the
//! scope of the skill whose route it uses and of the tool it calls
//! ([`scopes`]: 403 otherwise). MCP requests pass [`gate`]: a session
//! id must be the caller's own, the message well-formed JSON-RPC, a new
//! session within the server's and the credential's bounds. Bounds: bodies
//! over `limits.max_body_kib` get 413; bodies on their way hold at most
//! `limits.max_request_bodies_kib` (and a credential's share of it, 503
//! past either); a request slower than
//! `limits.request_timeout_s` gets 408; connections are bounded as
//! [`listener`] says; sessions idle for `limits.idle_session_s` are closed.
//!
//! Shutdown (SIGTERM or the caller's signal): new requests get 503, the
//! requests already admitted and the calls in flight finish (each within
//! its deadline; calls still running on a plugin set a reload replaced
//! too, their clients gone or not), then the sessions are closed and the
//! connections drained.
//!
//! Parts: [`origin`] (Host and Origin), [`gate`] (authentication and the
//! MCP gate), `fast_path` (a stateless `tools/call` answered without
//! rmcp's per-request service, in rmcp's types), `finish_on_drop` (a
//! call run inline that finishes in a task of its own if its request's
//! task drops it), [`scopes`] (OAuth scopes), [`validate`] (`/v1/validate`),
//! [`listener`] (connections), `message` (what the gates read of a
//! JSON-RPC body, in one pass), `unread_body` (an answer given before the
//! body was read keeps the connection usable or says `Connection: close`),
//! `body_budget` (the memory request bodies on their way may hold, per
//! credential and over the server), `checks` (the door's checks run in
//! sequence inside one layer per group of routes), `shared_service`
//! (rmcp's service, and the stack beneath each layer, behind an `Arc`, so
//! that a request's clones of them are counts).

mod body_budget;
mod checks;
mod fast_path;
mod finish_on_drop;
pub mod gate;
pub mod listener;
mod message;
pub mod origin;
pub mod scopes;
mod shared_service;
mod unread_body;
pub mod validate;

use crate::auth::Authenticator;
use crate::config::ServeConfig;
use crate::handler::McpServer;
use crate::replica::{ReplicaSessions, SessionOwners};
use crate::sessions::ledger::Readiness;
use crate::state::ServeState;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use shared_service::{Shared, SharedBelowLayer};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The longest a drain waits for calls in flight: the longest deadline a
/// tool may declare, and a margin. Public for the deployment's test
/// (`cli/tests/all/deploy.rs`): a pod's termination grace period must
/// outlast it.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(125);

pub(crate) struct App {
    state: Arc<ServeState>,
    auth: Authenticator,
    addressing: origin::Addressing,
    owners: Arc<SessionOwners>,
    draining: AtomicBool,
    /// Requests let in and not yet answered; the drain waits for them.
    admitted: AtomicUsize,
    answered: Notify,
    /// Validations judged at once, off the runtime's workers.
    validations: Arc<tokio::sync::Semaphore>,
    /// The KiB request bodies on their way may announce, over the server
    /// (`limits.max_request_bodies_kib`).
    bodies: Arc<tokio::sync::Semaphore>,
    /// Where the OAuth protected-resource metadata is, when published.
    metadata_url: Option<String>,
    /// The scopes tools and skills need, with `[oauth]`.
    scopes: Option<scopes::ScopePolicy>,
    /// Whether a stateless `tools/call` skips rmcp's per-request service.
    fast_path: bool,
}

/// Why a request gets 503 before MCP handling.
#[derive(Clone, Copy)]
pub(crate) enum Unavailable {
    Draining,
    TooManySessions,
    TooManyConnections,
    CredentialSessions,
    CredentialConnections,
    TooManyValidations,
    CredentialValidations,
    RequestBodies,
    CredentialRequestBodies,
    /// The session ledger cannot be reached (a shared database away).
    Ledger,
    /// The host refuses every call: swap became possible after it started
    /// resetting only the pages a call wrote (`limits.slot_reset`).
    SlotReset,
}

impl Unavailable {
    /// The `reason` label of `harmonia_http_unavailable_total`.
    fn label(self) -> &'static str {
        match self {
            Self::Draining => "draining",
            Self::TooManySessions => "too_many_sessions",
            Self::TooManyConnections => "too_many_connections",
            Self::CredentialSessions => "credential_sessions",
            Self::CredentialConnections => "credential_connections",
            Self::TooManyValidations => "too_many_validations",
            Self::CredentialValidations => "credential_validations",
            Self::RequestBodies => "request_bodies",
            Self::CredentialRequestBodies => "credential_request_bodies",
            Self::Ledger => "ledger_unavailable",
            Self::SlotReset => "slot_reset_unsafe",
        }
    }

    /// The body's `error` text.
    fn message(self) -> &'static str {
        match self {
            Self::Draining => "draining",
            Self::TooManySessions => "too many sessions",
            Self::TooManyConnections => "too many connections",
            Self::CredentialSessions => "this credential holds its share of sessions",
            Self::CredentialConnections => "this credential holds its share of connections",
            Self::TooManyValidations => "too many validations",
            Self::CredentialValidations => "this credential holds its share of validations",
            Self::RequestBodies => "too many request bodies on their way",
            Self::CredentialRequestBodies => "this credential holds its share of request bodies on their way",
            Self::Ledger => "the session ledger cannot be reached; retry",
            Self::SlotReset => "this process refuses every call until it is restarted",
        }
    }
}

impl App {
    pub(crate) fn unavailable(&self, why: Unavailable) -> Response {
        if let Some(metrics) = self.state.metrics() {
            metrics.http_unavailable(why.label());
        }
        let mut response =
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({"error": why.message()}))).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(self.state.limits.retry_after_s));
        response
    }

    /// [`App::unavailable`], its body naming `why` by its label and saying
    /// the `reason` (`/readyz`).
    fn unavailable_because(&self, why: Unavailable, reason: &str) -> Response {
        let mut response = self.unavailable(why);
        *response.body_mut() =
            axum::body::Body::from(json!({"error": why.label(), "reason": reason}).to_string());
        response
    }

    /// Wait until no admitted request is unanswered, or `timeout` passes.
    async fn answered_all(&self, timeout: Duration) -> bool {
        let wait = async {
            loop {
                let answered = self.answered.notified();
                if self.admitted.load(Ordering::SeqCst) == 0 {
                    return;
                }
                answered.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

/// An admitted request, counted until its answer's head is ready.
struct Admitted<'a>(&'a App);

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        if self.0.admitted.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.answered.notify_waiters();
        }
    }
}

/// The outermost layer: the body shared so an answer given before it was
/// read keeps the connection or says it closes ([`unread_body`]); then
/// [`admit`]; every answer it gives [`nosniff`].
async fn bound(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let (body, leftover) = unread_body::track(body, &parts.headers);
    let mut response = admit(&app, Request::from_parts(parts, body), next).await;
    if let Some(leftover) = leftover {
        leftover.settle(&mut response).await;
    }
    nosniff(&mut response);
    response
}

/// Host and Origin, then draining, then the request timeout; an admitted
/// request is counted for the drain.
async fn admit(app: &Arc<App>, request: Request, next: Next) -> Response {
    if let Err(refused) = app.addressing.check(request.uri(), request.headers()) {
        tracing::warn!(
            reason = refused.label(),
            path = request.uri().path(),
            "request refused: not addressed to this server"
        );
        if let Some(metrics) = app.state.metrics() {
            metrics.http_forbidden(refused.label());
        }
        return (StatusCode::FORBIDDEN, axum::Json(json!({"error": refused.label()}))).into_response();
    }
    app.admitted.fetch_add(1, Ordering::SeqCst);
    let _admitted = Admitted(app);
    // Checked after counting, so a drain that saw no request admitted
    // cannot miss this one. A draining process is still alive: `/healthz`
    // says so (a liveness probe failing now would have it killed before
    // its calls end), `/readyz` and everything else say 503.
    if app.draining.load(Ordering::SeqCst) && request.uri().path() != "/healthz" {
        return app.unavailable(Unavailable::Draining);
    }
    match tokio::time::timeout(app.state.limits.request_timeout(), next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            (StatusCode::REQUEST_TIMEOUT, axum::Json(json!({"error": "request timeout"}))).into_response()
        }
    }
}

/// Every answer, whatever the route or the error, says
/// `X-Content-Type-Options: nosniff`, so no browser reads it as another
/// type than it says (a review page as anything but HTML, a JSON error as
/// HTML): set by the outermost layer ([`bound`]), on its way out. The
/// listener's refusal of a connection past the bound carries it too
/// ([`listener`]).
fn nosniff(response: &mut Response) {
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

/// Where RFC 9728 puts the protected-resource metadata.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The RFC 9728 metadata document of `[oauth]`: every tool's and skill's
/// scope among `scopes_supported`, for the plugin set serving now.
async fn resource_metadata(State(app): State<Arc<App>>) -> Response {
    let Some(scopes) = &app.scopes else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let (oauth, supported) = (scopes.oauth(), scopes.supported(&app.state));
    let mut metadata = json!({
        "resource": oauth.resource,
        "authorization_servers": oauth.authorization_servers,
        "bearer_methods_supported": ["header"],
        "resource_name": "Harmonia read-only tools",
    });
    if !supported.is_empty() {
        metadata["scopes_supported"] = json!(supported);
    }
    axum::Json(metadata).into_response()
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let Some(metrics) = app.state.metrics() else {
        return (StatusCode::NOT_FOUND, axum::Json(json!({"error": "metrics are off"}))).into_response();
    };
    let mut response = metrics.encode().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(harmonia_host::metrics::Metrics::CONTENT_TYPE),
    );
    response
}

/// The HTTP server, ready to run on a listener.
pub struct HttpServer {
    router: Router,
    app: Arc<App>,
    cancel: CancellationToken,
}

impl HttpServer {
    /// Routes for `state`, authenticated by `auth`, bounded by the config.
    pub fn new(state: Arc<ServeState>, auth: Authenticator, config: &ServeConfig) -> Self {
        let cancel = CancellationToken::new();
        let limits = &state.limits;
        let mut mcp_config = StreamableHttpServerConfig::default();
        mcp_config.max_request_body_bytes = limits.max_body_bytes();
        mcp_config.cancellation_token = cancel.clone();
        // Stateless (2026-07-28) calls answer in one JSON body, not a stream.
        mcp_config.json_response = true;
        // The router checks Host and Origin for every route; the SDK's own
        // check repeats it on the MCP routes.
        if !config.allowed_hosts.is_empty() {
            mcp_config = mcp_config.with_allowed_hosts(config.allowed_hosts.clone());
        }
        if !config.allowed_origins.is_empty() {
            mcp_config = mcp_config.with_allowed_origins(config.allowed_origins.clone());
        }
        let owners = Arc::new(SessionOwners::new(Arc::clone(&state.sessions)));
        let manager = || {
            let mut manager = LocalSessionManager::default();
            manager.session_config.keep_alive = Some(Duration::from_secs(limits.idle_session_s));
            manager.session_config.init_timeout = Some(Duration::from_secs(limits.header_timeout_s.max(10)));
            Arc::new(ReplicaSessions::new(manager, config.replica_id.as_deref(), Arc::clone(&owners)))
        };
        let shared = Arc::clone(&state);
        let mut mcp = Router::new().route_service(
            "/mcp",
            Shared::new(StreamableHttpService::new(
                move || Ok(McpServer::new(Arc::clone(&shared), None, None)),
                manager(),
                mcp_config.clone(),
            )),
        );
        for skill in state.liaison().skills().iter() {
            let shared = Arc::clone(&state);
            let skill = skill.clone();
            let path = format!("/mcp/skills/{}", skill.name);
            mcp = mcp.route_service(
                &path,
                Shared::new(StreamableHttpService::new(
                    move || Ok(McpServer::new(Arc::clone(&shared), Some(skill.clone()), None)),
                    manager(),
                    mcp_config.clone(),
                )),
            );
        }
        let app = Arc::new(App {
            state: Arc::clone(&state),
            auth,
            addressing: origin::Addressing::new(&config.allowed_hosts, &config.allowed_origins),
            owners,
            draining: AtomicBool::new(false),
            admitted: AtomicUsize::new(0),
            answered: Notify::new(),
            validations: Arc::new(tokio::sync::Semaphore::new(limits.max_validations as usize)),
            bodies: Arc::new(tokio::sync::Semaphore::new(limits.max_request_bodies_kib as usize)),
            metadata_url: config.oauth.as_ref().and_then(|oauth| oauth.metadata_url()),
            scopes: config.oauth.as_ref().map(scopes::ScopePolicy::new),
            fast_path: config.stateless_fast_path,
        });
        // The MCP routes' checks, in one layer (`checks`): the route's
        // scope, the gate, the call's scope, then the fast path.
        let mut protected = mcp
            .route_layer((
                middleware::from_fn_with_state(Arc::clone(&app), checks::mcp_checks),
                SharedBelowLayer,
            ))
            .route("/v1/validate", post(validate::validate))
            .route("/v1/review", post(validate::review_route));
        let mut open = Router::new();
        if let Some(oauth) = &config.oauth {
            let path = oauth.origin_and_path().map(|(_, path)| path).unwrap_or_default();
            open = open.route(WELL_KNOWN, get(resource_metadata));
            if !path.is_empty() {
                open = open.route(&format!("{WELL_KNOWN}{path}"), get(resource_metadata));
            }
        }
        if config.metrics.enabled {
            if config.metrics.require_token {
                protected = protected.route("/metrics", get(metrics));
            } else {
                open = open.route("/metrics", get(metrics));
            }
        }
        let protected = protected.layer(DefaultBodyLimit::max(limits.max_body_bytes())).route_layer((
            middleware::from_fn_with_state(Arc::clone(&app), checks::credential_checks),
            SharedBelowLayer,
        ));
        let ready = Arc::clone(&app);
        let router = Router::new()
            .route("/healthz", get(|| async { axum::Json(json!({"status": "ok"})) }))
            .route(
                "/readyz",
                get(move || {
                    let ready = Arc::clone(&ready);
                    async move {
                        if ready.draining.load(Ordering::SeqCst) {
                            return ready.unavailable(Unavailable::Draining);
                        }
                        if let Some(why) = ready.state.liaison().host().refusing_calls() {
                            return ready.unavailable_because(Unavailable::SlotReset, why);
                        }
                        match ready.state.sessions.readiness() {
                            Readiness::Ready => axum::Json(json!({"ready": true})).into_response(),
                            Readiness::NotReady(why) => ready.unavailable_because(Unavailable::Ledger, &why),
                        }
                    }
                }),
            )
            .merge(open)
            .merge(protected)
            .layer((middleware::from_fn_with_state(Arc::clone(&app), bound), SharedBelowLayer))
            .with_state(Arc::clone(&app));
        Self { router, app, cancel }
    }

    /// Serve on `listener` until `shutdown` resolves, then drain.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let app = Arc::clone(&self.app);
        let cancel = self.cancel.clone();
        // The shared database kept and the MCP sessions' places renewed
        // while the server runs.
        let kept = CancellationToken::new();
        tokio::spawn(Arc::clone(&app.state).keep(kept.clone()));
        let _kept = kept.drop_guard();
        let stop = async move {
            shutdown.await;
            app.draining.store(true, Ordering::SeqCst);
            tracing::info!("draining: waiting for the requests admitted and the calls in flight");
            let started = tokio::time::Instant::now();
            // A request admitted before the signal (its body still on the
            // way) becomes a call: wait for the requests, then the calls.
            let requests = app.answered_all(DRAIN_LIMIT).await;
            // Calls still running on a set a reload replaced included:
            // every set runs on the same slots.
            let running = app.state.call_slots().in_flight();
            tracing::info!(
                calls = running,
                "draining: the requests answered, waiting for the calls in flight"
            );
            let calls = app.state.drained(DRAIN_LIMIT.saturating_sub(started.elapsed())).await;
            if !(requests && calls) {
                tracing::warn!("requests or calls still running after the drain limit");
            }
            // Lets the last results leave their session before it closes.
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        };
        listener::serve(listener, self.router, Arc::clone(&self.app), stop).await
    }
}
