//! WASI for tools: only what a guest language runtime needs, nothing granted.
//!
//! Every call gets a fresh context with: no preopens, no environment, no
//! arguments, stdin closed, no sockets (TCP, UDP and name lookup off, every
//! address denied), and stdout/stderr captured into a buffer capped at
//! [`CAPTURE_CAP`] bytes; output past the cap is dropped (and counted), never
//! an error to the guest. Captured text goes to the host's log, never into
//! an envelope. Clocks and random numbers are the host's; one request for
//! random bytes is capped at [`RANDOM_CAP`].
//!
//! This module builds the per-call context and links the interfaces. They
//! are async: a wait inside `wasi:io` (a sleep, a poll on a pollable that
//! never becomes ready) is a future of the call, and the sandbox drops the
//! whole call at its deadline, so every wait ends there without a
//! per-wait bound.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream, WasiCli, WasiCliView as _};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView as _};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sockets};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::random::WasiRandom;
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView as _};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiView};
use wasmtime_wasi_io::bytes::Bytes;

pub use crate::limits::{CAPTURE_CAP, RANDOM_CAP};

/// A capped in-memory sink for a guest's stdout or stderr.
#[derive(Clone, Debug, Default)]
pub struct CapturedOutput {
    inner: Arc<Mutex<Captured>>,
}

#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: usize,
}

impl CapturedOutput {
    fn append(&self, bytes: &[u8]) {
        if let Ok(mut captured) = self.inner.lock() {
            let room = CAPTURE_CAP.saturating_sub(captured.bytes.len());
            let kept = bytes.len().min(room);
            captured.bytes.extend_from_slice(&bytes[..kept]);
            captured.dropped += bytes.len() - kept;
        }
    }

    /// The captured text (lossy UTF-8) and how many bytes were dropped.
    pub fn take(&self) -> (String, usize) {
        match self.inner.lock() {
            Ok(mut captured) => {
                let text = String::from_utf8_lossy(&captured.bytes).into_owned();
                let dropped = captured.dropped;
                *captured = Captured::default();
                (text, dropped)
            }
            Err(_) => (String::new(), 0),
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// A guest's captured stdout and stderr.
#[derive(Clone, Debug, Default)]
pub struct CapturedStdio {
    /// Captured stdout.
    pub stdout: CapturedOutput,
    /// Captured stderr.
    pub stderr: CapturedOutput,
}

/// A fresh WASI context granting nothing, writing into `stdio`.
pub fn context(stdio: &CapturedStdio) -> WasiCtx {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(stdio.stdout.clone())
        .stderr(stdio.stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .max_random_size(RANDOM_CAP)
        .socket_addr_check(|_, _| Box::pin(async { false }));
    builder.build()
}

struct HasIo;

impl HasData for HasIo {
    type Data<'a> = &'a mut ResourceTable;
}

/// Link the runtime interfaces every tool is granted; with `inert`, also
/// filesystem and sockets, which the per-call context leaves with no
/// preopens and no reachable address.
pub fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>, inert: bool) -> wasmtime::Result<()> {
    let l = linker;
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    wasmtime_wasi_io::bindings::wasi::io::poll::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    wasmtime_wasi_io::bindings::wasi::io::streams::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    add_nonblocking(l, inert)?;
    if inert {
        filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
        sockets::tcp::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
        sockets::udp::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
        sockets::udp_create_socket::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    }
    Ok(())
}

/// The interfaces whose functions never wait.
fn add_nonblocking<T: WasiView + 'static>(l: &mut Linker<T>, inert: bool) -> wasmtime::Result<()> {
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    if inert {
        filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
        sockets::tcp_create_socket::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
        sockets::instance_network::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
        sockets::network::add_to_linker::<T, WasiSockets>(l, &Default::default(), T::sockets)?;
        sockets::ip_name_lookup::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    }
    Ok(())
}
