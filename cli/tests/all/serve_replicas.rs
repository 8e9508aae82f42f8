//! Two `harmonia serve` replicas behind nginx, configured by the README's
//! example (`examples/replicas/nginx.conf`), all on 127.0.0.1: MCP sessions
//! from the official Python SDK stay on the replica that opened them, new
//! ones spread over both; SIGTERM to one drains its call in flight while
//! new sessions land on the other, and after it has exited every session
//! is on the other. A guarded session on the stateless revision
//! (2026-07-28) goes round-robin over both, with no session map: the
//! replicas share the handle key and the ledger, the guard holds across
//! them, and the trace verifies. nginx comes from Debian's package
//! (`scripts/install-test-deps.sh` installs it).

use crate::support::{add_token, assert_passed, harmonia, repo, scenario_command, spawn_listening};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

fn nginx() -> PathBuf {
    let found = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists());
    found.expect("nginx is missing: run scripts/install-test-deps.sh (it installs Debian's nginx)")
}

/// A child stopped with SIGTERM (nginx's master then stops its workers),
/// killed if it has not exited within 10 s.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.0.try_wait() {
            return;
        }
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Replica `id` of a mock server sharing `dir`'s tokens, trace key,
/// plugins and component cache with the other.
fn replica(dir: &Path, id: &str) -> (Stopped, String) {
    replica_with(dir, id, "", &dir.join("no-skills"))
}

/// [`replica`] with `extra` serve config and the skills in `skills`.
fn replica_with(dir: &Path, id: &str, extra: &str, skills: &Path) -> (Stopped, String) {
    std::fs::write(
        dir.join(format!("serve-{id}.toml")),
        format!("tokens_file = \"tokens.toml\"\nreplica_id = \"{id}\"\n{extra}"),
    )
    .unwrap();
    let (child, url) = spawn_listening(
        harmonia(dir)
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(dir.join("harmonia.toml"))
            .arg("--skills")
            .arg(skills)
            .arg("--serve-config")
            .arg(dir.join(format!("serve-{id}.toml"))),
    );
    (Stopped(child), url.trim_start_matches("http://").to_owned())
}

fn free_loopback_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// nginx on a free loopback port with the example config, its replicas'
/// addresses put in: the child and the balancer's URL.
fn balancer(dir: &Path, a: &str, b: &str) -> (Stopped, String) {
    let example = std::fs::read_to_string(repo().join("examples/replicas/nginx.conf")).unwrap();
    let listen = format!("127.0.0.1:{}", free_loopback_port());
    let config =
        example.replace("127.0.0.1:8080", &listen).replace("127.0.0.1:8081", a).replace("127.0.0.1:8082", b);
    let prefix = dir.join("nginx");
    std::fs::create_dir_all(prefix.join("tmp")).unwrap();
    std::fs::write(prefix.join("nginx.conf"), config).unwrap();
    let child = Command::new(nginx())
        .arg("-p")
        .arg(&prefix)
        .args(["-c", "nginx.conf", "-e", "stderr", "-g", "daemon off; user root;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "nginx did not listen on {listen}");
        std::thread::sleep(Duration::from_millis(20));
    }
    (Stopped(child), format!("http://{listen}"))
}

/// Reads the client's output up to the line `wanted`, echoing it.
fn expect_line(stdout: &mut BufReader<ChildStdout>, wanted: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the client ended before printing {wanted:?}");
        print!("{line}");
        if line.trim() == wanted {
            return;
        }
    }
}

#[test]
fn sessions_keep_their_replica_and_a_drained_replicas_new_sessions_go_to_the_other() {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("no-skills")).unwrap();
    let hostile_loop = harmonia_artifacts::test_guest("hostile-loop").unwrap();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!(
            "mock = true\n[plugins]\nfiles = [{hostile_loop:?}]\n[limits]\nmax_deadline_ms = 1000\n[trace]\nkey_file = {:?}\n",
            dir.join("key")
        ),
    )
    .unwrap();
    let (token, _) = add_token(&dir, "ws_demo", "hostile_loop,get_job_status");

    let (mut a, a_address) = replica(&dir, "a");
    let (b, b_address) = replica(&dir, "b");
    let (nginx, url) = balancer(&dir, &a_address, &b_address);

    let mut client = scenario_command("replicas", &json!({"url": url, "token": token}))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(client.stdout.take().unwrap());
    expect_line(&mut stdout, "calling");
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-TERM", &a.0.id().to_string()]).status().unwrap().success());
    expect_line(&mut stdout, "drained");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = a.0.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "replica a did not exit after its drain");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "replica a exits 0 after its drain");
    client.stdin.as_mut().unwrap().write_all(b"go on\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let output = client.wait_with_output().unwrap();
    assert_passed(&std::process::Output { stdout: rest.into_bytes(), ..output }, "replicas");
    drop((nginx, b));
    let _ = std::fs::remove_dir_all(&dir);
}

