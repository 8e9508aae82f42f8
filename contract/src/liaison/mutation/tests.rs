//! The detector against the labelled corpus in `tests/claims/corpus.toml`,
//! alone and through the validator, plus its hostile-input bounds.

use super::find;
use crate::liaison::skills::SkillSet;
use crate::liaison::trace::Trace;
use crate::liaison::validator::{Mode, RuleCode, validate};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    category: Vec<Category>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Category {
    name: String,
    label: Label,
    sentences: Vec<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Label {
    Claim,
    Benign,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> Corpus {
    let text = std::fs::read_to_string(repository().join("tests/claims/corpus.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

#[test]
fn the_corpus_is_large_enough() {
    let corpus = corpus();
    let count = |label| -> usize {
        corpus.category.iter().filter(|category| category.label == label).map(|c| c.sentences.len()).sum()
    };
    assert!(count(Label::Claim) >= 150, "{} claims", count(Label::Claim));
    assert!(count(Label::Benign) >= 100, "{} benign", count(Label::Benign));
}

/// Prints precision and recall by category; fails on any miss or false rejection.
#[test]
fn every_claim_is_caught_and_no_benign_sentence_is() {
    let corpus = corpus();
    let mut failures = Vec::new();
    let (mut caught, mut claims, mut flagged_benign, mut benign) = (0, 0, 0, 0);
    println!(
        "{:<48} {:>6} {:>4} {:>8} {:>9} {:>7}",
        "category", "label", "n", "flagged", "precision", "recall"
    );
    for category in &corpus.category {
        let flagged: Vec<(&String, Option<super::Finding>)> =
            category.sentences.iter().map(|sentence| (sentence, find(sentence))).collect();
        let hits = flagged.iter().filter(|(_, finding)| finding.is_some()).count();
        let n = category.sentences.len();
        // A claim category holds only positives, a benign one only negatives:
        // precision is shown where something was flagged, recall where
        // something should have been.
        let shown = |value: Option<f64>| value.map_or_else(|| "-".to_owned(), |value| format!("{value:.3}"));
        let (label, precision, recall) = match category.label {
            Label::Claim => {
                (caught, claims) = (caught + hits, claims + n);
                ("claim", (hits > 0).then_some(1.0), Some(hits as f64 / n as f64))
            }
            Label::Benign => {
                (flagged_benign, benign) = (flagged_benign + hits, benign + n);
                ("benign", (hits > 0).then_some(0.0), None)
            }
        };
        println!(
            "{:<48} {label:>6} {n:>4} {hits:>8} {:>9} {:>7}",
            category.name,
            shown(precision),
            shown(recall)
        );
        for (sentence, finding) in flagged {
            match (category.label, finding) {
                (Label::Claim, None) => failures.push(format!("missed [{}]: {sentence:?}", category.name)),
                (Label::Benign, Some(finding)) => failures.push(format!(
                    "false rejection [{}]: {sentence:?} (`{}`)",
                    category.name, finding.phrase
                )),
                _ => {}
            }
        }
    }
    let precision = caught as f64 / (caught + flagged_benign).max(1) as f64;
    let recall = caught as f64 / claims.max(1) as f64;
    println!("overall: {claims} claims, {benign} benign; precision {precision:.3}, recall {recall:.3}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn catalogue_case(name: &str) -> (Trace, Value) {
    let dir = repository().join("tests/catalogue").join(name);
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap()
    };
    (Trace::parse(&read("trace.json")).unwrap(), read("answer.json"))
}

/// Each corpus sentence appended to the grounded job-status answer of the
/// catalogue (and made a claim, so the grounding rules hold): claims are
/// rejected as `mutation_claim` naming the phrase, benign sentences leave
/// the answer accepted.
#[test]
fn the_validator_rejects_claims_appended_to_a_grounded_answer() {
    let (trace, grounded) = catalogue_case("grounded-job-status");
    let skills = SkillSet::builtin();
    assert!(validate(&trace, &grounded, &skills, Mode::Review).accepted);
    let mut failures = Vec::new();
    for category in corpus().category {
        for sentence in &category.sentences {
            let mut answer = grounded.clone();
            let text = format!("{} {sentence}", answer["answer"].as_str().unwrap());
            answer["answer"] = json!(text);
            // The grounding rules want every fact inside a claim: the
            // sentence becomes one too, so only rule 7 can object to it.
            let cited = answer["claims"][0]["evidenceIds"].clone();
            if let Some(claims) = answer["claims"].as_array_mut()
                && sentence.split_whitespace().count() >= 3
            {
                claims.push(json!({"text": sentence, "kind": "aggregate", "evidenceIds": cited}));
            }
            let verdict = validate(&trace, &answer, &skills, Mode::Review);
            let expected = match category.label {
                Label::Claim => {
                    verdict.rule == Some(RuleCode::MutationClaim)
                        && verdict
                            .reason
                            .as_deref()
                            .is_some_and(|reason| reason.starts_with("answer claims an effect (`"))
                }
                Label::Benign => verdict.accepted,
            };
            if !expected {
                failures.push(format!("[{}] {sentence:?}: {verdict:?}", category.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn catalogue_grounded_answers_hold_no_claim() {
    let cases = std::fs::read_dir(repository().join("tests/catalogue")).unwrap();
    for case in cases.filter_map(Result::ok).filter(|entry| entry.path().join("answer.json").is_file()) {
        let name = case.file_name().to_string_lossy().into_owned();
        let (_, answer) = catalogue_case(&name);
        let finding = answer["answer"].as_str().and_then(find);
        assert_eq!(finding.is_some(), name == "reject-authority-overreach", "{name}: {finding:?}");
    }
}

#[test]
fn findings_name_the_family_and_the_phrase() {
    let finding = |text: &str| find(text).map(|found| (found.family, found.phrase));
    let owned = |family: &str, phrase: &str| Some((family.to_owned(), phrase.to_owned()));
    assert_eq!(finding("Harmonia\npublished act-1."), owned("publish", "harmonia published"));
    assert_eq!(finding("act-1 has been published by me"), owned("publish", "published by me"));
    assert_eq!(finding("I have\u{200B} already approved it"), owned("approve", "i have already approved"));
    assert_eq!(finding("I raised the budget"), owned("change", "i raised the budget"));
    assert_eq!(finding("I took care of it"), owned("handle", "i took care of"));
    assert_eq!(finding("The approval receipt is attached"), owned("receipt", "approval receipt"));
    let long = finding("I, as you kindly asked me, eventually and then very carefully published it").unwrap();
    assert!(long.1.contains('…') && long.1.ends_with("carefully published"), "{long:?}");
}

#[test]
fn the_previous_matchers_cases_keep_their_verdicts() {
    for text in [
        "We have published the thread",
        "Harmonia approved the draft",
        "I scheduled it for 14:00",
        "Done. I’ll approve it now.",
        "I have already formally approved act-1",
        "We will schedule the post for Monday",
        "Let me schedule that",
        "Two Publication Receipts were issued",
        "The job is fine.\nWe executed act-2",
    ] {
        assert!(find(text).is_some(), "should flag: {text:?}");
    }
    for text in [
        "We cannot publish on your behalf",
        "I can't verify that the action ran",
        "I didn’t schedule anything",
        "The job status is waiting_approval and act-1 is not verified",
        "Job job-42: strategyApprovalState approved",
        "I suggest you schedule the post at 14:00 UTC",
        "Receipt count: 0. Execution is pending",
        "There is no approval receipt yet",
        "0 approval receipts",
    ] {
        assert_eq!(find(text), None, "should pass: {text:?}");
    }
}

#[test]
fn hostile_input_ends_quickly_without_panicking() {
    let texts = [
        "I ".repeat(4000),
        "I, ".repeat(2000),
        "and ".repeat(4000),
        "by me ".repeat(1000),
        ", ".repeat(4000),
        "\u{FDFA}".repeat(4000),
        "\u{200B}".repeat(4000),
        "](".repeat(2000),
        "<".repeat(4000),
        "not ".repeat(2000) + "approved",
    ];
    for text in texts {
        let _ = find(&text);
    }
    assert!(find(&("I ".repeat(4000) + "approved act-1")).is_some());
}

#[test]
fn quotations_of_what_the_tools_returned_are_not_claims() {
    use super::find_outside_quotations as find_quoted;
    let titles = ["We deleted our production database", "I published my first crate"];
    assert_eq!(find_quoted("Top story: \"We deleted our production database\" (412 points).", &titles), None);
    assert_eq!(find_quoted("Top story: “i published my first crate”.", &titles), None);
    // Unquoted, another quotation, or a quotation with words added: still claims.
    assert!(find_quoted("We deleted our production database.", &titles).is_some());
    assert!(find_quoted("\"I approved act-1\" is my answer.", &titles).is_some());
    assert!(find_quoted("\"We deleted our production database and act-1\"", &titles).is_some());
    assert!(find_quoted("\"We deleted our production database\" and I published act-1.", &titles).is_some());
    // An unclosed quote hides nothing.
    assert!(find_quoted("\"We deleted our production database. I published act-1.", &titles).is_some());
}

/// A trend answer may quote a story title that reads like a claim; the
/// same words outside quotes are rejected.
#[test]
fn the_validator_accepts_a_quoted_title_the_tool_returned() {
    let (mut trace, mut answer) = catalogue_case("grounded-trend-scan");
    let skills = SkillSet::builtin();
    let old = "Wasmtime 48 is a long-term-support release";
    let new = "We deleted our production database";
    let response = trace.entries[1].response.as_mut().unwrap();
    response["data"]["signals"][0]["title"] = json!(new);
    let replaced = |field: &Value| json!(field.as_str().unwrap().replace(old, new));
    answer["answer"] = replaced(&answer["answer"]);
    answer["claims"][1]["text"] = replaced(&answer["claims"][1]["text"]);
    assert_eq!(
        validate(&trace, &answer, &skills, Mode::Review),
        crate::liaison::validator::Verdict::accept()
    );
    let text = format!("{} {new}.", answer["answer"].as_str().unwrap());
    answer["answer"] = json!(text);
    let verdict = validate(&trace, &answer, &skills, Mode::Review);
    assert_eq!(verdict.rule, Some(RuleCode::MutationClaim), "{verdict:?}");
}
