//! Review pages in a real browser: headless Chromium (Debian's
//! `/usr/bin/chromium`) driven by `playwright-core`, with `axe-core`
//! injected for accessibility. Both come from
//! `scripts/install-test-deps.sh`; when they are missing the test fails,
//! naming that script. Nothing is downloaded, and the pages load nothing.
//!
//! This file writes the pages and a manifest of what each must show, then
//! runs `tests/browser/check.cjs`, which opens every page and asserts
//! what a person sees (see that script's header). Pages:
//! - every case of `tests/catalogue/`, through the library exactly as
//!   `harmonia review` renders it, with the verdict the catalogue expects;
//! - a hostile page: script tags, event-handler attributes, `javascript:`
//!   URLs, bidirectional overrides and 1 MiB strings in the title, claims,
//!   arguments, receipts and error messages;
//! - a 1,000-entry trace, whose render time is printed, not asserted;
//! - an index of the catalogue pages.
//!
//! Screenshots of the catalogue pages go to `target/review-screenshots/`.

use harmonia_contract::liaison::seal::PublicKey;
use harmonia_contract::liaison::skills::SkillSet;
use harmonia_contract::liaison::trace::{EntryKind, Trace, TraceDocument, TraceEntry};
use harmonia_contract::liaison::validator::Mode;
use harmonia_review::{IndexRow, index_page, input_bytes, review_with_verdict};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL: &str = "scripts/install-test-deps.sh";
const CHROMIUM: &str = "/usr/bin/chromium";
/// A window property a script smuggled into the page would set.
const CANARY: &str = "__harmoniaCanary";
const MIB: usize = 1024 * 1024;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("review/ sits in the workspace").to_owned()
}

/// The directory holding `playwright-core` and `axe-core`, or a failure
/// naming the install script.
fn node_modules() -> PathBuf {
    let modules = root().join("target/test-deps/node/node_modules");
    let node = Command::new("node").arg("--version").output();
    let mut missing = Vec::new();
    if !node.is_ok_and(|output| output.status.success()) {
        missing.push("node (Node.js 20+)".to_owned());
    }
    if !Path::new(CHROMIUM).exists() {
        missing.push(format!("{CHROMIUM} (Debian's chromium)"));
    }
    for package in ["playwright-core/package.json", "axe-core/axe.min.js"] {
        if !modules.join(package).is_file() {
            missing.push(format!("{} (npm)", modules.join(package).display()));
        }
    }
    assert!(
        missing.is_empty(),
        "the browser test needs {}: run {INSTALL} (it installs Debian's chromium, and playwright-core \
         and axe-core from npm, without downloading a browser)",
        missing.join(", ")
    );
    modules
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// What the browser must see on one page.
fn expectation(
    kind: &str,
    name: &str,
    file: &str,
    accepted: bool,
    rule: Option<&str>,
    answer: &Value,
) -> Value {
    let first_claim_ids = answer["claims"][0]["evidenceIds"].clone();
    json!({"kind": kind, "name": name, "file": file, "accepted": accepted, "rule": rule,
        "firstClaimIds": first_claim_ids, "claimsMarked": accepted && first_claim_ids.is_array()})
}

/// Every catalogue case as a page; returns the manifest rows and the index rows.
fn catalogue_pages(out: &Path) -> (Vec<Value>, Vec<IndexRow>) {
    let catalogue = root().join("tests/catalogue");
    let key =
        PublicKey::parse_hex(&std::fs::read_to_string(catalogue.join("trace-key.pub")).unwrap()).unwrap();
    let skills = SkillSet::builtin();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&catalogue)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("expected.json").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "the catalogue is read: {} cases", cases.len());
    let (mut manifest, mut rows) = (Vec::new(), Vec::new());
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let expected = read(&case.join("expected.json"));
        let mode = if expected["mode"] == "submission" { Mode::Submission } else { Mode::Review };
        let document = TraceDocument::parse(&read(&case.join("trace.json"))).unwrap();
        let answer = read(&case.join("answer.json"));
        let title = expected["title"].as_str().unwrap_or(&name).to_owned();
        let (page, verdict) = review_with_verdict(
            &document,
            document.verify(&key),
            &answer,
            &skills,
            mode,
            Some(&title),
            input_bytes(&document, &answer),
        );
        let rule = verdict.rule.map(|rule| rule.as_str());
        assert_eq!(rule, expected["rule"].as_str(), "{name}: the page shows the catalogue's verdict");
        let file = format!("{name}.html");
        std::fs::write(out.join(&file), page).unwrap();
        manifest.push(expectation("case", &name, &file, verdict.accepted, rule, &answer));
        rows.push(IndexRow {
            file,
            title,
            accepted: verdict.accepted,
            rule: rule.map(str::to_owned),
            reason: verdict.reason.clone(),
        });
    }
    (manifest, rows)
}

