//! What the gates read of a JSON-RPC message, in one pass over the body
//! that builds no tree: its members' kinds, the request id, the method,
//! and of its `params` only what a gate decides on (the tool's `name`, a
//! `uri`, and whether `_meta` names a protocol version). Arguments and
//! the rest of `_meta` are checked as JSON and skipped; the MCP SDK then
//! parses the body into its own types, once.
//!
//! [`Message::read`] tells a body that is not JSON (a syntax error, as
//! a full parse would) from JSON that is not one message; a member named
//! twice counts as its last, as in a parsed object.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The per-request protocol version's key in `params._meta` (the
/// stateless revision, 2026-07-28).
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// One request body, as JSON.
// One per request, read once and never stored: boxing the large variant
// would add an allocation to every call for no memory saved.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Body {
    /// A JSON object: one message, well-formed or not.
    Object(Message),
    /// A JSON array (a batch).
    Array,
    /// Any other JSON value.
    Other,
}

/// The members of one JSON-RPC message object that the gates read.
#[derive(Debug, Default)]
pub(crate) struct Message {
    pub(crate) jsonrpc: Option<Value>,
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<Value>,
    pub(crate) params: Option<Params>,
    pub(crate) has_result: bool,
    pub(crate) has_error: bool,
}

/// What the gates read of `params`.
// Held in the one `Message` of a request (see `Body`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Params {
    Object {
        name: Option<Value>,
        uri: Option<Value>,
        protocol_version: Option<Value>,
    },
    /// Not an object.
    Other,
}

