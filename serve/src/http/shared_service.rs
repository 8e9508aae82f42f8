//! rmcp's streamable HTTP service behind an `Arc`, so that cloning it is
//! one reference count.
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
