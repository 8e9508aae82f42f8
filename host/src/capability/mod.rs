//! The read-only capabilities the host grants to tools, each one a unit.
//!
//! Parts (this file only declares and re-exports them; nothing inside
//! `capability/` names this file, so the folder has no import cycle):
//! - [`kind`]: the capability table, one row per capability (interface,
//!   world, scope, reserved source prefixes, receipt and metric names),
//!   and [`World`]; the import policy derives from it.
//! - [`receipt`]: [`Receipt`], the record of one capability use, attached
//!   to the call; [`remaining`], the time a use may still wait.
//! - `uses`: `CallUses`, what a call's capabilities did (receipts, counts,
//!   the per-call use limit), shared by every capability's view.
//! - `unit`: the `Capability` trait a capability implements (its source,
//!   per-call state, view and linker wiring) and `Project`, how store data
//!   hands a capability its state (wasmtime's ctx/view split, so no
//!   capability names the store type).
//! - `set`: every capability composed from one list: the shared sources,
//!   a call's bound state, the linker wiring.
//! - [`public_web`]: GET-only HTTP to allow-listed origins, bounded in size
//!   and by the call's deadline, or served from fixtures in mock mode.
//! - [`workspace`]: typed reads of the caller's workspace from one source
//!   (SQLite, the internal HTTP API, or fixtures).
//! - `http_client`, `public_address`: the bounded HTTP client both use and
//!   the resolver that keeps allow-listed names off loopback and private
//!   addresses (private: plumbing, not the embedder's API).
//! - `testing` (tests only): a capability bound to a bare call state, its
//!   import functions called directly, without a host or wasm.
//!
//! A capability is one folder: `config` (its config section, defaults and
//! checks, composed into [`crate::config::HostConfig`]), its sources and
//! fixture, and `guest`, the unit: per-call state, the WIT import as guests
//! see it (use counting, receipts, error mapping) and its linker wiring.
//! Adding one: its folder, its row in [`kind::TABLE`], its line in `set`,
//! its field in `HostConfig`, the WIT and the guest SDK's trait.

pub(crate) mod http_client;
pub mod kind;
pub(crate) mod public_address;
pub mod public_web;
pub mod receipt;
pub(crate) mod set;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod unit;
pub(crate) mod uses;
pub mod workspace;

pub use kind::{CapabilityKind, World};
pub(crate) use receipt::sha256_hex;
pub use receipt::{Receipt, remaining};
