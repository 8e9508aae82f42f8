//! The liaison layer: skills, guarded sessions, the trace and the answer
//! validator (docs/contract.md §4–§5).
//!
//! The pure parts (answer, trace, skills, attempts, grounding, the
//! validator and its detector of claimed effects, the seal) are the
//! contract crate's `liaison` (`harmonia_contract::liaison`). The host's
//! own parts:
//! - [`skills`]: the pure skills plus reading a directory of skill files.
//! - [`signing`]: the seal plus the host key and its file.
//! - [`session`]: one agent invocation: activation, the pre-dispatch guard,
//!   recording, validation.

pub(crate) use harmonia_contract::liaison::{attempts, trace, validator};

pub mod session;
pub mod signing;
pub mod skills;
