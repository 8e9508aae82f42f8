//! The sandbox's promises under an adversary: each test is named after the
//! promise it holds and drives a hostile guest, a planted file or a
//! loopback server at it.
//!
//! - tenant memory: a pool slot reused by another call starts clean, even
//!   when the process was paged out between the calls;
//! - deadlines: a guest waiting inside WASI ends at its deadline, in
//!   `invoke` and in `describe`, and cannot hold the call slots;
//! - host memory: a guest looping on capability uses is stopped at a bound;
//! - provenance: evidence a call did not read is refused, mock mode stamps
//!   `mock`, and a reserved source of the other scope is refused;
//! - the public web: an allow-listed name resolving to loopback is refused
//!   before any traffic;
//! - configuration: the wasm stack range agrees with the engine.

use harmonia_contract::liaison::validator::Mode;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::skills::{Skill, SkillSet};
use harmonia_host::{CallContext, Host};
use harmonia_testkit::assert_test_exists;
use harmonia_testkit::hosts::{bare_config, host_with, try_host_with};
use harmonia_testkit::server::{Loopback, Reply};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

// The hostile guests this file drives have their test (`tests/support/hostile.rs`).
harmonia_testkit::hostile_tests!(adversary);
harmonia_artifacts::foreach_hostile!(assert_test_exists);

/// The envelope of `tool`.
fn call(host: &Host, tool: &str, input: &str, context: &CallContext) -> Value {
    host.call(tool, input, context).unwrap().to_value()
}

fn tenant(workspace: &str) -> CallContext {
    CallContext { workspace: Some(workspace.to_owned()), ..CallContext::default() }
}

fn failed(message: &str) -> Value {
    json!({"status": "error", "data": null, "error": {"code": "tool_execution_failed", "category": "dependency",
        "message": message, "retryable": false}, "evidence": []})
}

fn timed_out() -> Value {
    json!({"status": "error", "data": null, "error": {"code": "tool_timeout", "category": "dependency",
        "message": "The tool call passed its deadline.", "retryable": true}, "evidence": []})
}

fn assert_healthy(host: &Host) {
    let probe =
        call(host, "testing_memory_probe", r#"{"scanReversed": "x-yhtlaeh"}"#, &CallContext::default());
    assert_eq!(probe["status"], "success", "{probe}");
}

// ---- Tenant memory -------------------------------------------------------

const SECRET: &str = "tenant-a-secret-7f3e9c21";

fn reversed(text: &str) -> String {
    text.chars().rev().collect()
}

fn write_secret(host: &Host, tool: &str, context: &CallContext) {
    let wrote = call(host, tool, &json!({"write": SECRET}).to_string(), context);
    assert_eq!(wrote["data"]["wrote"], true, "{wrote}");
}

fn scan_for_secret(host: &Host, tool: &str, context: &CallContext) -> Value {
    let scanned = call(host, tool, &json!({"scanReversed": reversed(SECRET)}).to_string(), context);
    assert_eq!(scanned["status"], "success", "{scanned}");
    assert!(scanned["data"]["memoryBytes"].as_u64().unwrap() >= 4 << 20, "{scanned}");
    scanned["data"]["found"].clone()
}

fn probe_host(max_calls: u32) -> Host {
    let mut config = bare_config();
    config.limits.max_calls = max_calls;
    host_with(config, &["testing-memory-probe", "testing-memory-probe-other"]).0
}

#[test]
fn pool_slot_reuse_shows_no_memory_of_another_tenant() {
    let host = probe_host(1);
    for _ in 0..3 {
        write_secret(&host, "testing_memory_probe", &tenant("ws_a"));
        assert_eq!(scan_for_secret(&host, "testing_memory_probe", &tenant("ws_b")), Value::Null);
    }
}

#[test]
fn pool_slot_reuse_shows_no_memory_of_another_plugin() {
    // With one call slot the pool holds few memory slots; alternating the
    // two plugins many times makes each land on slots the other used.
    let host = probe_host(1);
    for _ in 0..40 {
        write_secret(&host, "testing_memory_probe", &tenant("ws_a"));
        assert_eq!(scan_for_secret(&host, "testing_memory_probe_other", &tenant("ws_b")), Value::Null);
        write_secret(&host, "testing_memory_probe_other", &tenant("ws_a"));
        assert_eq!(scan_for_secret(&host, "testing_memory_probe", &tenant("ws_b")), Value::Null);
    }
}

/// Ask the kernel to page out every private writable mapping of this
/// process; the bytes now in swap, or why nothing could be paged out.
fn page_out_this_process() -> Result<u64, String> {
    let swaps = std::fs::read_to_string("/proc/swaps").map_err(|error| format!("no /proc/swaps: {error}"))?;
    if swaps.lines().count() < 2 {
        return Err("no swap device is active".into());
    }
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|error| error.to_string())?;
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        if !perms.starts_with("rw") || !perms.ends_with('p') {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else {
            continue;
        };
        page_out(start, end - start);
    }
    let status = std::fs::read_to_string("/proc/self/status").map_err(|error| error.to_string())?;
    let swapped_kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSwap:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    if swapped_kib == 0 { Err("the kernel paged nothing out".into()) } else { Ok(swapped_kib * 1024) }
}

