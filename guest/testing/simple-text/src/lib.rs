//! Test guest: the MCP conformance suite's `test_simple_text` fixture. It
//! takes no arguments and answers a success envelope whose data holds the
//! suite's text, so `tools/call` runs through the whole server (sandbox,
//! envelope, MCP result) while the suite checks the result's text.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};

/// The contract: no arguments; a skill no skill file defines.
pub fn descriptor() -> Descriptor {
    Descriptor {
        purpose: "Answers the MCP conformance suite's simple text.",
        input_schema: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
        skills: vec!["mcp-conformance"],
        ..testing::descriptor("test_simple_text", 5_000)
    }
}

/// The suite's text, whatever the input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Ok(Output::new(serde_json::json!({"text": "This is a simple text response for testing."}), Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run);
