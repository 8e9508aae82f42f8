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
use super::checks::Continue;
use super::finish_on_drop::FinishOnDrop;
use super::message::Message;
use crate::auth::Principal;
use crate::handler::McpServer;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, JsonRpcRequest, ProtocolVersion, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The one revision served here.
const REVISION: &str = "2026-07-28";

/// The bytes an answer's buffer starts with: a tool's envelope twice (as
/// text and structured) fits, for the built-in tools' usual answers.
const ANSWER_CAPACITY: usize = 4096;

/// The single value of header `name`, if it has exactly one.
fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?.to_str().ok()?;
    values.next().is_none().then_some(first)
}

/// Whether the request's head is one this path takes.
fn head_qualifies(request: &Request) -> bool {
    let headers = request.headers();
    request.method() == Method::POST
        && !headers.contains_key("mcp-session-id")
        && only(headers, "mcp-protocol-version") == Some(REVISION)
        && only(headers, "mcp-method") == Some("tools/call")
        && only(headers, "mcp-name").is_some_and(|name| !name.starts_with("=?"))
        && !headers.keys().any(|name| name.as_str().starts_with("mcp-param-"))
        && headers.get_all(header::ACCEPT).iter().any(|accept| {
            accept.to_str().is_ok_and(|accept| accept.contains("application/json") || accept.contains("*/*"))
        })
}

