//! Connections: accepted, bounded, timed, drained.
//!
//! - HTTP/1.1 is served directly (no protocol sniffing, no upgrades: the
//!   streamable HTTP transport needs neither), so `limits.header_timeout_s`
//!   runs from the moment a connection is accepted, and again while a
//!   kept-alive connection waits for its next request: a socket that sends
//!   nothing, one byte or half a preface is closed when it passes.
//! - At most `limits.max_connections` are open. One past the bound gets a
//!   503 with `Retry-After` at once, without its request being read, and is
//!   closed; at most [`MAX_REFUSING`] such refusals are in progress, and
//!   past that a new connection is closed without an answer, so a flood of
//!   connections costs the server a bounded amount.
//! - A connection whose client stops reading is closed after
//!   `limits.write_stall_s` ([`crate::stalled_writes`]).
//! - Each connection carries a [`ConnectionTenant`]: the first credential
//!   to authenticate on it holds it, within its share.

use super::gate::ConnectionTenant;
use super::{App, Unavailable};
use crate::stalled_writes::StallLimited;
use axum::Router;
use axum::body::Body;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt as _;

/// Most refusals (of connections past the bound) in progress at once.
pub const MAX_REFUSING: usize = 64;

/// How long a refused connection is given to read its 503.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// Accept on `listener` until `stop` resolves, then close the
/// connections gracefully (within 10 s).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    app: Arc<App>,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let limits = &app.state.limits;
    let header_timeout = Duration::from_secs(limits.header_timeout_s);
    let write_stall = Duration::from_secs(limits.write_stall_s);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections as usize));
    let refusing = Arc::new(tokio::sync::Semaphore::new(MAX_REFUSING));
    let refusal = refusal_bytes(limits.retry_after_s);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // Small JSON-RPC answers must not wait for delayed ACKs.
                let _ = stream.set_nodelay(true);
                let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                    if let Some(metrics) = app.state.metrics() {
                        metrics.http_unavailable(Unavailable::TooManyConnections.label());
                    }
                    match Arc::clone(&refusing).try_acquire_owned() {
                        Ok(refusing) => {
                            tracing::warn!("connection refused: too many open connections");
                            tokio::spawn(refuse(stream, Arc::clone(&refusal), refusing));
                        }
                        Err(_) => drop(stream),
                    }
                    continue;
                };
                let tenant = Arc::new(ConnectionTenant::default());
                let service = hyper_util::service::TowerToHyperService::new(router.clone().into_service::<Body>().map_request(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let mut request = request.map(Body::new);
                        request.extensions_mut().insert(Arc::clone(&tenant));
                        request
                    },
                ));
                let stream = StallLimited::new(stream, write_stall);
                let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    let _permit = permit;
                    let _ = connection.await;
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after the drain; closing");
    }
    Ok(())
}

/// The whole answer to a connection past the bound.
fn refusal_bytes(retry_after_s: u64) -> Arc<[u8]> {
    let body = serde_json::json!({"error": Unavailable::TooManyConnections.message()}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\n\
         retry-after: {retry_after_s}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
    .into()
}

/// Answer 503 at once, without reading the request, and close; what the
/// client sent meanwhile is read and dropped for a moment so the close
/// does not reset the answer away.
async fn refuse(
    mut stream: tokio::net::TcpStream,
    answer: Arc<[u8]>,
    _refusing: tokio::sync::OwnedSemaphorePermit,
) {
    let exchange = async {
        stream.write_all(&answer).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        std::io::Result::Ok(())
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, exchange).await;
}
