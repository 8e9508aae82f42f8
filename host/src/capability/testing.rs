//! A capability without a host (tests only, after Spin's `factors-test`):
//! [`Bench`] binds one capability to a bare call (its state and the call's
//! uses, no store, no engine, no wasm), so a test calls the capability's
//! import functions directly, as a guest's import would, and reads the
//! receipts and counts the call would keep.

use super::receipt::Receipt;
use super::unit::{Caller, Capability, Project};
use super::uses::CallUses;
use std::future::Future;
use std::time::{Duration, Instant};

/// Capability `C` in one call.
pub(crate) struct Bench<C: Capability> {
    ctx: C::Ctx,
    uses: CallUses,
}

impl<C: Capability> Bench<C> {
    /// `C` bound to `source` for `caller`, in a call with `deadline` left.
    pub(crate) fn bound(source: &C::Source, caller: Caller<'_>, deadline: Duration) -> Self {
        Self { ctx: C::bind(source, caller), uses: CallUses::new(Instant::now() + deadline, false) }
    }

    /// `C` in a call whose world does not grant it.
    pub(crate) fn unbound(deadline: Duration) -> Self {
        Self { ctx: C::Ctx::default(), uses: CallUses::new(Instant::now() + deadline, false) }
    }

    /// What the import functions run on (call them on it).
    pub(crate) fn view(&mut self) -> C::View<'_> {
        C::view(&mut self.ctx, &mut self.uses)
    }

    /// The call's uses so far.
    pub(crate) fn uses(&self) -> &CallUses {
        &self.uses
    }

    /// The receipts kept so far.
    pub(crate) fn receipts(&self) -> &[Receipt] {
        &self.uses.receipts
    }

    /// Link `C`'s import alone, as the host links it, on a bare engine.
    pub(crate) fn link() -> wasmtime::Result<()> {
        let engine = wasmtime::Engine::default();
        C::add_to_linker(&mut wasmtime::component::Linker::<Self>::new(&engine))
    }
}

impl<C: Capability> Project<C> for Bench<C>
where
    C::Ctx: Send,
{
    fn project(&mut self) -> (&mut C::Ctx, &mut CallUses) {
        (&mut self.ctx, &mut self.uses)
    }
}

/// Run an import function's future to its end, on a runtime with the time
/// and I/O drivers (as a call has).
pub(crate) fn run<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a test runtime")
        .block_on(future)
}