#[allow(unsafe_code)]
fn page_out(start: usize, len: usize) {
    // SAFETY: MADV_PAGEOUT only asks the kernel to reclaim the pages; their
    // contents are kept (in swap) and nothing in this process changes.
    // Errors (locked or special mappings) are ignored.
    let _ =
        unsafe { rustix::mm::madvise(start as *mut std::ffi::c_void, len, rustix::mm::Advice::LinuxPageOut) };
}

#[test]
fn pool_slot_reuse_shows_no_memory_after_the_process_was_paged_out() {
    let host = probe_host(1);
    let mut paged_out = 0;
    for round in 0..3 {
        // The writer idles with its secret live while this thread pages the
        // process out: the secret's pages are in swap when its slot is reset.
        let writer = {
            let host = host.clone();
            std::thread::spawn(move || {
                let input = json!({"write": SECRET, "idleMs": 600}).to_string();
                call(&host, "testing_memory_probe", &input, &tenant("ws_a"))
            })
        };
        std::thread::sleep(Duration::from_millis(250));
        match page_out_this_process() {
            Ok(bytes) => paged_out = paged_out.max(bytes),
            Err(reason) => {
                println!("skipped the page-out step: {reason} (the slot reuse itself is still checked)")
            }
        }
        let wrote = writer.join().unwrap();
        assert_eq!(wrote["data"]["wrote"], true, "{wrote}");
        let found = scan_for_secret(&host, "testing_memory_probe", &tenant("ws_b"));
        assert_eq!(found, Value::Null, "round {round}: the secret survived into another tenant's call");
    }
    println!("paged out up to {} KiB while the secret was live", paged_out / 1024);
}

// ---- Deadlines inside WASI -------------------------------------------------

fn wait_host(config: HostConfig) -> Host {
    host_with(config, &["hostile-wait", "testing-memory-probe"]).0
}

#[test]
fn a_guest_waiting_inside_wasi_ends_at_its_deadline() {
    let host = wait_host(bare_config());
    for how in ["sleep", "block", "poll", "busy"] {
        let started = Instant::now();
        let input = json!({"how": how}).to_string();
        let envelope = call(&host, "hostile_wait", &input, &CallContext::default());
        let elapsed = started.elapsed();
        assert_eq!(envelope, timed_out(), "{how}");
        // The deadline is 1 s; the bound only proves the wait was cut short.
        assert!(elapsed < Duration::from_millis(3000), "{how} took {elapsed:?}");
        assert_healthy(&host);
    }
}

#[test]
fn guests_waiting_inside_wasi_cannot_hold_every_call_slot() {
    let mut config = bare_config();
    config.limits.max_calls = 2;
    let host = wait_host(config);
    six_waiters_on_two_slots(&host);
}

