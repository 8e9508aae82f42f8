//! What test guests (`guest/hostile/*`, `guest/testing/*`) share: one
//! descriptor to start from, and the raw input and output a hostile guest
//! needs to misbehave in ways a tool cannot.

use crate::descriptor::{Descriptor, Scope};
use crate::error::{INVALID_INPUT, ToolError};
use crate::input::FromInput;
use crate::output::{Answer, Evidence};

/// A test guest's descriptor: public scope, the `trend-scan` skill, any
/// object as input, only the runtime errors and the hostile guests'
/// purpose. Change the rest with struct update syntax:
///
/// ```
/// # use harmonia_guest_sdk::{Descriptor, Scope, testing};
/// let descriptor = Descriptor { scope: Scope::Workspace, ..testing::descriptor("hostile_x", 5_000) };
/// ```
pub fn descriptor(name: &'static str, deadline_ms: u32) -> Descriptor {
    Descriptor {
        name,
        version: "0.1.0",
        purpose: "Hostile test guest: misbehaves on purpose so the host's limits can be tested.",
        input_schema: serde_json::json!({"type": "object"}),
        errors: Descriptor::errors_with_runtime(&[]),
        scope: Scope::Public,
        deadline_ms,
        skills: vec!["trend-scan"],
    }
}

/// `descriptor` for a guest that reads its input: this input schema, and
/// `invalid_input` declared, since the SDK answers it for input that does
/// not fit.
pub fn reading(input_schema: serde_json::Value, descriptor: Descriptor) -> Descriptor {
    Descriptor { input_schema, errors: Descriptor::errors_with_runtime(&[INVALID_INPUT]), ..descriptor }
}

/// The input text exactly as the host passed it, unparsed: for a guest
/// that must behave the same whatever it is given (even text that is not
/// JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawInput(pub String);

impl FromInput for RawInput {
    fn from_input(text: &str) -> Result<Self, ToolError> {
        Ok(Self(text.to_owned()))
    }
}

/// Data text handed to the host as is (no evidence): for a guest whose
/// answer must break the envelope contract (not JSON, not an object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawData(pub String);

impl Answer for RawData {
    fn into_parts(self) -> (String, Vec<Evidence>) {
        (self.0, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::invoke;

    #[test]
    fn raw_input_is_the_text_whatever_it_is() {
        for text in ["", "{not json", "[1]", "{\"any\": 1}"] {
            assert_eq!(invoke(text, |input: RawInput| Ok(input.0)), Ok(text.to_owned()));
        }
    }

    #[test]
    fn raw_data_is_handed_over_unchanged() {
        assert_eq!(RawData("{not json".into()).into_parts(), ("{not json".to_owned(), Vec::new()));
    }
}
