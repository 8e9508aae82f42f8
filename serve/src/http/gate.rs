//! What a request passes before the MCP SDK sees it.
//!
//! [`authenticate`]: a valid bearer credential (401 otherwise), and the
//! connection's place in the credential's share of connections (503 with
//! `Retry-After`, and the connection closed, past it).
//!
//! [`mcp_gate`], on the MCP routes, in this order:
//! 1. **Ownership.** A request carrying `Mcp-Session-Id` (any method:
//!    POST, the GET that opens or resumes a stream, DELETE) is served only
//!    for the principal that opened that session; any other credential,
//!    or a session nobody owns, gets 404 as for an unknown session, so a
//!    session id alone reveals and moves nothing.
//! 2. **Well-formed JSON-RPC** (POST): 413 past the body bound, 400 with
//!    -32700 for a body that is not JSON, 400 with -32600 for a message
//!    that is not one JSON-RPC 2.0 request, notification or response (an
//!    `id` that is not a string or an integer, `params` that is not an
//!    object, a batch).
//! 3. **Sessions where the guard needs one.** On a skill route, a request
//!    without a session is refused (400, -32600) unless it opens one
//!    (`initialize`), only asks which revisions are spoken
//!    (`server/discover`), is a notification, or stands alone as on the
//!    stateless revision (its protocol version in `_meta`), where the
//!    guard is carried by a sealed handle ([`crate::sessions`]): a request
//!    outside both would run unguarded.
//! 4. **A new session within the bounds**: `max_sessions` over every
//!    replica sharing the ledger and `max_sessions_per_credential` for the
//!    caller, each counting the live stateless sessions too, checked and
//!    reserved in one step of the ledger (503 with `Retry-After`; 503 too
//!    when the ledger cannot be reached); the session it opens is owned
//!    by the caller.

use super::checks::Continue;
use super::message::{self, Body, Message, Params};
use super::{App, Unavailable};
use crate::auth::{AuthError, Principal};
use crate::sessions::ledger::LedgerError;
use crate::tenants::ConnectionHold;
use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The credential that holds a connection, if one does yet (put in every
/// request's extensions by the listener).
#[derive(Default)]
pub struct ConnectionTenant(Mutex<Option<ConnectionHold>>);

/// 401: the RFC 6750 challenge (naming the resource metadata, RFC 9728,
/// and the scopes `path` needs, when `[oauth]` publishes them), and a
/// JSON-RPC error body, so a client that shows the body rather than the
/// status still says "unauthorized".
fn unauthorized(error: &AuthError, app: &App, path: &str) -> Response {
    let scope = app.scopes.as_ref().and_then(|scopes| scopes.route_scope(path, &app.state));
    let challenge =
        super::scopes::challenge(app.metadata_url.as_deref(), error.bearer_error(), scope.as_deref());
    let body = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32001, "message": format!("Unauthorized: {error}")}});
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    response
}

/// The bearer check, then the connection's place in the credential's share.
pub(crate) async fn authenticate(app: &Arc<App>, mut request: Request, next: impl Continue) -> Response {
    let header = request.headers().get(header::AUTHORIZATION).map(|value| value.to_str().unwrap_or(" "));
    let (principal, scopes) = match app.auth.credential(header) {
        Ok(credential) => credential,
        Err(error) => {
            tracing::warn!(reason = %error, method = %request.method(), path = request.uri().path(), "authentication failed");
            if let Some(metrics) = app.state.metrics() {
                metrics.authentication_failure(error.reason());
            }
            return unauthorized(&error, app, request.uri().path());
        }
    };
    if let Some(connection) = request.extensions().get::<Arc<ConnectionTenant>>() {
        let mut held = connection.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.is_none() {
            match app.state.tenants.hold_connection(&principal.id) {
                Ok(hold) => *held = Some(hold),
                Err(_) => {
                    drop(held);
                    tracing::warn!("connection refused: the credential holds its share of connections");
                    let mut response = app.unavailable(Unavailable::CredentialConnections);
                    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
                    return response;
                }
            }
        }
    }
    request.extensions_mut().insert(principal);
    if let Some(scopes) = scopes {
        request.extensions_mut().insert(scopes);
    }
    next.run(request).await
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

fn invalid_request(message: &str) -> Response {
    rpc_error(StatusCode::BAD_REQUEST, -32600, &format!("Invalid Request: {message}"))
}

/// A JSON-RPC id: a string or an integer (never null, a fraction, a
/// boolean, an object or an array).
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Why `body` is not one JSON-RPC 2.0 message as MCP sends them, if it
/// is not; the message when it is.
fn malformed(body: Body) -> Result<Message, &'static str> {
    let message = match body {
        Body::Object(message) => message,
        Body::Array => return Err("batches are not supported"),
        Body::Other => return Err("not a JSON-RPC 2.0 message"),
    };
    if message.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err("not a JSON-RPC 2.0 message");
    }
    match &message.method {
        Some(Value::String(_)) => {
            if message.id.as_ref().is_some_and(|id| !valid_id(id)) {
                return Err("`id` must be a string or an integer");
            }
            if matches!(message.params, Some(Params::Other)) {
                return Err("`params` must be an object");
            }
            Ok(message)
        }
        Some(_) => Err("`method` must be a string"),
        None => {
            if !message.id.as_ref().is_some_and(valid_id) {
                return Err("a response's `id` must be a string or an integer");
            }
            if message.has_result == message.has_error {
                return Err("a response has exactly one of `result` and `error`");
            }
            Ok(message)
        }
    }
}

