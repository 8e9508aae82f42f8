//! `harmonia serve`'s bounds, against hostile plugins and hostile
//! clients: a looping or memory-hungry plugin costs one envelope and
//! stalls none of the server's other requests, a call
//! past the in-flight bound waits for the permit (serve/tests/all/metrics.rs
//! shows the retryable envelope when none frees in time), sessions past their
//! bound get 503 with `Retry-After`, slow clients are cut, and SIGTERM
//! drains the call in flight and exits 0. The MCP client is the official
//! Python SDK (`scripts/install-test-deps.sh`).

use crate::support::{add_token, assert_passed, harmonia, scenario_command, spawn_listening};
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn guest(name: &str) -> String {
    harmonia_artifacts::test_guest(name).unwrap_or_else(|| panic!("test guest {name}")).to_owned()
}

struct Server {
    child: Child,
    url: String,
    token: String,
    /// A token for another workspace, with the same tools.
    other_token: String,
}

impl Server {
    /// A mock server with the loop and oom guests (deadline capped at
    /// 1 s), one token for them and get_job_status, and `limits`.
    fn start(name: &str, limits: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("harmonia-serve-bounds-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("no-skills")).unwrap();
        let config = dir.join("harmonia.toml");
        std::fs::write(
            &config,
            format!(
                "mock = true\n[plugins]\nfiles = [{:?}, {:?}]\n[limits]\nmax_deadline_ms = 1000\n# The server sets the call slots to its max_in_flight_calls.\nmax_calls = 64\n[trace]\nkey_file = {:?}\n",
                guest("hostile-loop"),
                guest("hostile-oom"),
                dir.join("key")
            ),
        )
        .unwrap();
        let (token, _) = add_token(&dir, "ws_demo", "hostile_loop,hostile_oom,get_job_status");
        let (other_token, _) = add_token(&dir, "ws_other", "hostile_loop,hostile_oom,get_job_status");
        std::fs::write(dir.join("serve.toml"), format!("tokens_file = \"tokens.toml\"\n[limits]\n{limits}"))
            .unwrap();
        let (child, url) = spawn_listening(
            harmonia(&dir)
                .args(["serve", "--http", "127.0.0.1:0", "--config"])
                .arg(&config)
                .arg("--skills")
                .arg(dir.join("no-skills"))
                .arg("--serve-config")
                .arg(dir.join("serve.toml")),
        );
        Self { child, url, token, other_token }
    }

    fn address(&self) -> &str {
        self.url.trim_start_matches("http://")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scenario(name: &str, settings: &serde_json::Value) -> Child {
    scenario_command(name, settings).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn passes(child: Child, name: &str) {
    assert_passed(&child.wait_with_output().unwrap(), name);
}

#[test]
fn hostile_plugins_cost_one_envelope_and_a_call_past_the_bound_waits_for_the_permit() {
    let server = Server::start("busy", "max_in_flight_calls = 1\n");
    passes(scenario("busy", &json!({"url": server.url, "token": server.token})), "busy");
}

#[test]
fn another_credential_cannot_take_over_the_python_sdks_session_or_its_call() {
    let server = Server::start("takeover", "");
    let settings = json!({"url": server.url, "token": server.token, "other_token": server.other_token});
    passes(scenario("session_takeover", &settings), "session_takeover");
}

#[test]
fn sessions_past_the_bound_get_503_with_retry_after() {
    let server = Server::start("sessions", "max_sessions = 2\nretry_after_s = 2\n");
    let settings = json!({"url": server.url, "token": server.token, "max_sessions": 2});
    passes(scenario("sessions_bound", &settings), "sessions_bound");
}

#[test]
fn sigterm_drains_the_call_in_flight_then_exits_0() {
    let mut server = Server::start("drain", "");
    let mut client = scenario("drain_call", &json!({"url": server.url, "token": server.token}));
    let mut line = String::new();
    BufReader::new(client.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "calling");
    std::thread::sleep(Duration::from_millis(400));
    let status = Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(100));
    let mut probe = TcpStream::connect(server.address()).unwrap();
    probe.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = probe.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "draining is not ready: {answer}");
    let output = client.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let started = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(0), "serve exits 0 after the drain");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "serve did not exit after the drain");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_slow_to_send_its_headers_or_body_is_cut() {
    let server = Server::start("slow", "header_timeout_s = 1\nrequest_timeout_s = 2\n");
    let mut slow_headers = TcpStream::connect(server.address()).unwrap();
    slow_headers.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    slow_headers.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = slow_headers.read_to_end(&mut rest);
    assert!(started.elapsed() < Duration::from_secs(5), "headers never finished: the connection is closed");
    let mut slow_body = TcpStream::connect(server.address()).unwrap();
    slow_body.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
        server.token
    );
    slow_body.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    let _ = slow_body.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "a body that never finishes gets 408: {answer}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A client that sends requests and never reads the answers stalls
    // only its own connection.
    let mut deaf = TcpStream::connect(server.address()).unwrap();
    deaf.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(2000);
    for _ in 0..50 {
        if deaf.write_all(&request).is_err() {
            break;
        }
    }
    let mut fine = TcpStream::connect(server.address()).unwrap();
    fine.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    fine.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// One `GET /healthz` on a new connection: the status line and headers.
fn healthz(address: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn connections_past_the_bound_get_503_with_retry_after_until_one_closes() {
    let server = Server::start("connections", "max_connections = 2\nretry_after_s = 3\n");
    let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(server.address()).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let refused = healthz(server.address());
    assert!(refused.starts_with("HTTP/1.1 503"), "a connection past the bound is refused: {refused}");
    assert!(refused.to_ascii_lowercase().contains("retry-after: 3"), "{refused}");
    drop(held);
    let started = Instant::now();
    loop {
        let answer = healthz(server.address());
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "a closed connection frees its place: {answer}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_that_stops_reading_is_disconnected_and_frees_its_place() {
    let server = Server::start("stall", "max_connections = 1\nwrite_stall_s = 1\n");
    // Thousands of pipelined requests whose answers are never read: the
    // server's writes soon find every buffer full.
    let mut stalled = TcpStream::connect(server.address()).unwrap();
    let request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    stalled.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    for _ in 0..200_000 {
        if stalled.write_all(request).is_err() {
            break;
        }
    }
    let started = Instant::now();
    loop {
        let answer = healthz(server.address());
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the connection that stopped reading still holds the only place"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stalled);
}

/// One stateless (2026-07-28) `tools/call` of `tool`; the response body.
fn stateless_call(url: &str, token: &str, tool: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut response = ureq::post(&format!("{url}/mcp"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .send(body.to_string())
        .unwrap();
    response.body_mut().read_to_string().unwrap()
}

#[test]
fn spinning_plugins_do_not_stall_the_servers_other_requests() {
    let server = Server::start("spin", "");
    // More spinning guests than the server has worker threads (one per
    // core): were a guest to keep its thread, /healthz would wait for the
    // spinners' 1 s deadline.
    let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(2);
    let spinners: Vec<_> = (0..cores * 2)
        .map(|_| {
            let (url, token) = (server.url.clone(), server.token.clone());
            std::thread::spawn(move || stateless_call(&url, &token, "hostile_loop"))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let mut probe = TcpStream::connect(server.address()).unwrap();
    probe.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = probe.read_to_string(&mut answer);
    let waited = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(waited < Duration::from_millis(400), "/healthz waited {waited:?} behind spinning plugins");
    for spinner in spinners {
        let body = spinner.join().unwrap();
        assert!(body.contains("tool_timeout"), "{body}");
    }
}
