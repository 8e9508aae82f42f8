//! The evaluation catalogue (`tests/catalogue/<case>/`): each case's trace
//! and answer through the library and through `harmonia validate`, with
//! the exact rule code expected.

use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::{Mode, RuleCode, Verdict, validate_received};
use harmonia_host::liaison::signing::PublicKey;
use harmonia_host::liaison::skills::SkillSet;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The key the catalogue's traces were signed with (`trace-key.pub`).
fn public_key(dir: &Path) -> PublicKey {
    PublicKey::parse_hex(&std::fs::read_to_string(dir.join("trace-key.pub")).unwrap()).unwrap()
}

/// A case's verdict through the library, its seal checked as `harmonia validate` does.
fn library_verdict(case_dir: &Path, key: &PublicKey, mode: Mode) -> Verdict {
    let document = TraceDocument::parse(&read(&case_dir.join("trace.json"))).unwrap();
    validate_received(
        &document.trace,
        document.verify(key),
        &read(&case_dir.join("answer.json")),
        &SkillSet::builtin(),
        mode,
    )
}

struct Case {
    name: String,
    dir: PathBuf,
    mode: Mode,
    rule: Option<String>,
}

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = std::fs::read_dir(catalogue())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("expected.json").is_file())
        .map(|entry| {
            let expected = read(&entry.path().join("expected.json"));
            Case {
                name: entry.file_name().to_string_lossy().into_owned(),
                dir: entry.path(),
                mode: if expected["mode"] == "submission" { Mode::Submission } else { Mode::Review },
                rule: expected["rule"].as_str().map(str::to_owned),
            }
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

#[test]
fn every_case_gets_its_exact_rule_through_the_library() {
    let key = public_key(&catalogue());
    for case in cases() {
        let verdict = library_verdict(&case.dir, &key, case.mode);
        assert_eq!(
            verdict.rule.map(|rule| rule.as_str().to_owned()),
            case.rule,
            "{}: {:?}",
            case.name,
            verdict.reason
        );
        assert_eq!(verdict.accepted, case.rule.is_none(), "{}", case.name);
    }
}

#[test]
fn every_case_gets_its_exact_rule_through_the_cli() {
    let key = public_key(&catalogue()).to_hex();
    for case in cases() {
        let mut command = Command::new(env!("CARGO_BIN_EXE_harmonia"));
        command
            .args(["validate", "--json", "--public-key", &key, "--trace"])
            .arg(case.dir.join("trace.json"))
            .arg("--answer")
            .arg(case.dir.join("answer.json"));
        if case.mode == Mode::Submission {
            command.arg("--submission");
        }
        let output = command.output().unwrap();
        let verdict: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(verdict["rule"].as_str().map(str::to_owned), case.rule, "{}", case.name);
        assert_eq!(verdict["accepted"], case.rule.is_none(), "{}", case.name);
        assert_eq!(output.status.code(), Some(if case.rule.is_none() { 0 } else { 1 }), "{}", case.name);
        assert!(verdict["reason"].is_null() == case.rule.is_none(), "{}", case.name);
    }
}

#[test]
fn the_catalogue_covers_every_rule_and_the_named_cases() {
    let cases = cases();
    for rule in RuleCode::ALL {
        assert!(
            cases.iter().any(|case| case.rule.as_deref() == Some(rule.as_str())),
            "no case for {}",
            rule.as_str()
        );
    }
    for name in [
        "grounded-job-status",
        "reject-wrong-skill",
        "reject-wrong-tool",
        "reject-missing-evidence",
        "reject-invented-reference",
        "reject-authority-overreach",
        "reject-hidden-error",
        "reject-invalid-retry",
        "reject-false-no-data",
        "reject-record-claim-dataset-only",
        "reject-missing-feed-freshness",
        "reject-mock-in-submission",
        "reject-unverified-trace",
        "accepted-retry",
        "reject-retry-arguments-changed",
        "reject-unclaimed-fact",
    ] {
        assert!(cases.iter().any(|case| case.name == name), "missing case {name}");
    }
}

#[test]
fn the_demo_still_produces_the_catalogue() {
    let dir = std::env::temp_dir().join(format!("harmonia-catalogue-{}", std::process::id()));
    let output =
        Command::new(env!("CARGO_BIN_EXE_harmonia")).arg("demo").arg("--export").arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let key = public_key(&dir);
    for case in cases() {
        let exported = dir.join(&case.name);
        let expected = read(&exported.join("expected.json"));
        assert_eq!(expected["rule"].as_str().map(str::to_owned), case.rule, "{}", case.name);
        let verdict = library_verdict(&exported, &key, case.mode);
        assert_eq!(verdict.rule.map(|rule| rule.as_str().to_owned()), case.rule, "{}", case.name);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