/// How much of an oversized body is read and dropped before the 413, so
/// the client (still sending) reads the answer instead of a reset.
const DISCARD_BYTES: usize = 16 * 1024 * 1024;

/// The body if it has at most `limit` bytes; `None` past it, after
/// discarding up to [`DISCARD_BYTES`] more (the request timeout bounds the
/// time).
pub(crate) async fn read_capped(mut body: axum::body::Body, limit: usize) -> Option<Bytes> {
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

/// The answer for a session id the caller does not own: the same as for
/// an unknown session.
fn not_your_session() -> Response {
    rpc_error(StatusCode::NOT_FOUND, -32600, "Session not found")
}

/// The MCP gate: ownership, well-formed JSON-RPC, sessions where the
/// guard needs one, and a new session's bounds (the module doc).
pub(crate) async fn mcp_gate(app: &Arc<App>, request: Request, next: impl Continue) -> Response {
    let Some(principal) = request.extensions().get::<Principal>() else {
        return unauthorized(&AuthError::Missing, app, request.uri().path());
    };
    let session =
        request.headers().get("mcp-session-id").map(|id| id.to_str().unwrap_or_default().to_owned());
    if let Some(id) = &session
        && app.owners.owner(id).as_ref() != Some(principal)
    {
        tracing::warn!(method = %request.method(), "request on a session this credential does not own refused");
        if let Some(metrics) = app.state.metrics() {
            metrics.http_forbidden("session_not_owned");
        }
        return not_your_session();
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let skill_route = request.uri().path() != "/mcp";
    let (parts, body) = request.into_parts();
    let Some(bytes) = read_capped(body, app.state.limits.max_body_bytes()).await else {
        let mut response = rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, "request body too large");
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    };
    // Read once, without building the message: the SDK parses it into
    // its own types after the gate.
    let body = match message::Body::read(&bytes) {
        Err(_) => return rpc_error(StatusCode::BAD_REQUEST, -32700, "Parse error"),
        Ok(body) => body,
    };
    let message = match malformed(body) {
        Err(problem) => return invalid_request(problem),
        Ok(message) => message,
    };
    let opens = message.method() == Some("initialize");
    // A request on a skill route outside both forms of its guard.
    let unguarded = skill_route
        && message.method().is_some_and(|method| method != "server/discover")
        && message.id.is_some()
        && !message.names_its_protocol_version();
    let mut request = Request::from_parts(parts, axum::body::Body::from(bytes));
    // What the scope check reads of it, so it need not read it again.
    request.extensions_mut().insert(Arc::new(message));
    if session.is_some() {
        return next.run(request).await;
    }
    if opens {
        // Cloned only here, for the session it opens: the request still
        // carries it, as it did at the top.
        let Some(principal) = request.extensions().get::<Principal>().cloned() else {
            return unauthorized(&AuthError::Missing, app, request.uri().path());
        };
        open_session(app, principal, request, next).await
    } else if unguarded {
        invalid_request(
            "this skill's guard lives in an MCP session or, on the stateless revision, in a sealed handle: send `initialize` first and then the session id, or give the request its protocol version in `_meta`",
        )
    } else {
        next.run(request).await
    }
}

/// An `initialize` without a session: a place in the share (both kinds of
/// session counted over the ledger, so over every replica), its session
/// owned by the caller.
async fn open_session(app: &App, principal: Principal, request: Request, next: impl Continue) -> Response {
    match app.state.sessions.reserve_place(&principal).await {
        Ok(place) => app.owners.opening(principal, place, next.run(request)).await,
        Err(LedgerError::ServerFull) => {
            tracing::warn!("new session refused: too many open sessions");
            app.unavailable(Unavailable::TooManySessions)
        }
        Err(LedgerError::CredentialFull) => {
            tracing::warn!("new session refused: the credential holds its share of sessions");
            app.unavailable(Unavailable::CredentialSessions)
        }
        Err(error) => {
            tracing::warn!(%error, "new session refused: the session ledger cannot count it");
            app.unavailable(Unavailable::Ledger)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_json_rpc_message_with_a_valid_id_and_object_params_passes() {
        let fine = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
            json!({"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}}),
        ];
        let read = |message: &Value| malformed(Body::read(message.to_string().as_bytes()).unwrap());
        for message in fine {
            assert!(read(&message).is_ok(), "{message}");
        }
        let bad = [
            json!([{"jsonrpc": "2.0", "id": 1, "method": "initialize"}]),
            json!({"jsonrpc": "1.0", "id": 1, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": [1], "method": "x"}),
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": true, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "p"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 3}),
            json!({"jsonrpc": "2.0", "id": null, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}),
            json!("text"),
        ];
        for message in bad {
            assert!(read(&message).is_err(), "{message}");
        }
    }
}
