//! The host's pure parsers and the validator, for fuzzing.
//!
//! The targets use the host crate as any embedder does (its modules at the
//! paths the host exports). Moving the contract's pure parts into their own
//! crate, so fuzzing builds neither wasmtime nor SQLite, is the plan of
//! issue 13.

pub use harmonia_host::{capability, config, contract, descriptor, envelope, liaison};
