//! The remote server: MCP streamable HTTP on axum, behind authentication
//! and bounds.
//!
//! Routes:
//! - `/mcp`: the credential's allow-listed tools, without the guard;
//! - `/mcp/skills/<name>`: one skill's tools through a guarded session per
//!   MCP session, its trace as a resource;
//! - `POST /v1/validate`: `{"trace", "answer", "mode"}` → the verdict JSON
//!   of `harmonia validate --json`, traces verified with this server's key;
//! - `GET /healthz` (the process answers) and `GET /readyz` (serving, not
//!   draining): no credential needed;
//! - `GET /metrics`: the Prometheus text of the host's metrics, without a
//!   credential unless `[metrics] require_token` (absent when
//!   `[metrics] enabled = false`).
//!
//! Every other request needs `Authorization: Bearer`: without a valid one
//! it gets 401 with `WWW-Authenticate` and never reaches MCP handling; the
//! failure is logged without the token. Bounds: bodies over
//! `limits.max_body_kib` get 413; an `initialize` past `limits.max_sessions`
//! and any request while draining get 503 with `Retry-After`; a request
//! slower than `limits.request_timeout_s` gets 408; a client that has not
//! sent its headers within `limits.header_timeout_s` is disconnected, and
//! one that stops reading for `limits.write_stall_s` while the server
//! waits to write to it;
//! sessions idle for `limits.idle_session_s` are closed.
//!
//! Shutdown (SIGTERM or the caller's signal): new requests get 503, the
//! calls in flight finish (each within its deadline), then the sessions
//! are closed and the connections drained.

use crate::auth::{AuthError, Authenticator};
use crate::config::ServeConfig;
use crate::handler::McpServer;
use crate::replica::ReplicaSessions;
use crate::stalled_writes::StallLimited;
use crate::state::ServeState;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use harmonia_host::liaison::json as unique_json;
use harmonia_host::liaison::trace::TraceDocument;
use harmonia_host::liaison::validator::{Mode, validate_received};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The longest a drain waits for calls in flight: the longest deadline a
/// tool may declare, and a margin.
const DRAIN_LIMIT: Duration = Duration::from_secs(125);

struct App {
    state: Arc<ServeState>,
    auth: Authenticator,
    managers: Vec<Arc<ReplicaSessions>>,
    draining: AtomicBool,
}

/// Why a request gets 503 before MCP handling.
#[derive(Clone, Copy)]
enum Unavailable {
    Draining,
    TooManySessions,
    TooManyConnections,
}

impl Unavailable {
    /// The `reason` label of `harmonia_http_unavailable_total`.
    fn label(self) -> &'static str {
        match self {
            Self::Draining => "draining",
            Self::TooManySessions => "too_many_sessions",
            Self::TooManyConnections => "too_many_connections",
        }
    }

    /// The body's `error` text.
    fn message(self) -> &'static str {
        match self {
            Self::Draining => "draining",
            Self::TooManySessions => "too many sessions",
            Self::TooManyConnections => "too many connections",
        }
    }
}

impl App {
    async fn open_sessions(&self) -> usize {
        let mut open = 0;
        for manager in &self.managers {
            open += manager.open().await;
        }
        open
    }

    fn unavailable(&self, why: Unavailable) -> Response {
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
}

fn unauthorized(error: &AuthError) -> Response {
    let challenge = match error.bearer_error() {
        Some(code) => format!("Bearer realm=\"harmonia\", error=\"{code}\""),
        None => "Bearer realm=\"harmonia\"".to_owned(),
    };
    let mut response =
        (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "unauthorized"}))).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

async fn authenticate(State(app): State<Arc<App>>, mut request: Request, next: Next) -> Response {
    let header = request.headers().get(header::AUTHORIZATION).map(|value| value.to_str().unwrap_or(" "));
    match app.auth.authenticate(header) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(error) => {
            tracing::warn!(reason = %error, method = %request.method(), path = request.uri().path(), "authentication failed");
            if let Some(metrics) = app.state.metrics() {
                metrics.authentication_failure(error.reason());
            }
            unauthorized(&error)
        }
    }
}

async fn bound(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if app.draining.load(Ordering::SeqCst) {
        return app.unavailable(Unavailable::Draining);
    }
    match tokio::time::timeout(app.state.limits.request_timeout(), next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            (StatusCode::REQUEST_TIMEOUT, axum::Json(json!({"error": "request timeout"}))).into_response()
        }
    }
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// Whether `value` has a JSON-RPC 2.0 message's shape (or is a batch,
/// which the SDK answers itself).
fn json_rpc_shaped(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(message) => {
            message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
                && (message.get("method").is_some_and(Value::is_string)
                    || (message.contains_key("id")
                        && (message.contains_key("result") || message.contains_key("error"))))
        }
        _ => false,
    }
}

