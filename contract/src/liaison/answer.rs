//! The liaison's final answer (docs/contract.md §5.0.1), parsed strictly.
//!
//! Every key is required and unknown keys are rejected at every level. A
//! parse failure is a one-line reason that starts with the JSON path it is
//! about, e.g. `claims[2].evidenceIds: must hold 1 to 8 unique ids`.
//! Lengths count Unicode scalar values (Rust `char`s).
//!
//! Decisions where the contract is silent:
//! - `skillName` is any string; whether it names the activated skill is the
//!   validator's `skill_mismatch` rule, not a schema question.
//! - The answer's `error` follows the envelope's error rules (§1): the code
//!   matches `^[a-z0-9_]{1,80}$` and the message is 1–500 characters.
//! - Evidence ids are compared as exact strings for uniqueness.
//! - A claim's text holds at least [`MIN_CLAIM_WORDS`] words (runs of
//!   non-whitespace holding a letter or digit): a claim of one letter
//!   would be found in almost any answer and ground nothing.

use crate::codes::{Category, is_valid_code};
use crate::envelope::{ErrorObject, MAX_MESSAGE_CHARS};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Longest `answer` text, in characters.
pub const MAX_ANSWER_CHARS: usize = 4000;
/// Most claims an answer may make.
pub const MAX_CLAIMS: usize = 20;
/// Longest claim `text`, in characters.
pub const MAX_CLAIM_CHARS: usize = 1000;
/// Fewest words in a claim `text`.
pub const MIN_CLAIM_WORDS: usize = 3;
/// Most evidence ids one claim may cite.
pub const MAX_CLAIM_EVIDENCE: usize = 8;
/// Most `uncertainty` strings.
pub const MAX_UNCERTAINTY: usize = 8;
/// Longest `uncertainty` string, in characters.
pub const MAX_UNCERTAINTY_CHARS: usize = 500;

/// The outcome the answer reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerStatus {
    /// The answer reports data and makes at least one claim.
    Success,
    /// A successful read returned nothing; no claims.
    NoData,
    /// The final tool call failed; the answer repeats its error.
    Error,
}

impl AnswerStatus {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::NoData => "no_data",
            Self::Error => "error",
        }
    }
}

/// What a claim is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// One story, post or job; must cite record-level evidence.
    Record,
    /// A whole dataset or a summary over records.
    Aggregate,
}

/// One claim of the answer, bound to the evidence that backs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// The claim, as it appears in the answer text.
    pub text: String,
    /// Record or aggregate.
    pub kind: ClaimKind,
    /// Cited evidence ids: 1 to 8, unique.
    pub evidence_ids: Vec<String>,
}

/// The liaison's final answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Success, no data, or error.
    pub status: AnswerStatus,
    /// The text shown to the operator.
    pub answer: String,
    /// The skill the answer was written under.
    pub skill_name: String,
    /// Claims, at most 20.
    pub claims: Vec<Claim>,
    /// The repeated tool error on `error` status; `None` otherwise.
    pub error: Option<ErrorObject>,
    /// What the answer is unsure about, at most 8 strings.
    pub uncertainty: Vec<String>,
}

const ANSWER_KEYS: [&str; 6] = ["status", "answer", "skillName", "claims", "error", "uncertainty"];
const CLAIM_KEYS: [&str; 3] = ["text", "kind", "evidenceIds"];
const ERROR_KEYS: [&str; 4] = ["code", "category", "message", "retryable"];

type Parsed<T> = Result<T, AnswerError>;

/// Why an answer is refused: the JSON path of the first fault, in document
/// order, and the rule it breaks (`claims[0].kind: must be "record" or
/// "aggregate"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {rule}")]
pub struct AnswerError {
    /// Where: `status`, `claims[2].evidenceIds[0]`, `error.code`, ...
    pub path: String,
    /// What is wrong there.
    pub rule: String,
}

fn refuse(path: impl Into<String>, rule: impl Into<String>) -> AnswerError {
    AnswerError { path: path.into(), rule: rule.into() }
}

