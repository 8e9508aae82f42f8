//! `harmonia review` and `harmonia demo --html`: the page a catalogue case
//! gets through the command line, with `harmonia validate`'s exit codes,
//! and the demo's page per scenario with its index. What the pages show in
//! a browser is tested in `review/tests/browser.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn review(case: &str, extra: &[&str]) -> Output {
    let key = std::fs::read_to_string(catalogue().join("trace-key.pub")).unwrap();
    let dir = catalogue().join(case);
    Command::new(env!("CARGO_BIN_EXE_harmonia"))
        .args(["review", "--key", key.trim(), "--trace"])
        .arg(dir.join("trace.json"))
        .arg("--answer")
        .arg(dir.join("answer.json"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn review_writes_the_page_with_the_verdict_and_validates_exit_codes() {
    let dir = scratch("cli");
    let accepted = dir.join("accepted.html");
    let output = review("grounded-job-status", &["--out", accepted.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("accepted; review written to"));
    let page = std::fs::read_to_string(&accepted).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("Content-Security-Policy"), "{page:.300}");
    assert!(page.contains("Accepted: every rule holds") && page.contains("Seal verified"));
    assert!(page.contains("id=\"claim-1\"") && page.contains("ev-ef188b4bd069e61a"));

    let refused = review("reject-authority-overreach", &[]);
    assert_eq!(refused.status.code(), Some(1));
    let page = String::from_utf8(refused.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "without --out the page is stdout");
    assert!(page.contains("Refused: rule <code class=\"rule\">mutation_claim</code>"), "{page:.2000}");
    assert!(page.contains("id=\"fault\""), "the phrase is marked in place");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("rejected: mutation_claim"));

    let missing = Command::new(env!("CARGO_BIN_EXE_harmonia"))
        .args(["review", "--trace", "/nonexistent/trace.json", "--answer", "/nonexistent/answer.json"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn demo_html_writes_a_page_per_scenario_and_an_index_of_verdicts() {
    let dir = scratch("demo");
    let output =
        Command::new(env!("CARGO_BIN_EXE_harmonia")).arg("demo").arg("--html").arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("Review pages: open"));
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".html") && name != "index.html")
        .collect();
    pages.sort();
    assert_eq!(index.matches("<tr><td><a href=").count(), pages.len(), "one index row per page");
    for page in &pages {
        assert!(index.contains(&format!("<a href=\"{page}\">")), "the index links {page}");
    }
    // Every catalogue case is a demo scenario, so each has its page.
    for case in std::fs::read_dir(catalogue()).unwrap().map(|entry| entry.unwrap().path()) {
        if case.join("expected.json").is_file() {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            assert!(pages.contains(&format!("{name}.html")), "no review page for {name}");
        }
    }
    let accepted = index.matches("✔</span> Accepted").count();
    assert!(accepted >= 8 && pages.len() - accepted >= 25, "{accepted} accepted of {}", pages.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
