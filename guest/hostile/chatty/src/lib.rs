//! Hostile test guest: Writes 1 MiB to stdout and stderr: the host captures 16 KiB of each and answers normally.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};

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
        descriptor("hostile_chatty", 5000)
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        let line = "SECRET-STDOUT-LINE ".repeat(50);
        for _ in 0..1100 {
            println!("{line}");
            eprintln!("{line}");
        }
        Ok(Output::new(serde_json::json!({"printed": true}), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(Guest);
