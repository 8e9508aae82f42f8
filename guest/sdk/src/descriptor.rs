//! The contract a tool declares; the host reads it once at load.

use crate::error::{ErrorSpec, RUNTIME_ERRORS};

/// What the tool reads; must match the world the component is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Public web sources, through `public-web`.
    Public,
    /// The caller's workspace, through `workspace`.
    Workspace,
}

/// A tool's contract.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    /// `^[a-z]+(_[a-z]+)+$`.
    pub name: &'static str,
    /// The tool's version text.
    pub version: &'static str,
    /// What the tool is for, 20 to 300 characters.
    pub purpose: &'static str,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
    /// Every error the tool may return.
    pub errors: Vec<ErrorSpec>,
    /// Public or workspace.
    pub scope: Scope,
    /// Deadline of one call in milliseconds.
    pub deadline_ms: u32,
    /// Skills that may call the tool.
    pub skills: Vec<&'static str>,
}

impl Descriptor {
    /// Declared errors: the tool's own codes followed by the runtime codes,
    /// which every tool must declare.
    pub fn errors_with_runtime(own: &[ErrorSpec]) -> Vec<ErrorSpec> {
        own.iter().chain(RUNTIME_ERRORS.iter()).cloned().collect()
    }
}
