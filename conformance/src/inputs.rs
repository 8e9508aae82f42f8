//! Generated inputs: a valid sample and a set of probes, from a tool's
//! input schema.
//!
//! Probes: the empty object; each declared field with every JSON type its
//! schema does not allow; empty, whitespace, 100 KiB and unicode strings;
//! an unknown field and nested junk; JSON that is not an object; text that
//! is not JSON at all; nesting deeper than any parser allows. A probe is
//! *malformed* when the contract says it must be refused as a validation
//! error: wrong types, non-objects, not JSON, and unknown fields when the
//! schema forbids additional properties.

use serde_json::{Map, Value, json};

/// One generated input.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// What it is, for reports.
    pub label: String,
    /// The input text.
    pub input: String,
    /// Whether the answer must be a validation error.
    pub malformed: bool,
}

const JSON_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

fn example(json_type: &str) -> Value {
    match json_type {
        "string" => json!("conformance"),
        "integer" => json!(3),
        "number" => json!(2.5),
        "boolean" => json!(true),
        "array" => json!(["conformance"]),
        "object" => json!({"conformance": true}),
        _ => Value::Null,
    }
}

/// The types a property's schema allows (`null` included when listed).
fn allowed_types(property: &Value) -> Vec<String> {
    match &property["type"] {
        Value::String(single) => vec![single.clone()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn properties(schema: &Value) -> Vec<(String, Value)> {
    schema["properties"]
        .as_object()
        .map(|map| map.iter().map(|(key, value)| (key.clone(), value.clone())).collect())
        .unwrap_or_default()
}

/// A valid input: every required field with a sample of its first type.
pub fn sample(schema: &Value) -> Value {
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let mut input = Map::new();
    for (name, property) in properties(schema) {
        if required.contains(&name.as_str()) {
            let first = allowed_types(&property)
                .into_iter()
                .find(|kind| kind != "null")
                .unwrap_or_else(|| "string".into());
            input.insert(name, example(&first));
        }
    }
    Value::Object(input)
}

fn with(base: &Value, key: &str, value: Value) -> String {
    let mut input = base.clone();
    input[key] = value;
    input.to_string()
}

/// Every probe for this schema.
pub fn probes(schema: &Value) -> Vec<Probe> {
    let base = sample(schema);
    let closed = schema["additionalProperties"] == json!(false);
    let mut probes = vec![Probe { label: "the empty object".into(), input: "{}".into(), malformed: false }];
    let mut push =
        |label: String, input: String, malformed: bool| probes.push(Probe { label, input, malformed });
    push("a valid sample".into(), base.to_string(), false);
    for (name, property) in properties(schema) {
        let allowed = allowed_types(&property);
        if !allowed.is_empty() {
            for wrong in JSON_TYPES.iter().filter(|kind| {
                !allowed.iter().any(|ok| ok == *kind || (ok == "number" && **kind == "integer"))
            }) {
                push(format!("`{name}` as {wrong}"), with(&base, &name, example(wrong)), true);
            }
        }
        if allowed.iter().any(|kind| kind == "string") {
            push(format!("`{name}` empty"), with(&base, &name, json!("")), false);
            push(format!("`{name}` whitespace"), with(&base, &name, json!(" \t\n ")), false);
            push(format!("`{name}` of 100 KiB"), with(&base, &name, json!("x".repeat(100 * 1024))), false);
            push(
                format!("`{name}` in unicode"),
                with(&base, &name, json!("Ünïcødé 🚀 中文 \u{202e}rtl\u{0}")),
                false,
            );
        }
    }
    push("an unknown field".into(), with(&base, "conformance_unknown", json!(1)), closed);
    push(
        "nested junk".into(),
        with(&base, "conformance_junk", json!({"a": [1, {"b": null}], "c": "\u{0}", "d": {"e": {"f": []}}})),
        closed,
    );
    for (label, text) in [
        ("a JSON list", "[]"),
        ("a JSON number", "1"),
        ("a JSON string", "\"conformance\""),
        ("JSON null", "null"),
        ("JSON true", "true"),
        ("a list of objects", "[{\"a\": 1}]"),
        ("text that is not JSON", "{not json"),
        ("empty text", ""),
        ("a lone NUL", "\u{0}"),
    ] {
        push(label.into(), text.into(), true);
    }
    push("nesting 10,000 deep".into(), format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)), true);
    probes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fill_required_fields() {
        let schema = json!({"type": "object", "properties": {"job_id": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
            "required": ["job_id"], "additionalProperties": false});
        assert_eq!(sample(&schema), json!({"job_id": "conformance"}));
    }

    #[test]
    fn probes_cover_wrong_types_strings_and_shapes() {
        let schema = json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
            "required": ["query"], "additionalProperties": false});
        let probes = probes(&schema);
        let labels: Vec<&str> = probes.iter().map(|probe| probe.label.as_str()).collect();
        assert!(labels.contains(&"`query` as integer"));
        assert!(labels.contains(&"`limit` as string"));
        assert!(!labels.contains(&"`limit` as integer"));
        assert!(labels.contains(&"`query` of 100 KiB"));
        assert!(probes.iter().find(|probe| probe.label == "an unknown field").unwrap().malformed);
        assert!(probes.iter().find(|probe| probe.label == "a JSON list").unwrap().malformed);
        assert!(!probes.iter().find(|probe| probe.label == "`query` whitespace").unwrap().malformed);
        let open = json!({"type": "object"});
        assert!(
            !super::probes(&open).iter().find(|probe| probe.label == "an unknown field").unwrap().malformed
        );
    }
}
