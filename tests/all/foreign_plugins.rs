//! Plugins in Python and JavaScript: each template under `templates/`
//! builds with its one command (`build.sh`), loads in a [`Host`], passes
//! every conformance check, answers in mock mode exactly as the Rust
//! template's rules say, and its logic's own tests pass natively.
//!
//! The toolchains come from `scripts/install-test-deps.sh` (componentize-py
//! in `target/test-deps/venv`, componentize-js in `target/test-deps/node`);
//! when they are missing every test here fails, naming that script.
//!
//! `reproducibility` builds each template a second time and prints whether
//! the bytes match; it asserts nothing about it (docs/plugin-authors.md
//! records what was measured).

use harmonia_conformance::{self as conformance, Options, PluginReport};
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::expected_evidence_id;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const INSTALL: &str = "scripts/install-test-deps.sh";

/// One foreign-language template.
#[derive(Clone, Copy, Debug)]
struct Template {
    /// Directory under `templates/`.
    dir: &'static str,
    /// The toolchain's entry point, relative to the repository root.
    toolchain: &'static str,
}

const PYTHON: Template =
    Template { dir: "python-tool", toolchain: "target/test-deps/venv/bin/componentize-py" };
const JS: Template =
    Template { dir: "js-tool", toolchain: "target/test-deps/node/node_modules/.bin/componentize-js" };

/// A built component.
#[derive(Debug)]
struct Built {
    path: PathBuf,
    bytes: Vec<u8>,
    took: Duration,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository").to_owned()
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("foreign-plugins");
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// Run the template's `build.sh` into `out`; a missing toolchain or a
/// failed build fails the test, naming the install script.
fn build(template: Template, out: &Path) -> Built {
    let root = repo_root();
    assert!(
        root.join(template.toolchain).exists(),
        "{} is missing: run {INSTALL} first (it installs the pinned componentize-py and componentize-js)",
        template.toolchain
    );
    let script = root.join("templates").join(template.dir).join("build.sh");
    let started = Instant::now();
    let output = Command::new(&script).arg(out).output().expect("run build.sh");
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "{} failed ({}); is the toolchain installed? run {INSTALL}.\n{}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(out).expect("build.sh wrote its output");
    Built { path: out.to_owned(), bytes, took }
}

/// Each template built once per test run, shared by the tests.
fn built(template: Template) -> &'static Built {
    static PYTHON_BUILT: OnceLock<Built> = OnceLock::new();
    static JS_BUILT: OnceLock<Built> = OnceLock::new();
    let cell = if template.dir == PYTHON.dir { &PYTHON_BUILT } else { &JS_BUILT };
    cell.get_or_init(|| build(template, &out_dir().join(format!("{}.wasm", template.dir))))
}

/// The config the foreign templates load under: the default one (CPython's
/// filesystem and sockets imports are linked, denied; pooling fits its 14
/// core instances), with the cache in this test's directory.
fn foreign_config() -> HostConfig {
    let mut config = HostConfig::default();
    config.cache.dir = Some(out_dir().join("cache"));
    config
}

fn assert_conformant(report: &PluginReport) {
    let failed: Vec<String> = report
        .checks
        .iter()
        .filter(|check| !check.passed)
        .map(|check| format!("{}: {}", check.id, check.reason))
        .collect();
    assert!(failed.is_empty() && report.passed, "{} failed checks:\n{}", report.plugin, failed.join("\n"));
    assert_eq!(report.tool.as_deref(), Some("hn_top_story"));
    let ids: Vec<&str> = report.checks.iter().map(|check| check.id.as_str()).collect();
    assert_eq!(ids, conformance::check_ids(), "every check ran");
}

fn conformance_of(template: Template, config: HostConfig) -> PluginReport {
    let component = built(template);
    let options = Options { config, ..Options::default() };
    conformance::run(&component.path.to_string_lossy(), component.bytes.clone(), &options)
}

#[test]
fn python_template_passes_every_conformance_check() {
    assert_conformant(&conformance_of(PYTHON, foreign_config()));
}

#[test]
fn js_template_passes_every_conformance_check() {
    assert_conformant(&conformance_of(JS, foreign_config()));
}