fn entry(sequence: u64, kind: EntryKind) -> TraceEntry {
    TraceEntry::new(sequence, kind)
}

/// Strings a hostile tool or agent might send, each of which would run a
/// script if written into the page as markup.
fn hostile(place: &str) -> String {
    format!(
        "<script>window.{CANARY}='{place}'</script><img src=x onerror=\"window.{CANARY}='{place}-img'\">\
         <a href=\"javascript:window.{CANARY}='{place}-link'\">link</a> \u{202E}txt.exe\u{202C} '\"&amp;"
    )
}

fn hostile_page(out: &Path) -> Value {
    let skills = SkillSet::builtin();
    let sha = skills.get("job-status").unwrap().sha256.clone();
    let huge = |letter: &str| letter.repeat(MIB);
    let mut activation = entry(1, EntryKind::SkillActivation);
    activation.skill = Some("job-status".into());
    activation.sha256 = Some(sha);
    let mut call = entry(2, EntryKind::ToolCall);
    call.name = Some("get_job_status".into());
    call.args = Some(json!({"job_id": hostile("args"), "pad": huge("A")}));
    call.attempt = Some(1);
    call.duration_ms = Some(12.5);
    call.response = Some(json!({"status": "success", "data": {"note": hostile("data"), "big": huge("D")},
        "error": null, "evidence": [
            {"evidenceId": "ev-0123456789abcdef", "source": hostile("source"), "provenance": "live",
             "reference": format!("javascript:window.{CANARY}='reference'")},
            {"evidenceId": hostile("evidence-id"), "source": "harmonia_job", "provenance": "derived", "reference": null}]}));
    call.receipts = Some(vec![json!({"capability": "workspace", "target": hostile("target"),
        "status": "ok", "bytes": 913, "durationUs": 127})]);
    let mut refused = entry(3, EntryKind::ToolRefused);
    refused.name = Some(hostile("tool-name"));
    refused.args = Some(json!({}));
    refused.attempt = Some(1);
    refused.reason = Some(hostile("reason"));
    refused.response = Some(json!({"status": "error", "data": null, "error": {"code": "call_refused",
        "category": "validation", "message": hostile("refusal"), "retryable": false}, "evidence": []}));
    let mut failed = entry(4, EntryKind::ToolCall);
    failed.name = Some("get_job_status".into());
    failed.args = Some(json!({"job_id": hostile("args-2")}));
    failed.attempt = Some(2);
    failed.duration_ms = Some(3.0);
    failed.response = Some(json!({"status": "error", "data": null, "error": {"code": "tool_timeout",
        "category": "dependency", "message": format!("{}{}", hostile("message"), huge("M")), "retryable": true},
        "evidence": []}));
    failed.receipts = Some(vec![]);
    let document =
        TraceDocument { trace: Trace { entries: vec![activation, call, refused, failed] }, seal: None };
    let answer = json!({
        "status": "error",
        "answer": format!("The job {} failed with tool_timeout (ev-0123456789abcdef). \u{202E}gnp.exe", hostile("answer")),
        "skillName": "job-status",
        "claims": [
            {"text": format!("The job {}", hostile("answer")), "kind": "record", "evidenceIds": ["ev-0123456789abcdef", hostile("claim-id")]},
            {"text": format!("{}{}", hostile("claim"), huge("C")), "kind": "aggregate", "evidenceIds": ["ev-0123456789abcdef"]}],
        "error": {"code": "tool_timeout", "category": "dependency", "message": format!("{}{}", hostile("answer-error"), huge("E")), "retryable": true},
        "uncertainty": [hostile("note")],
    });
    let title = format!("{}{}", hostile("title"), huge("T"));
    let (page, verdict) = review_with_verdict(
        &document,
        Err::<(), _>("no key"),
        &answer,
        &skills,
        Mode::Review,
        Some(&title),
        input_bytes(&document, &answer),
    );
    assert!(!page.contains("<script") && !page.contains("<img") && !page.contains("<a href=\"javascript"));
    std::fs::write(out.join("hostile.html"), page).unwrap();
    let mut row = expectation(
        "hostile",
        "hostile",
        "hostile.html",
        verdict.accepted,
        verdict.rule.map(|r| r.as_str()),
        &answer,
    );
    row["canary"] = json!(CANARY);
    row["hugeChars"] = json!(MIB);
    row
}

