//! A plugin author's first hour (issue 29): `harmonia new` writes a project
//! in each language and world that builds and passes conformance, and each
//! classic mistake gets a message naming its cause, in the conformance
//! report, in the debug log and in `harmonia call`'s hint, never in the
//! envelope.
//!
//! The mistakes, one test each: data that is not a JSON object, an
//! undeclared error code, an uncaught exception, a filesystem call, an
//! endless loop, printing the answer to stdout. Each is checked on the
//! Rust hostile guests where one exists, and on one Python and one
//! JavaScript component: the workspace example of `harmonia new`, built
//! once per language with a switch that makes each mistake on the input
//! `{"mistake": NAME}` (conformance never sends that key, so the same
//! component is the workspace world's conformance subject). The public
//! world's Python and JavaScript templates are built and checked by
//! `tests/all/foreign_plugins.rs`; here, Rust in both worlds.
//!
//! The foreign toolchains come from `scripts/install-test-deps.sh`.

use harmonia_testkit::hosts::guest_path;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const INSTALL: &str = "scripts/install-test-deps.sh";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ sits in the repository").to_owned()
}

/// This test's directory: inside the checkout, so the projects' build
/// scripts find the pinned toolchains in target/test-deps.
fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("first-hour");
    std::fs::create_dir_all(&dir).expect("create the work directory");
    dir
}

/// A config with this test's compile cache and a 1 s deadline cap, so an
/// endless loop ends quickly.
fn config() -> &'static Path {
    static CONFIG: OnceLock<PathBuf> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let path = work_dir().join("harmonia.toml");
        let cache = work_dir().join("cache");
        std::fs::write(&path, format!("[cache]\ndir = {:?}\n\n[limits]\nmax_deadline_ms = 1000\n", cache))
            .expect("write the config");
        path
    })
}

use crate::support::harmonia_with as harmonia;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `harmonia new` into the work directory (replacing an earlier run's).
fn new_project(tool: &str, lang: &str, world: &str) -> PathBuf {
    let dir = work_dir().join(format!("{lang}-{world}"));
    let _ = std::fs::remove_dir_all(&dir);
    let output =
        harmonia(&["new", tool, "--lang", lang, "--world", world, "--dir"]).arg(&dir).output().unwrap();
    assert!(output.status.success(), "harmonia new: {}", text(&output.stderr));
    assert!(text(&output.stdout).contains("harmonia conformance"), "{}", text(&output.stdout));
    dir
}

/// Insert `switch` in `file` right after the line holding `anchor`.
fn insert_after(file: &Path, anchor: &str, switch: &str) {
    let source = std::fs::read_to_string(file).unwrap();
    let at = source.find(anchor).unwrap_or_else(|| panic!("{anchor} not in {}", file.display()));
    let end = at + source[at..].find('\n').unwrap() + 1;
    std::fs::write(file, format!("{}{switch}{}", &source[..end], &source[end..])).unwrap();
}

/// The Python workspace project with its mistakes switch, built once.
fn python_component() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = new_project("weekday_mistakes", "python", "workspace");
        let logic = dir.join("src/weekday_mistakes.py");
        insert_after(
            &logic,
            "input_text):",
            r#"    import json as _json

    mistake = _json.loads(input_text).get("mistake") if input_text.startswith('{"mistake"') else None
    if mistake == "data":
        return ht.Output([1, 2, 3], [])
    if mistake == "undeclared":
        raise ht.ToolError(ht.ErrorSpec("weekday_parse_failed", ht.VALIDATION, False, "No weekday."))
    if mistake == "exception":
        return ht.Output({"first": posts_seen[0]}, [])  # noqa: F821 - the bug under test
    if mistake == "filesystem":
        with open("/data/posts.csv") as posts:
            return ht.Output({"posts": posts.read()}, [])
    if mistake == "loop":
        while True:
            pass
    if mistake == "stdout":
        print(_json.dumps({"counted": 0}))
        return None
"#,
        );
        build_foreign(&dir, "weekday_mistakes", "target/test-deps/venv/bin/componentize-py")
    })
}

