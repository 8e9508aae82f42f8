//! The store data of one call, next to the sandbox that makes it: WASI
//! with nothing behind it, the resource and memory limits, captured stdio,
//! the capabilities bound to the call and what they did (`CallUses`:
//! receipts, timeouts, reads, the per-call use limit).
//!
//! It names no capability: each sees only its own state and the call's
//! uses, through `HasCapabilities` (see `crate::capability::unit`).

use crate::bindings::types;
use crate::capability::set::{Bound, HasCapabilities};
use crate::capability::uses::CallUses;
use crate::limits::{CallLimiter, ComponentLimits, MAX_RESOURCES};
use crate::wasi::CapturedStdio;
use std::time::Instant;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The capabilities bound to one call.
#[derive(Default)]
pub struct CallBinding {
    /// Each capability's state: the one the tool's world grants bound,
    /// the others refusing every use.
    pub capabilities: Bound,
    /// The host runs in mock mode: every item of evidence is `mock`,
    /// whatever the sources say.
    pub mock_mode: bool,
}

/// Store data of one call: WASI, limits, the binding and what happened.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) stdio: CapturedStdio,
    capabilities: Bound,
    /// What the call's capabilities did.
    pub(crate) uses: CallUses,
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
            stdio,
            capabilities: binding.capabilities,
            uses: CallUses::new(deadline, binding.mock_mode),
        }
    }
}

impl HasCapabilities for CallState {
    fn capabilities(&mut self) -> (&mut Bound, &mut CallUses) {
        (&mut self.capabilities, &mut self.uses)
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl types::Host for CallState {}