/// A trace of 1,000 entries: an activation and 999 calls of one tool,
/// each with arguments, a receipt and an evidence item.
fn thousand_entry_page(out: &Path) -> Value {
    let skills = SkillSet::builtin();
    let mut activation = entry(1, EntryKind::SkillActivation);
    activation.skill = Some("trend-scan".into());
    activation.sha256 = Some(skills.get("trend-scan").unwrap().sha256.clone());
    let mut entries = vec![activation];
    for attempt in 1..1000u32 {
        let mut call = entry(u64::from(attempt) + 1, EntryKind::ToolCall);
        call.name = Some("fetch_trend_signals".into());
        call.args = Some(json!({"limit": 3}));
        call.attempt = Some(attempt);
        call.duration_ms = Some(f64::from(attempt % 17) + 0.25);
        call.response = Some(
            json!({"status": "success", "data": {"signals": [{"title": format!("Story {attempt}"),
            "url": format!("https://example.com/{attempt}")}]}, "error": null, "evidence": [
            {"evidenceId": format!("ev-{attempt:016x}"), "source": "hacker_news_front_page", "provenance": "mock",
             "reference": format!("https://example.com/{attempt}")}]}),
        );
        call.receipts = Some(vec![json!({"capability": "public_web", "target": "hn.algolia.com",
            "status": "ok", "bytes": 2048 + attempt, "durationUs": 900 + attempt})]);
        entries.push(call);
    }
    let document = TraceDocument { trace: Trace { entries }, seal: None };
    let answer = json!({"status": "success", "answer": "Story 1 leads the front page (ev-0000000000000001).",
        "skillName": "trend-scan", "claims": [{"text": "Story 1 leads the front page", "kind": "record",
        "evidenceIds": ["ev-0000000000000001"]}], "error": null, "uncertainty": []});
    let (page, verdict) = review_with_verdict(
        &document,
        Err::<(), _>("unsigned"),
        &answer,
        &skills,
        Mode::Review,
        Some("1,000 trace entries"),
        input_bytes(&document, &answer),
    );
    std::fs::write(out.join("thousand.html"), page).unwrap();
    let mut row = expectation(
        "thousand",
        "thousand",
        "thousand.html",
        verdict.accepted,
        verdict.rule.map(|r| r.as_str()),
        &answer,
    );
    row["entries"] = json!(1000);
    row
}

#[test]
fn review_pages_in_chromium() {
    let modules = node_modules();
    let target = root().join("target");
    let out = target.join("review-pages");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let (mut manifest, rows) = catalogue_pages(&out);
    std::fs::write(out.join("index.html"), index_page("Harmonia catalogue", &rows)).unwrap();
    manifest.push(json!({"kind": "index", "name": "index", "file": "index.html", "rows": rows.len()}));
    manifest.push(hostile_page(&out));
    manifest.push(thousand_entry_page(&out));
    let manifest_path = out.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let screenshots = target.join("review-screenshots");
    std::fs::create_dir_all(&screenshots).unwrap();
    let status = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check.cjs"))
        .arg(&manifest_path)
        .env("REVIEW_NODE_MODULES", &modules)
        .env("REVIEW_CHROMIUM", CHROMIUM)
        .env("REVIEW_SCREENSHOTS", &screenshots)
        .status()
        .expect("node runs");
    assert!(status.success(), "the review pages failed in Chromium (the browser checks' output is above)");
}