/// How much of an oversized body is read and dropped before the 413, so
/// the client (still sending) reads the answer instead of a reset.
const DISCARD_BYTES: usize = 16 * 1024 * 1024;

/// The body if it has at most `limit` bytes; `None` past it, after
/// discarding up to [`DISCARD_BYTES`] more (the request timeout bounds the
/// time).
async fn read_capped(mut body: Body, limit: usize) -> Option<Bytes> {
    use http_body_util::BodyExt;
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return None };
        let Ok(data) = frame.into_data() else { continue };
        seen = seen.saturating_add(data.len());
        if seen > limit.saturating_add(DISCARD_BYTES) {
            return None;
        }
        if seen <= limit {
            kept.extend_from_slice(&data);
        }
    }
    (seen <= limit).then(|| Bytes::from(kept))
}

/// Answers a POST body that is oversized, not JSON or not JSON-RPC with a
/// JSON-RPC error (413 / 400 -32700 / 400 -32600) before the SDK sees it.
async fn well_formed(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Some(bytes) = read_capped(body, app.state.limits.max_body_bytes()).await else {
        let mut response = rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, "request body too large");
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Err(_) => return rpc_error(StatusCode::BAD_REQUEST, -32700, "Parse error"),
        Ok(value) if !json_rpc_shaped(&value) => {
            return rpc_error(StatusCode::BAD_REQUEST, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
        }
        // Only a handshake opens a session; stateless calls never count.
        Ok(value)
            if value.get("method").and_then(Value::as_str) == Some("initialize")
                && !parts.headers.contains_key("mcp-session-id")
                && app.open_sessions().await >= app.state.limits.max_sessions as usize =>
        {
            tracing::warn!("new session refused: too many open sessions");
            return app.unavailable(Unavailable::TooManySessions);
        }
        Ok(_) => {}
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

fn bad_request(message: impl Into<String>) -> Response {
    let message: String = message.into();
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"ok": false, "error": {"code": "bad_request", "message": message}})),
    )
        .into_response()
}

