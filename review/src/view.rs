//! What the page shows, read leniently from the raw JSON: a refused
//! answer or a malformed envelope must still be shown as it was, so
//! nothing here rejects; missing or mistyped fields are simply absent.
//!
//! Parts: [`AnswerView`] and [`ClaimView`] (the agent's answer),
//! [`EvidenceCard`] and [`evidence_cards`] (every evidence item any
//! response carried, with the entry it came from), [`returned_data`] (the
//! data of successful calls, which the grounding rules read).

use harmonia_contract::liaison::trace::{EntryKind, Trace};
use serde_json::Value;
use std::collections::HashMap;

/// The answer as sent, field by field.
pub struct AnswerView<'a> {
    /// `status`, when a string.
    pub status: Option<&'a str>,
    /// `answer`, when a string.
    pub text: Option<&'a str>,
    /// `skillName`, when a string.
    pub skill: Option<&'a str>,
    /// `claims`, each read leniently.
    pub claims: Vec<ClaimView<'a>>,
    /// `error`, when not null.
    pub error: Option<&'a Value>,
    /// `uncertainty`, its strings.
    pub uncertainty: Vec<&'a str>,
}

/// One claim as sent.
pub struct ClaimView<'a> {
    /// `text`, when a string.
    pub text: Option<&'a str>,
    /// `kind`, when a string.
    pub kind: Option<&'a str>,
    /// `evidenceIds`, its strings.
    pub ids: Vec<&'a str>,
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl<'a> AnswerView<'a> {
    /// Read `answer`, whatever its shape.
    pub fn read(answer: &'a Value) -> Self {
        let claims = answer
            .get("claims")
            .and_then(Value::as_array)
            .map(|claims| {
                claims
                    .iter()
                    .map(|claim| ClaimView {
                        text: claim.get("text").and_then(Value::as_str),
                        kind: claim.get("kind").and_then(Value::as_str),
                        ids: strings(claim.get("evidenceIds")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            status: answer.get("status").and_then(Value::as_str),
            text: answer.get("answer").and_then(Value::as_str),
            skill: answer.get("skillName").and_then(Value::as_str),
            claims,
            error: answer.get("error").filter(|error| !error.is_null()),
            uncertainty: strings(answer.get("uncertainty")),
        }
    }
}

/// One evidence item of one recorded response.
pub struct EvidenceCard<'a> {
    /// The item as recorded.
    pub item: &'a Value,
    /// `evidenceId`, when a string.
    pub id: Option<&'a str>,
    /// 1-based position of the trace entry whose response carried it.
    pub entry: usize,
    /// That entry's tool.
    pub tool: &'a str,
    /// True when the validator counts it: the response is a success of a
    /// `tool_call` entry (docs/contract.md §5.0.5, "returned this invocation").
    pub counted: bool,
}

impl EvidenceCard<'_> {
    /// A string field of the item.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.item.get(key).and_then(Value::as_str)
    }

    /// `Some(true)` record-level, `Some(false)` dataset-level, `None` when
    /// the reference is neither a string nor null.
    pub fn is_record(&self) -> Option<bool> {
        match self.item.get("reference") {
            Some(Value::String(_)) => Some(true),
            Some(Value::Null) => Some(false),
            _ => None,
        }
    }
}

fn is_success(response: &Value) -> bool {
    response.get("status").and_then(Value::as_str) == Some("success")
}

/// Every evidence item of every response in `trace`, in trace order, and
/// for each id the card the claims link to: the first counted one, else
/// the first.
pub fn evidence_cards(trace: &Trace) -> (Vec<EvidenceCard<'_>>, HashMap<&str, usize>) {
    let mut cards = Vec::new();
    for (index, entry) in trace.entries.iter().enumerate() {
        let Some(response) = &entry.response else { continue };
        let Some(items) = response.get("evidence").and_then(Value::as_array) else { continue };
        let counted = entry.kind == EntryKind::ToolCall && is_success(response);
        for item in items {
            cards.push(EvidenceCard {
                item,
                id: item.get("evidenceId").and_then(Value::as_str),
                entry: index + 1,
                tool: entry.name.as_deref().unwrap_or(""),
                counted,
            });
        }
    }
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (index, card) in cards.iter().enumerate() {
        let Some(id) = card.id else { continue };
        match by_id.get(id) {
            Some(&known) if cards[known].counted || !card.counted => {}
            _ => {
                by_id.insert(id, index);
            }
        }
    }
    (cards, by_id)
}

/// The data objects of the successful `tool_call` responses, in order.
pub fn returned_data(trace: &Trace) -> Vec<&serde_json::Map<String, Value>> {
    trace
        .entries
        .iter()
        .filter(|entry| entry.kind == EntryKind::ToolCall)
        .filter_map(|entry| entry.response.as_ref())
        .filter(|response| is_success(response))
        .filter_map(|response| response.get("data").and_then(Value::as_object))
        .collect()
}