impl Answer {
    /// Parse and check an answer: shape, bounds and the cross-field rules
    /// between `status`, `claims` and `error`.
    pub fn parse(value: &Value) -> Result<Self, AnswerError> {
        let object = value.as_object().ok_or_else(|| refuse("answer", "must be a JSON object"))?;
        exact_keys(object, &ANSWER_KEYS, "")?;
        let answer = Self {
            status: parse_status(&object["status"])?,
            answer: bounded_text(&object["answer"], "answer", MAX_ANSWER_CHARS)?,
            skill_name: text(&object["skillName"], "skillName")?.to_owned(),
            claims: parse_claims(&object["claims"])?,
            error: parse_error(&object["error"])?,
            uncertainty: parse_uncertainty(&object["uncertainty"])?,
        };
        answer.check_status_rules()?;
        Ok(answer)
    }

    fn check_status_rules(&self) -> Parsed<()> {
        match self.status {
            AnswerStatus::Error if self.error.is_none() => {
                Err(refuse("error", "an `error` answer needs an error object"))
            }
            AnswerStatus::Error if !self.claims.is_empty() => {
                Err(refuse("claims", "an `error` answer makes no claims"))
            }
            AnswerStatus::Success if self.claims.is_empty() => {
                Err(refuse("claims", "a `success` answer makes at least one claim"))
            }
            AnswerStatus::NoData if !self.claims.is_empty() => {
                Err(refuse("claims", "a `no_data` answer makes no claims"))
            }
            AnswerStatus::Success | AnswerStatus::NoData if self.error.is_some() => {
                Err(refuse("error", format!("must be null on a `{}` answer", self.status.as_str())))
            }
            _ => Ok(()),
        }
    }
}

/// Checks that `object` has exactly `keys`, naming the first stray key,
/// then the first missing one. `at` prefixes the key to form its path.
fn exact_keys(object: &Map<String, Value>, keys: &[&str], at: &str) -> Parsed<()> {
    if let Some(stray) = object.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(refuse(format!("{at}{}", one_line(stray)), "unknown key"));
    }
    if let Some(missing) = keys.iter().find(|key| !object.contains_key(**key)) {
        return Err(refuse(format!("{at}{missing}"), "is required"));
    }
    Ok(())
}

/// Longest piece of untrusted text quoted in a reason, in characters.
const MAX_QUOTED_CHARS: usize = 120;

/// Untrusted `text` made fit for a one-line reason: control characters
/// escaped, and cut to [`MAX_QUOTED_CHARS`] with a trailing `…`.
pub(crate) fn one_line(text: &str) -> String {
    let mut shown: String = text.chars().take(MAX_QUOTED_CHARS).flat_map(char::escape_debug).collect();
    if text.chars().nth(MAX_QUOTED_CHARS).is_some() {
        shown.push('…');
    }
    shown
}

fn text<'v>(value: &'v Value, path: &str) -> Parsed<&'v str> {
    value.as_str().ok_or_else(|| refuse(path, "must be a string"))
}

fn bounded_text(value: &Value, path: &str, max_chars: usize) -> Parsed<String> {
    let text = text(value, path)?;
    if (1..=max_chars).contains(&text.chars().count()) {
        Ok(text.to_owned())
    } else {
        Err(refuse(path, format!("must be 1 to {max_chars} characters")))
    }
}

fn list<'v>(value: &'v Value, path: &str, max_items: usize) -> Parsed<&'v [Value]> {
    let items = value.as_array().ok_or_else(|| refuse(path, "must be a list"))?;
    if items.len() > max_items {
        return Err(refuse(path, format!("must hold at most {max_items} items")));
    }
    Ok(items)
}

fn parse_status(value: &Value) -> Parsed<AnswerStatus> {
    match text(value, "status")? {
        "success" => Ok(AnswerStatus::Success),
        "no_data" => Ok(AnswerStatus::NoData),
        "error" => Ok(AnswerStatus::Error),
        _ => Err(refuse("status", "must be \"success\", \"no_data\" or \"error\"")),
    }
}

fn parse_claims(value: &Value) -> Parsed<Vec<Claim>> {
    list(value, "claims", MAX_CLAIMS)?
        .iter()
        .enumerate()
        .map(|(index, claim)| parse_claim(claim, index))
        .collect()
}

