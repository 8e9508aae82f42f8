//! Hostile test guest: Returns 1,000 evidence items: over the envelope's 100.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Evidence, Output, Scope, Tool, ToolError};

fn descriptor(name: &'static str, deadline_ms: u32) -> Descriptor {
    Descriptor {
        name,
        version: "0.1.0",
        purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
        input_schema: serde_json::json!({"type": "object"}),
        errors: Descriptor::errors_with_runtime(&[]),
        scope: Scope::Public,
        deadline_ms,
        skills: vec!["trend-scan"],
    }
}

struct Guest;

impl Tool for Guest {
    fn descriptor() -> Descriptor {
        descriptor("hostile_evidence_flood", 5000)
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        let evidence = (0..1000).map(|i| Evidence::record("flood", format!("item-{i}"))).collect();
        Ok(Output::new(serde_json::json!({"items": 1000}), evidence))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
