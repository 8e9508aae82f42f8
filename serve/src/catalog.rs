//! The tools as MCP sees them (docs/contract.md §6: the same envelope).
//!
//! Each loaded tool becomes an MCP tool: its `inputSchema` is the
//! descriptor's, its `outputSchema` the envelope's JSON Schema, and its
//! annotations say read-only, not destructive, idempotent, and open-world
//! only for public tools. A call's result carries the envelope as
//! `structuredContent` and as JSON text, with `isError` true exactly when
//! `status` is `error`.

use harmonia_host::Envelope;
use harmonia_host::contract::{Category, DEPENDENCY_UNAVAILABLE};
use harmonia_host::descriptor::{Descriptor, Scope};
use harmonia_host::envelope::ErrorObject;
use harmonia_host::liaison::session::CALL_REFUSED;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// The envelope's JSON Schema (docs/contract.md §1).
pub fn envelope_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    Arc::clone(SCHEMA.get_or_init(|| {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["status", "data", "error", "evidence"],
            "properties": {
                "status": {"enum": ["success", "error"]},
                "data": {"type": ["object", "null"]},
                "error": {
                    "oneOf": [
                        {"type": "null"},
                        {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["code", "category", "message", "retryable"],
                            "properties": {
                                "code": {"type": "string", "pattern": "^[a-z0-9_]{1,80}$"},
                                "category": {"enum": ["validation", "authorization", "not_found", "dependency", "provider_permanent"]},
                                "message": {"type": "string", "minLength": 1, "maxLength": 500},
                                "retryable": {"type": "boolean"}
                            }
                        }
                    ]
                },
                "evidence": {
                    "type": "array",
                    "maxItems": 100,
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["evidenceId", "source", "provenance", "reference"],
                        "properties": {
                            "evidenceId": {"type": "string", "pattern": "^ev-[0-9a-f]{16}$"},
                            "source": {"type": "string", "minLength": 1, "maxLength": 120},
                            "provenance": {"enum": ["live", "mock"]},
                            "reference": {"type": ["string", "null"], "maxLength": 2000}
                        }
                    }
                }
            }
        });
        match schema {
            Value::Object(object) => Arc::new(object),
            _ => unreachable!("the schema literal is an object"),
        }
    }))
}

/// The MCP tool for a descriptor.
pub fn tool(descriptor: &Descriptor) -> Tool {
    let input = match &descriptor.input_schema {
        Value::Object(object) => object.clone(),
        _ => JsonObject::new(),
    };
    let annotations = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(descriptor.scope == Scope::Public);
    Tool::new(descriptor.name.clone(), descriptor.purpose.clone(), Arc::new(input))
        .with_raw_output_schema(envelope_schema())
        .with_annotations(annotations)
}

/// The MCP result for an envelope.
pub fn result(envelope: &Envelope) -> CallToolResult {
    let value = envelope.to_value();
    if envelope.is_success() {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// The `call_refused` envelope for a tool the credential does not allow
/// (the same answer whether or not the tool exists).
pub fn not_allowed() -> Envelope {
    Envelope::failure(ErrorObject {
        code: CALL_REFUSED.to_owned(),
        category: Category::Authorization,
        message: "Call refused: this credential does not allow this tool.".to_owned(),
        retryable: false,
    })
}

/// The retryable envelope for a call past the in-flight bound.
pub fn busy() -> Envelope {
    Envelope::stable_error(&DEPENDENCY_UNAVAILABLE)
}
