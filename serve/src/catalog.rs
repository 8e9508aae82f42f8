//! The tools as MCP sees them (docs/contract.md §6: the same envelope).
//!
//! Each loaded tool becomes an MCP tool: its `inputSchema` is the
//! descriptor's, its `outputSchema` the envelope's JSON Schema, and its
//! annotations say read-only, not destructive, idempotent, and open-world
//! only for public tools. A call's result carries the envelope as
//! `structuredContent` and as JSON text, with `isError` true exactly when
//! `status` is `error`.

use harmonia_contract::codes::{CODE_PATTERN, Category, DEPENDENCY_UNAVAILABLE};
use harmonia_contract::descriptor::{Descriptor, Scope};
use harmonia_contract::envelope::{
    ErrorObject, MAX_EVIDENCE, MAX_MESSAGE_CHARS, MAX_REFERENCE_CHARS, MAX_SOURCE_CHARS, Provenance,
};
use harmonia_host::Envelope;
use harmonia_host::liaison::session::CALL_REFUSED;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// The envelope's JSON Schema (docs/contract.md §1), built from the
/// contract's own bounds and spellings (a test holds the contract's parser
/// to every bound it states).
pub fn envelope_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    Arc::clone(SCHEMA.get_or_init(|| {
        let categories: Vec<&str> = Category::ALL.iter().map(|category| category.as_str()).collect();
        let provenances: Vec<&str> = Provenance::ALL.iter().map(|provenance| provenance.as_str()).collect();
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
                                "code": {"type": "string", "pattern": CODE_PATTERN},
                                "category": {"enum": categories},
                                "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS},
                                "retryable": {"type": "boolean"}
                            }
                        }
                    ]
                },
                "evidence": {
                    "type": "array",
                    "maxItems": MAX_EVIDENCE,
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["evidenceId", "source", "provenance", "reference"],
                        "properties": {
                            "evidenceId": {"type": "string", "pattern": "^ev-[0-9a-f]{16}$"},
                            "source": {"type": "string", "minLength": 1, "maxLength": MAX_SOURCE_CHARS},
                            "provenance": {"enum": provenances},
                            "reference": {"type": ["string", "null"], "maxLength": MAX_REFERENCE_CHARS}
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

/// `schema` in the subset of JSON Schema every model provider accepts: a
/// nullable type (`"type": ["integer", "null"]`, which some providers
/// refuse) becomes its one other type; the field stays optional, which
/// is how a caller leaves it out. Nested schemas are rewritten alike.
pub fn portable_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut portable = serde_json::Map::new();
            for (key, value) in object {
                let value = match (key.as_str(), value) {
                    ("type", Value::Array(types)) => {
                        let kept: Vec<&Value> =
                            types.iter().filter(|kind| kind.as_str() != Some("null")).collect();
                        match kept.as_slice() {
                            [one] => (*one).clone(),
                            _ => Value::Array(kept.into_iter().cloned().collect()),
                        }
                    }
                    _ => portable_schema(value),
                };
                portable.insert(key.clone(), value);
            }
            Value::Object(portable)
        }
        Value::Array(items) => Value::Array(items.iter().map(portable_schema).collect()),
        other => other.clone(),
    }
}