/// The JavaScript workspace project with its mistakes switch, built once.
fn js_component() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = new_project("weekday_mistakes", "js", "workspace");
        let logic = dir.join("src/weekday_mistakes.js");
        insert_after(
            &logic,
            "export function run(workspace, inputText) {",
            r#"  const mistake = inputText.startsWith('{"mistake"') ? JSON.parse(inputText).mistake : null;
  if (mistake === 'data') return { data: [1, 2, 3], evidence: [] };
  if (mistake === 'undeclared') throw new ht.ToolError({ code: 'weekday_parse_failed', category: ht.VALIDATION, retryable: false, message: 'No weekday.' });
  if (mistake === 'exception') { const postsSeen = undefined; return { data: { first: postsSeen[0] }, evidence: [] }; }
  if (mistake === 'loop') for (;;);
  if (mistake === 'stdout') { console.log(JSON.stringify({ counted: 0 })); return undefined; }
"#,
        );
        build_foreign(&dir, "weekday_mistakes", "target/test-deps/node/node_modules/.bin/componentize-js")
    })
}

fn build_foreign(dir: &Path, tool: &str, toolchain: &str) -> PathBuf {
    assert!(repo_root().join(toolchain).exists(), "{toolchain} is missing: run {INSTALL} first");
    let output = Command::new(dir.join("build.sh")).output().expect("run build.sh");
    assert!(output.status.success(), "{}/build.sh failed: {}", dir.display(), text(&output.stderr));
    let component = dir.join(format!("{tool}.wasm"));
    assert!(component.exists(), "build.sh wrote {}", component.display());
    component
}

