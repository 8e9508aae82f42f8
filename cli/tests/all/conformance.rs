//! `harmonia conformance` on our six tools (all pass), the hostile guests
//! (each fails the check it should, for the reason it should) and the
//! plugin template built as a plugin author would build it.

use harmonia_testkit::hosts::guest_path;
use harmonia_testkit::tempdir::TempDir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn conformance(paths: &[PathBuf]) -> (Option<i32>, Vec<Value>) {
    let output = Command::new(env!("CARGO_BIN_EXE_harmonia"))
        .args(["conformance", "--json", "--deadline-cap-ms", "1000"])
        .args(paths)
        .env_remove("HARMONIA_CONFIG")
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code(), reports.as_array().unwrap().clone())
}

fn first_failure(report: &Value) -> (String, String) {
    let failed = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["passed"] == false)
        .expect("a failure");
    (failed["id"].as_str().unwrap().to_owned(), failed["reason"].as_str().unwrap().to_owned())
}

#[test]
fn our_six_tools_pass_every_check() {
    let dir = TempDir::new("conformance-builtin");
    let paths: Vec<PathBuf> = harmonia_artifacts::BUILTIN_TOOLS
        .iter()
        .map(|(name, bytes)| {
            let path = dir.path().join(format!("{name}.wasm"));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    let (code, reports) = conformance(&paths);
    for report in &reports {
        let failures: Vec<&Value> =
            report["checks"].as_array().unwrap().iter().filter(|check| check["passed"] == false).collect();
        assert!(failures.is_empty(), "{}: {failures:?}", report["tool"]);
        assert_eq!(report["checks"].as_array().unwrap().len(), 20);
    }
    assert_eq!(reports.len(), 6);
    assert_eq!(code, Some(0));
}

#[test]
fn each_hostile_guest_fails_the_check_it_should() {
    let expected: &[(&str, &str, &str)] = &[
        ("hostile-loop", "envelope.inputs", "tool_timeout"),
        ("hostile-oom", "envelope.inputs", "memory limit"),
        ("hostile-recursion", "envelope.inputs", "stack limit"),
        ("hostile-panic", "envelope.inputs", "fault before producing a result"),
        ("hostile-not-object", "envelope.inputs", "breaks the envelope contract"),
        ("hostile-invalid-json", "envelope.inputs", "breaks the envelope contract"),
        ("hostile-big-data", "envelope.inputs", "breaks the envelope contract"),
        ("hostile-evidence-flood", "envelope.inputs", "breaks the envelope contract"),
        ("hostile-undeclared-error", "envelope.inputs", "does not declare"),
        ("hostile-wrong-category", "envelope.inputs", "does not declare"),
        ("hostile-leaky-message", "envelope.inputs", "malformed input must be a validation error"),
        (
            "hostile-counter",
            "envelope.inputs",
            "returned success; malformed input must be a validation error",
        ),
        ("hostile-chatty", "envelope.inputs", "returned success; malformed input must be a validation error"),
        (
            "hostile-sockets",
            "envelope.inputs",
            "returned success; malformed input must be a validation error",
        ),
    ];
    let paths: Vec<PathBuf> = expected.iter().map(|(guest, ..)| guest_path(guest).to_owned()).collect();
    let (code, reports) = conformance(&paths);
    assert_eq!(code, Some(1));
    for ((guest, check, reason), report) in expected.iter().zip(&reports) {
        assert_eq!(report["passed"], false, "{guest}");
        let (failed, why) = first_failure(report);
        assert_eq!(&failed, check, "{guest}: {why}");
        assert!(why.contains(reason), "{guest}: {why}");
    }
    let counter = reports.iter().find(|report| report["tool"] == "hostile_counter").unwrap();
    let evidence =
        counter["checks"].as_array().unwrap().iter().find(|check| check["id"] == "evidence").unwrap();
    assert_eq!(evidence["reason"], "a successful call returned no evidence");
}

#[test]
fn denied_links_are_checked_and_refusing_them_fails_load_imports() {
    let (_, reports) = conformance(&[guest_path("hostile-sockets").to_owned()]);
    let denied =
        reports[0]["checks"].as_array().unwrap().iter().find(|c| c["id"] == "load.denied_links").unwrap();
    assert_eq!(denied["passed"], true, "{denied}");
    for attempt in ["preopens", "read_file", "list_root", "tcp_connect", "udp_bind", "resolve_name"] {
        assert!(denied["reason"].as_str().unwrap().contains(attempt), "{denied}");
    }

    let dir = TempDir::new("conformance-refuse");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[wasi]\ninert_filesystem_and_sockets = false\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_harmonia"))
        .args(["conformance", "--json", "--config"])
        .arg(&config)
        .arg(guest_path("hostile-sockets"))
        .env_remove("HARMONIA_CONFIG")
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    let (failed, why) = first_failure(&reports[0]);
    assert_eq!(failed, "load.imports", "{why}");
    assert!(
        why.contains("wasi:sockets/") && why.contains("wasi.inert_filesystem_and_sockets = false"),
        "{why}"
    );
}

#[test]
fn the_plugin_template_builds_and_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let template = root.join("templates/plugin-template");
    // Share the guests' target directory: the SDK and its dependencies are
    // already built there.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../wasm-guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&template)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let component = target.join("wasm32-wasip2/release/hn_top_story.wasm");
    let (code, reports) = conformance(&[component]);
    assert_eq!(reports[0]["tool"], "hn_top_story");
    assert!(reports[0]["passed"] == true, "{:#}", reports[0]);
    assert_eq!(code, Some(0));
}
