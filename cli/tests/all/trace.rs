//! Signed traces and what `harmonia validate` trusts: forged, edited and
//! foreign traces are refused in submission mode with `trace_unverified`;
//! a real session's trace is accepted; the host key is created privately;
//! the trace and answer files are read with a bound.

use harmonia_contract::envelope::{Provenance, evidence_id};
use harmonia_contract::liaison::trace::{MAX_ENTRIES, Trace, TraceDocument};
use harmonia_contract::liaison::validator::{Mode, RuleCode, validate, validate_received};
use harmonia_host::CallContext;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::signing::{PublicKey, TraceSigner, Unverified};
use harmonia_host::liaison::skills::SkillSet;
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn harmonia(args: &[&str], data_home: &Path) -> Command {
    let mut command = crate::support::harmonia(data_home);
    command.args(args);
    command
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn catalogue_case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue").join(name)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write(path: &Path, value: &Value) -> PathBuf {
    std::fs::write(path, value.to_string()).unwrap();
    path.to_owned()
}

/// `validate --json` with extra arguments: (verdict, exit code).
fn validate_cli(dir: &TempDir, trace: &Path, answer: &Path, extra: &[&str]) -> (Value, i32) {
    let mut command = harmonia(&["validate", "--json"], dir.path());
    command.arg("--trace").arg(trace).arg("--answer").arg(answer).args(extra);
    let output = command.output().unwrap();
    let verdict = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no verdict; stderr: {}", stderr(&output)));
    (verdict, output.status.code().unwrap())
}

