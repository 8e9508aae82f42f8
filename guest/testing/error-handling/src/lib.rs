//! Test guest: the MCP conformance suite's `test_error_handling` fixture.
//! Every call fails with a contract error (`invalid_input`, declared), so
//! the server answers an error envelope with `isError: true`, never a
//! protocol error.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};

/// The contract: no arguments; a skill no skill file defines, `invalid_input` declared.
pub fn descriptor() -> Descriptor {
    let schema = serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false});
    Descriptor {
        purpose: "Fails every call, as the MCP conformance suite's error fixture asks.",
        skills: vec!["mcp-conformance"],
        ..testing::reading(schema, testing::descriptor("test_error_handling", 5_000))
    }
}

/// Always the contract's `invalid_input`, with its fixed message.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    Err(ToolError::invalid_input())
}

harmonia_guest_sdk::export!(descriptor, run);