/// The layer: a qualifying `tools/call` answered here, anything else on to
/// rmcp.
pub(crate) async fn stateless_call(app: &Arc<App>, request: Request, next: impl Continue) -> Response {
    if !app.fast_path || !head_qualifies(&request) {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    // The gate read the body whole (within its bounds): this is that buffer.
    let Ok(bytes) = body.collect().await.map(|collected| collected.to_bytes()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let request_shaped = shape_is_a_request(parts.extensions.get::<Arc<Message>>());
    let Some((id, call, meta)) = request_shaped.then(|| qualifying_call(&parts.headers, &bytes)).flatten()
    else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    let skill = match parts.uri.path().strip_prefix("/mcp/skills/") {
        None => None,
        Some(name) => match app.state.liaison().skills().get(name) {
            Some(skill) => Some(skill.clone()),
            None => return next.run(Request::from_parts(parts, Body::from(bytes))).await,
        },
    };
    // Taken, not cloned: the request goes no further than this layer now.
    let Some(principal) = parts.extensions.remove::<Principal>() else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
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
///
/// Parsed straight into rmcp's `JsonRpcRequest<CallToolRequest>`: the
/// general `ClientJsonRpcMessage` buffers the body once per untagged layer
/// and tries each of the client's request kinds in turn before the
/// fourteenth matches, which was a twentieth of the server's CPU under
/// load. The one thing the general parse checks that this one does not,
/// that a request carries no `result` or `error` member, the gate has read
/// (`shape_is_a_request`); a body either parse refuses goes to rmcp.
fn qualifying_call(
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(rmcp::model::RequestId, CallToolRequestParams, rmcp::model::MetaObject)> {
    let JsonRpcRequest { id, mut request, .. } =
        serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(body).ok()?;
    let meta = request.extensions.remove::<RequestMetaObject>().unwrap_or_default();
    qualifies(headers, &request.params, &meta).then_some((id, request.params, meta.0))
}

/// Whether a call with `params` and `meta` is one this path answers: its
/// `_meta` complete for the revision, no input responses or request
/// state, and the `Mcp-Name` header naming its tool.
fn qualifies(headers: &HeaderMap, params: &CallToolRequestParams, meta: &RequestMetaObject) -> bool {
    let revision = ProtocolVersion::V_2026_07_28;
    let complete =
        meta.missing_required_keys(&revision).is_empty() && meta.protocol_version() == Some(revision);
    let plain = params.input_responses.is_none() && params.request_state.is_none();
    let named = only(headers, "mcp-name") == Some(params.name.as_ref());
    complete && plain && named
}

/// Whether the gate read the body as a request: a method and an id, and
/// neither a `result` nor an `error` (a message with both kinds of member
/// is no message at all, and rmcp answers it so).
fn shape_is_a_request(message: Option<&Arc<Message>>) -> bool {
    message.is_some_and(|message| {
        message.method.is_some() && message.id.is_some() && !message.has_result && !message.has_error
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta};
    use serde_json::json;

    /// The call as rmcp's general parse reads it: what this path answered
    /// from before it parsed the request directly.
    fn as_rmcp_reads_it(
        headers: &HeaderMap,
        body: &[u8],
    ) -> Option<(rmcp::model::RequestId, CallToolRequestParams, rmcp::model::MetaObject)> {
        let ClientJsonRpcMessage::Request(request) =
            serde_json::from_slice::<ClientJsonRpcMessage>(body).ok()?
        else {
            return None;
        };
        let meta = request.request.get_meta().clone();
        let ClientRequest::CallToolRequest(call) = request.request else { return None };
        qualifies(headers, &call.params, &meta).then_some((request.id, call.params, meta.0))
    }

    /// What the gate read of `body`, as the fast path finds it.
    fn gate_read(body: &[u8]) -> Option<Arc<Message>> {
        match super::super::message::Body::read(body) {
            Ok(super::super::message::Body::Object(message)) => Some(Arc::new(message)),
            _ => None,
        }
    }

    #[test]
    fn the_direct_parse_takes_exactly_what_rmcps_general_parse_takes() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", HeaderValue::from_static("get_job_status"));
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let call = |id: serde_json::Value, meta: &serde_json::Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "get_job_status", "arguments": {"job_id": "job-7"}, "_meta": meta}})
        };
        let mut bodies: Vec<String> = vec![
            call(json!(1), &meta).to_string(),
            call(json!("a"), &meta).to_string(),
            call(json!(2.0), &meta).to_string(),
            call(json!(-3), &meta).to_string(),
            call(json!(1), &json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})).to_string(),
            call(json!(1), &json!({})).to_string(),
        ];
        let mut variant = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut body = call(json!(1), &meta);
            edit(&mut body);
            bodies.push(body.to_string());
        };
        variant(&|body| body["result"] = json!({}));
        variant(&|body| body["error"] = json!({"code": 1, "message": "m"}));
        variant(&|body| body["method"] = json!("tools/list"));
        variant(&|body| body["jsonrpc"] = json!("1.0"));
        variant(&|body| body["params"]["name"] = json!("hostile_loop"));
        variant(&|body| body["params"]["name"] = json!(7));
        variant(&|body| body["params"]["arguments"] = json!([1]));
        variant(&|body| body["params"]["extra"] = json!({"x": 1}));
        variant(&|body| body["params"]["inputResponses"] = json!({}));
        variant(&|body| body["params"]["requestState"] = json!("s"));
        variant(&|body| body["other"] = json!(true));
        variant(&|body| {
            body.as_object_mut().map(|body| body.remove("id"));
        });
        variant(&|body| {
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-06-18")
        });
        // Members named twice: the last counts, in both parses.
        bodies.push(
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x","name":"get_job_status","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_owned(),
        );
        let mut taken = 0;
        for body in &bodies {
            let bytes = body.as_bytes();
            let direct = shape_is_a_request(gate_read(bytes).as_ref())
                .then(|| qualifying_call(&headers, bytes))
                .flatten();
            let general = as_rmcp_reads_it(&headers, bytes);
            assert_eq!(
                direct.as_ref().map(|(id, params, meta)| (id, serde_json::to_value(params).ok(), meta)),
                general.as_ref().map(|(id, params, meta)| (id, serde_json::to_value(params).ok(), meta)),
                "{body}"
            );
            taken += usize::from(direct.is_some());
        }
        assert!(taken >= 5, "the well-formed calls were taken ({taken})");
    }
}
