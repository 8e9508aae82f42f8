//! `wasi:io/poll` and `wasi:io/streams` whose every wait ends at the call's
//! deadline.
//!
//! Epoch interruption stops a guest only while it runs wasm; a guest that
//! blocks inside the host (`pollable.block` on a one-hour timer, Rust's
//! `std::thread::sleep`, `poll` on a list that never becomes ready, or a
//! `blocking-*` stream operation) would hold the host thread for as long as
//! it asks. Here each of those waits is bounded by the store's deadline:
//! when the deadline passes first, the wait ends with a trap, the call is
//! marked timed out, and the envelope is `tool_timeout`. Non-blocking
//! operations are passed through unchanged to wasmtime-wasi's own
//! implementation on the store's resource table.

use std::future::Future;
use std::time::Instant;
use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::sync::io::{poll, streams};
use wasmtime_wasi::p2::{StreamError, StreamResult};
use wasmtime_wasi_io::bindings::wasi::io::poll as async_poll;
use wasmtime_wasi_io::bindings::wasi::io::streams::{
    HostInputStream as AsyncInputStream, HostOutputStream as AsyncOutputStream,
};
use wasmtime_wasi_io::poll::DynPollable;
use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream};

/// The trap text of a wait cut short by the deadline (log only).
const DEADLINE_TRAP: &str = "the call's deadline passed while the guest waited in wasi:io";

/// A call's resource table with the deadline its waits must respect.
pub struct BoundedIo<'a> {
    /// The store's resource table.
    pub table: &'a mut ResourceTable,
    /// When every wait must have ended.
    pub deadline: Instant,
    /// Set when a wait was cut short by the deadline.
    pub timed_out: &'a mut bool,
}

/// Marker for linking [`BoundedIo`].
pub struct HasBoundedIo;

impl HasData for HasBoundedIo {
    type Data<'a> = BoundedIo<'a>;
}

/// Run `wait` on wasmtime-wasi's runtime until it finishes or `deadline`
/// passes; `None` (and `timed_out` set) when the deadline came first.
fn until_deadline<F: Future>(deadline: Instant, timed_out: &mut bool, wait: F) -> Option<F::Output> {
    let deadline = tokio::time::Instant::from_std(deadline);
    let finished =
        wasmtime_wasi::runtime::in_tokio(async move { tokio::time::timeout_at(deadline, wait).await });
    if finished.is_err() {
        *timed_out = true;
    }
    finished.ok()
}

fn deadline_trap() -> wasmtime::Error {
    wasmtime::Error::msg(DEADLINE_TRAP)
}

fn deadline_stream_error() -> StreamError {
    StreamError::trap(DEADLINE_TRAP)
}

impl poll::Host for BoundedIo<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, async_poll::Host::poll(*table, pollables))
            .unwrap_or_else(|| Err(deadline_trap()))
    }
}

impl poll::HostPollable for BoundedIo<'_> {
    fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, async_poll::HostPollable::ready(*table, pollable))
            .unwrap_or_else(|| Err(deadline_trap()))
    }

    fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, async_poll::HostPollable::block(*table, pollable))
            .unwrap_or_else(|| Err(deadline_trap()))
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        async_poll::HostPollable::drop(self.table, pollable)
    }
}

impl streams::Host for BoundedIo<'_> {
    fn convert_stream_error(&mut self, error: StreamError) -> wasmtime::Result<streams::StreamError> {
        streams::Host::convert_stream_error(self.table, error)
    }
}

impl streams::HostOutputStream for BoundedIo<'_> {
    fn drop(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<()> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, AsyncOutputStream::drop(*table, stream))
            .unwrap_or_else(|| Err(deadline_trap()))
    }

    fn check_write(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<u64> {
        streams::HostOutputStream::check_write(self.table, stream)
    }

    fn write(&mut self, stream: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        streams::HostOutputStream::write(self.table, stream, bytes)
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        bytes: Vec<u8>,
    ) -> StreamResult<()> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(
            *deadline,
            timed_out,
            AsyncOutputStream::blocking_write_and_flush(*table, stream, bytes),
        )
        .unwrap_or_else(|| Err(deadline_stream_error()))
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        len: u64,
    ) -> StreamResult<()> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(
            *deadline,
            timed_out,
            AsyncOutputStream::blocking_write_zeroes_and_flush(*table, stream, len),
        )
        .unwrap_or_else(|| Err(deadline_stream_error()))
    }

    fn subscribe(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostOutputStream::subscribe(self.table, stream)
    }

    fn write_zeroes(&mut self, stream: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        streams::HostOutputStream::write_zeroes(self.table, stream, len)
    }

    fn flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        streams::HostOutputStream::flush(self.table, stream)
    }

    fn blocking_flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        let Self { table, deadline, timed_out } = self;
        let stream = Resource::new_borrow(stream.rep());
        until_deadline(*deadline, timed_out, AsyncOutputStream::blocking_flush(*table, stream))
            .unwrap_or_else(|| Err(deadline_stream_error()))
    }

    fn splice(
        &mut self,
        destination: Resource<DynOutputStream>,
        source: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        streams::HostOutputStream::splice(self.table, destination, source, len)
    }

    fn blocking_splice(
        &mut self,
        destination: Resource<DynOutputStream>,
        source: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(
            *deadline,
            timed_out,
            AsyncOutputStream::blocking_splice(*table, destination, source, len),
        )
        .unwrap_or_else(|| Err(deadline_stream_error()))
    }
}

impl streams::HostInputStream for BoundedIo<'_> {
    fn drop(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<()> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, AsyncInputStream::drop(*table, stream))
            .unwrap_or_else(|| Err(deadline_trap()))
    }

    fn read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        streams::HostInputStream::read(self.table, stream, len)
    }

    fn blocking_read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, AsyncInputStream::blocking_read(*table, stream, len))
            .unwrap_or_else(|| Err(deadline_stream_error()))
    }

    fn skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        streams::HostInputStream::skip(self.table, stream, len)
    }

    fn blocking_skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        let Self { table, deadline, timed_out } = self;
        until_deadline(*deadline, timed_out, AsyncInputStream::blocking_skip(*table, stream, len))
            .unwrap_or_else(|| Err(deadline_stream_error()))
    }

    fn subscribe(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostInputStream::subscribe(self.table, stream)
    }
}
