//! What a successful call returns: a JSON object and its evidence.

use serde_json::{Map, Value};

/// One evidence item. The host adds provenance and the evidence id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// Names the data source, 1 to 120 characters.
    pub source: String,
    /// The record's identifier, or `None` for dataset-level evidence.
    pub reference: Option<String>,
}

impl Evidence {
    /// Dataset-level evidence: the whole source backs the data.
    pub fn dataset(source: &str) -> Self {
        Self { source: source.to_owned(), reference: None }
    }

    /// Record-level evidence: one record of the source backs the data.
    pub fn record(source: &str, reference: impl Into<String>) -> Self {
        Self { source: source.to_owned(), reference: Some(reference.into()) }
    }
}

/// A successful answer: a JSON object and up to 100 evidence items.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The data object.
    pub data: Map<String, Value>,
    /// Evidence backing the data, dataset items first by convention.
    pub evidence: Vec<Evidence>,
}

impl Output {
    /// An output from a JSON value that must be an object.
    ///
    /// # Panics
    /// When `data` is not an object: that is a bug in the tool, and in the
    /// sandbox the host turns it into `tool_execution_failed`.
    pub fn new(data: Value, evidence: Vec<Evidence>) -> Self {
        match data {
            Value::Object(data) => Self { data, evidence },
            _ => panic!("tool data must be a JSON object"),
        }
    }
}

/// What a tool's `run` may answer with: an [`Output`] (or, for test guests
/// that must break the contract, `testing::RawData`), as the data text and
/// the evidence the host receives.
pub trait Answer {
    /// The data as JSON text, and the evidence.
    fn into_parts(self) -> (String, Vec<Evidence>);
}

impl Answer for Output {
    fn into_parts(self) -> (String, Vec<Evidence>) {
        (Value::Object(self.data).to_string(), self.evidence)
    }
}
