//! A connection that fails once the client stops reading.
//!
//! A client that sends requests and never reads the answers fills the
//! socket's buffers, and the server's next write waits forever, holding a
//! connection (and its place under `limits.max_connections`). Wrapped in
//! [`StallLimited`], a write that cannot make progress for
//! `limits.write_stall_s` fails with `TimedOut`, and the connection is
//! dropped. Reads are untouched: the header and request timeouts bound them.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `inner`, whose writes fail after `limit` without progress.
pub struct StallLimited<S> {
    inner: S,
    limit: Duration,
    /// Armed while a write waits; cleared when one makes progress.
    stalled_since: Option<Pin<Box<Sleep>>>,
}

impl<S> StallLimited<S> {
    /// Wrap `inner`.
    pub fn new(inner: S, limit: Duration) -> Self {
        Self { inner, limit, stalled_since: None }
    }

    /// A write's poll: progress disarms the timer, a pending write arms
    /// it (on the first) and fails once it fires.
    fn settle<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match polled {
            Poll::Pending => self.stalled(cx).map(Err),
            ready => {
                self.stalled_since = None;
                ready
            }
        }
    }

    /// A pending write: arm the timer on the first, fail when it fires.
    fn stalled(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let limit = self.limit;
        let timer = self
            .stalled_since
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading"))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallLimited<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallLimited<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.settle(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.settle(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.settle(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
