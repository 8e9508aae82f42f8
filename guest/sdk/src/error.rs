//! Error categories, the typed tool error and the contract's stable codes.

/// The category of a tool error (docs/contract.md §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A declared error: code, category and retryability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorSpec {
    /// Stable code.
    pub code: &'static str,
    /// Category every error with this code carries.
    pub category: Category,
    /// Retryability every error with this code carries.
    pub retryable: bool,
}

/// A typed tool error, as the envelope's `error` object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// Stable code, declared in the tool's descriptor.
    pub code: String,
    /// The declared category.
    pub category: Category,
    /// Safe, fixed text.
    pub message: String,
    /// Whether one more attempt may succeed.
    pub retryable: bool,
}

macro_rules! contract_codes {
    ($( $fn_name:ident, $spec:ident => $code:literal, $category:ident, $retryable:literal, $message:literal; )*) => {
        $(
            #[doc = concat!("`", $code, "`: ", $message)]
            pub const $spec: ErrorSpec = ErrorSpec {
                code: $code,
                category: Category::$category,
                retryable: $retryable,
            };
        )*

        impl ToolError {
            $(
                #[doc = concat!("The contract's `", $code, "` error: ", $message)]
                pub fn $fn_name() -> Self {
                    Self::from_spec(&$spec, $message)
                }
            )*
        }
    };
}

contract_codes! {
    invalid_input, INVALID_INPUT => "invalid_input", Validation, false,
        "The input is not a JSON object of this tool's schema.";
    invalid_query, INVALID_QUERY => "invalid_query", Validation, false,
        "The search query is empty.";
    invalid_job_id, INVALID_JOB_ID => "invalid_job_id", Validation, false,
        "The job id is empty.";
    job_not_found, JOB_NOT_FOUND => "job_not_found", NotFound, false,
        "No job with that id exists in this workspace.";
    insufficient_measured_history, INSUFFICIENT_MEASURED_HISTORY => "insufficient_measured_history", NotFound, false,
        "Fewer than three timestamped posts have measured engagement.";
    authorization_failed, AUTHORIZATION_FAILED => "authorization_failed", Authorization, false,
        "The workspace source refused this caller.";
    provider_request_rejected, PROVIDER_REQUEST_REJECTED => "provider_request_rejected", ProviderPermanent, false,
        "The data source rejected the request.";
    dependency_unavailable, DEPENDENCY_UNAVAILABLE => "dependency_unavailable", Dependency, true,
        "The data source is unavailable right now.";
    tool_timeout, TOOL_TIMEOUT => "tool_timeout", Dependency, true,
        "The tool call passed its deadline.";
    tool_execution_failed, TOOL_EXECUTION_FAILED => "tool_execution_failed", Dependency, false,
        "The tool failed to produce a valid result.";
}

/// The runtime codes every tool declares (docs/contract.md §2.3).
pub const RUNTIME_ERRORS: [ErrorSpec; 4] =
    [DEPENDENCY_UNAVAILABLE, PROVIDER_REQUEST_REJECTED, TOOL_EXECUTION_FAILED, TOOL_TIMEOUT];

impl ToolError {
    /// An error with a declared spec and a fixed message.
    pub fn from_spec(spec: &ErrorSpec, message: &str) -> Self {
        Self {
            code: spec.code.to_owned(),
            category: spec.category,
            message: message.to_owned(),
            retryable: spec.retryable,
        }
    }
}

impl ToolError {
    /// The contract's mapping of a public source failure: any failure of the
    /// public source is `dependency_unavailable`, except a passed deadline.
    pub fn from_fetch(error: crate::FetchError) -> Self {
        match error {
            crate::FetchError::TimedOut => Self::tool_timeout(),
            _ => Self::dependency_unavailable(),
        }
    }

    /// The contract's mapping of a workspace read failure (docs/contract.md §3.4).
    /// `NotFound` is mapped by the caller where a record was named; here it
    /// means the source is missing data it should have.
    pub fn from_read(error: crate::ReadError) -> Self {
        match error {
            crate::ReadError::Unauthorized => Self::authorization_failed(),
            crate::ReadError::Rejected => Self::provider_request_rejected(),
            crate::ReadError::TimedOut => Self::tool_timeout(),
            crate::ReadError::NotFound | crate::ReadError::Unavailable => Self::dependency_unavailable(),
        }
    }
}
