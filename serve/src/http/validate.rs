//! `POST /v1/validate`: `{"trace", "answer", "mode"}` → the verdict of
//! `harmonia validate --json`, and the seal's state; `POST /v1/review`:
//! the same request → the review page of `harmonia review` (one
//! self-contained HTML page, served with its Content-Security-Policy).
//!
//! - `mode` defaults to `"submission"`: a trace this server did not sign
//!   (unsigned, altered, another key) is refused as `trace_unverified`.
//!   `"review"` judges the answer all the same, and the `seal` object of
//!   every answer says whether the seal verified, so a verdict never
//!   hides a failed seal.
//! - The judging runs on a blocking thread, at most
//!   `limits.max_validations` at once and within the request timeout, so
//!   large requests never stall the server's workers (health probes,
//!   other tenants' calls); one past the bound waits for a place within
//!   the same timeout, then gets 503 with `Retry-After`. One credential
//!   has at most `limits.max_validations_per_credential` judged or
//!   waiting for a place at once; its others wait behind its own, so a
//!   credential sending many cannot push another's to the back.
//! - Each validation draws from the credential's rate bucket like a tool
//!   call (429 with `Retry-After` past it).
//! - A review page is at most 4 × the request's body + 256 KiB, whatever
//!   the body holds (`harmonia_review::bound`, sized by the body's
//!   length); `body_budget` says why that bound, not a count of its own,
//!   keeps its memory within the body budget.

use super::{App, Unavailable};
use crate::auth::Principal;
use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use harmonia_contract::liaison::json as unique_json;
use harmonia_contract::liaison::seal::Unverified;
use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::{Mode, validate_received};
use serde_json::{Value, json};
use std::sync::Arc;

fn bad_request(message: impl Into<String>) -> Response {
    let message: String = message.into();
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"ok": false, "error": {"code": "bad_request", "message": message}})),
    )
        .into_response()
}

/// The `seal` object of an answer: `state` is `verified`, `unsigned`,
/// `malformed`, `altered`, `other_key` or `bad_signature`.
fn seal_state(verification: &Result<(), Unverified>) -> Value {
    let state = match verification {
        Ok(()) => "verified",
        Err(Unverified::Unsigned) => "unsigned",
        Err(Unverified::Malformed(_)) => "malformed",
        Err(Unverified::Length { .. } | Unverified::EntryChanged(_)) => "altered",
        Err(Unverified::OtherKey { .. }) => "other_key",
        Err(Unverified::BadSignature) => "bad_signature",
    };
    json!({
        "verified": verification.is_ok(),
        "state": state,
        "reason": verification.as_ref().err().map(ToString::to_string),
    })
}

/// A request's trace, answer and mode.
struct Judging {
    document: TraceDocument,
    answer: Value,
    mode: Mode,
}

/// Read a request: its trace, answer and mode, or a bad-request message.
fn read_request(body: &[u8]) -> Result<Judging, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_owned())?;
    let request = match unique_json::from_str(text) {
        Ok(Value::Object(request)) => request,
        Ok(_) => return Err("a request is a JSON object".into()),
        Err(error) => return Err(format!("not JSON: {error}")),
    };
    if let Some(key) = request.keys().find(|key| !["trace", "answer", "mode"].contains(&key.as_str())) {
        return Err(format!("unknown field `{key}`"));
    }
    let mode = match request.get("mode").and_then(Value::as_str) {
        None | Some("submission") => Mode::Submission,
        Some("review") => Mode::Review,
        Some(_) => return Err("`mode` must be \"submission\" or \"review\"".into()),
    };
    let (Some(trace), Some(answer)) = (request.get("trace"), request.get("answer")) else {
        return Err("`trace` and `answer` are required".into());
    };
    let document = TraceDocument::parse(trace).map_err(|error| format!("trace: {error}"))?;
    Ok(Judging { document, answer: answer.clone(), mode })
}

