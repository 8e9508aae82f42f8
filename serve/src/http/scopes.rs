//! Tools and skills as OAuth scopes, with `[oauth]` (the MCP
//! authorization spec's scope challenge, RFC 6750 §3.1).
//!
//! Each tool has a scope (`oauth.tool_scope`, `harmonia:tools:<tool>` by
//! default) and each skill one (`oauth.skill_scope`,
//! `harmonia:skills:<skill>`); all are published in the metadata's
//! `scopes_supported`, read from the plugin set serving at each request
//! (a hot reload's new tools are published at once). A JWT (which carries [`Scopes`]) must hold:
//! - on a skill's route, the skill's scope, for every request: checked by
//!   [`require_route`] before the MCP gate, so a refused `initialize`
//!   never counts against the session bounds; the skill's scope covers
//!   its tools there (the guard bounds them);
//! - on `/mcp`, a tool's scope to call it and a skill's scope to get its
//!   prompt: checked by [`require_call`] after the gate has read and
//!   checked the body. A tool outside the credential's allow-list (or
//!   unknown) is left to the `call_refused` envelope, so the answer names
//!   no scope of a tool the caller may not see.
//!
//! Lacking it, the request gets 403 with `WWW-Authenticate: Bearer
//! error="insufficient_scope", scope="…"` (and `resource_metadata`), and
//! a JSON-RPC error naming the scope, so a client can step up and retry.
//! A 401 names the scopes its route needs (every tool's on `/mcp`, the
//! skill's on its route). Static tokens have no scopes: their allow-list
//! alone governs, and neither check reads their requests.

use super::App;
use super::checks::Continue;
use super::message::Message;
use crate::auth::{Principal, Scopes};
use crate::config::OAuthConfig;
use crate::state::ServeState;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The skills' routes start with this.
const SKILL_ROUTES: &str = "/mcp/skills/";

/// The scopes of `[oauth]` for the tools and skills served now: read
/// from the plugin set at each use, so a reload's new tools are published
/// (and named in a 401) at once, and its removed ones no longer are.
pub(crate) struct ScopePolicy {
    oauth: OAuthConfig,
}

impl ScopePolicy {
    pub(crate) fn new(oauth: &OAuthConfig) -> Self {
        Self { oauth: oauth.clone() }
    }

    /// The `[oauth]` section.
    pub(crate) fn oauth(&self) -> &OAuthConfig {
        &self.oauth
    }

    /// Every tool's scope in the set serving now, sorted.
    fn tool_scopes(&self, state: &ServeState) -> BTreeSet<String> {
        state.liaison().host().tools().map(|info| self.oauth.tool_scope(&info.descriptor.name)).collect()
    }

    /// `scopes_supported` of the metadata: the tools', the skills' and the
    /// configured extras, sorted.
    pub(crate) fn supported(&self, state: &ServeState) -> Vec<String> {
        let liaison = state.liaison();
        let skills = liaison.skills().iter().map(|skill| self.oauth.skill_scope(&skill.name));
        let supported: BTreeSet<String> = self
            .tool_scopes(state)
            .into_iter()
            .chain(skills)
            .chain(self.oauth.scopes_supported.iter().cloned())
            .collect();
        supported.into_iter().collect()
    }

    /// The scopes a 401 on `path` names, if its route needs any (on
    /// `/mcp`, every tool's, space-separated).
    pub(crate) fn route_scope(&self, path: &str, state: &ServeState) -> Option<String> {
        match path.strip_prefix(SKILL_ROUTES) {
            Some(skill) => Some(self.oauth.skill_scope(skill)),
            None if path == "/mcp" => {
                let tools = self.tool_scopes(state);
                (!tools.is_empty()).then(|| tools.into_iter().collect::<Vec<_>>().join(" "))
            }
            None => None,
        }
    }
}