/// A Rust project from `harmonia new`, built once per world in the guests'
/// target directory (the SDK and its dependencies are already built there).
fn rust_component(world: &'static str) -> &'static Path {
    static PUBLIC: OnceLock<PathBuf> = OnceLock::new();
    static WORKSPACE: OnceLock<PathBuf> = OnceLock::new();
    let cell = if world == "public" { &PUBLIC } else { &WORKSPACE };
    cell.get_or_init(|| build_rust(world))
}

fn build_rust(world: &str) -> PathBuf {
    let tool = format!("rust_{world}_tool");
    let dir = new_project(&tool, "rust", world);
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../wasm-guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", text(&build.stderr));
    target.join(format!("wasm32-wasip2/release/{tool}.wasm"))
}

/// `harmonia conformance --json` on one component: its report.
fn conformance(component: &Path) -> Value {
    let output = harmonia(&["conformance", "--json", "--quiet", "--config"])
        .arg(config())
        .arg(component)
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", text(&output.stderr)));
    reports[0].clone()
}

fn assert_passes(report: &Value) {
    let failed: Vec<&Value> =
        report["checks"].as_array().unwrap().iter().filter(|check| check["passed"] != true).collect();
    assert!(failed.is_empty() && report["passed"] == true, "{}: {failed:#?}", report["plugin"]);
    assert_eq!(report["checks"].as_array().unwrap().len(), 20);
}

/// What one `harmonia call` printed: the envelope, and stderr.
struct Called {
    envelope: Value,
    stderr: String,
}

fn call(tool: &str, component: &Path, input: &str, debug: bool) -> Called {
    let mut command =
        harmonia(&["call", tool, "--mock", "--quiet", "--workspace", "ws_demo", "--input", input]);
    command.arg("--config").arg(config()).arg("--plugin").arg(component);
    if debug {
        command.env("HARMONIA_LOG", "debug");
    }
    let Output { status, stdout, stderr } = command.output().unwrap();
    assert!(status.success(), "{}", text(&stderr));
    let envelope = serde_json::from_slice(&stdout).unwrap_or_else(|_| panic!("not JSON: {}", text(&stdout)));
    Called { envelope, stderr: text(&stderr) }
}

/// The mistake's call, with and without debug logging: the envelope is
/// `expected_code` with the contract's fixed message and none of `causes`;
/// the debug log names every cause, and so does the hint without it,
/// which also says how to see more.
fn assert_named(tool: &str, component: &Path, input: &str, expected_code: &str, causes: &[&str]) {
    let quiet = call(tool, component, input, false);
    let envelope = &quiet.envelope;
    assert_eq!(envelope["error"]["code"], expected_code, "{}: {envelope}", component.display());
    for cause in causes {
        assert!(!envelope.to_string().contains(cause), "the envelope stays fixed: {envelope}");
        assert!(quiet.stderr.contains(cause), "the hint names `{cause}`: {}", quiet.stderr);
    }
    assert!(quiet.stderr.contains("HARMONIA_LOG=debug"), "{}", quiet.stderr);
    let debug = call(tool, component, input, true);
    assert_eq!(&debug.envelope, envelope);
    let logged: Vec<&str> = debug
        .stderr
        .lines()
        .filter(|line| {
            ["call.diagnostic", "guest.stdout", "guest.stderr"].iter().any(|event| line.contains(event))
        })
        .collect();
    for cause in causes {
        assert!(
            logged.iter().any(|line| line.contains(cause)),
            "the debug log names `{cause}`:\n{}",
            debug.stderr
        );
    }
    assert!(!debug.stderr.contains("HARMONIA_LOG=debug"), "no hint when the log is on: {}", debug.stderr);
}

fn mistake(name: &str) -> String {
    format!(r#"{{"mistake": "{name}"}}"#)
}

#[test]
fn non_object_data_names_the_rule_and_what_it_got() {
    let rule = "data must be a JSON object, got an array";
    assert_named(
        "hostile_not_object",
        guest_path("hostile-not-object"),
        "{}",
        "tool_execution_failed",
        &[rule],
    );
    let report = conformance(guest_path("hostile-not-object"));
    let inputs = &report["checks"][5];
    assert_eq!(inputs["id"], "envelope.inputs");
    assert!(inputs["reason"].as_str().unwrap().contains(rule), "{inputs}");
    for component in [python_component(), js_component()] {
        assert_named("weekday_mistakes", component, &mistake("data"), "tool_execution_failed", &[rule]);
    }
}

#[test]
fn an_undeclared_code_is_named_with_the_declared_ones() {
    assert_named(
        "hostile_undeclared_error",
        guest_path("hostile-undeclared-error"),
        "{}",
        "tool_execution_failed",
        &[
            "error code `made_up_code` is not declared; declared: dependency_unavailable, provider_request_rejected",
        ],
    );
    let declared = "error code `weekday_parse_failed` is not declared; declared: invalid_input, authorization_failed, \
                    dependency_unavailable, provider_request_rejected, tool_execution_failed, tool_timeout";
    for component in [python_component(), js_component()] {
        assert_named(
            "weekday_mistakes",
            component,
            &mistake("undeclared"),
            "tool_execution_failed",
            &[declared],
        );
    }
}

/// The 1-based line of `file` (a project's source) holding `needle`.
fn line_of(component: &Path, file: &str, needle: &str) -> usize {
    let source = std::fs::read_to_string(component.parent().unwrap().join("src").join(file)).unwrap();
    source.lines().position(|line| line.contains(needle)).expect("the needle is in the source") + 1
}

#[test]
fn an_uncaught_exception_is_named_with_its_line() {
    let python = python_component();
    let line = line_of(python, "weekday_mistakes.py", "posts_seen[0]");
    let named = format!("NameError: name 'posts_seen' is not defined at weekday_mistakes.py:{line}");
    assert_named("weekday_mistakes", python, &mistake("exception"), "tool_execution_failed", &[&named]);
    // SpiderMonkey's message, and the file, line and column it was thrown at.
    let js = js_component();
    let line = line_of(js, "weekday_mistakes.js", "postsSeen[0]");
    let named =
        format!("TypeError: can't access property 0, postsSeen is undefined at weekday_mistakes.js:{line}:");
    assert_named("weekday_mistakes", js, &mistake("exception"), "tool_execution_failed", &[&named]);
}

#[test]
fn a_filesystem_call_is_named_and_explained() {
    assert_named(
        "weekday_mistakes",
        python_component(),
        &mistake("filesystem"),
        "tool_execution_failed",
        &["FileNotFoundError", "'/data/posts.csv'", "a tool has no filesystem or network"],
    );
}

#[test]
fn an_endless_loop_is_named() {
    let cause = "with the tool still running (an endless loop";
    assert_named("hostile_loop", guest_path("hostile-loop"), "{}", "tool_timeout", &[cause]);
    for component in [python_component(), js_component()] {
        assert_named("weekday_mistakes", component, &mistake("loop"), "tool_timeout", &[cause]);
    }
}

#[test]
fn printing_the_answer_to_stdout_is_named() {
    let chatty = call("hostile_chatty", guest_path("hostile-chatty"), "{}", false);
    assert_eq!(chatty.envelope["status"], "success");
    assert!(
        chatty.stderr.contains("bytes to stdout (a tool answers only through its return value")
            && chatty.stderr.contains("HARMONIA_LOG=debug"),
        "{}",
        chatty.stderr
    );
    assert_named(
        "weekday_mistakes",
        python_component(),
        &mistake("stdout"),
        "tool_execution_failed",
        &["run returned NoneType, not ht.Output"],
    );
    // What it printed: counted in the hint, whole in the debug log.
    let printed = call("weekday_mistakes", python_component(), &mistake("stdout"), false);
    assert!(printed.stderr.contains("the tool wrote 15 bytes to stdout"), "{}", printed.stderr);
    let logged = call("weekday_mistakes", python_component(), &mistake("stdout"), true);
    assert!(
        logged
            .stderr
            .lines()
            .any(|line| line.contains("guest.stdout") && line.contains(r#"{\"counted\": 0}"#)),
        "{}",
        logged.stderr
    );
    // The JavaScript template is built without stdio, so console output is
    // dropped; what is named is the missing answer.
    assert_named(
        "weekday_mistakes",
        js_component(),
        &mistake("stdout"),
        "tool_execution_failed",
        &["run returned undefined, not {data, evidence}"],
    );
}

#[test]
fn every_language_and_world_from_harmonia_new_passes_conformance() {
    for component in
        [rust_component("public"), rust_component("workspace"), python_component(), js_component()]
    {
        let report = conformance(component);
        assert_passes(&report);
        // A 404 on `engagement()` reaches a workspace tool as `rejected`.
        let checks = report["checks"].as_array().unwrap();
        let http_404 = checks.iter().find(|check| check["id"] == "fault.http_404").unwrap();
        let expected = if report["tool"] == "rust_public_tool" {
            "dependency_unavailable"
        } else {
            "provider_request_rejected"
        };
        assert_eq!(http_404["reason"], format!("{expected}, nothing leaked"), "{}", report["plugin"]);
    }
}

#[test]
fn a_workspace_tool_called_without_a_workspace_says_why() {
    let output = harmonia(&["call", "get_operator_feed", "--mock"]).output().unwrap();
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["error"]["code"], "authorization_failed");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("no workspace is bound") && stderr.contains("--workspace ID"),
        "stderr says why: {stderr}"
    );
    let bound =
        harmonia(&["call", "get_operator_feed", "--mock", "--workspace", "ws_demo"]).output().unwrap();
    assert_eq!(text(&bound.stderr), "", "nothing to say when it answers");
}

#[test]
fn harmonia_new_refuses_a_bad_name_and_a_directory_with_files() {
    let output = harmonia(&["new", "Weekday", "--lang", "python"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("lowercase words joined by `_`"), "{}", text(&output.stderr));
    let taken = work_dir().join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("keep.txt"), "mine").unwrap();
    let output = harmonia(&["new", "some_tool", "--lang", "js", "--dir"]).arg(&taken).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("is not empty"), "{}", text(&output.stderr));
    assert_eq!(std::fs::read_to_string(taken.join("keep.txt")).unwrap(), "mine");
}

/// `harmonia inspect --json` of a component.
fn inspect(component: &Path) -> Value {
    let output = harmonia(&["inspect", "--json", "--quiet", "--config"])
        .arg(config())
        .arg(component)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("not JSON: {}", text(&output.stderr)))
}