/// One stateless request to `url` with `token`, carrying `handle`: the
/// JSON-RPC answer.
fn stateless(
    agent: &ureq::Agent,
    url: &str,
    token: &str,
    method: &str,
    name: &str,
    params: serde_json::Value,
    handle: Option<&str>,
) -> serde_json::Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "replicas-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    if let Some(handle) = handle {
        params["_meta"]["dev.harmonia/session"] = json!(handle);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut response = agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .send(body.to_string())
        .unwrap();
    let text = response.body_mut().read_to_string().unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// The count of `harmonia_calls_total` and `harmonia_refusals_total` lines a
/// replica's `/metrics` reports.
fn served(agent: &ureq::Agent, address: &str) -> f64 {
    let text =
        agent.get(format!("http://{address}/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    text.lines()
        .filter(|line| line.starts_with("harmonia_calls_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_stateless_guarded_session_goes_round_robin_over_two_replicas_and_the_guard_holds() {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-stateless-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!("mock = true\n[trace]\nkey_file = {:?}\n", dir.join("key")),
    )
    .unwrap();
    // The replicas share the handle key (mode 600) and the ledger.
    std::fs::write(dir.join("session.key"), "0123456789abcdef0123456789abcdef-shared-by-both\n").unwrap();
    std::fs::set_permissions(dir.join("session.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .unwrap();
    let (token, _) =
        add_token(&dir, "ws_demo", "suggest_posting_windows,get_engagement_insights,get_operator_feed");
    let shared = "[sessions]\nkey_file = \"session.key\"\nledger = \"sessions.db\"\n";
    let skills = repo().join("skills");
    let (a, a_address) = replica_with(&dir, "a", shared, &skills);
    let (b, b_address) = replica_with(&dir, "b", shared, &skills);
    let (nginx, url) = balancer(&dir, &a_address, &b_address);
    let url = format!("{url}/mcp/skills/posting-schedule");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into();
    let call = |tool: &str, handle: Option<&str>| {
        let answer = stateless(
            &agent,
            &url,
            &token,
            "tools/call",
            tool,
            json!({"name": tool, "arguments": {}}),
            handle,
        );
        let envelope = answer["result"]["structuredContent"].clone();
        let next = answer["result"]["_meta"]["dev.harmonia/session"].as_str().map(str::to_owned);
        (envelope, next.unwrap_or_else(|| panic!("no handle: {answer}")))
    };
    let (first, handle) = call("get_operator_feed", None);
    assert_eq!(first["status"], "success", "{first}");
    let (retry, handle) = call("get_operator_feed", Some(&handle));
    assert_eq!(retry["error"]["code"], "call_refused", "a retry after a success is refused: {retry}");
    let (third, handle) = call("get_operator_feed", Some(&handle));
    assert_eq!(third["error"]["code"], "call_refused", "a third attempt is refused: {third}");
    let (second, handle) = call("suggest_posting_windows", Some(&handle));
    assert_eq!(second["error"]["code"], "call_refused", "a second tool is refused: {second}");
    let read = stateless(
        &agent,
        &url,
        &token,
        "resources/read",
        "harmonia://session/trace",
        json!({"uri": "harmonia://session/trace"}),
        Some(&handle),
    );
    let document =
        read["result"]["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{read}")).to_owned();
    let reasons: Vec<_> = serde_json::from_str::<serde_json::Value>(&document).unwrap()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["reason"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        reasons,
        ["", "", "retry_without_retryable_error", "retry_ceiling", "multiple_tools"],
        "{document}"
    );
    // Both replicas served the session's calls.
    let (on_a, on_b) = (served(&agent, &a_address), served(&agent, &b_address));
    assert!(on_a >= 1.0 && on_b >= 1.0, "round robin: a served {on_a}, b served {on_b}");
    // The trace verifies with the key both replicas sign with, on either.
    let balancer_url = url.trim_end_matches("/mcp/skills/posting-schedule").to_owned();
    let request = json!({"trace": serde_json::from_str::<serde_json::Value>(&document).unwrap(),
        "answer": {"status": "error", "answer": "x"}});
    for _ in 0..2 {
        let mut response = agent
            .post(format!("{balancer_url}/v1/validate"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .send(request.to_string())
            .unwrap();
        let verdict: serde_json::Value =
            serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(verdict["seal"]["state"], "verified", "{verdict}");
    }
    drop((nginx, a, b));
    let _ = std::fs::remove_dir_all(&dir);
}
