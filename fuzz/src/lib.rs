//! The host's pure modules, compiled on their own for fuzzing.
//!
//! Fuzzing builds everything with coverage instrumentation; pulling the
//! parsers and the validator in by path keeps wasmtime, SQLite and the
//! HTTP client out of that build. The files are the host's own, unchanged.

#![allow(dead_code, missing_docs, unreachable_pub)]

#[path = "../../host/src/contract.rs"]
pub mod contract;
#[path = "../../host/src/descriptor.rs"]
pub mod descriptor;
#[path = "../../host/src/envelope.rs"]
pub mod envelope;
#[path = "../../host/src/config.rs"]
pub mod config;

pub mod capability {
    #[path = "../../host/src/capability/url.rs"]
    pub mod url;

    pub mod workspace {
        #[path = "../../../host/src/capability/workspace/document.rs"]
        pub mod document;
    }

    pub fn sha256_hex(bytes: &[u8]) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

pub mod liaison {
    #[path = "../../host/src/liaison/answer.rs"]
    pub mod answer;
    #[path = "../../host/src/liaison/skills.rs"]
    pub mod skills;
    #[path = "../../host/src/liaison/trace.rs"]
    pub mod trace;
    #[path = "../../host/src/liaison/validator.rs"]
    pub mod validator;
}
