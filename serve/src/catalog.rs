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

/// The retryable envelope for a call whose deadline passed while it
/// waited for an in-flight permit (it never ran).
pub fn busy() -> Envelope {
    Envelope::stable_error(&DEPENDENCY_UNAVAILABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_error_follows_the_status_and_the_text_is_the_envelope() {
        for envelope in [not_allowed(), busy(), Envelope::success(serde_json::Map::new(), Vec::new())] {
            let result = result(&envelope);
            assert_eq!(result.is_error, Some(!envelope.is_success()));
            assert_eq!(result.structured_content.as_ref(), Some(&envelope.to_value()));
            let text = serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), envelope.to_value());
        }
        assert!(busy().error.unwrap().retryable);
    }

    #[test]
    fn only_public_tools_are_open_world() {
        let host =
            harmonia_host::Host::new(harmonia_host::HostConfig { mock: true, ..Default::default() }).unwrap();
        for info in host.tools() {
            let tool = tool(&info.descriptor);
            let notes = tool.annotations.unwrap();
            assert_eq!(
                notes.open_world_hint,
                Some(info.descriptor.scope == Scope::Public),
                "{}",
                info.descriptor.name
            );
            assert_eq!(
                (notes.read_only_hint, notes.destructive_hint, notes.idempotent_hint),
                (Some(true), Some(false), Some(true))
            );
            assert_eq!(tool.output_schema.unwrap(), envelope_schema());
        }
    }
}
