//! The door's checks run one after the other inside one layer.
//!
//! Each check (authentication, the body budget, the route's scope, the
//! MCP gate, the call's scope, the fast path) is an async function that
//! answers a request itself or hands it to what comes next: a
//! [`Continue`]. As a layer of its own, each check cost a boxed clone of
//! the stack beneath it, a boxed future and a boxed `Next` per request;
//! run in sequence inside one layer ([`credential_checks`],
//! [`mcp_checks`]), the next check is a plain closure ([`Then`]). The
//! order and what each check does are those of the layers they replace.

use super::{App, body_budget, fast_path, gate, scopes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::future::Future;
use std::sync::Arc;

/// What a check hands a request it lets through to.
pub(crate) trait Continue: Send {
    /// Serve `request` with what comes after the check.
    fn run(self, request: Request) -> impl Future<Output = Response> + Send;
}

/// The layer beneath, when a check is the last of its layer.
impl Continue for Next {
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        Next::run(self, request)
    }
}

/// The next check of the same layer.
pub(crate) struct Then<F>(pub(crate) F);

impl<F, Answer> Continue for Then<F>
where
    F: FnOnce(Request) -> Answer + Send,
    Answer: Future<Output = Response> + Send,
{
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        (self.0)(request)
    }
}

/// Every protected route: the bearer credential, then the body's budget.
pub(crate) async fn credential_checks(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let app = &app;
    gate::authenticate(app, request, Then(move |request| body_budget::within_budget(app, request, next)))
        .await
}

/// The MCP routes, after [`credential_checks`]: the route's scope, the
/// MCP gate, the call's scope, then the stateless fast path.
pub(crate) async fn mcp_checks(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let app = &app;
    scopes::require_route(
        app,
        request,
        Then(move |request| {
            gate::mcp_gate(
                app,
                request,
                Then(move |request| {
                    scopes::require_call(
                        app,
                        request,
                        Then(move |request| fast_path::stateless_call(app, request, next)),
                    )
                }),
            )
        }),
    )
    .await
}
