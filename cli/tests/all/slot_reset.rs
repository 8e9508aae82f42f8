//! `limits.slot_reset = "written"` (docs/contract.md §7, "A slot's reset"):
//! resetting only the pages a call wrote is given only where nothing can be
//! swapped out, and a server that sees swap turn on while it runs refuses
//! every call and reports itself not ready.
//!
//! The server runs in a mount namespace of its own (`unshare`, as root)
//! where a file of the test's stands in for `/proc/swaps`, so the test can
//! say swap is off, then on, without touching the machine's swap.

use crate::support::{add_token, harmonia, refused_at_start, spawn_listening};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const HEADER: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
const DEVICE: &str = "/dev/harmonia-test-swap                 partition\t1048572\t\t0\t\t-2\n";

/// Root and `unshare`, or why this test cannot run here.
fn namespaces() -> Result<(), String> {
    let uid = Command::new("id").arg("-u").output().map_err(|error| error.to_string())?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root".into());
    }
    let probe =
        Command::new("unshare").args(["--mount", "true"]).status().map_err(|error| error.to_string())?;
    if !probe.success() { Err("unshare --mount failed".into()) } else { Ok(()) }
}

/// A mock config with `slot_reset`, a token for get_job_status, and the
/// stand-in for `/proc/swaps` holding `swaps`.
fn setup(name: &str, slot_reset: &str, swaps: &str) -> (PathBuf, String) {
    setup_with(name, slot_reset, swaps, &[], "get_job_status", "ws_demo")
}

/// [`setup`] with the test guests `plugins` loaded too, the token for
/// `tools` in `workspace`.
fn setup_with(
    name: &str,
    slot_reset: &str,
    swaps: &str,
    plugins: &[&str],
    tools: &str,
    workspace: &str,
) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("harmonia-slot-reset-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("no-skills")).unwrap();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!(
            "mock = true\n[plugins]\nfiles = {:?}\n[limits]\nslot_reset = {slot_reset:?}\n[trace]\nkey_file = {:?}\n",
            plugins
                .iter()
                .map(|guest| harmonia_artifacts::test_guest(guest).unwrap_or_else(|| panic!("test guest {guest}")))
                .collect::<Vec<_>>(),
            dir.join("key")
        ),
    )
    .unwrap();
    let (token, _) = add_token(&dir, workspace, tools);
    // One call slot: every call reuses the slot the last one left.
    std::fs::write(
        dir.join("serve.toml"),
        "tokens_file = \"tokens.toml\"\n[limits]\nmax_in_flight_calls = 1\n",
    )
    .unwrap();
    std::fs::write(dir.join("swaps"), swaps).unwrap();
    (dir, token)
}