#[test]
fn js_template_imports_nothing_but_its_capability() {
    // Built with every WASI feature of the JS runtime disabled, the
    // component imports only harmonia:tools, so it loads and passes under
    // the default config (pooling on, filesystem and sockets refused).
    let mut config = HostConfig::default();
    config.cache.dir = Some(out_dir().join("cache"));
    assert_conformant(&conformance_of(JS, config.clone()));
    config.plugins.builtin = false;
    config.plugins.files = vec![built(JS).path.clone()];
    let host = Host::new(config).expect("the JS template loads under the default config");
    let info = host.tools().next().expect("one tool");
    let mut imports: Vec<&str> =
        info.imports.iter().map(|name| name.split('@').next().unwrap_or(name)).collect();
    imports.sort_unstable();
    assert_eq!(imports, ["harmonia:tools/public-web", "harmonia:tools/types"], "{:?}", info.imports);
}

fn mock_host(template: Template) -> Host {
    let mut config = foreign_config();
    config.mock = true;
    config.plugins.builtin = false;
    config.plugins.files = vec![built(template).path.clone()];
    Host::new(config).unwrap_or_else(|error| panic!("{} does not load: {error}", template.dir))
}

/// A large component's SHA-256 is computed alongside the shape check and
/// the cache lookup; its pin must still refuse other bytes before anything
/// runs, and its counts must still meet the configured limits.
#[test]
fn a_large_component_is_held_to_its_pin_and_its_limits() {
    let python = built(PYTHON);
    assert!(python.bytes.len() > 1 << 20, "large enough to be hashed on the side");
    let mut config = foreign_config();
    config.plugins.builtin = false;
    config.plugins.files = vec![python.path.clone()];
    let name = python.path.file_name().unwrap().to_string_lossy().into_owned();

    config.plugins.pins.insert(name.clone(), "0".repeat(64));
    let Err(error) = Host::new(config.clone()) else { panic!("a wrong pin refuses it") };
    let error = error.to_string();
    assert!(error.contains("does not match the pinned"), "{error}");

    let own: String = Sha256::digest(&python.bytes).iter().map(|byte| format!("{byte:02x}")).collect();
    config.plugins.pins.insert(name, own);
    Host::new(config.clone()).expect("its own pin loads");

    config.limits.max_core_instances_per_component = 8;
    let Err(error) = Host::new(config) else { panic!("14 core instances are over 8") };
    let error = error.to_string();
    assert!(
        error.contains("14 core module instances")
            && error.contains("limits.max_core_instances_per_component"),
        "{error}"
    );
}

/// The envelope of one mock call, as JSON.
fn call(host: &Host, input: &str) -> Value {
    host.call("hn_top_story", input, &CallContext::default()).expect("hn_top_story is loaded").to_value()
}

fn error_code(envelope: &Value) -> Option<&str> {
    envelope["error"]["code"].as_str()
}

