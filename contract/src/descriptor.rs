//! A tool's descriptor, read once at load, and its validation.

use crate::codes::{Category, RUNTIME_CODES, is_valid_code, is_valid_tool_name, stable_code};
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// What a tool reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Public web sources through `public-web`.
    Public,
    /// The caller's workspace through `workspace`.
    Workspace,
}

impl Scope {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Workspace => "workspace",
        }
    }
}

/// A declared error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorSpec {
    /// Stable code.
    pub code: String,
    /// Its category.
    pub category: Category,
    /// Its retryability.
    pub retryable: bool,
}

/// A tool's contract, as declared by its `describe` export.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Unique tool name.
    pub name: String,
    /// The tool's version text.
    pub version: String,
    /// What the tool is for.
    pub purpose: String,
    /// JSON Schema of the input.
    pub input_schema: Value,
    /// Declared errors.
    pub errors: Vec<ErrorSpec>,
    /// Public or workspace.
    pub scope: Scope,
    /// Deadline of one call in milliseconds.
    pub deadline_ms: u32,
    /// Skills that may call the tool.
    pub skills: Vec<String>,
}

/// Shortest and longest deadline a descriptor may declare, ms.
pub const DEADLINE_RANGE_MS: std::ops::RangeInclusive<u32> = 1_000..=120_000;

/// Why a descriptor is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// The name breaks `^[a-z]+(_[a-z]+)+$`.
    #[error("tool name `{0}` must match ^[a-z]+(_[a-z]+)+$")]
    Name(String),
    /// The version text is empty or over 64 characters.
    #[error("version must be 1 to 64 characters")]
    Version,
    /// The purpose is outside 20 to 300 characters.
    #[error("purpose must be 20 to 300 characters, it has {0}")]
    Purpose(usize),
    /// The input schema is not a JSON object.
    #[error("input schema must be the text of a JSON object")]
    InputSchema,
    /// A declared code breaks the pattern or is declared twice.
    #[error("declared error code `{0}` is malformed or declared twice")]
    ErrorCode(String),
    /// A contract code is declared with another category or retryability.
    #[error("declared error `{0}` disagrees with the contract's category or retryability")]
    ErrorSpec(String),
    /// A runtime code is not declared.
    #[error("runtime error code `{0}` is not declared")]
    MissingRuntimeCode(&'static str),
    /// The deadline is outside 1 to 120 seconds.
    #[error("deadline must be 1 to 120 s, it is {0} ms")]
    Deadline(u32),
    /// No skill, or a malformed or repeated one.
    #[error("skills must name at least one skill, each lowercase words joined by '-', none twice")]
    Skills,
    /// The declared scope disagrees with the component's imports.
    #[error("scope `{declared}` does not match the component's world `{world}`")]
    Scope {
        /// Declared scope.
        declared: &'static str,
        /// The world the imports place the component in.
        world: &'static str,
    },
}

fn is_valid_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase()))
}

impl Descriptor {
    /// The wall-clock deadline of one call.
    pub fn deadline(&self) -> Duration {
        Duration::from_millis(u64::from(self.deadline_ms))
    }

    /// The declared spec of `code`, if declared.
    pub fn declared(&self, code: &str) -> Option<&ErrorSpec> {
        self.errors.iter().find(|spec| spec.code == code)
    }

    /// Check every rule except the scope (which needs the component).
    pub fn validate(&self) -> Result<(), DescriptorError> {
        if !is_valid_tool_name(&self.name) {
            return Err(DescriptorError::Name(self.name.clone()));
        }
        if !(1..=64).contains(&self.version.chars().count()) {
            return Err(DescriptorError::Version);
        }
        let purpose = self.purpose.chars().count();
        if !(20..=300).contains(&purpose) {
            return Err(DescriptorError::Purpose(purpose));
        }
        if !self.input_schema.is_object() {
            return Err(DescriptorError::InputSchema);
        }
        for (index, spec) in self.errors.iter().enumerate() {
            if !is_valid_code(&spec.code)
                || self.errors[..index].iter().any(|earlier| earlier.code == spec.code)
            {
                return Err(DescriptorError::ErrorCode(spec.code.clone()));
            }
            if let Some(stable) = stable_code(&spec.code)
                && (stable.category != spec.category || stable.retryable != spec.retryable)
            {
                return Err(DescriptorError::ErrorSpec(spec.code.clone()));
            }
        }
        if let Some(missing) = RUNTIME_CODES.iter().find(|runtime| self.declared(runtime.code).is_none()) {
            return Err(DescriptorError::MissingRuntimeCode(missing.code));
        }
        if !DEADLINE_RANGE_MS.contains(&self.deadline_ms) {
            return Err(DescriptorError::Deadline(self.deadline_ms));
        }
        let skills_ok =
            !self.skills.is_empty()
                && self.skills.iter().enumerate().all(|(index, skill)| {
                    is_valid_skill_name(skill) && !self.skills[..index].contains(skill)
                });
        if !skills_ok {
            return Err(DescriptorError::Skills);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::STABLE_CODES;

    fn spec(code: &str, category: Category, retryable: bool) -> ErrorSpec {
        ErrorSpec { code: code.into(), category, retryable }
    }

    fn good() -> Descriptor {
        Descriptor {
            name: "get_job_status".into(),
            version: "0.1.0".into(),
            purpose: "Reads the live state of one job in the caller's workspace.".into(),
            input_schema: serde_json::json!({"type": "object"}),
            errors: STABLE_CODES.iter().map(|c| spec(c.code, c.category, c.retryable)).collect(),
            scope: Scope::Workspace,
            deadline_ms: 30_000,
            skills: vec!["job-status".into()],
        }
    }

    #[test]
    fn accepts_a_good_descriptor() {
        assert_eq!(good().validate(), Ok(()));
    }

    #[test]
    fn refuses_each_broken_rule() {
        let check = |edit: fn(&mut Descriptor), expected: DescriptorError| {
            let mut descriptor = good();
            edit(&mut descriptor);
            assert_eq!(descriptor.validate(), Err(expected));
        };
        check(|d| d.name = "jobstatus".into(), DescriptorError::Name("jobstatus".into()));
        check(|d| d.version = String::new(), DescriptorError::Version);
        check(|d| d.purpose = "too short".into(), DescriptorError::Purpose(9));
        check(|d| d.purpose = "p".repeat(301), DescriptorError::Purpose(301));
        check(|d| d.input_schema = serde_json::json!([]), DescriptorError::InputSchema);
        check(
            |d| d.errors.push(spec("tool_timeout", Category::Dependency, true)),
            DescriptorError::ErrorCode("tool_timeout".into()),
        );
        check(
            |d| d.errors.push(spec("Bad", Category::Dependency, true)),
            DescriptorError::ErrorCode("Bad".into()),
        );
        check(
            |d| d.errors.retain(|s| s.code != "tool_timeout"),
            DescriptorError::MissingRuntimeCode("tool_timeout"),
        );
        check(|d| d.errors[0].retryable = true, DescriptorError::ErrorSpec("invalid_input".into()));
        check(|d| d.deadline_ms = 999, DescriptorError::Deadline(999));
        check(|d| d.deadline_ms = 120_001, DescriptorError::Deadline(120_001));
        check(|d| d.skills.clear(), DescriptorError::Skills);
        check(|d| d.skills = vec!["Job".into()], DescriptorError::Skills);
        check(|d| d.skills = vec!["a".into(), "a".into()], DescriptorError::Skills);
    }
}