impl Body {
    /// The body read, or the parse error for a body that is not JSON.
    pub(crate) fn read(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

impl Message {
    /// The method, when it is a string.
    pub(crate) fn method(&self) -> Option<&str> {
        self.method.as_ref().and_then(Value::as_str)
    }

    /// `params.name`, when a string.
    pub(crate) fn name(&self) -> Option<&str> {
        match &self.params {
            Some(Params::Object { name, .. }) => name.as_ref().and_then(Value::as_str),
            _ => None,
        }
    }

    /// `params.uri`, when a string.
    pub(crate) fn uri(&self) -> Option<&str> {
        match &self.params {
            Some(Params::Object { uri, .. }) => uri.as_ref().and_then(Value::as_str),
            _ => None,
        }
    }

    /// Whether `params._meta` names the request's protocol version (a
    /// string), as a request standing alone on the stateless revision does.
    pub(crate) fn names_its_protocol_version(&self) -> bool {
        matches!(&self.params, Some(Params::Object { protocol_version: Some(Value::String(_)), .. }))
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> Visitor<'de> for Top {
            type Value = Body;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
                let mut message = Message::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Jsonrpc => message.jsonrpc = Some(map.next_value()?),
                        Key::Id => message.id = Some(map.next_value()?),
                        Key::Method => message.method = Some(map.next_value()?),
                        Key::Params => message.params = Some(map.next_value()?),
                        Key::Result => {
                            map.next_value::<IgnoredAny>()?;
                            message.has_result = true;
                        }
                        Key::Error => {
                            map.next_value::<IgnoredAny>()?;
                            message.has_error = true;
                        }
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Body::Object(message))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Body::Array)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Body, E> {
                Ok(Body::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Body, E> {
                Ok(Body::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Body, E> {
                Ok(Body::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Body, E> {
                Ok(Body::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Body, E> {
                Ok(Body::Other)
            }
            fn visit_unit<E>(self) -> Result<Body, E> {
                Ok(Body::Other)
            }
        }
        deserializer.deserialize_any(Top)
    }
}

/// The members of a message the gates look at; any other is skipped.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "jsonrpc" => Key::Jsonrpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Params;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let (mut name, mut uri, mut protocol_version) = (None, None, None);
                while let Some(key) = map.next_key::<ParamKey>()? {
                    match key {
                        ParamKey::Name => name = Some(map.next_value()?),
                        ParamKey::Uri => uri = Some(map.next_value()?),
                        ParamKey::Meta => protocol_version = map.next_value::<Meta>()?.0,
                        ParamKey::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Params::Object { name, uri, protocol_version })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Params, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Params::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Params, E> {
                Ok(Params::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Params, E> {
                Ok(Params::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Params, E> {
                Ok(Params::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Params, E> {
                Ok(Params::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Params, E> {
                Ok(Params::Other)
            }
            fn visit_unit<E>(self) -> Result<Params, E> {
                Ok(Params::Other)
            }
        }
        deserializer.deserialize_any(Members)
    }
}

enum ParamKey {
    Name,
    Uri,
    Meta,
    Other,
}

impl<'de> Deserialize<'de> for ParamKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = ParamKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ParamKey, E> {
                Ok(match name {
                    "name" => ParamKey::Name,
                    "uri" => ParamKey::Uri,
                    "_meta" => ParamKey::Meta,
                    _ => ParamKey::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// `params._meta`'s protocol version, if it is an object naming one.
struct Meta(Option<Value>);

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Meta;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta, A::Error> {
                let mut version = None;
                while let Some(MetaKey(is_version)) = map.next_key()? {
                    if is_version {
                        version = Some(map.next_value()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Meta(version))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Meta, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Meta(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Meta, E> {
                Ok(Meta(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Meta, E> {
                Ok(Meta(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Meta, E> {
                Ok(Meta(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Meta, E> {
                Ok(Meta(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Meta, E> {
                Ok(Meta(None))
            }
            fn visit_unit<E>(self) -> Result<Meta, E> {
                Ok(Meta(None))
            }
        }
        deserializer.deserialize_any(Members)
    }
}

/// A `_meta` member name: whether it is the protocol version's.
struct MetaKey(bool);

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = MetaKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<MetaKey, E> {
                Ok(MetaKey(name == PROTOCOL_VERSION_META))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Read as a body, the message says what a parsed `Value` says.
    #[test]
    fn the_shape_read_is_what_the_parsed_message_holds() {
        let text = r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"get_job_status",
            "arguments":{"deep":[{"x":[1,2.5,null,true]}]},"uri":"skill://a/SKILL.md",
            "_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"extra":{"a":[]}}"#;
        let Body::Object(message) = Body::read(text.as_bytes()).unwrap() else { panic!("an object") };
        assert_eq!(message.jsonrpc, Some(json!("2.0")));
        assert_eq!(message.id, Some(json!(7)));
        assert_eq!(message.method(), Some("tools/call"));
        assert_eq!(message.name(), Some("get_job_status"));
        assert_eq!(message.uri(), Some("skill://a/SKILL.md"));
        assert!(message.names_its_protocol_version() && !message.has_result && !message.has_error);
        let later = r#"{"id":1,"id":"b","result":null,"params":[1],"method":3}"#;
        let Body::Object(message) = Body::read(later.as_bytes()).unwrap() else { panic!("an object") };
        assert_eq!(message.id, Some(json!("b")), "the last of a repeated member, as a parsed object keeps");
        assert!(message.has_result && matches!(message.params, Some(Params::Other)));
        assert_eq!((message.method(), message.name()), (None, None));
        for (text, array) in [("[1, {\"a\": 2}]", true), ("\"text\"", false), ("null", false), ("1.5", false)]
        {
            match Body::read(text.as_bytes()).unwrap() {
                Body::Array => assert!(array, "{text}"),
                Body::Other => assert!(!array, "{text}"),
                Body::Object(_) => panic!("{text} is no object"),
            }
        }
        for text in ["", "{", "{\"id\": 1,}", "{\"id\": 1} x", "{\"params\": {\"arguments\": [1,]}}", "nul"] {
            let error = Body::read(text.as_bytes()).unwrap_err();
            assert!(error.is_syntax() || error.is_eof(), "{text}: {error}");
        }
        let meta_not_object = r#"{"params":{"_meta":"2026-07-28"}}"#;
        let Body::Object(message) = Body::read(meta_not_object.as_bytes()).unwrap() else { panic!() };
        assert!(!message.names_its_protocol_version());
    }
}
