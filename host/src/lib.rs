//! The sandboxed tool runtime for Harmonia's read-only agent tools.
//!
//! Tools are WebAssembly components (`wit/`, package
//! `harmonia:tools@0.1.0`). The [`Host`] loads them as plugins, grants each
//! only its read-only capability, bounds every call in time and memory,
//! and returns exactly one contract envelope per call.
//!
//! Parts:
//! - [`config`]: `harmonia.toml` as data, composed of the sections each
//!   part owns (limits, each capability); every default documented.
//! - The contract's tables and pure parsers (codes and categories, the
//!   envelope and its evidence ids, descriptors, RFC 3339 time, the
//!   answer, trace and validator) are the `harmonia-contract` crate's,
//!   without wasmtime or I/O; embedders use it directly. The host
//!   re-exports only the types its own signatures name ([`Envelope`],
//!   [`Descriptor`], [`Scope`]).
//! - `policy`: which imports each world is granted, as data (the
//!   capabilities' interfaces and worlds from the capability table).
//! - `engine`: the engine, epoch ticker, shared linker, call slots, and
//!   the runtime behind the blocking façade.
//! - [`component_shape`]: a component's imports, exports and counts, read
//!   from its bytes before anything is compiled.
//! - [`plugin`]: loading components: pins, imports, `describe`, duplicates.
//! - `origin`: where a plugin came from, and who is told while it
//!   compiles (named by the loader and the engine alike).
//! - [`cache`]: precompiled components on disk, checked before use.
//! - `provenance`: components from `plugins.lock`, their digests and
//!   signatures verified (the `harmonia-registry` crate) before compiling.
//! - `sandbox`: one call: fresh store, limits, outcome to envelope.
//! - `slot_reset`: how a pool slot is reset between calls
//!   (`limits.slot_reset`), and the watch that refuses calls if swap
//!   turns on under the cheaper reset.
//! - [`CallSlots`]: the gate bounding the calls in flight, which hosts
//!   built on one share (a server's old and new plugin sets).
//! - `call_state`: the store data of one call: WASI, limits, captured
//!   stdio, the bound capabilities and their uses (it names no capability).
//! - `limits`: every limit in one place (fixed ones, the `[limits]`
//!   section with its ranges, the per-component counts) and the per-store
//!   resource limiter.
//! - `wasi`: the WASI grant (nothing) and captured stdio.
//! - [`capability`]: the capabilities as units (public web, workspace),
//!   each a folder owning its config section, per-call state, import and
//!   linker wiring; the capability table; receipts (the URL rules and the
//!   workspace document are the contract crate's, re-exported).
//! - `bindings`: the generated host-side WIT bindings, only.
//! - [`host`]: [`Host`], [`HostBuilder`], [`CallContext`].
//! - [`inspect`]: a component's imports, exports, verdict and descriptor.
//! - [`liaison`]: sessions, the host key and skill directories (the
//!   answer, trace and validator are the contract crate's).
//! - [`secret_file`]: who may read a file holding a secret.
//! - [`log`]: structured log records and sinks.
//! - [`metrics`]: Prometheus counters, gauges and histograms.

// The embedder's API: the host, its config and errors, the envelope and the
// contract, capabilities (sources an embedder may supply), the liaison,
// inspection, the cache's maintenance, logging. (The conformance suite is
// its own crate, `harmonia-conformance`, on this API.)
pub mod cache;
pub mod capability;
pub mod component_shape;
pub mod config;
pub mod host;
pub mod inspect;
pub mod liaison;
pub mod log;
pub mod metrics;
pub mod plugin;
pub mod secret_file;

// The contract's tables and pure parsers live in `harmonia-contract`, which
// embedders use directly; inside the host they keep short paths.
pub(crate) use harmonia_contract::codes as contract;
pub(crate) use harmonia_contract::{descriptor, envelope, time};

// The machinery behind it, private so it can change freely.
mod bindings;
mod call_state;
mod engine;
mod limits;
mod origin;
mod policy;
mod provenance;
mod sandbox;
mod slot_reset;
mod slots;
mod wasi;

pub use capability::{CapabilityKind, World};
pub use limits::{
    CALLS, CAPTURE_CAP, DEADLINE_RANGE_MS, DESCRIBE_DEADLINE, MAX_CAPABILITY_USES, MAX_INPUT_BYTES,
    MAX_RECEIPT_BYTES, RANDOM_CAP,
};
pub use policy::{Grant, ImportError, RefusedImport};
pub use slot_reset::Resolved as SlotResetInEffect;

pub use config::HostConfig;
// The contract's types in the host's own signatures, so a plain embedder
// needs one crate; everything else is `harmonia_contract`'s.
pub use harmonia_contract::descriptor::{Descriptor, Scope};
pub use harmonia_contract::envelope::Envelope;
pub use host::{CallContext, CallError, CallRecord, Host, HostBuilder, HostError};
pub use slots::CallSlots;
