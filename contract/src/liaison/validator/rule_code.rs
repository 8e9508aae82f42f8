//! The validator's rules, each with a stable code, in the order they are
//! checked (docs/contract.md §5).

use serde::{Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

macro_rules! rule_codes {
    ($( $(#[$doc:meta])* $variant:ident => $code:literal, )*) => {
        /// A validator rule, with a stable code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RuleCode {
            $( $(#[$doc])* $variant, )*
        }

        impl RuleCode {
            /// Every rule, in the order the validator checks them.
            pub const ALL: &'static [RuleCode] = &[$(Self::$variant),*];

            /// The stable code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $code, )*
                }
            }
        }
    };
}

rule_codes! {
    /// Submission mode only: the trace is not signed by the trusted host key, or was changed after signing.
    TraceUnverified => "trace_unverified",
    /// The answer is not a valid answer document.
    AnswerSchema => "answer_schema",
    /// The trace does not start with a skill activation.
    SkillNotActivated => "skill_not_activated",
    /// The activated skill is not the answer's, not loaded, has another hash, or is not the only one.
    SkillMismatch => "skill_mismatch",
    /// Sequence or attempt numbers are out of order.
    SequenceInvalid => "sequence_invalid",
    /// No tool was called.
    NoToolCall => "no_tool_call",
    /// An attempt names a tool the skill does not allow.
    ToolNotAllowed => "tool_not_allowed",
    /// Attempts name more than one tool.
    MultipleTools => "multiple_tools",
    /// More than two attempts.
    RetryCeiling => "retry_ceiling",
    /// A second attempt without a retryable error before it.
    RetryWithoutRetryableError => "retry_without_retryable_error",
    /// A second attempt whose arguments differ from the failed call's.
    RetryArgumentsChanged => "retry_arguments_changed",
    /// A recorded tool response is not a valid envelope.
    InvalidEnvelope => "invalid_envelope",
    /// An operator feed success lacks a valid freshness.
    FeedFreshnessMissing => "feed_freshness_missing",
    /// The answer, a claim or an uncertainty note claims an effect the liaison cannot have.
    MutationClaim => "mutation_claim",
    /// The answer, a claim or an uncertainty note is in a language the validator has no lexicon for.
    UnsupportedLanguage => "unsupported_language",
    /// A claim's text is not in the answer.
    ClaimTextAbsent => "claim_text_absent",
    /// A claim cites an id no successful call returned.
    UnknownEvidence => "unknown_evidence",
    /// A claim cites an id the answer text does not show.
    EvidenceNotDisplayed => "evidence_not_displayed",
    /// A record claim cites only dataset-level evidence, or names nothing of the records it cites.
    RecordClaimWithoutRecordEvidence => "record_claim_without_record_evidence",
    /// A success answer states a number, id or data value outside every claim.
    UnclaimedFact => "unclaimed_fact",
    /// An error answer after a successful final call.
    ErrorNotBound => "error_not_bound",
    /// An error answer whose error differs from the final tool error.
    ErrorNotPreserved => "error_not_preserved",
    /// An error answer that does not show the error code.
    ErrorCodeNotDisplayed => "error_code_not_displayed",
    /// A success or no-data answer after a failed final call.
    SuccessAfterError => "success_after_error",
    /// A no-data answer while the final data holds records.
    FalseNoData => "false_no_data",
    /// A claim cites mock evidence in submission mode.
    MockEvidenceInSubmission => "mock_evidence_in_submission",
}

impl RuleCode {
    /// The rule with this stable code.
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|rule| rule.as_str() == code)
    }
}

impl fmt::Display for RuleCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is not one of the validator's rule codes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule code `{0}`")]
pub struct UnknownRuleCode(pub String);

impl FromStr for RuleCode {
    type Err = UnknownRuleCode;

    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Self::parse(code).ok_or_else(|| UnknownRuleCode(code.to_owned()))
    }
}

impl Serialize for RuleCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