fn parse_claim(value: &Value, index: usize) -> Parsed<Claim> {
    let at = format!("claims[{index}]");
    let object = value.as_object().ok_or_else(|| refuse(&at, "must be an object"))?;
    exact_keys(object, &CLAIM_KEYS, &format!("{at}."))?;
    let kind = match text(&object["kind"], &format!("{at}.kind"))? {
        "record" => ClaimKind::Record,
        "aggregate" => ClaimKind::Aggregate,
        _ => return Err(refuse(format!("{at}.kind"), "must be \"record\" or \"aggregate\"")),
    };
    let text = bounded_text(&object["text"], &format!("{at}.text"), MAX_CLAIM_CHARS)?;
    let words = text.split_whitespace().filter(|word| word.chars().any(char::is_alphanumeric)).count();
    if words < MIN_CLAIM_WORDS {
        return Err(refuse(format!("{at}.text"), format!("must hold at least {MIN_CLAIM_WORDS} words")));
    }
    Ok(Claim {
        text,
        kind,
        evidence_ids: parse_evidence_ids(&object["evidenceIds"], &format!("{at}.evidenceIds"))?,
    })
}

fn parse_evidence_ids(value: &Value, path: &str) -> Parsed<Vec<String>> {
    let items = value.as_array().ok_or_else(|| refuse(path, "must be a list"))?;
    let ids = items
        .iter()
        .enumerate()
        .map(|(index, id)| text(id, &format!("{path}[{index}]")).map(str::to_owned))
        .collect::<Parsed<Vec<String>>>()?;
    let unique: HashSet<&str> = ids.iter().map(String::as_str).collect();
    if ids.is_empty() || ids.len() > MAX_CLAIM_EVIDENCE || unique.len() != ids.len() {
        return Err(refuse(path, format!("must hold 1 to {MAX_CLAIM_EVIDENCE} unique ids")));
    }
    Ok(ids)
}

fn parse_error(value: &Value) -> Parsed<Option<ErrorObject>> {
    let object = match value {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => return Err(refuse("error", "must be null or an error object")),
    };
    exact_keys(object, &ERROR_KEYS, "error.")?;
    let code = text(&object["code"], "error.code")?;
    if !is_valid_code(code) {
        return Err(refuse("error.code", "must match ^[a-z0-9_]{1,80}$"));
    }
    Ok(Some(ErrorObject {
        code: code.to_owned(),
        category: parse_category(&object["category"])?,
        message: bounded_text(&object["message"], "error.message", MAX_MESSAGE_CHARS)?,
        retryable: object["retryable"]
            .as_bool()
            .ok_or_else(|| refuse("error.retryable", "must be a boolean"))?,
    }))
}

fn parse_category(value: &Value) -> Parsed<Category> {
    const CATEGORIES: [Category; 5] = [
        Category::Validation,
        Category::Authorization,
        Category::NotFound,
        Category::Dependency,
        Category::ProviderPermanent,
    ];
    let spelled = text(value, "error.category")?;
    CATEGORIES
        .into_iter()
        .find(|category| category.as_str() == spelled)
        .ok_or_else(|| refuse("error.category", "is not a contract category"))
}