/// The MCP tool for a descriptor.
pub fn tool(descriptor: &Descriptor) -> Tool {
    let input = match portable_schema(&descriptor.input_schema) {
        Value::Object(object) => object,
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

/// The MCP result for an envelope (its data moved into the structured
/// content, not copied).
pub fn result(envelope: Envelope) -> CallToolResult {
    let success = envelope.is_success();
    let value = envelope.into_value();
    if success { CallToolResult::structured(value) } else { CallToolResult::structured_error(value) }
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

/// The code of the envelope for a call past its credential's rate
/// (docs/contract.md §2.5): category `dependency`, retryable, its message
/// saying when to retry. Like `call_refused`, never a tool's code.
pub const RATE_LIMITED: &str = "rate_limited";

/// The `rate_limited` envelope: the call never ran, and may be retried
/// after `wait`.
pub fn rate_limited(wait: std::time::Duration) -> Envelope {
    let millis = (wait.as_secs_f64() * 1000.0).ceil().max(1.0) as u64;
    Envelope::failure(ErrorObject {
        code: RATE_LIMITED.to_owned(),
        category: Category::Dependency,
        message: format!(
            "Rate limit reached for this credential: the call did not run; retry after {millis} ms."
        ),
        retryable: true,
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
        let limited = rate_limited(std::time::Duration::from_millis(1500));
        for envelope in
            [not_allowed(), busy(), limited.clone(), Envelope::success(serde_json::Map::new(), Vec::new())]
        {
            let result = result(envelope.clone());
            assert_eq!(result.is_error, Some(!envelope.is_success()));
            assert_eq!(result.structured_content.as_ref(), Some(&envelope.to_value()));
            let text = serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), envelope.to_value());
        }
        assert!(busy().error.unwrap().retryable);
        let error = limited.error.unwrap();
        assert!(
            error.retryable && error.code == RATE_LIMITED && error.message.contains("retry after 1500 ms")
        );
    }

    #[test]
    fn input_schemas_use_no_nullable_type_and_keep_their_fields_optional() {
        let host =
            harmonia_host::Host::new(harmonia_host::HostConfig { mock: true, ..Default::default() }).unwrap();
        let mut rewritten = 0;
        for info in host.tools() {
            let schema = Value::Object((*tool(&info.descriptor).input_schema).clone());
            let text = schema.to_string();
            assert!(!text.contains("\"null\""), "{}: {text}", info.descriptor.name);
            let original = &info.descriptor.input_schema;
            assert_eq!(schema["required"], original["required"], "{}", info.descriptor.name);
            rewritten += usize::from(schema != *original);
        }
        assert!(rewritten >= 2, "the limit fields were nullable and are now plain integers");
        let nested = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]},
            "b": {"type": ["integer", "string", "null"]}, "c": {"items": {"type": ["null", "number"]}}}});
        assert_eq!(
            portable_schema(&nested),
            json!({"type": "object", "properties": {"a": {"type": "string"},
                "b": {"type": ["integer", "string"]}, "c": {"items": {"type": "number"}}}})
        );
    }

    /// Every bound and spelling the envelope's schema states is the one
    /// the contract's strict parser enforces: a value at the bound parses,
    /// one past it (or one spelled otherwise) does not.
    #[test]
    fn the_envelope_schema_states_the_bounds_the_contract_parser_enforces() {
        let schema = Value::Object((*envelope_schema()).clone());
        let error = &schema["properties"]["error"]["oneOf"][1]["properties"];
        let evidence = &schema["properties"]["evidence"];
        let item = &evidence["items"]["properties"];
        let parses = |value: &Value| Envelope::from_value(value).is_ok();
        let failure = |code: &str, category: &str, message: &str| {
            json!({"status": "error", "data": null, "evidence": [],
                "error": {"code": code, "category": category, "message": message, "retryable": false}})
        };
        let max = |bound: &Value| bound.as_u64().unwrap() as usize;
        let categories = error["category"]["enum"].as_array().unwrap();
        assert_eq!(categories.len(), 5);
        for category in categories {
            assert!(parses(&failure("x", category.as_str().unwrap(), "m")), "{category}");
        }
        assert!(!parses(&failure("x", "Validation", "m")));
        let message = max(&error["message"]["maxLength"]);
        assert!(parses(&failure("x", "dependency", &"m".repeat(message))));
        assert!(!parses(&failure("x", "dependency", &"m".repeat(message + 1))));
        assert_eq!(error["code"]["pattern"], "^[a-z0-9_]{1,80}$");
        assert!(parses(&failure(&"c".repeat(80), "dependency", "m")));
        assert!(
            !parses(&failure(&"c".repeat(81), "dependency", "m"))
                && !parses(&failure("C", "dependency", "m"))
        );
        let success =
            |items: Vec<Value>| json!({"status": "success", "data": {}, "error": null, "evidence": items});
        let cited = |source: &str, provenance: &str, reference: Option<&str>| {
            let id = harmonia_contract::envelope::evidence_id(
                source,
                if provenance == "mock" { Provenance::Mock } else { Provenance::Live },
                reference,
            );
            json!({"evidenceId": id, "source": source, "provenance": provenance, "reference": reference})
        };
        let items = max(&evidence["maxItems"]);
        let many = |count: usize| (0..count).map(|i| cited(&format!("s{i}"), "live", None)).collect();
        assert!(parses(&success(many(items))));
        assert!(!parses(&success(many(items + 1))));
        for provenance in item["provenance"]["enum"].as_array().unwrap() {
            assert!(parses(&success(vec![cited("s", provenance.as_str().unwrap(), None)])), "{provenance}");
        }
        let source = max(&item["source"]["maxLength"]);
        assert!(parses(&success(vec![cited(&"s".repeat(source), "live", None)])));
        assert!(!parses(&success(vec![cited(&"s".repeat(source + 1), "live", None)])));
        let reference = max(&item["reference"]["maxLength"]);
        assert!(parses(&success(vec![cited("s", "live", Some(&"r".repeat(reference)))])));
        assert!(!parses(&success(vec![cited("s", "live", Some(&"r".repeat(reference + 1)))])));
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
