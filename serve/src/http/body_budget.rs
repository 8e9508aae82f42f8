//! A budget for request bodies on their way.
//!
//! A body is buffered whole before it is parsed (the gate and the MCP SDK
//! read it into memory, `/v1/validate` extracts it), and may take up to
//! the request timeout to arrive. Without a budget, one client trickling
//! bodies of `max_body_kib` on all its connections would hold its share
//! of connections × `max_body_kib` of memory. So a request with a body
//! takes, before its body is read, the KiB it announces (its
//! `Content-Length`, or `max_body_kib` when chunked, at least 1) from its
//! credential's share (`limits.max_request_bodies_kib_per_credential`)
//! and from the server's (`limits.max_request_bodies_kib`), and holds
//! them until its answer is ready. Past either it gets 503 with
//! `Retry-After` at once, its body unread (the connection then closes or
//! is drained, as `unread_body` says), while other credentials' requests
//! are served.
//!
//! A review page (`POST /v1/review`) is not counted on its own: it is
//! bounded instead, by the body the budget counted. The page is at most
//! 4 × the body + 256 KiB (`harmonia_review::bound`, sized by the body's
//! length), and it is built while the request still holds its body's KiB,
//! so what a review holds while it is judged and written is a fixed
//! multiple of what its credential's share and the server's already
//! hold for it (a 1 MiB body: a page of at most 4.25 MiB, where an
//! unbounded one reached 97 MiB). The page is sent after the KiB are
//! given back; the pages on their way are then bounded by the
//! connections (`limits.max_connections`, and a credential's share) and
//! by `limits.write_stall_s`, which closes a connection whose client stops
//! reading. Counting the page itself would take a second, larger hold per
//! review for no tighter bound.

use super::checks::Continue;
use super::{App, Unavailable};
use crate::auth::Principal;
use axum::extract::Request;
use axum::http::header;
use axum::response::Response;
use std::sync::Arc;

/// The KiB `request`'s body may take: `None` when it has none.
fn announced_kib(request: &Request, max_body_kib: u32) -> Option<u32> {
    let headers = request.headers();
    let length =
        headers.get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    match length {
        Some(0) => None,
        // A body past the cap is refused with 413 after at most the cap
        // was kept.
        Some(bytes) => Some(bytes.div_ceil(1024).min(u64::from(max_body_kib)) as u32),
        None if headers.contains_key(header::TRANSFER_ENCODING) => Some(max_body_kib),
        None => None,
    }
}

/// Hold the KiB the request's body announces, from its credential's share
/// and the server's, until its answer is ready (the module doc).
pub(crate) async fn within_budget(app: &Arc<App>, request: Request, next: impl Continue) -> Response {
    let limits = &app.state.limits;
    let (Some(kib), Some(principal)) =
        (announced_kib(&request, limits.max_body_kib), request.extensions().get::<Principal>())
    else {
        return next.run(request).await;
    };
    let id = principal.id.clone();
    let tenants = &app.state.tenants;
    let Some(own) = tenants.take_body(&id, kib) else {
        tracing::warn!("request refused: the credential's bodies on their way hold its share");
        return app.unavailable(Unavailable::CredentialRequestBodies);
    };
    let Ok(shared) = Arc::clone(&app.bodies).try_acquire_many_owned(kib) else {
        tenants.give_back(&id, own);
        tracing::warn!("request refused: the bodies on their way hold the server's bound");
        return app.unavailable(Unavailable::RequestBodies);
    };
    let response = next.run(request).await;
    drop(shared);
    tenants.give_back(&id, own);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut builder = Request::post("/mcp");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn a_body_takes_what_it_announces_within_the_cap_and_a_chunked_one_the_cap() {
        assert_eq!(announced_kib(&request(&[]), 1024), None);
        assert_eq!(announced_kib(&request(&[("content-length", "0")]), 1024), None);
        assert_eq!(announced_kib(&request(&[("content-length", "1")]), 1024), Some(1));
        assert_eq!(announced_kib(&request(&[("content-length", "1025")]), 1024), Some(2));
        assert_eq!(announced_kib(&request(&[("content-length", "99999999999")]), 1024), Some(1024));
        assert_eq!(announced_kib(&request(&[("transfer-encoding", "chunked")]), 1024), Some(1024));
    }
}