/// Six sleeping guests on two slots, half through `Host::call` on their
/// own threads and half through `Host::call_async` on one runtime: the two
/// APIs share the slots.
fn six_waiters_on_two_slots(host: &Host) {
    let started = Instant::now();
    let input = r#"{"how": "sleep"}"#;
    let mut waiters: Vec<_> = (0..3)
        .map(|_| {
            let host = host.clone();
            std::thread::spawn(move || call(&host, "hostile_wait", input, &CallContext::default()))
        })
        .collect();
    waiters.extend((0..3).map(|_| {
        let host = host.clone();
        std::thread::spawn(move || {
            let context = CallContext::default();
            let envelope =
                harmonia_testkit::runtime().block_on(host.call_async("hostile_wait", input, &context));
            envelope.unwrap().to_value()
        })
    }));
    let mut ran = 0;
    for waiter in waiters {
        let envelope = waiter.join().unwrap();
        // A call that ran ends at its deadline (`tool_timeout`); one whose
        // deadline passed while waiting for a slot never ran and is the
        // retryable `dependency_unavailable`.
        match envelope["error"]["code"].as_str() {
            Some("tool_timeout") => ran += 1,
            Some("dependency_unavailable") => assert_eq!(envelope["error"]["retryable"], true),
            _ => panic!("{envelope}"),
        }
    }
    assert!(ran >= 2, "both slots ran a guest to its deadline ({ran})");
    // Six one-second waits on two slots: each ends at its own deadline (the
    // later ones while still waiting for a slot), never after an hour.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_healthy(host);
}

#[test]
fn a_guest_waiting_inside_describe_fails_its_load_at_the_describe_deadline() {
    let started = Instant::now();
    let Err(error) = try_host_with(bare_config(), &["hostile-wait-describe"]) else {
        panic!("a describe that sleeps for an hour must fail the load");
    };
    let elapsed = started.elapsed();
    assert!(error.to_string().contains("describe passed its 5 s deadline"), "{error}");
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    assert!(
        matches!(
            error,
            harmonia_host::HostError::Load(harmonia_host::plugin::LoadError::Describe {
                source: harmonia_host::plugin::DescribeError::TimedOut,
                ..
            })
        ),
        "the cause is typed: {error:?}"
    );
}

// ---- Host memory -----------------------------------------------------------

#[test]
fn capability_uses_per_call_are_bounded() {
    let (host, _) = host_with(bare_config(), &["hostile-receipt-flood", "testing-memory-probe"]);
    let record = host.call_recorded("hostile_receipt_flood", "{}", &CallContext::default()).unwrap();
    assert_eq!(record.envelope.to_value(), failed("The tool exceeded its capability use limit."));
    assert!(record.receipts.len() <= 256, "{} receipts", record.receipts.len());
    let receipt_bytes: usize = record.receipts.iter().map(|receipt| receipt.target.len()).sum();
    assert!(receipt_bytes <= 256 * 1024, "{receipt_bytes} bytes of receipts");
    assert!(record.duration < Duration::from_secs(5), "{:?}", record.duration);
    assert_healthy(&host);
}

// ---- Provenance ------------------------------------------------------------

fn forged_host(mock: bool) -> Host {
    let mut config = bare_config();
    config.mock = mock;
    host_with(config, &["hostile-forged-evidence"]).0
}

fn forge(host: &Host, input: Value) -> Value {
    call(host, "hostile_forged_evidence", &input.to_string(), &tenant("ws_demo"))
}

#[test]
fn evidence_from_a_call_that_read_nothing_is_refused() {
    for mock in [true, false] {
        let host = forged_host(mock);
        for reference in [json!("job-42"), Value::Null] {
            let envelope = forge(&host, json!({"source": "harmonia_job", "reference": reference}));
            assert_eq!(envelope, failed("The tool cited evidence it did not read."), "mock {mock}");
        }
    }
}

