//! Strict parsing of a tool's input object.
//!
//! Decisions (docs/contract.md §3.2 states them; they are taken here):
//! - the input must be a JSON object; anything else is `invalid_input`;
//! - a field the tool does not name is `invalid_input`;
//! - a `null` field reads as absent, because agents often send `null` for
//!   optional parameters they do not use;
//! - integers are JSON integers; `5.0` or `"5"` is `invalid_input`.

use crate::error::ToolError;
use serde_json::{Map, Value};

/// A parsed input object whose fields are all known to the tool.
#[derive(Debug)]
pub struct Input {
    fields: Map<String, Value>,
}

impl Input {
    /// Parse `text` as a JSON object whose keys are all in `allowed`.
    pub fn parse(text: &str, allowed: &[&str]) -> Result<Self, ToolError> {
        let value: Value = serde_json::from_str(text).map_err(|_| ToolError::invalid_input())?;
        let Value::Object(fields) = value else {
            return Err(ToolError::invalid_input());
        };
        if fields.keys().any(|key| !allowed.contains(&key.as_str())) {
            return Err(ToolError::invalid_input());
        }
        Ok(Self { fields })
    }

    fn present(&self, name: &str) -> Option<&Value> {
        self.fields.get(name).filter(|value| !value.is_null())
    }

    /// An optional integer, `default` when absent, clamped to `min..=max`.
    pub fn clamped_integer(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ToolError> {
        let Some(value) = self.present(name) else {
            return Ok(default);
        };
        let number = match value {
            Value::Number(number) if number.is_i64() => number.as_i64().unwrap_or(default),
            // Integers beyond i64 are still integers: clamp them to the top.
            Value::Number(number) if number.is_u64() => max,
            _ => return Err(ToolError::invalid_input()),
        };
        Ok(number.clamp(min, max))
    }

    /// A required string of at most `max_chars` characters, untrimmed.
    pub fn required_string(&self, name: &str, max_chars: usize) -> Result<&str, ToolError> {
        match self.present(name) {
            Some(Value::String(text)) if text.chars().count() <= max_chars => Ok(text),
            _ => Err(ToolError::invalid_input()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_objects_and_unknown_fields() {
        for text in ["", "[]", "3", "\"x\"", "null", "{", "{\"other\":1}"] {
            assert_eq!(Input::parse(text, &["limit"]).unwrap_err(), ToolError::invalid_input(), "{text}");
        }
    }

    #[test]
    fn clamps_integers_and_reads_null_as_absent() {
        let read =
            |text: &str| Input::parse(text, &["limit"]).and_then(|i| i.clamped_integer("limit", 6, 1, 10));
        assert_eq!(read("{}"), Ok(6));
        assert_eq!(read("{\"limit\":null}"), Ok(6));
        assert_eq!(read("{\"limit\":0}"), Ok(1));
        assert_eq!(read("{\"limit\":-9}"), Ok(1));
        assert_eq!(read("{\"limit\":99}"), Ok(10));
        assert_eq!(read("{\"limit\":18446744073709551615}"), Ok(10));
        assert_eq!(read("{\"limit\":4}"), Ok(4));
        assert_eq!(read("{\"limit\":4.0}"), Err(ToolError::invalid_input()));
        assert_eq!(read("{\"limit\":\"4\"}"), Err(ToolError::invalid_input()));
    }

    #[test]
    fn strings_are_required_and_bounded() {
        let read = |text: &str| {
            Input::parse(text, &["q"]).and_then(|i| i.required_string("q", 3).map(str::to_owned))
        };
        assert_eq!(read("{\"q\":\"abc\"}"), Ok("abc".to_owned()));
        assert_eq!(read("{\"q\":\"  \"}"), Ok("  ".to_owned()));
        assert_eq!(read("{\"q\":\"abcd\"}"), Err(ToolError::invalid_input()));
        assert_eq!(read("{}"), Err(ToolError::invalid_input()));
        assert_eq!(read("{\"q\":1}"), Err(ToolError::invalid_input()));
    }
}
