//! The read-only capabilities the host grants to tools.
//!
//! Parts:
//! - [`url`]: origins and routing for the public web.
//! - `public_address`: the resolver that keeps allow-listed names off
//!   loopback and private addresses.
//! - [`public_web`]: GET-only HTTP to allow-listed origins, bounded in size
//!   and by the call's deadline, or served from fixtures in mock mode.
//! - [`workspace`]: typed reads of the caller's workspace from one source
//!   (SQLite, the internal HTTP API, or fixtures).
//! - `http_client`: the bounded HTTP client both use (private: the
//!   plumbing behind the two capabilities, not the embedder's API).
//!
//! Each capability is one folder: its source trait and sources, its config
//! (re-exported from [`crate::config`], whose tables it is), its fixture
//! (`mock`), and `guest`, the WIT import as guests see it (use counting,
//! receipts, error mapping). Changing a capability means editing its
//! folder; the import's name and world are in the policy's grant table.
//! - [`Receipt`]: the record of one capability use, attached to the call.
//!
//! Every capability shares one lifecycle: built once from the config when
//! the host starts, bound to a call (workspace id, deadline) when the call
//! starts, and each use recorded as a receipt.

pub(crate) mod http_client;
pub(crate) mod public_address;
pub mod public_web;
pub(crate) use harmonia_contract::url;
pub mod workspace;

use serde::Serialize;
use std::time::{Duration, Instant, SystemTime};

/// The record of one capability use. Never holds credentials or bodies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// `public-web` or `workspace`.
    pub capability: &'static str,
    /// What was read: the URL as the guest asked for it, or the workspace
    /// read (`sqlite:engagement`, `http:GET /api/internal/job/{id}`, ...).
    pub target: String,
    /// The outcome: an HTTP status (`200`), or `denied`, `timed_out`,
    /// `too_large`, `unavailable`, `unauthorized`, `not_found`, `ok`, ...
    pub status: String,
    /// Bytes of the body read.
    pub bytes: u64,
    /// SHA-256 (hex) of the body read, when one was read.
    pub sha256: Option<String>,
    /// Time spent, in microseconds.
    pub duration_us: u64,
    /// When the use started (for telemetry spans; not in the trace).
    #[serde(skip)]
    pub started_at: SystemTime,
}

impl Receipt {
    /// A receipt for a use that started at `started`.
    pub fn new(
        capability: &'static str,
        target: String,
        status: impl Into<String>,
        started: Instant,
    ) -> Self {
        let spent = started.elapsed();
        Self {
            capability,
            target,
            status: status.into(),
            bytes: 0,
            sha256: None,
            duration_us: u64::try_from(spent.as_micros()).unwrap_or(u64::MAX),
            started_at: SystemTime::now().checked_sub(spent).unwrap_or(SystemTime::UNIX_EPOCH),
        }
    }

    /// The same receipt with the body's size and hash.
    pub fn with_body(mut self, body: &[u8]) -> Self {
        self.bytes = body.len() as u64;
        self.sha256 = Some(sha256_hex(body));
        self
    }
}

pub(crate) use harmonia_contract::digest::sha256_hex;

/// Link both capabilities' imports (and the shared types, which carry no
/// functions); the loader's policy decides which one a plugin may import.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<crate::call_state::CallState>,
) -> wasmtime::Result<()> {
    crate::bindings::types::add_to_linker::<_, wasmtime::component::HasSelf<_>>(linker, |state| state)?;
    public_web::guest::add_to_linker(linker)?;
    workspace::guest::add_to_linker(linker)
}

/// Time left before `deadline`, or `None` when it has passed.
pub fn remaining(deadline: Instant) -> Option<Duration> {
    deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero())
}