/// `harmonia serve --http` in a mount namespace where `dir/swaps` is
/// `/proc/swaps`.
fn serve(dir: &Path) -> Command {
    let command = harmonia(dir);
    let binary = command.get_program().to_owned();
    let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
    let mut wrapped = Command::new("unshare");
    wrapped
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg("mount --bind \"$SWAPS\" /proc/swaps && exec \"$@\"")
        .arg("sh")
        .arg(binary)
        .args(args)
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(dir.join("harmonia.toml"))
        .arg("--skills")
        .arg(dir.join("no-skills"))
        .arg("--serve-config")
        .arg(dir.join("serve.toml"))
        .env("SWAPS", dir.join("swaps"));
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

/// One HTTP/1.1 exchange on a fresh connection: the whole answer.
fn exchange(address: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

fn readyz(address: &str) -> String {
    exchange(address, "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
}

/// A stateless (2026-07-28) `tools/call` of get_job_status: the answer.
fn call(address: &str, token: &str) -> String {
    call_tool(address, token, "get_job_status", json!({"job_id": "job-7"}))
}

/// A stateless (2026-07-28) `tools/call` of `tool`: the answer.
fn call_tool(address: &str, token: &str, tool: &str, arguments: serde_json::Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "slot-reset-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    exchange(
        address,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
             Mcp-Name: {tool}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn swap_turned_on_under_the_written_reset_refuses_every_call_and_says_not_ready() {
    if let Err(why) = namespaces() {
        println!("skipped: {why}");
        return;
    }
    let (dir, token) = setup("watch", "written", HEADER);
    let (child, url) = spawn_listening(&mut serve(&dir));
    let _server = Stopped(child);
    let address = url.trim_start_matches("http://").to_owned();
    let answered = call(&address, &token);
    assert!(
        answered.contains("\\\"status\\\":\\\"success\\\"") || answered.contains("\"status\":\"success\""),
        "{answered}"
    );
    assert!(readyz(&address).starts_with("HTTP/1.1 200"), "ready while nothing can be swapped out");

    // Swap turns on while the server runs.
    std::fs::write(dir.join("swaps"), format!("{HEADER}{DEVICE}")).unwrap();
    let started = Instant::now();
    let ready = loop {
        let ready = readyz(&address);
        if ready.starts_with("HTTP/1.1 503") || started.elapsed() > Duration::from_secs(10) {
            break ready;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(ready.starts_with("HTTP/1.1 503"), "{ready}");
    assert!(ready.contains("slot_reset_unsafe") && ready.contains("/dev/harmonia-test-swap"), "{ready}");
    let refused = call(&address, &token);
    assert!(refused.contains("dependency_unavailable"), "{refused}");
    assert!(!refused.contains("job-7\\\""), "no data once refusing: {refused}");

    // Swap off again does not undo it: only a restart does.
    std::fs::write(dir.join("swaps"), HEADER).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert!(readyz(&address).starts_with("HTTP/1.1 503"));
    assert!(call(&address, &token).contains("dependency_unavailable"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn written_where_swap_is_on_refuses_to_start_and_auto_falls_back_to_the_window() {
    if let Err(why) = namespaces() {
        println!("skipped: {why}");
        return;
    }
    let (dir, _) = setup("refused", "written", &format!("{HEADER}{DEVICE}"));
    // It must exit by itself; one that serves is killed and fails the test.
    let stderr = refused_at_start(&mut serve(&dir), Duration::from_secs(60))
        .expect("started where swap is on: it exited 0 or was still serving after 60 s");
    assert!(
        stderr.contains("slot_reset")
            && stderr.contains("/dev/harmonia-test-swap")
            && stderr.contains("\"window\""),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    let (dir, token) = setup("auto", "auto", &format!("{HEADER}{DEVICE}"));
    let (child, url) = spawn_listening(&mut serve(&dir));
    let _server = Stopped(child);
    let address = url.trim_start_matches("http://").to_owned();
    let answered = call(&address, &token);
    assert!(!answered.contains("dependency_unavailable"), "{answered}");
    assert!(readyz(&address).starts_with("HTTP/1.1 200"), "the window's reset needs no watch");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The envelope of a `tools/call` answer (its structured content).
fn envelope(answer: &str) -> serde_json::Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let message: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{answer}"));
    message["result"]["structuredContent"].clone()
}

#[test]
fn under_the_written_reset_a_tenants_memory_never_reaches_another_tenant() {
    if let Err(why) = namespaces() {
        println!("skipped: {why}");
        return;
    }
    const SECRET: &str = "tenant-a-secret-5d1c08e4";
    let (dir, writer) =
        setup_with("tenants", "written", HEADER, &["testing-memory-probe"], "testing_memory_probe", "ws_a");
    let (reader, _) = add_token(&dir, "ws_b", "testing_memory_probe");
    let (child, url) = spawn_listening(&mut serve(&dir));
    let _server = Stopped(child);
    let address = url.trim_start_matches("http://").to_owned();
    for round in 0..5 {
        let wrote = envelope(&call_tool(&address, &writer, "testing_memory_probe", json!({"write": SECRET})));
        assert_eq!(wrote["data"]["wrote"], true, "{wrote}");
        let reversed: String = SECRET.chars().rev().collect();
        let scanned = envelope(&call_tool(
            &address,
            &reader,
            "testing_memory_probe",
            json!({"scanReversed": reversed}),
        ));
        assert_eq!(scanned["status"], "success", "{scanned}");
        // The reader scanned as much memory as the writer wrote into.
        assert!(scanned["data"]["memoryBytes"].as_u64().unwrap() >= 4 << 20, "{scanned}");
        assert_eq!(scanned["data"]["found"], serde_json::Value::Null, "round {round}: {scanned}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
