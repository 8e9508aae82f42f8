//! Hostile test guest: Imports wasi:sockets by opening a TCP connection: refused at load.
//!
//! It implements the raw bindings, bypassing the SDK's typed output.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

use harmonia_guest_sdk::{Descriptor, Scope};

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

#[cfg(target_arch = "wasm32")]
mod component {
    use harmonia_guest_sdk::guest::bindings::exports::harmonia::tools::tool::Guest;
    use harmonia_guest_sdk::guest::bindings::harmonia::tools::types;

    struct Raw;

    impl Guest for Raw {
        fn describe() -> types::Descriptor {
            harmonia_guest_sdk::guest::descriptor_to_wit(super::descriptor("hostile_sockets", 5000))
        }

        fn invoke(_input: String) -> Result<types::Output, types::ToolError> {
            let data = {
                let connected = std::net::TcpStream::connect("127.0.0.1:9").is_ok();
                format!("{{\"connected\": {connected}}}")
            };
            Ok(types::Output { data, evidence: Vec::new() })
        }
    }

    harmonia_guest_sdk::guest::bindings::export!(Raw with_types_in harmonia_guest_sdk::guest::bindings);
}
