//! Error categories, the typed tool error and the contract's stable codes.

/// The category of a tool error (docs/contract.md §2.1), from the contract crate.
pub use harmonia_contract::codes::Category;
use harmonia_contract::codes::{self, StableCode};

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

impl ErrorSpec {
    /// The declared form of one of the contract's stable codes.
    pub const fn of(stable: &StableCode) -> Self {
        Self { code: stable.code, category: stable.category, retryable: stable.retryable }
    }
}

// Each stable code of `harmonia_contract::codes`, as a declarable spec and
// as a constructor of its error with the contract's fixed message.
macro_rules! contract_codes {
    ($( $fn_name:ident, $spec:ident; )*) => {
        $(
            #[doc = concat!("The contract's `", stringify!($fn_name), "` code, declarable.")]
            pub const $spec: ErrorSpec = ErrorSpec::of(&codes::$spec);
        )*

        impl ToolError {
            $(
                #[doc = concat!("The contract's `", stringify!($fn_name), "` error, with its fixed message.")]
                pub fn $fn_name() -> Self {
                    Self::from_spec(&$spec, codes::$spec.message)
                }
            )*
        }

        /// Every constructor above, in the contract's order.
        #[cfg(test)]
        const CONSTRUCTORS: &[fn() -> ToolError] = &[$(ToolError::$fn_name),*];
    };
}

contract_codes! {
    invalid_input, INVALID_INPUT;
    invalid_query, INVALID_QUERY;
    invalid_job_id, INVALID_JOB_ID;
    job_not_found, JOB_NOT_FOUND;
    insufficient_measured_history, INSUFFICIENT_MEASURED_HISTORY;
    authorization_failed, AUTHORIZATION_FAILED;
    provider_request_rejected, PROVIDER_REQUEST_REJECTED;
    dependency_unavailable, DEPENDENCY_UNAVAILABLE;
    tool_timeout, TOOL_TIMEOUT;
    tool_execution_failed, TOOL_EXECUTION_FAILED;
}

/// The runtime codes every tool declares (docs/contract.md §2.3).
pub const RUNTIME_ERRORS: [ErrorSpec; 4] = [
    ErrorSpec::of(&codes::RUNTIME_CODES[0]),
    ErrorSpec::of(&codes::RUNTIME_CODES[1]),
    ErrorSpec::of(&codes::RUNTIME_CODES[2]),
    ErrorSpec::of(&codes::RUNTIME_CODES[3]),
];

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stable_code_of_the_contract_has_its_constructor() {
        let built: Vec<ToolError> = CONSTRUCTORS.iter().map(|build| build()).collect();
        assert_eq!(built.len(), codes::STABLE_CODES.len());
        for (error, stable) in built.iter().zip(codes::STABLE_CODES) {
            assert_eq!(error.code, stable.code);
            assert_eq!(
                (error.category, error.retryable, error.message.as_str()),
                (stable.category, stable.retryable, stable.message)
            );
        }
        let runtime: Vec<&str> = RUNTIME_ERRORS.iter().map(|spec| spec.code).collect();
        assert_eq!(runtime, codes::RUNTIME_CODES.map(|stable| stable.code));
    }
}