#[test]
fn evidence_in_mock_mode_is_stamped_mock() {
    let host = forged_host(true);
    let envelope = forge(&host, json!({"read": true, "source": "harmonia_job", "reference": "job-42"}));
    assert_eq!(envelope["status"], "success", "{envelope}");
    assert_eq!(envelope["evidence"][0]["provenance"], "mock", "{envelope}");
}

#[test]
fn evidence_from_a_source_reserved_for_the_other_scope_is_refused() {
    let host = forged_host(true);
    let envelope =
        forge(&host, json!({"read": true, "source": "hacker_news_story", "reference": "https://a.example/"}));
    assert_eq!(envelope, failed("The tool cited evidence it did not read."));
}

#[test]
fn a_forged_record_claim_in_mock_mode_is_rejected_for_submission() {
    let host = forged_host(true);
    let mut skills = SkillSet::default();
    let skill = "---\nname: forged-status\ndescription: A test skill.\nallowed-tools: hostile_forged_evidence\n---\n\
                 Report the job.\n";
    skills.add(Skill::parse(skill, "forged-status/SKILL.md").unwrap()).unwrap();
    let liaison = Liaison::new(host, skills).unwrap();
    let mut session = liaison.session(tenant("ws_demo"));
    session.activate("forged-status").unwrap();
    let envelope = session
        .call(
            "hostile_forged_evidence",
            &json!({"read": true, "source": "harmonia_job", "reference": "job-42"}),
        )
        .expect("within the session's bounds")
        .to_value();
    let id = envelope["evidence"][0]["evidenceId"].as_str().expect("evidence").to_owned();
    let answer = json!({"status": "success", "answer": format!("job-42 was found ({id})."),
        "skillName": "forged-status", "error": null, "uncertainty": [],
        "claims": [{"text": "job-42 was found", "kind": "record", "evidenceIds": [id]}]});
    let verdict = session.validate(&answer, Mode::Submission);
    assert!(!verdict.accepted, "{verdict:?}");
}

// ---- The public web --------------------------------------------------------

#[test]
fn an_allowed_name_resolving_to_loopback_is_refused_without_traffic() {
    let server = Loopback::start();
    server.route("/secret", Reply::Json(200, r#"{"internal": true}"#.into()));
    let port = server.base_url().rsplit(':').next().unwrap().to_owned();
    let mut config = bare_config();
    config.public_web.allow = vec![format!("http://localhost:{port}")];
    let (host, _) = host_with(config, &["testing-fetch-url"]);
    let input = json!({"url": format!("http://localhost:{port}/secret")}).to_string();
    let record = host.call_recorded("testing_fetch_url", &input, &CallContext::default()).unwrap();
    assert_eq!(record.envelope.to_value()["data"], json!({"fetchError": "denied"}));
    assert_eq!(record.receipts[0].status, "denied");
    assert!(server.requests().is_empty(), "reached the loopback server: {:?}", server.requests());

    // An explicit route to the same server is the operator's choice.
    let mut config = bare_config();
    config.public_web.allow = vec!["https://mirror.example".into()];
    config.public_web.routes.insert("https://mirror.example".into(), server.base_url());
    let (host, _) = host_with(config, &["testing-fetch-url"]);
    let envelope = call(
        &host,
        "testing_fetch_url",
        r#"{"url": "https://mirror.example/secret"}"#,
        &CallContext::default(),
    );
    assert_eq!(envelope["data"]["status"], 200, "{envelope}");
}

// ---- Configuration ---------------------------------------------------------

#[test]
fn every_wasm_stack_size_the_config_accepts_starts_an_engine() {
    for kib in [64, 512, 2048] {
        let mut config = bare_config();
        config.limits.wasm_stack_kib = kib;
        config.check().unwrap_or_else(|error| panic!("{kib}: {error}"));
        Host::new(config).unwrap_or_else(|error| panic!("{kib} KiB: {error}"));
    }
    for kib in [63, 2049, 16 * 1024] {
        let error = HostConfig::from_toml_str(&format!("[limits]\nwasm_stack_kib = {kib}")).unwrap_err();
        assert!(error.to_string().contains("limits.wasm_stack_kib"), "{error}");
    }
}