/// Judge one request (on a blocking thread): the response body, or a
/// bad-request message.
fn judge(app: &App, body: &[u8]) -> Result<Value, String> {
    let Judging { document, answer, mode } = read_request(body)?;
    let verification = document.verify(&app.state.trace_key);
    let seal = seal_state(&verification);
    let verdict = validate_received(
        &document.trace,
        verification.map_err(|error| error.to_string()),
        &answer,
        app.state.liaison().skills(),
        mode,
    );
    if let (Some(metrics), Some(rule)) = (app.state.metrics(), verdict.rule) {
        metrics.refusal(rule.as_str());
    }
    let mut answer = serde_json::to_value(&verdict).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut answer {
        fields.insert("mode".into(), json!(if mode == Mode::Submission { "submission" } else { "review" }));
        fields.insert("seal".into(), seal);
    }
    Ok(answer)
}

/// 429 with `Retry-After` (whole seconds, at least 1) for a credential
/// past its rate.
fn too_many_requests(wait: std::time::Duration) -> Response {
    let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        axum::Json(json!({"error": "rate limited", "retryAfterMs": wait.as_millis() as u64})),
    )
        .into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// The review page of one request (on a blocking thread), or a
/// bad-request message.
fn review(app: &App, body: &[u8]) -> Result<String, String> {
    let Judging { document, answer, mode } = read_request(body)?;
    let verification = document.verify(&app.state.trace_key);
    let liaison = app.state.liaison();
    Ok(harmonia_review::review_page(&document, verification, &answer, liaison.skills(), mode, body.len()))
}

/// `POST /v1/validate`.
pub(crate) async fn validate(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    body: Bytes,
) -> Response {
    off_the_workers(app, principal, body, "/v1/validate", |app, body| {
        judge(app, body).map(|answer| axum::Json(answer).into_response())
    })
    .await
}

/// `POST /v1/review`.
pub(crate) async fn review_route(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    body: Bytes,
) -> Response {
    off_the_workers(app, principal, body, "/v1/review", |app, body| {
        review(app, body).map(|page| {
            let mut response = page.into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(harmonia_review::CONTENT_SECURITY_POLICY),
            );
            response
        })
    })
    .await
}

/// Run `work` on a request's body on a blocking thread, within the
/// credential's rate (drawn from its bucket for `route`), its share of
/// validations, a validation place and the request timeout.
async fn off_the_workers(
    app: Arc<App>,
    principal: Principal,
    body: Bytes,
    route: &'static str,
    work: fn(&App, &[u8]) -> Result<Response, String>,
) -> Response {
    let deadline = tokio::time::Instant::now() + app.state.limits.request_timeout();
    if let Err(wait) = app.state.tenants.admit_call(&principal, route).await {
        return too_many_requests(wait);
    }
    let tenants = &app.state.tenants;
    // Its own turn first: only then does it queue for a place, so the
    // place queue holds at most each credential's share.
    let Ok(Ok(turn)) =
        tokio::time::timeout_at(deadline, tenants.validations(&principal.id).acquire_owned()).await
    else {
        tracing::warn!("validation refused: the credential's earlier validations held its share");
        tenants.forget_if_idle(&principal.id);
        return app.unavailable(Unavailable::CredentialValidations);
    };
    let Ok(Ok(place)) = tokio::time::timeout_at(deadline, Arc::clone(&app.validations).acquire_owned()).await
    else {
        tracing::warn!("validation refused: every validation place stayed taken");
        tenants.give_back(&principal.id, turn);
        return app.unavailable(Unavailable::TooManyValidations);
    };
    let judged = Arc::clone(&app);
    let judging = tokio::task::spawn_blocking(move || {
        let _place = place;
        let verdict = work(&judged, &body);
        // Held until the judging ends, even past a timeout's 408.
        judged.state.tenants.give_back(&principal.id, turn);
        verdict
    });
    match tokio::time::timeout_at(deadline, judging).await {
        Ok(Ok(Ok(response))) => response,
        Ok(Ok(Err(message))) => bad_request(message),
        Ok(Err(_)) => (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(json!({"error": "validation failed"})))
            .into_response(),
        Err(_) => {
            (StatusCode::REQUEST_TIMEOUT, axum::Json(json!({"error": "request timeout"}))).into_response()
        }
    }
}
