//! Typed, strict parsing of a tool's input object.
//!
//! A tool names its input as a `#[derive(Deserialize)]` struct and the SDK
//! parses the call's text into it ([`FromInput`]) before the tool runs.
//! Decisions (docs/contract.md §3.2 states them; they are taken here):
//! - the input must be a JSON object; anything else is `invalid_input`;
//! - a field the struct does not name is `invalid_input`, whether or not the
//!   struct says `#[serde(deny_unknown_fields)]`: the SDK checks every key
//!   against the struct's fields itself;
//! - when a key repeats, the last one counts;
//! - a `null` field reads as absent, because agents often send `null` for
//!   optional parameters they do not use (an `Option` field, or
//!   [`Clamped`]);
//! - integers are JSON integers; `5.0` or `"5"` is `invalid_input`.
//!
//! Ranges and lengths live in the field's type ([`Clamped`], [`Text`]), and
//! the same type writes the field's JSON Schema, so the schema a tool
//! declares and the rule it applies cannot drift apart.

use crate::error::ToolError;
use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::{Map, Value, json};

/// A tool's input, read from the call's text.
///
/// Every `T: Deserialize` is one, parsed by the rules of this module.
pub trait FromInput: Sized {
    /// Read the input text, or the contract's `invalid_input`.
    fn from_input(text: &str) -> Result<Self, ToolError>;
}

impl<T: DeserializeOwned> FromInput for T {
    fn from_input(text: &str) -> Result<Self, ToolError> {
        match serde_json::from_str(text) {
            Ok(Value::Object(fields)) => {
                T::deserialize(Strict(Value::Object(fields))).map_err(|Refused| ToolError::invalid_input())
            }
            _ => Err(ToolError::invalid_input()),
        }
    }
}

/// Parse `text` as the tool's input and run `run` on it: what a component
/// does on each call, and what native tests and benchmarks call.
pub fn invoke<T: FromInput, R>(
    text: &str,
    run: impl FnOnce(T) -> Result<R, ToolError>,
) -> Result<R, ToolError> {
    run(T::from_input(text)?)
}

/// Why an input did not fit its type. It carries no text: every misfit is
/// the same `invalid_input`, so no error message is ever formatted (which
/// keeps serde's message formatting out of the component).
#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("invalid input")
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: std::fmt::Display>(_message: T) -> Self {
        Refused
    }
}

/// A parsed JSON value read into the tool's type: as serde_json reads a
/// `Value`, except that a struct refuses every key it does not name.
struct Strict(Value);

impl<'de> IntoDeserializer<'de, Refused> for Strict {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

fn entries(
    map: Map<String, Value>,
) -> MapDeserializer<'static, impl Iterator<Item = (String, Strict)>, Refused> {
    MapDeserializer::new(map.into_iter().map(|(key, value)| (key, Strict(value))))
}

/// The field or variant names serde passes.
type Names = &'static [&'static str];
/// What a visitor reads, or why not.
type Read<'de, V> = Result<<V as Visitor<'de>>::Value, Refused>;

