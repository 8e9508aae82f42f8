//! Test guest: answers every call with `{}` and no evidence.

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Trivial;

impl Tool for Trivial {
    fn descriptor() -> Descriptor {
        Descriptor {
            name: "trivial_probe",
            version: "0.1.0",
            purpose: "Answers every call with an empty object; measures the sandbox's own cost.",
            input_schema: serde_json::json!({"type": "object"}),
            errors: Descriptor::errors_with_runtime(&[]),
            scope: Scope::Public,
            deadline_ms: 5_000,
            skills: vec!["trend-scan"],
        }
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        Ok(Output::new(serde_json::json!({}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Trivial);