/// Run a JSON-lines session over `requests`; one response per request.
fn session(dir: &TempDir, args: &[&str], requests: &[Value]) -> Vec<Value> {
    let mut command = harmonia(&[&["session"][..], args].concat(), dir.path());
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    {
        let stdin = child.stdin.as_mut().unwrap();
        for request in requests {
            writeln!(stdin, "{request}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A workspace store with the demo workspace and a config that uses it
/// and keeps the host key at `keys/trace-key` beside it.
fn live_setup(dir: &TempDir) -> PathBuf {
    let document = dir.path().join("workspace.json");
    std::fs::write(&document, harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON).unwrap();
    let db = dir.path().join("harmonia.db");
    let output =
        harmonia(&["workspace", "import"], dir.path()).arg(&document).arg("--db").arg(&db).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::create_dir(dir.path().join("keys")).unwrap();
    let config = dir.path().join("harmonia.toml");
    std::fs::write(&config, "[workspace]\npath = \"harmonia.db\"\n[trace]\nkey_file = \"keys/trace-key\"\n")
        .unwrap();
    config
}

/// A real session on the live store: job-42, then its signed trace.
fn real_signed_trace(dir: &TempDir, config: &Path) -> Value {
    let config = config.to_str().unwrap();
    let responses = session(
        dir,
        &["--config", config, "--workspace", "ws_demo"],
        &[
            json!({"op": "activate", "skill": "job-status"}),
            json!({"op": "call", "tool": "get_job_status", "args": {"job_id": "job-42"}}),
            json!({"op": "trace"}),
        ],
    );
    assert_eq!(responses[1]["status"], "success", "{}", responses[1]);
    assert_eq!(responses[1]["evidence"][0]["provenance"], "live");
    responses[2]["trace"].clone()
}

/// The grounded job-42 answer (the catalogue's, kept true by the demo).
fn job_answer() -> Value {
    read(&catalogue_case("grounded-job-status").join("answer.json"))
}

/// job-42 retold as job-999, with the evidence id minted by the public formula.
fn retold(value: &Value) -> Value {
    let real = evidence_id("harmonia_job", Provenance::Live, Some("job-42"));
    let minted = evidence_id("harmonia_job", Provenance::Live, Some("job-999"));
    serde_json::from_str(&value.to_string().replace("job-42", "job-999").replace(&real, &minted)).unwrap()
}

#[test]
fn a_hand_written_trace_claiming_job_999_is_refused_in_submission() {
    let dir = TempDir::new("trace-forged");
    let forged_trace = json!([
        {"sequence": 1, "kind": "skill_activation", "skill": "job-status",
         "sha256": SkillSet::builtin().get("job-status").unwrap().sha256},
        {"sequence": 2, "kind": "tool_call", "name": "get_job_status", "args": {"job_id": "job-999"},
         "attempt": 1, "durationMs": 0.5, "receipts": [],
         "response": {"status": "success",
            "data": {"found": true, "job": {"id": "job-999", "title": "Invented", "sourceKind": "trend_signal",
                "stage": "drafting", "status": "waiting_approval", "error": null,
                "createdAt": "2026-11-28T08:00:00Z", "updatedAt": "2026-11-30T08:45:00Z",
                "strategyApprovalState": "approved", "draftCount": 2, "actions": [],
                "verificationSummary": [], "receiptCount": 0}},
            "error": null,
            "evidence": [{"evidenceId": evidence_id("harmonia_job", Provenance::Live, Some("job-999")),
                          "source": "harmonia_job", "provenance": "live", "reference": "job-999"}]}}
    ]);
    let minted = evidence_id("harmonia_job", Provenance::Live, Some("job-999"));
    let answer = json!({"status": "success", "skillName": "job-status", "error": null, "uncertainty": [],
        "answer": format!("job-999 is in stage drafting with status waiting_approval ({minted})."),
        "claims": [{"text": "job-999 is in stage drafting with status waiting_approval", "kind": "record",
                    "evidenceIds": [minted]}]});
    // Believed blindly, the forgery passes every other rule, even in submission.
    let trace = Trace::parse(&forged_trace).unwrap();
    assert!(validate(&trace, &answer, &SkillSet::builtin(), Mode::Submission).accepted);

    let trace_file = write(&dir.path().join("trace.json"), &forged_trace);
    let answer_file = write(&dir.path().join("answer.json"), &answer);
    let any_key = TraceSigner::from_seed([9; 32]).public_key().to_hex();
    let (verdict, code) =
        validate_cli(&dir, &trace_file, &answer_file, &["--submission", "--public-key", &any_key]);
    assert_eq!(verdict["rule"], "trace_unverified", "{verdict}");
    assert_eq!(verdict["reason"], "the trace is not signed");
    assert_eq!(code, 1);
    // With no key given and no host key yet, it is refused just the same.
    let (verdict, _) = validate_cli(&dir, &trace_file, &answer_file, &["--submission"]);
    assert_eq!(verdict["rule"], "trace_unverified", "{verdict}");
    assert!(verdict["reason"].as_str().unwrap().contains("no host key"), "{verdict}");
    // Review mode checks the rules on what the trace says, and says it is unverified.
    let mut command = harmonia(&["validate"], dir.path());
    let output = command.arg("--trace").arg(&trace_file).arg("--answer").arg(&answer_file).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "accepted\n");
    assert!(stderr(&output).contains("trace not verified"), "{}", stderr(&output));
}

#[test]
fn a_real_session_trace_is_accepted_and_any_change_is_refused() {
    let dir = TempDir::new("trace-real");
    let config = live_setup(&dir);
    let signed = real_signed_trace(&dir, &config);
    let config_arg = config.to_str().unwrap();
    let answer = write(&dir.path().join("answer.json"), &job_answer());
    let genuine = write(&dir.path().join("genuine.json"), &signed);

    // The host key: created 0600 by the session, printed by `trace-key`.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("keys/trace-key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let output = harmonia(&["trace-key", "--config", config_arg], dir.path()).output().unwrap();
    let printed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(printed.trim(), signed["seal"]["publicKey"].as_str().unwrap());

    let (verdict, code) = validate_cli(&dir, &genuine, &answer, &["--submission", "--config", config_arg]);
    assert_eq!(verdict, json!({"accepted": true, "rule": null, "reason": null}));
    assert_eq!(code, 0);
    let (verdict, _) =
        validate_cli(&dir, &genuine, &answer, &["--submission", "--public-key", printed.trim()]);
    assert_eq!(verdict["accepted"], true, "{verdict}");
    // Reformatting keeps the seal: what is signed is the entries, not the bytes.
    std::fs::write(&genuine, serde_json::to_string_pretty(&signed).unwrap()).unwrap();
    let (verdict, _) = validate_cli(&dir, &genuine, &answer, &["--submission", "--config", config_arg]);
    assert_eq!(verdict["accepted"], true, "{verdict}");

    let entries = signed["entries"].as_array().unwrap().clone();
    let with_entries = |entries: Vec<Value>| json!({"entries": entries, "seal": signed["seal"].clone()});
    let mut altered = entries.clone();
    altered[1]["response"]["data"]["job"]["stage"] = json!("published");
    let mut reordered = entries.clone();
    reordered.swap(0, 1);
    let mut appended = entries.clone();
    appended.push(entries[1].clone());
    let unsigned = Value::Array(entries.clone());
    let mut forged_seal = signed.clone();
    forged_seal["seal"]["signature"] = json!("00".repeat(64));
    let foreign = {
        let document = TraceDocument::parse(&signed).unwrap();
        let seal = TraceSigner::from_seed([5; 32]).seal(&document.trace);
        TraceDocument { seal: Some(seal), ..document }.to_value()
    };
    for (name, trace, needle) in [
        ("altered", with_entries(altered), "entry 2 is not the entry that was signed"),
        ("removed", with_entries(entries[..1].to_vec()), "covers 2 entries but the trace has 1"),
        ("reordered", with_entries(reordered), "entry 1 is not the entry that was signed"),
        ("appended", with_entries(appended), "covers 2 entries but the trace has 3"),
        ("retold as job-999", retold(&signed), "entry 2 is not"),
        ("unsigned", unsigned, "not signed"),
        ("signature zeroed", forged_seal, "signature does not match"),
        ("another key", foreign, "signed by key"),
    ] {
        let file = write(&dir.path().join("changed.json"), &trace);
        let answer_file = if name.starts_with("retold") {
            write(&dir.path().join("retold-answer.json"), &retold(&job_answer()))
        } else {
            answer.clone()
        };
        let (verdict, code) =
            validate_cli(&dir, &file, &answer_file, &["--submission", "--config", config_arg]);
        assert_eq!(verdict["rule"], "trace_unverified", "{name}: {verdict}");
        assert!(verdict["reason"].as_str().unwrap().contains(needle), "{name}: {verdict}");
        assert_eq!(code, 1, "{name}");
    }
    // Trusting another key refuses the genuine trace too.
    let other = TraceSigner::from_seed([6; 32]).public_key().to_hex();
    let (verdict, _) = validate_cli(&dir, &genuine, &answer, &["--submission", "--public-key", &other]);
    assert_eq!(verdict["rule"], "trace_unverified", "{verdict}");
    // A malformed --public-key is a usage error.
    let mut command = harmonia(&["validate", "--submission", "--public-key", "xyz"], dir.path());
    let output = command.arg("--trace").arg(&genuine).arg("--answer").arg(&answer).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("64 hex digits"));
}

#[test]
fn the_rust_session_emits_signed_traces() {
    let host = harmonia_host::Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    let signer = TraceSigner::from_seed([4; 32]);
    let key = signer.public_key();
    let liaison = Liaison::new(host, SkillSet::builtin()).unwrap().with_signer(signer);
    assert_eq!(liaison.trace_public_key().unwrap(), key);
    let mut session = liaison.session(CallContext::for_workspace("ws_demo"));
    session.activate("job-status").unwrap();
    session.call("get_job_status", &json!({"job_id": "job-42"})).expect("within the session's bounds");
    let document = session.signed_trace().unwrap();
    assert_eq!(document.trace, *session.trace());
    assert_eq!(document.verify(&key), Ok(()));
    // Through its JSON text and back, as an agent would store it.
    let reread = TraceDocument::parse_str(&document.to_value().to_string()).unwrap();
    assert_eq!(reread.verify(&key), Ok(()));
    // A later call needs a new signed trace; the old one still verifies alone.
    session.call("get_job_status", &json!({"job_id": "job-42"})).expect("within the session's bounds");
    assert_eq!(document.verify(&key), Ok(()));
    let later = session.signed_trace().unwrap();
    assert_eq!(later.trace.entries.len(), 3);
    assert_eq!(later.verify(&key), Ok(()));
    let verdict = validate_received(
        &reread.trace,
        reread.verify(&TraceSigner::from_seed([8; 32]).public_key()),
        &json!({}),
        &SkillSet::builtin(),
        Mode::Submission,
    );
    assert_eq!(verdict.rule, Some(RuleCode::TraceUnverified));
    // Without a signer of its own, a liaison signs with an in-memory key.
    let host = harmonia_host::Host::new(HostConfig { mock: true, ..HostConfig::default() }).unwrap();
    let liaison = Liaison::new(host, SkillSet::builtin()).unwrap();
    let ephemeral: PublicKey = liaison.trace_public_key().unwrap();
    let document = liaison.session(CallContext::default()).signed_trace().unwrap();
    assert_eq!(document.verify(&ephemeral), Ok(()));
    assert!(matches!(document.verify(&key), Err(Unverified::OtherKey { .. })));
}

#[test]
fn the_default_host_key_is_private_and_a_planted_symlink_is_refused() {
    let dir = TempDir::new("trace-key");
    let output = harmonia(&["trace-key"], dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(PublicKey::parse_hex(printed.trim()).is_some(), "{printed}");
    let again = harmonia(&["trace-key"], dir.path()).output().unwrap();
    assert_eq!(String::from_utf8(again.stdout).unwrap(), printed, "the key is made once");
    let key_dir = dir.path().join("harmonia");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key_dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(key_dir.join("trace-key")).unwrap().permissions().mode() & 0o777, 0o600);

        let planted = TempDir::new("trace-key-planted");
        let key_dir = planted.path().join("harmonia");
        std::fs::create_dir(&key_dir).unwrap();
        std::fs::set_permissions(&key_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let target = planted.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, key_dir.join("trace-key")).unwrap();
        for args in [&["trace-key"][..], &["session", "--mock"][..]] {
            let output = harmonia(args, planted.path()).stdin(Stdio::null()).output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{args:?}: {}", stderr(&output));
            assert!(stderr(&output).contains("symbolic link"), "{args:?}: {}", stderr(&output));
            assert!(!target.exists(), "nothing was written through the link");
        }
    }
}

#[test]
fn validate_reads_its_files_with_a_bound() {
    let dir = TempDir::new("trace-caps");
    let answer = catalogue_case("grounded-job-status").join("answer.json");
    let trace = catalogue_case("grounded-job-status").join("trace.json");
    let exit_2 = |command: &mut Command, needle: &str| {
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(needle), "{needle} not in {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"));
    };
    let validate = |trace: &Path, answer: &Path| {
        let mut command = harmonia(&["validate"], dir.path());
        command.arg("--trace").arg(trace).arg("--answer").arg(answer);
        command
    };
    exit_2(&mut validate(Path::new("/dev/zero"), &answer), "trace /dev/zero");
    exit_2(&mut validate(&trace, Path::new("/dev/zero")), "answer /dev/zero");
    // Regular files are refused by their size before a byte is parsed.
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(32 * 1024 * 1024 + 1).unwrap();
    exit_2(&mut validate(&big, &answer), "over the 32 MiB limit");
    std::fs::File::create(&big).unwrap().set_len(1024 * 1024 + 1).unwrap();
    exit_2(&mut validate(&trace, &big), "over the 1 MiB limit");
    // A stream is cut at the limit: `[` then whitespace without end.
    let mut command = validate(Path::new("/dev/stdin"), &answer);
    let mut child =
        command.stdin(Stdio::piped()).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(b"[");
        let chunk = vec![b' '; 1024 * 1024];
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("over the 32 MiB limit"), "{}", stderr(&output));
    // Too many entries.
    let entry = json!({"sequence": 1, "kind": "skill_activation", "skill": "s", "sha256": "h"});
    let many = write(&dir.path().join("many.json"), &Value::Array(vec![entry; MAX_ENTRIES + 1]));
    exit_2(&mut validate(&many, &answer), &format!("more than {MAX_ENTRIES} entries"));
}
