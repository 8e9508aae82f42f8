//! The store data of one call, next to the sandbox that makes it: WASI
//! with nothing behind it, the resource and memory limits, the capabilities
//! bound to the call, captured stdio, and what the call did (receipts,
//! timeouts, reads).
//!
//! Every capability use is counted: past [`MAX_CAPABILITY_USES`] uses or
//! [`MAX_RECEIPT_BYTES`] of receipt targets in one call, the use traps and
//! the call ends as `tool_execution_failed`, so a guest looping on a refused
//! URL cannot grow the host's memory.

use crate::bindings::types;
use crate::capability::Receipt;
use crate::capability::public_web::PublicWebSource;
use crate::capability::workspace::WorkspaceSource;
use crate::limits::{CallLimiter, ComponentLimits, MAX_CAPABILITY_USES, MAX_RECEIPT_BYTES, MAX_RESOURCES};
use crate::wasi::CapturedStdio;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The capabilities bound to one call.
#[derive(Clone, Debug, Default)]
pub struct CallBinding {
    /// The public web, when granted.
    pub public_web: Option<Arc<dyn PublicWebSource>>,
    /// The workspace source, when granted.
    pub workspace_source: Option<Arc<dyn WorkspaceSource>>,
    /// The caller's workspace id; reads without one are unauthorized.
    pub workspace_id: Option<String>,
    /// The host runs in mock mode: every item of evidence is `mock`,
    /// whatever the sources say.
    pub mock_mode: bool,
}

/// Store data of one call: WASI, limits, the binding and what happened.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) deadline: Instant,
    pub(crate) binding: CallBinding,
    pub(crate) stdio: CapturedStdio,
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

impl CallState {
    pub(crate) fn new(
        memory_bytes: usize,
        component: ComponentLimits,
        deadline: Instant,
        binding: CallBinding,
    ) -> Self {
        let stdio = CapturedStdio::default();
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self {
            wasi: crate::wasi::context(&stdio),
            table,
            limiter: CallLimiter::new(memory_bytes, component),
            deadline,
            binding,
            stdio,
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
        self.served_mock || self.binding.mock_mode
    }

    /// Count one more use of a capability naming `target`; an error (a trap
    /// for the guest) once the call's limits are reached.
    pub(crate) fn admit_use(&mut self, target_len: usize) -> wasmtime::Result<()> {
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
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl types::Host for CallState {}
