//! [`CallUses`]: what one call's capabilities did, shared by every
//! capability bound to the call (the part of the store data each
//! capability's view carries besides its own state).
//!
//! Every capability use is counted: past [`MAX_CAPABILITY_USES`] uses or
//! [`MAX_RECEIPT_BYTES`] of receipt targets in one call, the use traps and
//! the call ends as `tool_execution_failed`, so a guest looping on a refused
//! URL cannot grow the host's memory.

use super::receipt::{Receipt, remaining};
use crate::limits::{MAX_CAPABILITY_USES, MAX_RECEIPT_BYTES};
use std::time::Instant;

/// One call's capability uses: receipts and what they say about the call.
#[derive(Debug)]
pub struct CallUses {
    /// The call's deadline; every use waits at most until then.
    pub(crate) deadline: Instant,
    /// The host runs in mock mode: every item of evidence is `mock`,
    /// whatever the sources say.
    pub(crate) mock_mode: bool,
    /// Every use, in order.
    pub(crate) receipts: Vec<Receipt>,
    /// A capability passed the deadline while waiting.
    pub(crate) timed_out: bool,
    /// Some data was served from fixtures.
    pub(crate) served_mock: bool,
    /// Capability uses that returned data.
    pub(crate) successful_reads: usize,
    /// Bytes of receipt targets recorded so far.
    receipt_bytes: usize,
    /// A use past the per-call capability limits was refused.
    pub(crate) capability_limit: bool,
}

impl CallUses {
    /// No use yet, for a call ending at `deadline`.
    pub(crate) fn new(deadline: Instant, mock_mode: bool) -> Self {
        Self {
            deadline,
            mock_mode,
            receipts: Vec::new(),
            timed_out: false,
            served_mock: false,
            successful_reads: 0,
            receipt_bytes: 0,
            capability_limit: false,
        }
    }

    /// True when the call ran in mock mode or read any fixture.
    pub(crate) fn mock_provenance(&self) -> bool {
        self.served_mock || self.mock_mode
    }

    /// Count one more use of a capability naming `target`; an error (a trap
    /// for the guest) once the call's limits are reached.
    pub(crate) fn admit(&mut self, target_len: usize) -> wasmtime::Result<()> {
        self.receipt_bytes = self.receipt_bytes.saturating_add(target_len);
        if self.receipts.len() >= MAX_CAPABILITY_USES || self.receipt_bytes > MAX_RECEIPT_BYTES {
            self.capability_limit = true;
            return Err(wasmtime::Error::msg("capability use limit reached"));
        }
        Ok(())
    }

    /// Keep the receipt of one use, and whether it read a fixture or ran
    /// out of time.
    pub(crate) fn record(&mut self, receipt: Receipt, mock: bool, timed_out: bool) {
        self.receipts.push(receipt);
        self.served_mock |= mock;
        self.timed_out |= timed_out;
    }

    /// Keep the receipt of a use a source answered: whether it returned
    /// data, and whether it failed by timing out (or the deadline passed
    /// while it waited).
    pub(crate) fn answered(&mut self, receipt: Receipt, mock: bool, returned_data: bool, timed_out: bool) {
        let timed_out = timed_out || remaining(self.deadline).is_none();
        self.record(receipt, mock, timed_out);
        self.successful_reads += usize::from(returned_data);
    }
}