impl<'de> Deserializer<'de> for Strict {
    type Error = Refused;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Read<'de, V> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(value) => visitor.visit_bool(value),
            Value::Number(number) => match (number.as_u64(), number.as_i64(), number.as_f64()) {
                (Some(value), _, _) => visitor.visit_u64(value),
                (None, Some(value), _) => visitor.visit_i64(value),
                (None, None, Some(value)) => visitor.visit_f64(value),
                (None, None, None) => Err(Refused),
            },
            Value::String(text) => visitor.visit_string(text),
            Value::Array(items) => {
                let mut items = SeqDeserializer::new(items.into_iter().map(Strict));
                let value = visitor.visit_seq(&mut items)?;
                items.end()?;
                Ok(value)
            }
            Value::Object(map) => {
                let mut entries = entries(map);
                let value = visitor.visit_map(&mut entries)?;
                entries.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Read<'de, V> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(Strict(value)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Read<'de, V> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(self, _: &'static str, _: Names, visitor: V) -> Read<'de, V> {
        let Value::String(variant) = self.0 else { return Err(Refused) };
        visitor.visit_enum(variant.into_deserializer())
    }

    /// Refuses an object with a key the struct does not name.
    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: Names, visitor: V) -> Read<'de, V> {
        match &self.0 {
            Value::Object(map) if map.keys().all(|key| fields.contains(&key.as_str())) => {
                self.deserialize_any(visitor)
            }
            _ => Err(Refused),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// The input of a tool that takes none: `{}` only (any key, even one whose
/// value is `null`, is `invalid_input`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct NoInput {}

impl NoInput {
    /// The schema of `{}`.
    pub fn schema() -> Value {
        object_schema(json!({}), &[])
    }
}

/// The JSON Schema of an input object with these `properties` (each
/// written by its field's type) and `required` names; other keys are
/// refused.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), properties);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), false.into());
    Value::Object(schema)
}

/// An optional integer field: absent or `null` reads as `DEFAULT`; any
/// other integer is clamped into `MIN..=MAX` (integers beyond `i64` too),
/// never refused for its size.
///
/// ```
/// # use harmonia_guest_sdk::input::Clamped;
/// /// Signals wanted.
/// pub type Limit = Clamped<6, 1, 10>;
/// assert_eq!(Limit::DEFAULT, 6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clamped<const DEFAULT: i64, const MIN: i64, const MAX: i64>(i64);

impl<const DEFAULT: i64, const MIN: i64, const MAX: i64> Clamped<DEFAULT, MIN, MAX> {
    /// The value when the field is absent or `null`.
    pub const DEFAULT: i64 = DEFAULT;
    /// The smallest value.
    pub const MIN: i64 = MIN;
    /// The largest value.
    pub const MAX: i64 = MAX;

    /// The clamped value.
    pub fn get(self) -> i64 {
        self.0
    }

    /// The field's schema: `what` it is, its default and its range.
    pub fn schema(what: &str) -> Value {
        json!({"type": ["integer", "null"], "default": DEFAULT, "description": format!("{what}; clamped to {MIN}-{MAX}.")})
    }
}

impl<const DEFAULT: i64, const MIN: i64, const MAX: i64> Default for Clamped<DEFAULT, MIN, MAX> {
    fn default() -> Self {
        Self(DEFAULT)
    }
}

impl<'de, const DEFAULT: i64, const MIN: i64, const MAX: i64> Deserialize<'de>
    for Clamped<DEFAULT, MIN, MAX>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // An `Option` also makes an absent field read as `None`.
        let value = Option::<i128>::deserialize(deserializer)?;
        Ok(Self(value.map_or(DEFAULT, |value| value.clamp(i128::from(MIN), i128::from(MAX)) as i64)))
    }
}

/// A string field of at most `MAX_CHARS` characters (Unicode scalar
/// values), taken as sent (untrimmed); a longer one is `invalid_input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text<const MAX_CHARS: usize>(String);

impl<const MAX_CHARS: usize> Text<MAX_CHARS> {
    /// The longest text accepted, in characters.
    pub const MAX_CHARS: usize = MAX_CHARS;

    /// The field's schema, for a text that must not be empty once trimmed.
    pub fn schema(description: &str) -> Value {
        json!({"type": "string", "minLength": 1, "maxLength": MAX_CHARS, "description": description})
    }
}

