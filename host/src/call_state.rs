//! The store data of one call, next to the sandbox that makes it: WASI
//! with nothing behind it, the resource and memory limits, captured stdio,
//! the capabilities bound to the call and what they did (`CallUses`:
//! receipts, timeouts, reads, the per-call use limit).
//!
//! The WASI context and its stdio are made at the call's first use of a
//! WASI interface, not with the store: most tools never touch WASI in a
//! call, and a context is two sets of random generators seeded afresh
//! (wasmtime's builder makes one to hand over and one to replace it),
//! boxed clocks and streams. A context made late is the same fresh one,
//! never another call's.
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
    /// Made at the first use of WASI (see the module doc).
    wasi: Option<Wasi>,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
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
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self {
            wasi: None,
            table,
            limiter: CallLimiter::new(memory_bytes, component),
            capabilities: binding.capabilities,
            uses: CallUses::new(deadline, binding.mock_mode),
        }
    }

    /// What the guest wrote to stdout and to stderr (each the lossy text and
    /// the bytes dropped past the cap); empty when it never used WASI.
    pub(crate) fn take_stdio(&self) -> ((String, usize), (String, usize)) {
        match &self.wasi {
            Some(wasi) => (wasi.stdio.stdout.take(), wasi.stdio.stderr.take()),
            None => Default::default(),
        }
    }
}

/// A call's WASI context and the stdio it writes into.
struct Wasi {
    ctx: WasiCtx,
    stdio: CapturedStdio,
}

impl Wasi {
    fn new() -> Self {
        let stdio = CapturedStdio::default();
        Self { ctx: crate::wasi::context(&stdio), stdio }
    }
}

impl HasCapabilities for CallState {
    fn capabilities(&mut self) -> (&mut Bound, &mut CallUses) {
        (&mut self.capabilities, &mut self.uses)
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let wasi = self.wasi.get_or_insert_with(Wasi::new);
        WasiCtxView { ctx: &mut wasi.ctx, table: &mut self.table }
    }
}

impl types::Host for CallState {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn state() -> CallState {
        let deadline = Instant::now() + Duration::from_secs(1);
        CallState::new(
            1 << 20,
            ComponentLimits::from(&crate::config::LimitsConfig::default()),
            deadline,
            CallBinding::default(),
        )
    }

    #[test]
    fn a_call_gets_its_wasi_context_at_its_first_use_of_wasi_and_a_fresh_one() {
        let mut first = state();
        assert!(first.wasi.is_none(), "a store is made without a WASI context");
        assert_eq!(first.take_stdio(), Default::default());
        let _ = first.ctx();
        assert!(first.wasi.is_some(), "the first use of WASI makes the context");
        let second = state();
        assert!(second.wasi.is_none(), "another call's store starts without one");
    }
}
