//! The stateless `tools/call` served without rmcp's per-request service.
//!
//! On the stateless revision (2026-07-28) a `tools/call` stands alone: no
//! session, no stream, one JSON answer. rmcp serves it through the service
//! it builds for every request (a peer, a transport, channels, a spawned
//! task, and a handler made for it), which costs more than the call's
//! own JSON. This layer answers exactly those requests itself, after
//! every check of the door (Host and Origin, the bearer credential, the
//! body's bounds, the JSON-RPC gate, the OAuth scopes) and with the same
//! handler code (`McpServer::call_tool_as`): decoded into rmcp's model
//! types, answered with them, never with protocol structs of our own.
//!
//! It takes only a request that is unambiguously one: `POST`, no
//! `Mcp-Session-Id`, `MCP-Protocol-Version: 2026-07-28`, an `Accept` that
//! takes JSON, the body one `tools/call` request whose `_meta` carries
//! every key the revision requires (rmcp's own check) with that version,
//! exactly one `Mcp-Method: tools/call` and one `Mcp-Name` equal to the
//! tool, no `Mcp-Param-*` header, no input responses or request state.
//! Anything else, a malformed or unusual request included, goes on to
//! rmcp, which answers it as the specification says. The call runs in the
//! request's task, and if that task drops it (its client went away) it
//! finishes in one of its own (`finish_on_drop`): as on rmcp's
//! path, a call finishes within its deadline, is counted and recorded,
//! and frees its permit, whoever waits for it.
//!
//! `stateless_fast_path = false` in the serve config sends every request
//! to rmcp; both paths pass the same conformance suites and clients, and
//! answer alike (`serve/tests/all/fast_path.rs`).

use super::App;
use super::finish_on_drop::FinishOnDrop;
use crate::auth::Principal;
use crate::handler::McpServer;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion, ServerJsonRpcMessage, ServerResult,
};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The one revision served here.
const REVISION: &str = "2026-07-28";

/// The bytes an answer's buffer starts with: a tool's envelope twice (as
/// text and structured) fits, for the built-in tools' usual answers.
const ANSWER_CAPACITY: usize = 4096;

/// The single value of header `name`, if it has exactly one.
fn only(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?.to_str().ok()?.to_owned();
    values.next().is_none().then_some(first)
}

/// Whether the request's head is one this path takes.
fn head_qualifies(request: &Request) -> bool {
    let headers = request.headers();
    request.method() == Method::POST
        && !headers.contains_key("mcp-session-id")
        && only(headers, "mcp-protocol-version").as_deref() == Some(REVISION)
        && only(headers, "mcp-method").as_deref() == Some("tools/call")
        && only(headers, "mcp-name").is_some_and(|name| !name.starts_with("=?"))
        && !headers.keys().any(|name| name.as_str().starts_with("mcp-param-"))
        && headers.get_all(header::ACCEPT).iter().any(|accept| {
            accept.to_str().is_ok_and(|accept| accept.contains("application/json") || accept.contains("*/*"))
        })
}

/// The layer: a qualifying `tools/call` answered here, anything else on to
/// rmcp.
pub(crate) async fn stateless_call(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if !app.fast_path || !head_qualifies(&request) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The gate read the body whole (within its bounds): this is that buffer.
    let Ok(bytes) = body.collect().await.map(|collected| collected.to_bytes()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some((id, call, meta)) = qualifying_call(&parts.headers, &bytes) else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    let Some(principal) = parts.extensions.get::<Principal>().cloned() else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    let skill = match parts.uri.path().strip_prefix("/mcp/skills/") {
        None => None,
        Some(name) => match app.state.liaison().skills().get(name) {
            Some(skill) => Some(skill.clone()),
            None => return next.run(Request::from_parts(parts, Body::from(bytes))).await,
        },
    };
    if let Some(metrics) = app.state.metrics() {
        metrics.fast_path_call();
    }
    let server = McpServer::for_stateless_call(Arc::clone(&app.state), skill);
    // Run here, and moved to a task of its own if this request's task
    // drops it: a call whose client goes away still runs to its end. A
    // panic is answered, not spread to the connection.
    let call = async move { server.call_tool_as(principal, call, &meta).await };
    let answered = FinishOnDrop::new(AssertUnwindSafe(call).catch_unwind()).await;
    let message = match answered {
        Ok(Ok(response)) => ServerJsonRpcMessage::response(ServerResult::from(response), id),
        Ok(Err(error)) => ServerJsonRpcMessage::error(error, Some(id)),
        Err(_) => ServerJsonRpcMessage::error(
            rmcp::ErrorData::internal_error("the call did not finish", None),
            Some(id),
        ),
    };
    // Sized for a typical answer up front: grown by doubling from empty,
    // the buffer was reallocated a handful of times per answer.
    let mut body = Vec::with_capacity(ANSWER_CAPACITY);
    match serde_json::to_writer(&mut body, &message) {
        Ok(()) => {
            let mut response = (StatusCode::OK, Bytes::from(body)).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// The call in `body`, when it is one this path answers: its id, its
/// parameters and its `_meta`.
fn qualifying_call(
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(rmcp::model::RequestId, rmcp::model::CallToolRequestParams, rmcp::model::MetaObject)> {
    let ClientJsonRpcMessage::Request(request) = serde_json::from_slice::<ClientJsonRpcMessage>(body).ok()?
    else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else { return None };
    let meta = request.request.get_meta();
    let revision = ProtocolVersion::V_2026_07_28;
    let complete =
        meta.missing_required_keys(&revision).is_empty() && meta.protocol_version() == Some(revision);
    let plain = call.params.input_responses.is_none() && call.params.request_state.is_none();
    let named = only(headers, "mcp-name").as_deref() == Some(call.params.name.as_ref());
    if !(complete && plain && named) {
        return None;
    }
    let meta = meta.0.clone();
    let ClientRequest::CallToolRequest(call) = request.request else { return None };
    Some((request.id, call.params, meta))
}