async fn validate(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return bad_request("the body is not UTF-8");
    };
    let request = match unique_json::from_str(text) {
        Ok(Value::Object(request)) => request,
        Ok(_) => return bad_request("a request is a JSON object"),
        Err(error) => return bad_request(format!("not JSON: {error}")),
    };
    if let Some(key) = request.keys().find(|key| !["trace", "answer", "mode"].contains(&key.as_str())) {
        return bad_request(format!("unknown field `{key}`"));
    }
    let mode = match request.get("mode").and_then(Value::as_str) {
        None | Some("review") => Mode::Review,
        Some("submission") => Mode::Submission,
        Some(_) => return bad_request("`mode` must be \"review\" or \"submission\""),
    };
    let (Some(trace), Some(answer)) = (request.get("trace"), request.get("answer")) else {
        return bad_request("`trace` and `answer` are required");
    };
    let document = match TraceDocument::parse(trace) {
        Ok(document) => document,
        Err(error) => return bad_request(format!("trace: {error}")),
    };
    let verification = document.verify(&app.state.trace_key).map_err(|error| error.to_string());
    let verdict = validate_received(&document.trace, verification, answer, app.state.liaison.skills(), mode);
    if let (Some(metrics), Some(rule)) = (app.state.metrics(), verdict.rule) {
        metrics.refusal(rule.as_str());
    }
    axum::Json(serde_json::to_value(&verdict).unwrap_or(Value::Null)).into_response()
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
        if !config.allowed_hosts.is_empty() {
            mcp_config = mcp_config.with_allowed_hosts(config.allowed_hosts.clone());
        }
        let manager = || {
            let mut manager = LocalSessionManager::default();
            manager.session_config.keep_alive = Some(Duration::from_secs(limits.idle_session_s));
            manager.session_config.init_timeout = Some(Duration::from_secs(limits.header_timeout_s.max(10)));
            Arc::new(ReplicaSessions::new(manager, config.replica_id.as_deref()))
        };
        let mut managers = Vec::new();
        let mut mcp = Router::new();
        let unbound = manager();
        managers.push(Arc::clone(&unbound));
        let shared = Arc::clone(&state);
        mcp = mcp.route_service(
            "/mcp",
            StreamableHttpService::new(
                move || Ok(McpServer::new(Arc::clone(&shared), None, None)),
                unbound,
                mcp_config.clone(),
            ),
        );
        for skill in state.liaison.skills().iter() {
            let bound = manager();
            managers.push(Arc::clone(&bound));
            let shared = Arc::clone(&state);
            let skill = skill.clone();
            let path = format!("/mcp/skills/{}", skill.name);
            mcp = mcp.route_service(
                &path,
                StreamableHttpService::new(
                    move || Ok(McpServer::new(Arc::clone(&shared), Some(skill.clone()), None)),
                    bound,
                    mcp_config.clone(),
                ),
            );
        }
        let app =
            Arc::new(App { state: Arc::clone(&state), auth, managers, draining: AtomicBool::new(false) });
        let mut protected = mcp
            .route_layer(middleware::from_fn_with_state(Arc::clone(&app), well_formed))
            .route("/v1/validate", post(validate));
        let mut open = Router::new();
        if config.metrics.enabled {
            if config.metrics.require_token {
                protected = protected.route("/metrics", get(metrics));
            } else {
                open = open.route("/metrics", get(metrics));
            }
        }
        let protected = protected
            .layer(DefaultBodyLimit::max(limits.max_body_bytes()))
            .route_layer(middleware::from_fn_with_state(Arc::clone(&app), authenticate));
        let ready = Arc::clone(&app);
        let router = Router::new()
            .route("/healthz", get(|| async { axum::Json(json!({"status": "ok"})) }))
            .route(
                "/readyz",
                get(move || {
                    let ready = Arc::clone(&ready);
                    async move {
                        if ready.draining.load(Ordering::SeqCst) {
                            ready.unavailable(Unavailable::Draining)
                        } else {
                            axum::Json(json!({"ready": true})).into_response()
                        }
                    }
                }),
            )
            .merge(open)
            .merge(protected)
            .layer(middleware::from_fn_with_state(Arc::clone(&app), bound))
            .with_state(Arc::clone(&app));
        Self { router, app, cancel }
    }

    /// Serve on `listener` until `shutdown` resolves, then drain.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
        use hyper_util::server::conn::auto::Builder;
        let header_timeout = Duration::from_secs(self.app.state.limits.header_timeout_s);
        let mut builder = Builder::new(TokioExecutor::new()).http1_only();
        builder.http1().timer(TokioTimer::new()).header_read_timeout(header_timeout);
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let service = hyper_util::service::TowerToHyperService::new(
            self.router
                .into_service::<Body>()
                .map_request(|request: hyper::Request<hyper::body::Incoming>| request.map(Body::new)),
        );
        let app = Arc::clone(&self.app);
        let cancel = self.cancel.clone();
        let stop = async move {
            shutdown.await;
            app.draining.store(true, Ordering::SeqCst);
            tracing::info!("draining: waiting for calls in flight");
            if !app.state.drained(DRAIN_LIMIT).await {
                tracing::warn!("calls still running after the drain limit");
            }
            // Lets the last results leave their session before it closes.
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        };
        tokio::pin!(stop);
        let connections =
            Arc::new(tokio::sync::Semaphore::new(self.app.state.limits.max_connections as usize));
        let write_stall = Duration::from_secs(self.app.state.limits.write_stall_s);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, _) = match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            tracing::warn!(%error, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    // Small JSON-RPC answers must not wait for delayed ACKs.
                    let _ = stream.set_nodelay(true);
                    let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                        tracing::warn!("connection refused: too many open connections");
                        tokio::spawn(refuse_connection(stream, Arc::clone(&self.app)));
                        continue;
                    };
                    let stream = StallLimited::new(stream, write_stall);
                    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service.clone());
                    let connection = graceful.watch(connection.into_owned());
                    tokio::spawn(async move {
                        let _permit = permit;
                        let _ = connection.await;
                    });
                }
                () = &mut stop => break,
            }
        }
        drop(listener);
        if tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await.is_err() {
            tracing::warn!("connections still open after the drain; closing");
        }
        Ok(())
    }
}

/// Answer the one request of a connection past the bound with a 503 and
/// `Retry-After`, then close it; the whole exchange within the header
/// timeout and a second.
async fn refuse_connection(stream: tokio::net::TcpStream, app: Arc<App>) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let limit = Duration::from_secs(app.state.limits.header_timeout_s + 1);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.keep_alive(false).timer(TokioTimer::new()).header_read_timeout(limit);
    let service = hyper::service::service_fn(move |_request| {
        let app = Arc::clone(&app);
        async move { Ok::<_, std::convert::Infallible>(app.unavailable(Unavailable::TooManyConnections)) }
    });
    let _ = tokio::time::timeout(limit, builder.serve_connection(TokioIo::new(stream), service)).await;
}

use tower::ServiceExt as _;