impl<const MAX_CHARS: usize> std::ops::Deref for Text<MAX_CHARS> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de, const MAX_CHARS: usize> Deserialize<'de> for Text<MAX_CHARS> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.chars().count() > MAX_CHARS {
            return Err(de::Error::invalid_length(text.chars().count(), &"a shorter text"));
        }
        Ok(Self(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Limited {
        limit: Clamped<6, 1, 10>,
    }

    /// No `deny_unknown_fields`: the SDK refuses unknown keys anyway.
    #[derive(Debug, Deserialize)]
    struct Query {
        q: Text<3>,
    }

    fn limit(text: &str) -> Result<i64, ToolError> {
        invoke(text, |input: Limited| Ok(input.limit.get()))
    }

    fn query(text: &str) -> Result<String, ToolError> {
        invoke(text, |input: Query| Ok(input.q.to_string()))
    }

    #[test]
    fn rejects_non_objects_and_unknown_fields() {
        for text in ["", "[]", "[5]", "3", "\"x\"", "null", "{", "{\"other\":1}", "{\"other\":null}"] {
            assert_eq!(limit(text), Err(ToolError::invalid_input()), "{text}");
        }
        assert_eq!(query("{\"q\":\"a\",\"other\":1}"), Err(ToolError::invalid_input()));
        assert_eq!(NoInput::from_input("{\"x\":null}"), Err(ToolError::invalid_input()));
        assert_eq!(NoInput::from_input("{}"), Ok(NoInput {}));
    }

    #[test]
    fn clamps_integers_and_reads_null_or_absence_as_the_default() {
        assert_eq!(limit("{}"), Ok(6));
        assert_eq!(limit("{\"limit\":null}"), Ok(6));
        assert_eq!(limit("{\"limit\":0}"), Ok(1));
        assert_eq!(limit("{\"limit\":-9}"), Ok(1));
        assert_eq!(limit("{\"limit\":-9223372036854775808}"), Ok(1));
        assert_eq!(limit("{\"limit\":99}"), Ok(10));
        assert_eq!(limit("{\"limit\":18446744073709551615}"), Ok(10));
        assert_eq!(limit("{\"limit\":4}"), Ok(4));
        assert_eq!(limit("{\"limit\":3,\"limit\":4}"), Ok(4), "the last key counts");
        for text in ["4.0", "\"4\"", "true", "-0", "5e0", "18446744073709551616"] {
            assert_eq!(limit(&format!("{{\"limit\":{text}}}")), Err(ToolError::invalid_input()), "{text}");
        }
    }

    #[test]
    fn strings_are_required_and_bounded_in_characters() {
        assert_eq!(query("{\"q\":\"abc\"}"), Ok("abc".to_owned()));
        assert_eq!(query("{\"q\":\"ééé\"}"), Ok("ééé".to_owned()));
        assert_eq!(query("{\"q\":\"  \"}"), Ok("  ".to_owned()));
        for text in ["{\"q\":\"abcd\"}", "{}", "{\"q\":null}", "{\"q\":1}", "{\"q\":\"\\ud800\"}"] {
            assert_eq!(query(text), Err(ToolError::invalid_input()), "{text}");
        }
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum How {
        Sleep,
        Block,
    }

    #[derive(Debug, Deserialize)]
    struct Inner {
        on: bool,
    }

    #[derive(Debug, Deserialize)]
    struct Nested {
        how: How,
        tags: Option<Vec<Text<3>>>,
        inner: Option<Inner>,
    }

    #[test]
    fn nested_values_enums_and_inner_structs_follow_the_same_rules() {
        let read = |text: &str| invoke(text, |input: Nested| Ok(input));
        let nested = read(r#"{"how": "block", "tags": ["a", "bc"], "inner": {"on": true}}"#).unwrap();
        assert_eq!(nested.how, How::Block);
        assert_eq!(nested.tags.unwrap().len(), 2);
        assert!(nested.inner.unwrap().on);
        assert!(read(r#"{"how": "sleep", "tags": null, "inner": null}"#).is_ok());
        for text in [
            r#"{"how": "walk"}"#,
            r#"{"how": {"sleep": 1}}"#,
            r#"{"how": "sleep", "tags": ["abcd"]}"#,
            r#"{"how": "sleep", "tags": "a"}"#,
            r#"{"how": "sleep", "inner": {"on": true, "off": false}}"#,
            r#"{"how": "sleep", "inner": [true]}"#,
        ] {
            assert_eq!(read(text).map(|_| ()), Err(ToolError::invalid_input()), "{text}");
        }
    }

    #[test]
    fn nesting_past_serde_jsons_limit_is_invalid_input() {
        let deep = format!("{{\"q\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(query(&deep), Err(ToolError::invalid_input()));
    }

    #[test]
    fn schemas_come_from_the_same_constants() {
        assert_eq!(
            Clamped::<6, 1, 10>::schema("Signals wanted"),
            json!({"type": ["integer", "null"], "default": 6, "description": "Signals wanted; clamped to 1-10."})
        );
        assert_eq!(Text::<3>::schema("Q")["maxLength"], 3);
        assert_eq!(
            NoInput::schema().to_string(),
            r#"{"type":"object","properties":{},"additionalProperties":false}"#
        );
        assert_eq!(
            object_schema(json!({"q": {}}), &["q"]).to_string(),
            r#"{"type":"object","properties":{"q":{}},"required":["q"],"additionalProperties":false}"#
        );
    }
}
