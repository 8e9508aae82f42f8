//! Services behind an `Arc`, so that cloning them is one reference count:
//! rmcp's streamable HTTP service ([`Shared`]), and the stack beneath each
//! layer of the door ([`SharedBelow`]).
//!
//! axum clones a route's service for every request, and each middleware
//! layer (`from_fn`) clones the stack beneath it once more before it
//! calls it: the MCP routes sit under eight layers, so their service was
//! cloned a few dozen times a request. rmcp's `StreamableHttpService`
//! clones its whole config for each (the allowed hosts' and origins'
//! lists, and a cancellation token, whose clone and drop take a lock);
//! in a profile of 1,000 MCP clients that was about 4% of the server's
//! CPU. Behind an `Arc` each clone is a count, and the request is handed
//! to the one service with [`StreamableHttpService::handle`], which takes
//! it by reference, as rmcp's own `call` does after cloning itself.

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use http_body_util::combinators::BoxBody;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::{SessionManager, StreamableHttpService};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::ServiceExt;
use tower::util::Oneshot;

/// A [`StreamableHttpService`] shared by every clone.
pub(crate) struct Shared<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> Shared<S, M> {
    pub(crate) fn new(service: StreamableHttpService<S, M>) -> Self {
        Self(Arc::new(service))
    }
}

impl<S, M> Clone for Shared<S, M> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

type Answer = Response<BoxBody<Bytes, Infallible>>;

impl<S, M> tower::Service<Request<Body>> for Shared<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let service = Arc::clone(&self.0);
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}

/// The service beneath a layer, shared by every clone of that layer.
///
/// axum clones a route's whole service for each request, and each
/// `from_fn` layer clones the service beneath it again before calling it:
/// a clone of a layer cloned every layer below it (a boxed route and a
/// reference count of the server's state each), so a request through the
/// layers of `/mcp` (nine then; four since the checks share two,
/// `checks`, and `nosniff` is set by the outermost) cloned them over and
/// over. With each layer's
/// inner service behind an `Arc`, a layer's clone is one count, and a
/// request clones each service beneath once, as it reaches it
/// ([`Oneshot`]: made ready, then called, as axum's own routes do). A
/// served call went from 451 allocations to 339 (docs/performance.md,
/// "Stop 56").
pub(crate) struct SharedBelow<S>(Arc<S>);

impl<S> Clone for SharedBelow<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S, R> tower::Service<R> for SharedBelow<S>
where
    S: tower::Service<R> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Oneshot<S, R>;

    /// Ready: readiness is the clone's, awaited by [`Oneshot`].
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        S::clone(&self.0).oneshot(request)
    }
}

/// The layer that puts a service behind [`SharedBelow`]; placed under a
/// middleware, `(middleware, SharedBelowLayer)`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SharedBelowLayer;

impl<S> tower::Layer<S> for SharedBelowLayer {
    type Service = SharedBelow<S>;

    fn layer(&self, inner: S) -> SharedBelow<S> {
        SharedBelow(Arc::new(inner))
    }
}
