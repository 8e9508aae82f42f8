//! JSON text parsed with every object's keys unique.
//!
//! `serde_json` keeps the last of two equal keys, so `{"job_id": "job-42",
//! "job_id": "job-7"}` would silently read as job-7, and what a client
//! meant and what was recorded could differ. [`from_str`] parses with
//! `serde_json` (its grammar and its nesting limit of 128) into a
//! [`Value`], refusing the first duplicate key it meets, at any depth.

use super::answer::one_line;
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parse `text` as one JSON value whose objects have unique keys. The
/// error names a duplicate key (escaped onto one line) and its position.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = UniqueKeys.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(A::Error::custom(format_args!("duplicate key `{}`", one_line(&key))));
            }
            let value = map.next_value_seed(UniqueKeys)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_like_serde_json_when_keys_are_unique() {
        let text =
            r#"{"op":"call","args":{"n":-1,"f":1.5,"big":18446744073709551615,"list":[null,true,"é"]}}"#;
        assert_eq!(from_str(text).unwrap(), serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(from_str(" [1, {\"a\": {}}] ").unwrap(), json!([1, {"a": {}}]));
    }

    #[test]
    fn refuses_a_duplicate_key_at_any_depth() {
        for (text, key) in [
            (r#"{"op":"call","op":"trace"}"#, "op"),
            (r#"{"op":"call","args":{"job_id":"job-42","job_id":"job-7"}}"#, "job_id"),
            (r#"[{"a":[{"b\n":1,"b\n":2}]}]"#, "b\\n"),
        ] {
            let error = from_str(text).unwrap_err().to_string();
            assert!(error.starts_with(&format!("duplicate key `{key}`")), "{error}");
        }
    }

    #[test]
    fn refuses_trailing_text_and_deep_nesting() {
        assert!(from_str("{} {}").is_err());
        assert!(from_str(&format!("{}{}", "[".repeat(200), "]".repeat(200))).is_err());
        assert!(from_str(&format!("{}{}", "[".repeat(100), "]".repeat(100))).is_ok());
    }
}
