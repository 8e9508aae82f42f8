//! The bench's trivial tool for hyper-mcp: an Extism plugin with hyper-mcp's
//! v1 interface (`describe` answers the tool list, `call` a `tools/call`),
//! answering the same fixed JSON as Harmonia's `trivial_probe` envelope and
//! the Wassette component. The JSON is written out whole, not built with
//! serde, so the plugin does no work the other two do not.

use extism_pdk::{FnResult, plugin_fn};

/// `ListToolsResult`: the one tool, taking an empty object.
const TOOLS: &str = r#"{"tools":[{"name":"trivial_probe","description":"Answers every call with a fixed small JSON.","inputSchema":{"type":"object","properties":{}}}]}"#;

/// `CallToolResult` whose text is Harmonia's envelope for `trivial_probe`.
const ANSWER: &str = r#"{"content":[{"type":"text","text":"{\"status\":\"success\",\"data\":{},\"error\":null,\"evidence\":[]}"}]}"#;

#[plugin_fn]
pub fn describe(_input: String) -> FnResult<String> {
    Ok(TOOLS.to_string())
}

#[plugin_fn]
pub fn call(_input: String) -> FnResult<String> {
    Ok(ANSWER.to_string())
}