fn parse_uncertainty(value: &Value) -> Parsed<Vec<String>> {
    list(value, "uncertainty", MAX_UNCERTAINTY)?
        .iter()
        .enumerate()
        .map(|(index, item)| bounded_text(item, &format!("uncertainty[{index}]"), MAX_UNCERTAINTY_CHARS))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn success() -> Value {
        json!({
            "status": "success",
            "answer": "Job job-42 is waiting (ev-0123456789abcdef).",
            "skillName": "job-status",
            "claims": [{"text": "Job job-42 is waiting", "kind": "record", "evidenceIds": ["ev-0123456789abcdef"]}],
            "error": null,
            "uncertainty": []
        })
    }

    fn error_answer() -> Value {
        json!({
            "status": "error",
            "answer": "The data source is unavailable right now (dependency_unavailable).",
            "skillName": "job-status",
            "claims": [],
            "error": {"code": "dependency_unavailable", "category": "dependency",
                      "message": "The data source is unavailable right now.", "retryable": true},
            "uncertainty": ["The job may have changed since."]
        })
    }

    fn reason(value: &Value) -> String {
        Answer::parse(value).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_success_answer() {
        let answer = Answer::parse(&success()).unwrap();
        assert_eq!(answer.status, AnswerStatus::Success);
        assert_eq!(answer.skill_name, "job-status");
        assert_eq!(answer.claims[0].kind, ClaimKind::Record);
        assert_eq!(answer.claims[0].evidence_ids, ["ev-0123456789abcdef"]);
        assert_eq!(answer.error, None);
        assert_eq!(serde_json::to_value(&answer).unwrap(), success());
    }

    #[test]
    fn parses_an_error_answer() {
        let answer = Answer::parse(&error_answer()).unwrap();
        let error = answer.error.unwrap();
        assert_eq!(error.code, "dependency_unavailable");
        assert_eq!(error.category, Category::Dependency);
        assert!(error.retryable);
        assert_eq!(answer.uncertainty.len(), 1);
    }

    #[test]
    fn parses_a_no_data_answer() {
        let mut value = success();
        value["status"] = json!("no_data");
        value["claims"] = json!([]);
        assert_eq!(Answer::parse(&value).unwrap().status, AnswerStatus::NoData);
    }

    #[test]
    fn rejects_unknown_and_missing_keys_at_every_level() {
        let mut value = success();
        value["confidence"] = json!(1);
        assert_eq!(reason(&value), "confidence: unknown key");
        let mut value = success();
        value.as_object_mut().unwrap().remove("uncertainty");
        assert_eq!(reason(&value), "uncertainty: is required");
        let mut value = success();
        value["claims"][0]["source"] = json!("x");
        assert_eq!(reason(&value), "claims[0].source: unknown key");
        let mut value = success();
        value["claims"][0].as_object_mut().unwrap().remove("kind");
        assert_eq!(reason(&value), "claims[0].kind: is required");
        let mut value = error_answer();
        value["error"]["detail"] = json!("x");
        assert_eq!(reason(&value), "error.detail: unknown key");
        let mut value = error_answer();
        value["error"].as_object_mut().unwrap().remove("retryable");
        assert_eq!(reason(&value), "error.retryable: is required");
    }

    #[test]
    fn reasons_stay_on_one_line() {
        let mut value = success();
        value["line\nbreak"] = json!(1);
        assert_eq!(reason(&value), "line\\nbreak: unknown key");
        let mut value = success();
        value["k".repeat(500)] = json!(1);
        assert_eq!(reason(&value), format!("{}…: unknown key", "k".repeat(MAX_QUOTED_CHARS)));
    }

    #[test]
    fn rejects_wrong_types() {
        assert_eq!(reason(&json!([])), "answer: must be a JSON object");
        for (key, bad, expected) in [
            ("status", json!("ok"), "status: must be \"success\", \"no_data\" or \"error\""),
            ("status", json!(1), "status: must be a string"),
            ("answer", json!(null), "answer: must be a string"),
            ("skillName", json!(["job-status"]), "skillName: must be a string"),
            ("claims", json!({}), "claims: must be a list"),
            ("claims", json!(["x"]), "claims[0]: must be an object"),
            ("error", json!("boom"), "error: must be null or an error object"),
            ("uncertainty", json!("x"), "uncertainty: must be a list"),
            ("uncertainty", json!([1]), "uncertainty[0]: must be a string"),
        ] {
            let mut value = success();
            value[key] = bad;
            assert_eq!(reason(&value), expected, "{key}");
        }
        let mut value = success();
        value["claims"][0]["kind"] = json!("opinion");
        assert_eq!(reason(&value), "claims[0].kind: must be \"record\" or \"aggregate\"");
        let mut value = success();
        value["claims"][0]["evidenceIds"] = json!(["ev-1", 2]);
        assert_eq!(reason(&value), "claims[0].evidenceIds[1]: must be a string");
    }

    #[test]
    fn bounds_text_in_unicode_scalar_values() {
        let mut value = success();
        value["answer"] = json!("é".repeat(MAX_ANSWER_CHARS));
        value["claims"][0]["text"] = json!("é é é");
        assert!(Answer::parse(&value).is_ok());
        value["answer"] = json!("é".repeat(MAX_ANSWER_CHARS + 1));
        assert_eq!(reason(&value), "answer: must be 1 to 4000 characters");
        value["answer"] = json!("");
        assert_eq!(reason(&value), "answer: must be 1 to 4000 characters");
        let mut value = success();
        value["claims"][0]["text"] = json!("🙂".repeat(MAX_CLAIM_CHARS + 1));
        assert_eq!(reason(&value), "claims[0].text: must be 1 to 1000 characters");
        let mut value = success();
        value["uncertainty"] = json!(["x".repeat(MAX_UNCERTAINTY_CHARS + 1)]);
        assert_eq!(reason(&value), "uncertainty[0]: must be 1 to 500 characters");
        let mut value = success();
        value["uncertainty"] = json!([""]);
        assert_eq!(reason(&value), "uncertainty[0]: must be 1 to 500 characters");
    }

    #[test]
    fn a_claim_holds_at_least_three_words() {
        let expected = "claims[0].text: must hold at least 3 words";
        for text in ["J", "job-42 waiting", "job-42 is —", "  a\n b  "] {
            let mut value = success();
            value["claims"][0]["text"] = json!(text);
            assert_eq!(reason(&value), expected, "{text:?}");
        }
        let mut value = success();
        value["claims"][0]["text"] = json!("job-42 is waiting");
        assert!(Answer::parse(&value).is_ok());
    }

    #[test]
    fn bounds_list_sizes() {
        let claim = success()["claims"][0].clone();
        let mut value = success();
        value["claims"] = Value::Array(vec![claim.clone(); MAX_CLAIMS]);
        assert!(Answer::parse(&value).is_ok());
        value["claims"] = Value::Array(vec![claim; MAX_CLAIMS + 1]);
        assert_eq!(reason(&value), "claims: must hold at most 20 items");
        let mut value = success();
        value["uncertainty"] = Value::Array(vec![json!("x"); MAX_UNCERTAINTY + 1]);
        assert_eq!(reason(&value), "uncertainty: must hold at most 8 items");
    }

    #[test]
    fn evidence_ids_are_one_to_eight_and_unique() {
        let expected = "claims[0].evidenceIds: must hold 1 to 8 unique ids";
        for ids in [json!([]), json!(["a", "a"]), json!(["a", "b", "c", "d", "e", "f", "g", "h", "i"])] {
            let mut value = success();
            value["claims"][0]["evidenceIds"] = ids;
            assert_eq!(reason(&value), expected);
        }
        let mut value = success();
        value["claims"][0]["evidenceIds"] = json!(["a", "b", "c", "d", "e", "f", "g", "h"]);
        assert!(Answer::parse(&value).is_ok());
    }

    #[test]
    fn checks_the_error_object() {
        for (field, bad, expected) in [
            ("category", json!("timeout"), "error.category: is not a contract category"),
            ("category", json!(3), "error.category: must be a string"),
            ("retryable", json!("yes"), "error.retryable: must be a boolean"),
            ("code", json!("Bad-Code"), "error.code: must match ^[a-z0-9_]{1,80}$"),
            ("message", json!(""), "error.message: must be 1 to 500 characters"),
        ] {
            let mut value = error_answer();
            value["error"][field] = bad;
            assert_eq!(reason(&value), expected, "{field}");
        }
    }

    #[test]
    fn enforces_the_status_rules() {
        let mut value = error_answer();
        value["error"] = Value::Null;
        assert_eq!(reason(&value), "error: an `error` answer needs an error object");
        let mut value = error_answer();
        value["claims"] = success()["claims"].clone();
        assert_eq!(reason(&value), "claims: an `error` answer makes no claims");
        let mut value = success();
        value["claims"] = json!([]);
        assert_eq!(reason(&value), "claims: a `success` answer makes at least one claim");
        let mut value = success();
        value["status"] = json!("no_data");
        assert_eq!(reason(&value), "claims: a `no_data` answer makes no claims");
        let mut value = success();
        value["error"] = error_answer()["error"].clone();
        assert_eq!(reason(&value), "error: must be null on a `success` answer");
        let mut value = success();
        value["status"] = json!("no_data");
        value["claims"] = json!([]);
        value["error"] = error_answer()["error"].clone();
        assert_eq!(reason(&value), "error: must be null on a `no_data` answer");
    }
}
