//! The liaison layer: skills, guarded sessions, the trace and the answer
//! validator (docs/contract.md §4–§5).
//!
//! Parts:
//! - [`skills`]: skill files, their hashes, and their agreement with the
//!   tools' descriptors.
//! - [`trace`]: the host's record of one invocation.
//! - [`signing`]: the hash chain and ed25519 seal over a trace, and the
//!   host key.
//! - [`answer`]: the liaison's final answer, parsed strictly.
//! - [`attempts`]: the attempt rule, one decision for the guard and the
//!   validator.
//! - [`grounding`]: which words of an answer state facts, and which record
//!   a claim names.
//! - [`json`]: JSON text with unique object keys.
//! - [`validator`]: every rule of §5 in order, with stable rule codes.
//! - [`mutation`]: the validator's detector of claimed effects.
//! - [`session`]: one agent invocation: activation, the pre-dispatch guard,
//!   recording, validation.

pub mod answer;
pub mod attempts;
pub mod grounding;
pub mod json;
pub mod mutation;
pub mod session;
pub mod signing;
pub mod skills;
pub mod trace;
pub mod validator;
