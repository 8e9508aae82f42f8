//! The contract's fixed tables (docs/contract.md §1–§3) as data.
//!
//! Error categories, the stable error codes with their fixed messages, and
//! the runtime codes every tool must declare. Envelopes, descriptors and the
//! validator all read from here, so a code is spelled once.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The category of a tool error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The input was not acceptable.
    Validation,
    /// The caller may not read this data.
    Authorization,
    /// The record does not exist, or there is too little data.
    NotFound,
    /// A dependency failed or timed out, or the tool itself failed.
    Dependency,
    /// The source rejected the read for good.
    ProviderPermanent,
}

impl Category {
    /// Every category, in the contract's order.
    pub const ALL: [Self; 5] =
        [Self::Validation, Self::Authorization, Self::NotFound, Self::Dependency, Self::ProviderPermanent];

    /// The category's JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Validation => "validation",
            Self::Authorization => "authorization",
            Self::NotFound => "not_found",
            Self::Dependency => "dependency",
            Self::ProviderPermanent => "provider_permanent",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stable error code of docs/contract.md §2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StableCode {
    /// The code.
    pub code: &'static str,
    /// Its category.
    pub category: Category,
    /// Its retryability.
    pub retryable: bool,
    /// The fixed, safe message the host writes for it.
    pub message: &'static str,
}

macro_rules! stable_codes {
    ($( $name:ident => $code:literal, $category:ident, $retryable:literal, $message:literal; )*) => {
        $(
            #[doc = concat!("`", $code, "`: ", $message)]
            pub const $name: StableCode = StableCode {
                code: $code,
                category: Category::$category,
                retryable: $retryable,
                message: $message,
            };
        )*

        /// Every stable code of the contract.
        pub const STABLE_CODES: &[StableCode] = &[$($name),*];
    };
}

stable_codes! {
    INVALID_INPUT => "invalid_input", Validation, false,
        "The input is not a JSON object of this tool's schema.";
    INVALID_QUERY => "invalid_query", Validation, false,
        "The search query is empty.";
    INVALID_JOB_ID => "invalid_job_id", Validation, false,
        "The job id is empty.";
    JOB_NOT_FOUND => "job_not_found", NotFound, false,
        "No job with that id exists in this workspace.";
    INSUFFICIENT_MEASURED_HISTORY => "insufficient_measured_history", NotFound, false,
        "Fewer than three timestamped posts have measured engagement.";
    AUTHORIZATION_FAILED => "authorization_failed", Authorization, false,
        "The workspace source refused this caller.";
    PROVIDER_REQUEST_REJECTED => "provider_request_rejected", ProviderPermanent, false,
        "The data source rejected the request.";
    DEPENDENCY_UNAVAILABLE => "dependency_unavailable", Dependency, true,
        "The data source is unavailable right now.";
    TOOL_TIMEOUT => "tool_timeout", Dependency, true,
        "The tool call passed its deadline.";
    TOOL_EXECUTION_FAILED => "tool_execution_failed", Dependency, false,
        "The tool failed to produce a valid result.";
}

/// Codes every tool declares; the host may return them for any tool.
pub const RUNTIME_CODES: [StableCode; 4] =
    [DEPENDENCY_UNAVAILABLE, PROVIDER_REQUEST_REJECTED, TOOL_EXECUTION_FAILED, TOOL_TIMEOUT];

/// The stable code with this spelling, if it is one of the contract's.
pub fn stable_code(code: &str) -> Option<&'static StableCode> {
    STABLE_CODES.iter().find(|stable| stable.code == code)
}

/// Why a call ended as `tool_execution_failed`. Each has its own fixed
/// message so an operator can tell them apart without reading logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionFailure {
    /// The guest trapped or panicked.
    Trapped,
    /// The guest overflowed its wasm stack.
    StackOverflow,
    /// The guest asked for more memory than its limit.
    MemoryLimit,
    /// The guest used up its fuel.
    FuelExhausted,
    /// The guest's answer breaks the envelope contract.
    InvalidOutput,
    /// The guest returned an error its descriptor does not declare.
    UndeclaredError,
    /// The host could not instantiate the guest.
    Instantiation,
    /// The guest used its capabilities more often, or with more text, than
    /// one call may.
    CapabilityLimit,
    /// The guest cited evidence its call cannot have: no successful read, or
    /// a source reserved for another scope.
    UngroundedEvidence,
}

impl ExecutionFailure {
    /// The fixed, safe message for this failure.
    pub fn message(self) -> &'static str {
        match self {
            Self::Trapped => "The tool stopped with a fault before producing a result.",
            Self::StackOverflow => "The tool exceeded its stack limit.",
            Self::MemoryLimit => "The tool exceeded its memory limit.",
            Self::FuelExhausted => "The tool exceeded its instruction budget.",
            Self::InvalidOutput => "The tool returned a result that breaks the envelope contract.",
            Self::UndeclaredError => "The tool returned an error it does not declare.",
            Self::Instantiation => "The tool could not be started.",
            Self::CapabilityLimit => "The tool exceeded its capability use limit.",
            Self::UngroundedEvidence => "The tool cited evidence it did not read.",
        }
    }
}

#[cfg(feature = "full")]
/// Evidence source prefixes reserved for one scope: a plugin of the other
/// scope may not cite them, so a public tool cannot pass off evidence as
/// workspace records, nor a workspace tool as public signals.
pub const RESERVED_SOURCE_PREFIXES: &[(&str, crate::descriptor::Scope)] =
    &[("hacker_news_", crate::descriptor::Scope::Public), ("harmonia_", crate::descriptor::Scope::Workspace)];

/// The scope `source` is reserved for, if any.
#[cfg(feature = "full")]
pub fn reserved_source_scope(source: &str) -> Option<crate::descriptor::Scope> {
    RESERVED_SOURCE_PREFIXES.iter().find(|(prefix, _)| source.starts_with(prefix)).map(|&(_, scope)| scope)
}

/// The pattern every error code matches ([`is_valid_code`]).
pub const CODE_PATTERN: &str = "^[a-z0-9_]{1,80}$";

/// True when `code` matches [`CODE_PATTERN`].
pub fn is_valid_code(code: &str) -> bool {
    (1..=80).contains(&code.len())
        && code.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// True when `name` matches `^[a-z]+(_[a-z]+)+$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('_').collect();
    parts.len() >= 2
        && parts.iter().all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_pattern() {
        assert!(is_valid_code("tool_timeout"));
        assert!(is_valid_code("a1"));
        assert!(is_valid_code(&"a".repeat(80)));
        assert!(!is_valid_code(&"a".repeat(81)));
        assert!(!is_valid_code(""));
        assert!(!is_valid_code("Tool"));
        assert!(!is_valid_code("tool-timeout"));
        assert!(!is_valid_code("tool timeout"));
    }

    #[test]
    fn tool_name_pattern() {
        assert!(is_valid_tool_name("get_job_status"));
        assert!(is_valid_tool_name("a_b"));
        for bad in ["tool", "_a", "a_", "a__b", "A_b", "a_b1", "a-b", ""] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn stable_codes_are_well_formed() {
        for stable in STABLE_CODES {
            assert!(is_valid_code(stable.code));
            assert!((1..=500).contains(&stable.message.chars().count()));
        }
        assert_eq!(STABLE_CODES.len(), 10);
        assert!(stable_code("dependency_unavailable").is_some_and(|c| c.retryable));
        assert!(stable_code("tool_timeout").is_some_and(|c| c.retryable));
        assert!(stable_code("tool_execution_failed").is_some_and(|c| !c.retryable));
    }
}