/// An RFC 6750 challenge: the realm, then each attribute given.
pub(crate) fn challenge(metadata_url: Option<&str>, error: Option<&str>, scope: Option<&str>) -> HeaderValue {
    let mut text = "Bearer realm=\"harmonia\"".to_owned();
    for (name, value) in [("resource_metadata", metadata_url), ("error", error), ("scope", scope)] {
        if let Some(value) = value {
            text.push_str(&format!(", {name}=\"{value}\""));
        }
    }
    // Every part is a URL or scope tokens checked at start: printable.
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("Bearer realm=\"harmonia\""))
}

/// 403 for a request lacking `scope`: the challenge, and a JSON-RPC error
/// for the request `id` naming the scope.
fn insufficient_scope(app: &App, scope: &str, id: Value) -> Response {
    tracing::info!(scope, "request refused: the token lacks the scope");
    if let Some(metrics) = app.state.metrics() {
        metrics.http_forbidden("insufficient_scope");
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32003,
        "message": format!("Forbidden: insufficient_scope: this request needs the scope `{scope}`"),
        "data": {"scope": scope}}});
    let mut response = (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    let challenge = challenge(app.metadata_url.as_deref(), Some("insufficient_scope"), Some(scope));
    response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    response
}

/// On a skill's route, a JWT needs the skill's scope (any method).
pub(crate) async fn require_route(app: &Arc<App>, request: Request, next: impl Continue) -> Response {
    if let (Some(policy), Some(scopes)) = (&app.scopes, request.extensions().get::<Scopes>())
        && let Some(skill) = request.uri().path().strip_prefix(SKILL_ROUTES)
    {
        let scope = policy.oauth.skill_scope(skill);
        if !scopes.grants(&scope) {
            return insufficient_scope(app, &scope, Value::Null);
        }
    }
    next.run(request).await
}

/// On `/mcp`, a JWT calling a tool its allow-list holds needs the tool's
/// scope, and one getting a skill's prompt or file the skill's.
pub(crate) async fn require_call(app: &Arc<App>, request: Request, next: impl Continue) -> Response {
    let (Some(policy), Some(scopes), Some(principal)) =
        (&app.scopes, request.extensions().get::<Scopes>(), request.extensions().get::<Principal>())
    else {
        return next.run(request).await;
    };
    if request.method() != Method::POST || request.uri().path().starts_with(SKILL_ROUTES) {
        return next.run(request).await;
    }
    // The gate has read the body and left what it read of it.
    let Some(message) = request.extensions().get::<Arc<Message>>().cloned() else {
        return next.run(request).await;
    };
    let name = message.name().unwrap_or_default();
    let needed = match message.method() {
        Some("tools/call")
            if principal.allows(name) && app.state.liaison().host().descriptor(name).is_some() =>
        {
            Some(policy.oauth.tool_scope(name))
        }
        Some("prompts/get") if app.state.liaison().skills().get(name).is_some() => {
            Some(policy.oauth.skill_scope(name))
        }
        // The skills extension reads a skill's file by its URI.
        Some("skills/get" | "resources/read") => message
            .uri()
            .and_then(rmcp::model::skill_name_from_uri)
            .filter(|skill| app.state.liaison().skills().get(skill).is_some())
            .map(|skill| policy.oauth.skill_scope(skill)),
        _ => None,
    };
    if let Some(scope) = needed.filter(|scope| !scopes.grants(scope)) {
        return insufficient_scope(app, &scope, message.id.clone().unwrap_or(Value::Null));
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_lists_the_attributes_given_in_order() {
        let text = |value: HeaderValue| value.to_str().unwrap().to_owned();
        assert_eq!(text(challenge(None, None, None)), r#"Bearer realm="harmonia""#);
        assert_eq!(
            text(challenge(Some("https://m/.well-known/x"), Some("insufficient_scope"), Some("a b"))),
            r#"Bearer realm="harmonia", resource_metadata="https://m/.well-known/x", error="insufficient_scope", scope="a b""#
        );
    }
}
