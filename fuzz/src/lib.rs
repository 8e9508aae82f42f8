//! The host's pure modules, compiled on their own for fuzzing.
//!
//! Fuzzing builds everything with coverage instrumentation; pulling the
//! parsers and the validator in by path keeps wasmtime, SQLite and the
//! HTTP client out of that build. The files are the host's own, unchanged;
//! the modules are re-exported at the paths the host uses (`#[path]` is
//! only used at the top level, where it is relative to `src/`).

#![allow(dead_code, missing_docs, unreachable_pub)]

#[path = "../../host/src/config.rs"]
pub mod config;
#[path = "../../host/src/contract.rs"]
pub mod contract;
#[path = "../../host/src/descriptor.rs"]
pub mod descriptor;
#[path = "../../host/src/envelope.rs"]
pub mod envelope;

#[path = "../../host/src/capability/url.rs"]
#[doc(hidden)]
pub mod capability_url;
#[path = "../../host/src/liaison/answer.rs"]
#[doc(hidden)]
pub mod liaison_answer;
#[path = "../../host/src/liaison/skills.rs"]
#[doc(hidden)]
pub mod liaison_skills;
#[path = "../../host/src/liaison/trace.rs"]
#[doc(hidden)]
pub mod liaison_trace;
#[path = "../../host/src/liaison/validator.rs"]
#[doc(hidden)]
pub mod liaison_validator;
#[path = "../../host/src/capability/workspace/document.rs"]
#[doc(hidden)]
pub mod workspace_document;

pub mod capability {
    pub use super::capability_url as url;

    pub mod workspace {
        pub use crate::workspace_document as document;
    }

    pub fn sha256_hex(bytes: &[u8]) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

pub mod liaison {
    pub use super::liaison_answer as answer;
    pub use super::liaison_skills as skills;
    pub use super::liaison_trace as trace;
    pub use super::liaison_validator as validator;
}
