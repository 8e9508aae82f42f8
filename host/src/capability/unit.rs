//! What makes a capability a unit (after Spin's factors, with wasmtime's
//! ctx/view split): the [`Capability`] trait each capability folder
//! implements, and [`Project`], how store data hands a capability its own
//! state and the call's [`CallUses`], so no capability names the store type.
//!
//! A capability's lifecycle: its source is built once from the config when
//! the host starts (`Capability::from_config`, unless the embedder gives
//! one), bound to a call
//! ([`Capability::bind`], the call's [`Caller`]) into its per-call state
//! (`Capability::Ctx`), and each use of its import runs on a view of that
//! state and the call's uses (`Capability::View`), recorded as a receipt.

use super::kind::CapabilityKind;
use super::uses::CallUses;
use crate::config::{ConfigError, HostConfig};
use wasmtime::component::Linker;

/// Who a call is for, as a capability binds to it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Caller<'a> {
    /// The caller's workspace, when the call has one.
    pub workspace: Option<&'a str>,
}

/// One capability: its row, its source, its per-call state, its view and
/// its linker wiring.
pub trait Capability: Sized + 'static {
    /// Its row of the capability table.
    const KIND: CapabilityKind;
    /// Built once when the host starts; shared by every call.
    type Source: Clone + Send + Sync + std::fmt::Debug;
    /// Its state in one call (unbound by default: every use refused).
    type Ctx: Default + Send + 'static;
    /// What its import functions run on: its state and the call's uses.
    type View<'a>: Send;

    /// Its source as the config names it (`config.mock`: fixtures).
    fn from_config(config: &HostConfig) -> Result<Self::Source, ConfigError>;

    /// The state of a call granted this capability.
    fn bind(source: &Self::Source, caller: Caller<'_>) -> Self::Ctx;

    /// The view its import functions run on.
    fn view<'a>(ctx: &'a mut Self::Ctx, uses: &'a mut CallUses) -> Self::View<'a>;

    /// Link its import for store data `T`.
    fn add_to_linker<T: Project<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()>;
}

/// Store data that holds capability `C`'s state and the call's uses.
pub trait Project<C: Capability>: Send + 'static {
    /// `C`'s state and the call's uses.
    fn project(&mut self) -> (&mut C::Ctx, &mut CallUses);
}
