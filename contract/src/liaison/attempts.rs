//! The attempt rule (docs/contract.md §5.4), decided in one place for the
//! session's guard and for the validator.
//!
//! An invocation uses one tool, at most twice, and the second attempt is a
//! retry: it comes directly after a `tool_call` whose response is a valid
//! error envelope with `retryable: true`, and it repeats that call's
//! arguments exactly (JSON equality: object key order does not matter,
//! `1` and `1.0` differ). Refused attempts count as attempts.
//!
//! [`Attempts`] is the running summary the decision needs: how many
//! attempts were made, whether one named another tool, and the first
//! attempt. The guard keeps it as it goes, so deciding a call never rescans
//! the trace; the validator folds the recorded attempts through the same
//! [`Attempts::check`] and [`Attempts::record`].

use super::validator::RuleCode;
use crate::envelope::Envelope;
use serde_json::Value;

/// What the attempts so far allow next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attempts {
    count: u32,
    other_tool: bool,
    first: Option<First>,
}

#[derive(Clone, Debug, PartialEq)]
struct First {
    tool: String,
    args: Value,
    retryable_error: bool,
}

/// How a recorded attempt ended.
#[derive(Clone, Copy, Debug)]
pub enum Outcome<'r> {
    /// It ran; the exact response it returned.
    Called(&'r Value),
    /// The guard refused it.
    Refused,
}

impl Attempts {
    /// The rule calling `tool` with `args` next would break, if any. The
    /// rules come in the validator's order: `multiple_tools`,
    /// `retry_ceiling`, `retry_without_retryable_error`,
    /// `retry_arguments_changed`.
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), RuleCode> {
        let Some(first) = &self.first else { return Ok(()) };
        if self.other_tool || first.tool != tool {
            return Err(RuleCode::MultipleTools);
        }
        if self.count >= 2 {
            return Err(RuleCode::RetryCeiling);
        }
        if !first.retryable_error {
            return Err(RuleCode::RetryWithoutRetryableError);
        }
        if first.args != *args {
            return Err(RuleCode::RetryArgumentsChanged);
        }
        Ok(())
    }

    /// Count an attempt of `tool` with `args` that ended as `outcome`.
    pub fn record(&mut self, tool: &str, args: &Value, outcome: Outcome<'_>) {
        self.count = self.count.saturating_add(1);
        match &self.first {
            Some(first) => self.other_tool |= first.tool != tool,
            None => {
                let retryable_error = match outcome {
                    Outcome::Called(response) => is_retryable_error(response),
                    Outcome::Refused => false,
                };
                self.first = Some(First { tool: tool.to_owned(), args: args.clone(), retryable_error });
            }
        }
    }

    /// Attempts recorded so far, refused ones included.
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// True when `response` is a valid envelope carrying an error with
/// `retryable: true`; a malformed response never licenses a retry.
pub fn is_retryable_error(response: &Value) -> bool {
    // Only an error envelope can be retryable: a success (most calls) is
    // not read in full, since its data may be large.
    if response.get("status").and_then(Value::as_str) != Some("error") {
        return false;
    }
    Envelope::from_value(response)
        .ok()
        .and_then(|envelope| envelope.error)
        .is_some_and(|error| error.retryable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::{DEPENDENCY_UNAVAILABLE, JOB_NOT_FOUND};
    use serde_json::json;

    fn after(tool: &str, args: Value, response: Value) -> Attempts {
        let mut attempts = Attempts::default();
        attempts.record(tool, &args, Outcome::Called(&response));
        attempts
    }

    #[test]
    fn a_first_attempt_is_always_allowed() {
        assert_eq!(Attempts::default().check("t", &json!({})), Ok(()));
    }

    #[test]
    fn a_retry_repeats_the_arguments_after_a_retryable_error() {
        let outage = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        let attempts = after("t", json!({"job_id": "job-42", "x": 1}), outage);
        assert_eq!(attempts.check("t", &json!({"x": 1, "job_id": "job-42"})), Ok(()));
        assert_eq!(attempts.check("t", &json!({"job_id": "job-7"})), Err(RuleCode::RetryArgumentsChanged));
        assert_eq!(
            attempts.check("t", &json!({"job_id": "job-42", "x": 1.0})),
            Err(RuleCode::RetryArgumentsChanged)
        );
        assert_eq!(attempts.check("u", &json!({"job_id": "job-42", "x": 1})), Err(RuleCode::MultipleTools));
    }

    #[test]
    fn only_a_retryable_error_licenses_a_retry() {
        let permanent = Envelope::stable_error(&JOB_NOT_FOUND).to_value();
        assert_eq!(
            after("t", json!({}), permanent).check("t", &json!({})),
            Err(RuleCode::RetryWithoutRetryableError)
        );
        let mut malformed = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        malformed["extra"] = json!(1);
        assert_eq!(
            after("t", json!({}), malformed).check("t", &json!({})),
            Err(RuleCode::RetryWithoutRetryableError)
        );
        let mut refused = Attempts::default();
        refused.record("t", &json!({}), Outcome::Refused);
        assert_eq!(refused.check("t", &json!({})), Err(RuleCode::RetryWithoutRetryableError));
    }

    #[test]
    fn two_attempts_at_most_and_one_tool_ever() {
        let outage = Envelope::stable_error(&DEPENDENCY_UNAVAILABLE).to_value();
        let mut attempts = after("t", json!({}), outage.clone());
        attempts.record("t", &json!({}), Outcome::Called(&outage));
        assert_eq!(attempts.check("t", &json!({})), Err(RuleCode::RetryCeiling));
        assert_eq!(attempts.count(), 2);
        let mut mixed = after("t", json!({}), outage);
        mixed.record("u", &json!({}), Outcome::Refused);
        assert_eq!(mixed.check("t", &json!({})), Err(RuleCode::MultipleTools));
    }
}