fn read_doc(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The names in backticks on the guide's table row starting with `row`.
fn backticked(guide: &str, row: &str) -> std::collections::BTreeSet<String> {
    let line = guide.lines().find(|line| line.starts_with(row)).unwrap_or_else(|| panic!("no row {row}"));
    let cells: Vec<&str> = line.split('|').collect();
    cells[2].split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

fn keys(value: &Value) -> std::collections::BTreeSet<String> {
    value.as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn the_guide_counts_and_import_lists_match_the_code() {
    // Every "N checks" in the guide, the README and the templates' READMEs.
    let checks = harmonia_conformance::check_ids().len();
    for doc in [
        "docs/plugin-authors.md",
        "README.md",
        "templates/python-tool/README.md",
        "templates/js-tool/README.md",
    ] {
        let text = read_doc(doc);
        let words: Vec<&str> = text.split_whitespace().collect();
        let counts: Vec<&str> =
            words.windows(2).filter(|pair| pair[1].starts_with("checks")).map(|pair| pair[0]).collect();
        for count in counts.iter().filter(|count| count.chars().all(|c| c.is_ascii_digit())) {
            assert_eq!(count.parse::<usize>().unwrap(), checks, "{doc} says {count} checks");
        }
        assert!(counts.contains(&checks.to_string().as_str()) || doc == "README.md", "{doc} gives the count");
    }

    let guide = read_doc("docs/plugin-authors.md");
    // Section 7.6: the Rust template's imports, listed between markers.
    let listed: Vec<&str> = guide
        .split("<!-- rust-template-imports -->")
        .nth(1)
        .expect("the guide lists the Rust template's imports")
        .lines()
        .filter_map(|line| line.strip_prefix("- `")?.split('`').next())
        .collect();
    let report = inspect(rust_component("public"));
    let mut imported: Vec<String> = report["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|import| import.as_str().unwrap().split('@').next().unwrap().to_owned())
        .collect();
    imported.sort();
    let mut listed: Vec<String> = listed.iter().map(|name| (*name).to_owned()).collect();
    listed.sort();
    assert_eq!(listed, imported, "section 7.6 lists the Rust template's imports");

    // CPython's counts, in section 3 and in the limits table.
    let counts = &inspect(python_component())["counts"];
    let (instances, memories, tables) = (&counts["coreInstances"], &counts["memories"], &counts["tables"]);
    assert!(guide.contains(&format!("instantiates {instances} core modules")), "{counts}");
    assert!(guide.contains(&format!("CPython needs {instances} / {memories} / {tables}")), "{counts}");

    // Section 7.7: the fields of each workspace read, from the contract's
    // document and the host's job summary.
    let document = harmonia_contract::workspace_document::WorkspaceDocument::parse(
        harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON,
    )
    .unwrap();
    let engagement: Value = serde_json::from_str(&document.engagement_json()).unwrap();
    let mut fields = keys(&engagement);
    fields.extend(keys(&engagement["posts"][0]));
    assert_eq!(backticked(&guide, "| `engagement()`"), fields, "engagement fields");
    // The feed's document, and the WIT record `feed-read` around it.
    let mut feed: std::collections::BTreeSet<String> = document.feed.keys().cloned().collect();
    feed.extend(["document", "updated-at", "read-at"].map(String::from));
    assert_eq!(backticked(&guide, "| `feed()`"), feed, "feed fields");
    let job = harmonia_tool_common::job::summary(&document.jobs[0]);
    let mut fields = keys(&job);
    fields.extend(keys(&job["actions"][0]));
    fields.extend(keys(&job["verificationSummary"][0]));
    assert_eq!(backticked(&guide, "| `job(id)`"), fields, "job summary fields");
}