fn answers_in_mock_mode(template: Template) {
    let host = mock_host(template);
    let envelope = call(&host, r#"{"min_points": 600}"#);
    let url = "https://bytecodealliance.org/articles/wasmtime-48-lts";
    assert_eq!(
        envelope,
        json!({"status": "success", "error": null,
            "data": {"found": true, "title": "Wasmtime 48 is a long-term-support release", "url": url, "points": 612},
            "evidence": [
                {"evidenceId": expected_evidence_id("hacker_news_algolia", "mock", None),
                 "source": "hacker_news_algolia", "provenance": "mock", "reference": null},
                {"evidenceId": expected_evidence_id("hacker_news_story", "mock", Some(url)),
                 "source": "hacker_news_story", "provenance": "mock", "reference": url}]}),
        "{}",
        template.dir
    );
    let none = call(&host, r#"{"min_points": 100000}"#);
    assert_eq!(none["data"], json!({"found": false}), "{}", template.dir);
    assert_eq!(none["evidence"].as_array().map(Vec::len), Some(1), "{}", template.dir);
}

#[test]
fn python_template_answers_in_mock_mode() {
    answers_in_mock_mode(PYTHON);
}

#[test]
fn js_template_answers_in_mock_mode() {
    answers_in_mock_mode(JS);
}

/// Deeply nested input: `depth` brackets inside the `min_points` member.
fn nested(depth: usize) -> String {
    format!(r#"{{"min_points": {}{}}}"#, "[".repeat(depth - 1), "]".repeat(depth - 1))
}

#[test]
fn both_templates_apply_the_rust_sdks_input_rules() {
    // (input, the code it must get, `None` for success), as the Rust SDK
    // (guest/sdk/src/input.rs, serde_json) reads it.
    let cases: Vec<(String, Option<&str>)> = vec![
        ("{}".into(), None),
        (r#"{"min_points": null}"#.into(), None),
        (r#"{"min_points": -5}"#.into(), None),
        (r#"{"min_points": 18446744073709551615}"#.into(), None),
        (r#"{"min_points": 5.0}"#.into(), Some("invalid_input")),
        (r#"{"min_points": 5e0}"#.into(), Some("invalid_input")),
        (r#"{"min_points": -0}"#.into(), Some("invalid_input")),
        (r#"{"min_points": 18446744073709551616}"#.into(), Some("invalid_input")),
        (r#"{"min_points": "5"}"#.into(), Some("invalid_input")),
        (r#"{"min_points": true}"#.into(), Some("invalid_input")),
        (r#"{"min_points": NaN}"#.into(), Some("invalid_input")),
        (r#"{"min_points": "\ud800"}"#.into(), Some("invalid_input")),
        (r#"{"other": 1}"#.into(), Some("invalid_input")),
        (r#"{"min_points": 1, "min_points": 2.5}"#.into(), Some("invalid_input")),
        ("[]".into(), Some("invalid_input")),
        ("".into(), Some("invalid_input")),
        // Nesting: 127 levels parse (and are then refused for their type),
        // 128 and more are refused before parsing; neither traps.
        (nested(127), Some("invalid_input")),
        (nested(128), Some("invalid_input")),
        (nested(10_000), Some("invalid_input")),
        (format!("{}{}", "{\"a\":".repeat(5_000), "}".repeat(5_000)), Some("invalid_input")),
        // An open string of escaped quotes: a scanner that retried its string
        // pattern at every quote would run into the deadline (tool_timeout).
        (format!(r#"{{"min_points": "{}"#, r#"\""#.repeat(300_000)), Some("invalid_input")),
    ];
    let hosts = [(PYTHON, mock_host(PYTHON)), (JS, mock_host(JS))];
    for (input, expected) in &cases {
        let envelopes: Vec<Value> = hosts.iter().map(|(_, host)| call(host, input)).collect();
        for ((template, _), envelope) in hosts.iter().zip(&envelopes) {
            assert_eq!(error_code(envelope), *expected, "{} on {:.80}: {envelope}", template.dir, input);
        }
        assert_eq!(envelopes[0], envelopes[1], "the templates disagree on {input:.80}");
    }
}

#[test]
fn template_logic_tests_pass_natively() {
    let root = repo_root();
    assert!(root.join(PYTHON.toolchain).exists(), "{} is missing: run {INSTALL} first", PYTHON.toolchain);
    let python = Command::new(root.join("target/test-deps/venv/bin/python"))
        .args(["-m", "unittest", "-q"])
        .current_dir(root.join("templates/python-tool"))
        .env("PYTHONPATH", "src")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|error| panic!("run the venv's python (run {INSTALL}): {error}"));
    assert!(python.status.success(), "python unit tests:\n{}", String::from_utf8_lossy(&python.stderr));
    let node = Command::new("node")
        .args(["--test", "test/hn_top_story.test.js"])
        .current_dir(root.join("templates/js-tool"))
        .output()
        .unwrap_or_else(|error| panic!("run node (Node.js 20+, which {INSTALL} needs): {error}"));
    assert!(node.status.success(), "node unit tests:\n{}", String::from_utf8_lossy(&node.stdout));
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn reproducibility() {
    for template in [PYTHON, JS] {
        let first = built(template);
        let second = build(template, &out_dir().join(format!("{}-again.wasm", template.dir)));
        let same = first.bytes == second.bytes;
        println!(
            "{}: {} bytes in {:.1} s, then {} bytes in {:.1} s; {} (sha256 {} / {})",
            template.dir,
            first.bytes.len(),
            first.took.as_secs_f64(),
            second.bytes.len(),
            second.took.as_secs_f64(),
            if same { "byte for byte identical" } else { "the bytes differ: pin the file you ship" },
            &sha256(&first.bytes)[..16],
            &sha256(&second.bytes)[..16],
        );
    }
}
