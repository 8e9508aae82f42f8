//! [`Receipt`]: the record of one capability use, attached to the call;
//! and [`remaining`], the time a use may still wait.

use super::kind::CapabilityKind;
use serde::Serialize;
use std::time::{Duration, Instant, SystemTime};

/// The record of one capability use. Never holds credentials or bodies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// Which capability: `public-web` or `workspace` in JSON.
    pub capability: CapabilityKind,
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
        capability: CapabilityKind,
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

/// Time left before `deadline`, or `None` when it has passed.
pub fn remaining(deadline: Instant) -> Option<Duration> {
    deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero())
}
