//! The `harmonia` command as a user runs it: exit codes, one-line errors,
//! the envelope on stdout, every workspace source.

use harmonia_contract::envelope::Envelope;
use harmonia_testkit::hosts::guest_path;
use harmonia_testkit::server::{Loopback, Reply};
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

use crate::support::harmonia_with as harmonia;

fn run(command: &mut Command) -> Output {
    command.output().expect("run harmonia")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn envelope(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "exactly one line: {text}");
    let value: Value = serde_json::from_str(&text).unwrap();
    Envelope::from_value(&value).expect("a valid envelope");
    value
}

fn assert_one_line_failure(output: &Output, code: i32, needle: &str) {
    assert_eq!(output.status.code(), Some(code), "{}", stderr(output));
    let text = stderr(output);
    assert_eq!(text.trim_end().lines().count(), 1, "one line: {text}");
    assert!(text.contains(needle), "{needle} not in {text}");
    assert!(!text.contains("panicked"), "{text}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_usage_exits_2_with_one_line() {
    for args in [
        vec!["frobnicate"],
        vec!["call"],
        vec!["call", "fetch_trend_signals", "--nonsense"],
        vec!["validate", "--trace"],
        vec!["tools", "--json", "extra"],
        vec!["--\u{1F4A5}"],
    ] {
        let output = run(&mut harmonia(&args));
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let text = stderr(&output);
        assert_eq!(text.trim_end().lines().count(), 1, "{args:?}: {text}");
        assert!(!text.contains("panicked"));
    }
}

#[test]
fn call_prints_exactly_the_envelope_and_exits_0_for_errors_too() {
    let value = envelope(&run(&mut harmonia(&[
        "call",
        "fetch_trend_signals",
        "--mock",
        "--input",
        r#"{"limit": 2}"#,
    ])));
    assert_eq!(value["data"]["count"], 2);
    let value =
        envelope(&run(&mut harmonia(&["call", "fetch_trend_signals", "--mock", "--input", "not json"])));
    assert_eq!(value["error"]["code"], "invalid_input");
    let value = envelope(&run(&mut harmonia(&[
        "call",
        "get_job_status",
        "--mock",
        "--workspace",
        "ws_demo",
        "--input",
        r#"{"job_id": " "}"#,
    ])));
    assert_eq!(value["error"]["code"], "invalid_job_id");
    let value = envelope(&run(&mut harmonia(&["call", "get_operator_feed", "--mock"])));
    assert_eq!(value["error"]["code"], "authorization_failed", "no workspace bound");
    let value = envelope(&run(
        harmonia(&["call", "get_operator_feed", "--mock"]).env("HARMONIA_WORKSPACE", "ws_demo")
    ));
    assert_eq!(value["status"], "success");
}

#[test]
fn unknown_tools_and_bad_configs_fail_with_one_line() {
    assert_one_line_failure(&run(&mut harmonia(&["call", "no_such_tool"])), 1, "unknown tool `no_such_tool`");
    let dir = TempDir::new("cli-config");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[limits]\nmemory = 3\n").unwrap();
    let config = config.to_str().unwrap();
    assert_one_line_failure(&run(&mut harmonia(&["tools", "--config", config])), 1, "memory");
    assert_one_line_failure(&run(harmonia(&["tools"]).env("HARMONIA_CONFIG", config)), 1, "memory");
    assert_one_line_failure(
        &run(&mut harmonia(&["tools", "--config", "/no/such/file.toml"])),
        1,
        "/no/such/file.toml",
    );
    std::fs::write(dir.path().join("bad.toml"), "[[[").unwrap();
    let bad = dir.path().join("bad.toml");
    assert_one_line_failure(
        &run(&mut harmonia(&["tools", "--config", bad.to_str().unwrap()])),
        1,
        "invalid config",
    );
}

#[test]
fn sockets_imports_are_linked_denied_by_default_and_refusable() {
    let plugin = guest_path("hostile-sockets").to_str().unwrap();
    let value = envelope(&run(&mut harmonia(&["call", "hostile_sockets", "--plugin", plugin])));
    assert_eq!(value["data"], json!({"connected": false}));
    let output = run(&mut harmonia(&["inspect", plugin]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("(linked, denied)"), "{text}");
    assert!(text.contains("counts:  "), "{text}");

    let dir = TempDir::new("cli-refuse-sockets");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[wasi]\ninert_filesystem_and_sockets = false\n").unwrap();
    let config = config.to_str().unwrap();
    let output = run(&mut harmonia(&["call", "hostile_sockets", "--plugin", plugin, "--config", config]));
    assert_one_line_failure(&output, 1, "wasi.inert_filesystem_and_sockets = false");
    let output = run(&mut harmonia(&["inspect", plugin, "--config", config]));
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("refused: imports are not granted: `wasi:sockets/"), "{text}");
    assert!(text.contains("sha256:"), "{text}");
}

/// The built-in `get_job_status` written as a component file in `dir`,
/// with its bytes.
fn job_status_component(dir: &Path) -> (std::path::PathBuf, &'static [u8]) {
    let (_, bytes) =
        harmonia_artifacts::BUILTIN_TOOLS.iter().find(|(name, _)| *name == "get_job_status").unwrap();
    let path = dir.join("get_job_status.wasm");
    std::fs::write(&path, bytes).unwrap();
    (path, bytes)
}

#[test]
fn every_command_ends_quietly_when_stdout_is_closed() {
    let dir = TempDir::new("cli-closed-stdout");
    let (component, _) = job_status_component(dir.path());
    let component = component.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["tools"],
        &["tools", "--json"],
        &["inspect", component],
        &["inspect", "--json", component],
        &["conformance", component],
        &["call", "fetch_trend_signals", "--mock"],
        &["demo"],
    ];
    for args in commands {
        let mut child = harmonia(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn harmonia");
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let text = stderr(&output);
        assert!(!text.contains("panicked"), "{args:?}: {text}");
        assert!(text.is_empty(), "{args:?} said: {text}");
        assert!(matches!(output.status.code(), Some(0 | 1)), "{args:?}: {:?}", output.status);
    }
}

#[test]
fn inspect_shows_imports_exports_descriptor_and_hash() {
    let dir = TempDir::new("cli-inspect");
    let (path, bytes) = job_status_component(dir.path());
    let output = run(&mut harmonia(&["inspect", "--json", path.to_str().unwrap()]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["world"], "workspace-tool");
    assert_eq!(report["descriptor"]["name"], "get_job_status");
    assert_eq!(report["sha256"], harmonia_contract::digest::sha256_hex(bytes));
    assert!(
        report["imports"].as_array().unwrap().iter().any(|import| import == "harmonia:tools/workspace@0.1.0")
    );
    assert!(report["exports"].as_array().unwrap().iter().any(|export| export == "harmonia:tools/tool@0.1.0"));
}

#[test]
fn tools_lists_the_six_contracts() {
    let output = run(&mut harmonia(&["tools", "--json"]));
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["descriptor"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fetch_trend_signals",
            "search_trend_signals",
            "get_engagement_insights",
            "get_operator_feed",
            "get_job_status",
            "suggest_posting_windows"
        ]
    );
    let text = String::from_utf8(run(&mut harmonia(&["tools"])).stdout).unwrap();
    assert!(text.contains("get_job_status 0.1.0 (workspace scope, deadline 30 s)"), "{text}");
}

fn import(dir: &Path, document: &str) -> Output {
    let file = dir.join("workspace.json");
    std::fs::write(&file, document).unwrap();
    let db = dir.join("harmonia.db");
    run(&mut harmonia(&["workspace", "import", file.to_str().unwrap(), "--db", db.to_str().unwrap()]))
}

#[test]
fn workspace_import_then_call_on_the_sqlite_source() {
    let dir = TempDir::new("cli-sqlite");
    let output = import(dir.path(), harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("20 posts (18 measured), 2 jobs"));
    let broken =
        import(dir.path(), r#"{"workspaceId": "ws_demo", "posts": [{"postId": "p", "likes": "lots"}]}"#);
    assert_one_line_failure(&broken, 2, "$.posts[0].likes");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[workspace]\npath = \"harmonia.db\"\n").unwrap();
    let config = config.to_str().unwrap();
    for (tool, input) in [
        ("get_engagement_insights", "{}"),
        ("get_operator_feed", "{}"),
        ("get_job_status", r#"{"job_id": "job-7"}"#),
        ("suggest_posting_windows", "{}"),
    ] {
        let value = envelope(&run(&mut harmonia(&[
            "call",
            tool,
            "--config",
            config,
            "--workspace",
            "ws_demo",
            "--input",
            input,
        ])));
        assert_eq!(value["status"], "success", "{tool}: {value}");
        assert!(value["evidence"].as_array().unwrap().iter().all(|item| item["provenance"] == "live"));
    }
}

#[test]
fn the_http_source_reads_its_token_from_the_environment() {
    let server = Loopback::start();
    server.route(
        "/api/internal/job/job-1",
        Reply::Json(200, json!({"id": "job-1", "status": "done"}).to_string()),
    );
    let dir = TempDir::new("cli-http");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        format!(
            "[workspace]\nsource = \"http\"\nbase_url = \"{}\"\ntoken_env = \"HARMONIA_TEST_TOKEN\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let args = [
        "call",
        "get_job_status",
        "--config",
        config,
        "--workspace",
        "ws_9",
        "--input",
        r#"{"job_id": "job-1"}"#,
    ];
    let value = envelope(&run(harmonia(&args).env("HARMONIA_TEST_TOKEN", "secret-token")));
    assert_eq!(value["data"]["job"]["status"], "done");
    let request = &server.requests()[0];
    assert_eq!(request.headers["authorization"], "Bearer secret-token");
    assert_eq!(request.headers["x-workspace-id"], "ws_9");
    let value = envelope(&run(harmonia(&args).env_remove("HARMONIA_TEST_TOKEN")));
    assert_eq!(value["error"]["code"], "authorization_failed");
    // A token holding a line break is a configuration error, not an outage.
    let requests = server.requests().len();
    for token in ["secret\r\nx-injected: 1", "secret\n"] {
        let output = run(harmonia(&args).env("HARMONIA_TEST_TOKEN", token));
        assert_one_line_failure(&output, 1, "workspace.token_env");
        assert!(!stderr(&output).contains("secret"), "the token is not printed");
    }
    assert_eq!(server.requests().len(), requests, "no request with a broken token");
}

#[test]
fn validate_exits_2_for_unreadable_or_malformed_files() {
    let dir = TempDir::new("cli-validate");
    let good_answer =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status/answer.json");
    let good_trace = good_answer.with_file_name("trace.json");
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{{{").unwrap();
    let not_a_trace = dir.path().join("object.json");
    std::fs::write(&not_a_trace, r#"{"steps": []}"#).unwrap();
    for (trace, answer, needle) in [
        (dir.path().join("absent.json"), good_answer.clone(), "cannot read trace"),
        (garbage.clone(), good_answer.clone(), "not JSON"),
        (not_a_trace, good_answer.clone(), "malformed trace"),
        (good_trace.clone(), garbage, "not JSON"),
    ] {
        let output = run(harmonia(&["validate"]).arg("--trace").arg(&trace).arg("--answer").arg(&answer));
        assert_one_line_failure(&output, 2, needle);
    }
    let output =
        run(harmonia(&["validate"]).arg("--trace").arg(&good_trace).arg("--answer").arg(&good_answer));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "accepted\n");
}

#[test]
fn the_demo_tells_the_whole_story_offline() {
    let output = run(&mut harmonia(&["demo"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("34 scenarios: 8 grounded answers accepted, 26 bad answers rejected"), "{text}");
    for skill in ["trend-scan", "signal-watch", "engagement-insights", "posting-schedule", "job-status"] {
        assert!(text.contains(&format!("activate {skill}")), "{skill}");
    }
    assert_eq!(text.matches("verdict: ACCEPTED").count(), 8);
    assert_eq!(text.matches("verdict: REJECTED").count(), 26);
}

#[test]
fn garbage_files_get_one_line_and_no_panic() {
    let dir = TempDir::new("cli-garbage");
    let garbage = dir.path().join("garbage.wasm");
    let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
    bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    std::fs::write(&garbage, &bytes).unwrap();
    let path = garbage.to_str().unwrap();
    assert_one_line_failure(
        &run(&mut harmonia(&["call", "x", "--plugin", path])),
        1,
        "not a valid WebAssembly component",
    );
    assert_one_line_failure(&run(&mut harmonia(&["inspect", path])), 1, "not a valid WebAssembly component");
    assert_one_line_failure(&run(&mut harmonia(&["workspace", "import", path])), 2, "is not JSON");
    assert_one_line_failure(&run(&mut harmonia(&["tools", "--config", path])), 1, "cannot read config");
    assert_one_line_failure(
        &run(&mut harmonia(&["call", "x", "--plugin", "/no/such.wasm"])),
        1,
        "cannot read",
    );
    let output = run(&mut harmonia(&["conformance", "--json", path]));
    assert_eq!(output.status.code(), Some(1));
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reports[0]["checks"][0]["id"], "load.component");
    assert_eq!(reports[0]["checks"][0]["passed"], false);
    let mut session = harmonia(&["session", "--mock"]);
    session.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = session.spawn().unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(&bytes).unwrap();
        stdin.write_all(b"\n{\"op\":\"skills\"}\n").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.lines().last().unwrap().contains("\"skills\""), "the session went on: {text}");
    assert!(text.lines().all(|line| serde_json::from_str::<Value>(line).is_ok()), "{text}");
}

#[test]
fn cache_clear_removes_the_precompiled_components() {
    let dir = TempDir::new("cli-cache");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[cache]\ndir = \"components\"\n").unwrap();
    let config = config.to_str().unwrap();
    assert_eq!(run(&mut harmonia(&["tools", "--config", config])).status.code(), Some(0));
    assert_eq!(std::fs::read_dir(dir.path().join("components")).unwrap().count(), 6);
    let output = run(&mut harmonia(&["cache", "clear", "--config", config]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("removed 6 cached components"));
    assert_eq!(std::fs::read_dir(dir.path().join("components")).unwrap().count(), 0);
}

#[test]
fn bench_only_measures_the_parts_asked_for_and_names_the_parts_when_asked_wrong() {
    let output = run(&mut harmonia(&["bench", "--quick", "--json", "--only", "runaway"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let figures: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(figures["deadline_overshoot_ms_max"].is_number(), "{figures}");
    for other in ["trivial_call_us_p50", "cached_load_ms", "mcp_call_us_p50", "inflight_100_slots_1024"] {
        assert!(figures.get(other).is_none(), "{other} measured too: {figures}");
    }

    let refused = run(&mut harmonia(&["bench", "--only", "everything"]));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    for part in ["trivial", "tools", "loading", "runaway", "concurrency", "mcp", "peers"] {
        assert!(stderr(&refused).contains(part), "{part} not named: {}", stderr(&refused));
    }

    // The peers are measured only when built and named.
    let without_peers = run(&mut harmonia(&["bench", "--quick", "--only", "peers"]));
    assert_eq!(without_peers.status.code(), Some(1), "{}", stderr(&without_peers));
    assert!(stderr(&without_peers).contains("bench/peers/build.sh"), "{}", stderr(&without_peers));
}

/// The peers are measured side by side: a stand-in peer (a script that
/// serves the same trivial guest through this binary, laid out as
/// `bench/peers/build.sh` leaves Wassette) makes its stdio round trips in
/// rounds alternating with Harmonia's, and the ratio paired by round is
/// reported with the other figures; a peer not built is named as skipped,
/// and one that fails over HTTP (the stand-in does not speak Wassette's
/// HTTP+SSE; `peers.rs`'s own test does) is reported with that problem
/// while its stdio figures stand.
#[test]
fn bench_peers_measures_a_built_peer_side_by_side_and_pairs_the_ratio_by_round() {
    let dir = TempDir::new("bench-peers");
    let peers = dir.path().join("peers");
    let skills = dir.path().join("no-skills");
    std::fs::create_dir_all(&peers).unwrap();
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::copy(guest_path("testing-trivial"), peers.join("trivial-probe.wasm")).unwrap();
    let config = dir.path().join("stand-in.toml");
    let cache = dir.path().join("stand-in-cache");
    std::fs::write(
        &config,
        format!("[plugins]\nbuiltin = false\n[cache]\ndir = {:?}\n", cache.display().to_string()),
    )
    .unwrap();
    // Wassette is started as `wassette serve --stdio --plugin-dir DIR`.
    let script = peers.join("wassette");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$2\" = --http ] && {{ echo 'no HTTP in this stand-in' >&2; exit 3; }}\nexec '{}' serve --stdio --quiet --workspace ws_demo --config '{}' --skills '{}' --plugin \"$4/trivial-probe.wasm\"\n",
            env!("CARGO_BIN_EXE_harmonia"),
            config.display(),
            skills.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let output = run(harmonia(&["bench", "--quick", "--json", "--only", "peers", "--peers"]).arg(&peers));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let figures: Value = serde_json::from_slice(&output.stdout).unwrap();
    for key in
        ["peers_harmonia_stdio_p50_us", "peers_wassette_stdio_p50_us", "peers_wassette_stdio_rss_warm_mib"]
    {
        assert!(figures[key].as_f64().is_some_and(|value| value > 0.0), "{key}: {figures}");
    }
    let paired = figures["peers_ratio_wassette_stdio_p50_paired"].as_f64();
    assert!(paired.is_some_and(|ratio| ratio.is_finite() && ratio > 0.0), "{figures}");
    assert!(
        figures["peers_hyper_mcp_skipped"].as_str().is_some_and(|why| why.contains("not built")),
        "{figures}"
    );
    let problems = figures["peers_wassette_problems"].as_array().unwrap_or_else(|| panic!("{figures}"));
    assert_eq!(problems.len(), 1, "{figures}");
    // The stand-in's own refusal, not some other failure (port 9001 taken).
    assert!(
        problems[0]
            .as_str()
            .is_some_and(|problem| problem.starts_with("HTTP:") && problem.contains("exited")),
        "{figures}"
    );
    assert!(figures.get("peers_wassette_http_p50_us").is_none(), "{figures}");
    assert!(stderr(&output).contains("paired by round"), "{}", stderr(&output));
}
