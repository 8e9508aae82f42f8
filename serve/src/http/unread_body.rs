//! A request answered before its body was read must not leave its client
//! a connection the server is about to drop.
//!
//! A refusal (a wrong token, a session another credential owns, a foreign
//! `Origin`) is answered without reading the body. hyper then keeps the
//! connection only if the rest of the body is already in its buffer;
//! otherwise it closes the connection after the answer, without a word.
//! A client that pools connections (most do) sends its next request into
//! that closed connection and fails with "connection reset" or "peer
//! disconnected", although the server would have served it.
//!
//! So the outermost layer shares each request's body with the handlers
//! ([`track`]). When the answer is ready and the body was not read to its
//! end, [`Leftover::settle`] reads what is left, at most [`DRAIN_BYTES`]
//! for at most [`LINGER`]. If the body ends, the connection is kept. If
//! not (a body that is larger, or slow to come), the answer says
//! `Connection: close`, so the client opens a new connection for its next
//! request. The drain is bounded in bytes and time, so a client without a
//! credential can hold the server no longer than [`LINGER`] per refusal.
//! Its connection stays counted in `limits.max_connections` meanwhile.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

/// The most of an unread body read after the answer, to keep the
/// connection.
pub(crate) const DRAIN_BYTES: u64 = 64 * 1024;

/// The longest the server waits for the rest of an unread body.
pub(crate) const LINGER: Duration = Duration::from_millis(200);

/// What the handlers and the outermost layer share of one body.
struct Shared {
    body: Mutex<Option<Body>>,
    /// Whether the body was read to its end.
    ended: AtomicBool,
}

/// The handlers' side: the body, read through the shared state.
struct SharedBody(Arc<Shared>);

impl HttpBody for SharedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let shared = &self.0;
        let mut body = shared.body.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(body) = body.as_mut() else { return Poll::Ready(None) };
        let polled = Pin::new(body).poll_frame(context);
        if matches!(polled, Poll::Ready(None)) {
            shared.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let body = self.0.body.lock().unwrap_or_else(PoisonError::into_inner);
        body.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        let body = self.0.body.lock().unwrap_or_else(PoisonError::into_inner);
        body.as_ref().map(HttpBody::size_hint).unwrap_or_default()
    }
}

/// The outermost layer's side: what is left of the body once the answer
/// is ready.
pub(crate) struct Leftover {
    shared: Arc<Shared>,
    /// The declared `Content-Length`, if any.
    declared: Option<u64>,
}

/// Share `body` with the handlers: the body they read, and the leftover
/// to settle once the answer is ready. A body already at its end (a GET,
/// an empty POST) is passed on as it is.
pub(crate) fn track(body: Body, headers: &HeaderMap) -> (Body, Option<Leftover>) {
    if body.is_end_stream() {
        return (body, None);
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok());
    let shared = Arc::new(Shared { body: Mutex::new(Some(body)), ended: AtomicBool::new(false) });
    (Body::new(SharedBody(Arc::clone(&shared))), Some(Leftover { shared, declared }))
}

impl Leftover {
    /// Keep the connection if the body was read, or its rest comes within
    /// the bounds; otherwise tell the client that it closes.
    pub(crate) async fn settle(self, response: &mut Response) {
        if self.shared.ended.load(Ordering::Acquire) {
            return;
        }
        let body = self.shared.body.lock().unwrap_or_else(PoisonError::into_inner).take();
        let drained = match body {
            Some(body) if self.declared.is_none_or(|length| length <= DRAIN_BYTES) => {
                tokio::time::timeout(LINGER, drain(body)).await.unwrap_or(false)
            }
            _ => false,
        };
        if !drained {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
    }
}

/// Read `body` to its end and drop it; false past [`DRAIN_BYTES`] or on
/// an error.
async fn drain(body: Body) -> bool {
    use http_body_util::BodyExt as _;
    http_body_util::Limited::new(body, DRAIN_BYTES as usize).collect().await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;
    use axum::response::IntoResponse as _;

    fn closes(response: &Response) -> bool {
        response.headers().get(header::CONNECTION).is_some_and(|value| value == "close")
    }

    fn headers(length: usize) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        headers
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_or_drained_within_the_bounds_keeps_the_connection() {
        let (body, leftover) = track(Body::from("{\"a\": 1}"), &headers(8));
        axum::body::to_bytes(body, 1024).await.unwrap();
        let mut response = StatusCode::OK.into_response();
        leftover.unwrap().settle(&mut response).await;
        assert!(!closes(&response));

        // Refused unread, the rest already here: drained, kept.
        let (body, leftover) = track(Body::from("{\"a\": 1}"), &headers(8));
        drop(body);
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        leftover.unwrap().settle(&mut response).await;
        assert!(!closes(&response));

        // Nothing to read: nothing tracked.
        assert!(track(Body::empty(), &HeaderMap::new()).1.is_none());
    }

    #[tokio::test]
    async fn an_unread_body_too_large_or_too_slow_to_drain_closes_the_connection() {
        let large = vec![b'x'; DRAIN_BYTES as usize + 1];
        let (body, leftover) = track(Body::from(large.clone()), &headers(large.len()));
        drop(body);
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        leftover.unwrap().settle(&mut response).await;
        assert!(closes(&response), "declared past the bound");

        // The same bytes without a declared length: read, then cut.
        let (body, leftover) = track(Body::from(large), &HeaderMap::new());
        drop(body);
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        leftover.unwrap().settle(&mut response).await;
        assert!(closes(&response), "read past the bound");

        // A body whose rest never comes: cut at the linger.
        let (sender, receiver) =
            tokio::sync::mpsc::channel::<Result<Frame<axum::body::Bytes>, axum::Error>>(1);
        let stream = http_body_util::StreamBody::new(tokio_stream_from(receiver));
        let (body, leftover) = track(Body::new(stream), &headers(10));
        drop(body);
        let started = tokio::time::Instant::now();
        let mut response = StatusCode::NOT_FOUND.into_response();
        leftover.unwrap().settle(&mut response).await;
        assert!(closes(&response), "the rest never came");
        assert!(started.elapsed() < LINGER * 10, "{:?}", started.elapsed());
        drop(sender);
    }

    /// A stream of the frames `receiver` gets.
    fn tokio_stream_from(
        mut receiver: tokio::sync::mpsc::Receiver<Result<Frame<axum::body::Bytes>, axum::Error>>,
    ) -> impl futures_core::Stream<Item = Result<Frame<axum::body::Bytes>, axum::Error>> + Send {
        futures_util::stream::poll_fn(move |context| receiver.poll_recv(context))
    }
}
