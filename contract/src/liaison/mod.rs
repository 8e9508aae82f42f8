//! The liaison's pure parts (docs/contract.md §4–§5): what an answer, a
//! trace and a skill are, and the validator that judges an answer against
//! its trace. Running a session and holding the host key are the host's.
//!
//! Parts:
//! - [`skills`]: skill files, their hashes, and their agreement with the
//!   tools' descriptors.
//! - [`trace`]: the host's record of one invocation, parsed strictly.
//! - [`seal`]: the hash chain and ed25519 seal over a trace.
//! - [`answer`]: the liaison's final answer, parsed strictly.
//! - [`attempts`]: the attempt rule, one decision for the guard and the
//!   validator.
//! - [`grounding`]: which words of an answer state facts, and which record
//!   a claim names.
//! - [`json`]: JSON text with unique object keys.
//! - [`validator`]: every rule of §5 in order, with stable rule codes.
//! - [`mutation`]: the validator's detector of claimed effects.

pub mod answer;
pub mod attempts;
pub mod grounding;
pub mod json;
pub mod mutation;
pub mod seal;
pub mod skills;
pub mod trace;
pub mod validator;
