//! The host's integration tests, one binary (wasmtime is linked once):
//! - [`hostile`]: each hostile guest gets its exact envelope;
//! - [`adversary`]: the sandbox's promises under an adversary;
//! - [`backpressure`]: the call slots, held and waited for;
//! - [`public_web`] and [`workspace`]: the capabilities and the six tools
//!   against real sources (a loopback server, the SQLite store);
//! - [`session`]: guarded sessions through the library;
//! - [`cache`]: the precompiled component cache;
//! - [`foreign_plugins`]: Python and JavaScript plugins from the templates;
//! - [`properties`]: property tests of parsers, the store and the validator;
//! - [`contract_doc`]: docs/contract.md true to the code;
//! - [`module_cycles`]: no import cycle between the files of `host/src`.
//!
//! `tests/load.rs` is a binary of its own: it measures the process's
//! resident memory, which other tests in the same process would grow.

mod adversary;
mod backpressure;
mod cache;
mod contract_doc;
mod foreign_plugins;
mod hostile;
mod module_cycles;
mod properties;
mod public_web;
mod session;
mod workspace;
