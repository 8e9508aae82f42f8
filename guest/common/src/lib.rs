//! Logic shared by Harmonia's tools, in plain Rust (no WIT, no I/O).
//!
//! Parts:
//! - [`time`]: strict RFC 3339 parsing into UTC seconds (the contract
//!   crate's one implementation, re-exported).
//! - [`hn`]: Hacker News search hits into trend signals and evidence.
//! - [`posts`]: the workspace's measured posts.
//! - [`job`]: the redacted summary of a stored job.

pub mod hn;
pub mod job;
pub mod posts;
pub use harmonia_contract::time;
