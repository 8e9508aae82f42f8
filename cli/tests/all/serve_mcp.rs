//! `harmonia serve` driven by the official MCP Python SDK: stdio and
//! streamable HTTP, the six tools on the mock and SQLite sources, the
//! allow-list, static tokens (revoked, another workspace), JWTs (expired,
//! wrong audience, issuer or key), skill-bound sessions with the guard and
//! the trace resource, `POST /v1/validate`, and bad input. The client
//! scripts are `serve/tests/clients/*.py`; they need the virtual
//! environment `scripts/install-test-deps.sh` makes.

use crate::support::{add_token, assert_passed, harmonia, python, repo, scenario_command, spawn_listening};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A config dir: harmonia.toml (mock or a SQLite store), a private trace key.
fn host_config(dir: &Path, sqlite: bool) -> PathBuf {
    let config = dir.join("harmonia.toml");
    let key = dir.join("trace-key");
    let text = if sqlite {
        let db = dir.join("harmonia.db");
        let output = harmonia(dir)
            .args(["workspace", "import"])
            .arg(repo().join("host/fixtures/demo_workspace.json"))
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        format!("[workspace]\nsource = \"sqlite\"\npath = {:?}\n[trace]\nkey_file = {:?}\n", db, key)
    } else {
        format!("mock = true\n[trace]\nkey_file = {:?}\n", key)
    };
    std::fs::write(&config, text).unwrap();
    config
}

#[test]
fn a_token_can_carry_its_own_rate_limit_and_the_flags_come_together() {
    let dir = scratch("token-rate");
    let add = |flags: &[&str]| {
        harmonia(&dir)
            .args(["serve", "token", "add", "--file"])
            .arg(dir.join("tokens.toml"))
            .args(["--workspace", "ws_demo", "--tools", "get_job_status"])
            .args(flags)
            .output()
            .unwrap()
    };
    let added = add(&["--calls-per-second", "0.5", "--burst", "3"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let text = std::fs::read_to_string(dir.join("tokens.toml")).unwrap();
    assert!(text.contains("calls_per_second = 0.5") && text.contains("burst = 3"), "{text}");
    for flags in [&["--burst", "3"][..], &["--calls-per-second", "2"][..]] {
        assert_eq!(add(flags).status.code(), Some(2), "{flags:?} alone is a usage error");
    }
    let zero = add(&["--calls-per-second", "0", "--burst", "3"]);
    assert!(!zero.status.success());
    assert!(String::from_utf8_lossy(&zero.stderr).contains("calls_per_second must be a positive number"));
}

const SIX: &str = "fetch_trend_signals,search_trend_signals,get_engagement_insights,get_operator_feed,get_job_status,suggest_posting_windows";

/// A running `harmonia serve --http 127.0.0.1:0`.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path, config: &Path, serve_config: &str) -> Self {
        let serve = dir.join("serve.toml");
        std::fs::write(&serve, serve_config).unwrap();
        let log = std::fs::File::create(dir.join("serve.log")).unwrap();
        let (child, url) = spawn_listening(
            harmonia(dir)
                .args(["serve", "--http", "127.0.0.1:0", "--config"])
                .arg(config)
                .arg("--serve-config")
                .arg(&serve)
                .env("HARMONIA_LOG", "trace")
                .stderr(log),
        );
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scenario(name: &str, settings: &Value) {
    assert_passed(&scenario_command(name, settings).output().unwrap(), name);
}

#[test]
fn http_serves_the_six_tools_the_allow_list_prompts_and_refuses_bad_credentials() {
    let dir = scratch("http");
    let config = host_config(&dir, false);
    let (token, _) = add_token(&dir, "ws_demo", SIX);
    let (limited, _) = add_token(&dir, "ws_demo", "get_job_status");
    let (other, _) = add_token(&dir, "ws_other", SIX);
    let server = Server::start(&dir, &config, "tokens_file = \"tokens.toml\"\n");
    let settings = json!({"url": server.url, "token": token, "limited_token": limited, "other_token": other});
    scenario("http_tools", &settings);
    scenario("allow_list", &settings);
    scenario("bad_credentials", &settings);
    scenario("skill", &settings);
    scenario("bad_input", &settings);
}

#[test]
fn a_revoked_token_is_refused_by_the_running_server() {
    let dir = scratch("revoke");
    let config = host_config(&dir, false);
    let (token, id) = add_token(&dir, "ws_demo", SIX);
    let (kept, _) = add_token(&dir, "ws_demo", SIX);
    let server = Server::start(&dir, &config, "tokens_file = \"tokens.toml\"\n");
    scenario("works", &json!({"url": server.url, "token": token}));
    let listed = harmonia(&dir)
        .args(["serve", "token", "list", "--file"])
        .arg(dir.join("tokens.toml"))
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(listed.contains(&id) && !listed.contains(&token), "list shows ids, never tokens: {listed}");
    let revoke = harmonia(&dir)
        .args(["serve", "token", "revoke", &id, "--file"])
        .arg(dir.join("tokens.toml"))
        .output()
        .unwrap();
    assert!(revoke.status.success(), "{}", String::from_utf8_lossy(&revoke.stderr));
    scenario("revoked", &json!({"url": server.url, "token": token}));
    scenario("works", &json!({"url": server.url, "token": kept}));
    let stored = std::fs::read_to_string(dir.join("tokens.toml")).unwrap();
    assert!(!stored.contains(&kept), "the store holds hashes only");
    drop(server);
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap();
    assert!(log.contains("authentication failed"), "a refused credential is logged: {log}");
    // One format: the host's records are tracing events like the server's
    // (a timestamp and a level first, then the target), never its own
    // `harmonia: Info call.finished` lines.
    assert!(
        log.lines()
            .any(|line| line.contains(" harmonia_host: ") && line.contains(r#"event="call.finished""#)),
        "the host's call records reach the server's log: {log}"
    );
    for line in log.lines().filter(|line| !line.trim().is_empty() && !line.starts_with("harmonia serve:")) {
        let stamp = line.split_whitespace().next().unwrap_or_default();
        assert!(
            stamp.len() >= 20 && stamp.ends_with('Z') && stamp.contains('T'),
            "a line in another format: {line}"
        );
    }
    for secret in [&token, &kept] {
        assert!(!log.contains(secret.as_str()), "a token reached the log at trace level");
        assert!(!log.contains(&secret[4..20]), "part of a token reached the log");
    }
}

#[test]
fn the_sqlite_source_serves_its_workspace_and_a_token_for_another_workspace_reads_nothing() {
    let dir = scratch("sqlite");
    let config = host_config(&dir, true);
    let (token, _) = add_token(&dir, "ws_demo", SIX);
    let (other, _) = add_token(&dir, "ws_other", SIX);
    let server = Server::start(&dir, &config, "tokens_file = \"tokens.toml\"\n");
    scenario("sqlite", &json!({"url": server.url, "token": token}));
    scenario("other_workspace", &json!({"url": server.url, "other_token": other}));
}

#[test]
fn jwt_access_tokens_are_checked_for_signature_exp_nbf_aud_iss_and_workspace() {
    let dir = scratch("jwt");
    let config = host_config(&dir, false);
    let minted = Command::new(python())
        .arg(repo().join("serve/tests/clients/make_jwts.py"))
        .arg(&dir)
        .args(["https://id.example", "harmonia"])
        .output()
        .unwrap();
    assert!(minted.status.success(), "{}", String::from_utf8_lossy(&minted.stderr));
    let mut settings: Value = serde_json::from_slice(&minted.stdout).unwrap();
    let server = Server::start(
        &dir,
        &config,
        "[jwt]\njwks_file = \"jwks.json\"\nissuer = \"https://id.example\"\naudience = \"harmonia\"\nleeway_s = 5\n",
    );
    settings["url"] = json!(server.url);
    scenario("jwt", &settings);
    drop(server);

    // The same keys from a JWKS URL (a loopback server), read at start.
    let mut web = Command::new(python())
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(web.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line
        .split(" port ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("http.server port");
    std::fs::rename(dir.join("jwks.json"), dir.join("served-jwks.json")).unwrap();
    let server = Server::start(
        &dir,
        &config,
        &format!(
            "[jwt]\njwks_url = \"http://127.0.0.1:{port}/served-jwks.json\"\nissuer = \"https://id.example\"\naudience = \"harmonia\"\njwks_refresh_min_s = 1\n"
        ),
    );
    settings["url"] = json!(server.url);
    scenario("jwt", &settings);

    // The provider rotates its keys: a token signed with the new key is
    // refused until the server has fetched the JWKS again, which the
    // unknown key id asks for.
    let rotated = settings["jwt_rotated"].as_str().unwrap();
    assert_eq!(initialize_status(&server.url, rotated), 401, "a key the server has not seen yet");
    std::fs::copy(dir.join("jwks-rotated.json"), dir.join("served-jwks.json")).unwrap();
    let started = std::time::Instant::now();
    loop {
        let status = initialize_status(&server.url, rotated);
        if status == 200 {
            break;
        }
        assert_eq!(status, 401);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "the rotated key was never fetched");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let good = settings["jwt_good"].as_str().unwrap();
    assert_eq!(initialize_status(&server.url, good), 200, "the old key still works");
    let _ = web.kill();
    let _ = web.wait();
}

#[test]
fn stdio_serves_the_tools_a_skill_and_an_allow_list() {
    let dir = scratch("stdio");
    let config = host_config(&dir, false);
    let env = json!({"HARMONIA_CONFIG": config, "XDG_DATA_HOME": dir, "PATH": std::env::var("PATH").unwrap_or_default()});
    scenario("stdio", &json!({"binary": env!("CARGO_BIN_EXE_harmonia"), "env": env}));
}

#[test]
fn http_serve_refuses_to_start_without_credentials() {
    let dir = scratch("noauth");
    let config = host_config(&dir, false);
    let output =
        harmonia(&dir).args(["serve", "--http", "127.0.0.1:0", "--config"]).arg(&config).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no unauthenticated server"));
}

/// Bounds no open-files limit can hold (each connection and each call's
/// upstream needs a descriptor) are refused at start, naming them, rather
/// than failing calls once the descriptors run out.
#[test]
fn http_serve_refuses_bounds_its_open_files_limit_cannot_hold() {
    let dir = scratch("open-files");
    let config = host_config(&dir, false);
    std::fs::write(dir.join("tokens.toml"), "").unwrap();
    std::fs::write(
        dir.join("serve.toml"),
        "tokens_file = \"tokens.toml\"\n[limits]\nmax_connections = 4000000000\nmax_connections_per_credential = 4000000000\n",
    )
    .unwrap();
    let output = harmonia(&dir)
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--serve-config")
        .arg(dir.join("serve.toml"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("limits.max_connections (4000000000)") && said.contains("ulimit -n"), "{said}");
}

/// The HTTP status of an MCP `initialize` POSTed with `token`.
fn initialize_status(url: &str, token: &str) -> u16 {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

/// A loopback OTLP/HTTP collector: every request body it receives, each
/// answered 200 with an empty protobuf message.
fn otlp_collector() -> (String, std::sync::mpsc::Receiver<Vec<u8>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let send = send.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
                    let mut length = None;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(value) = lower.strip_prefix("content-length:") {
                            length = value.trim().parse::<usize>().ok();
                        }
                    }
                    let mut body = vec![0; length.expect("an OTLP export with a Content-Length")];
                    reader.read_exact(&mut body).unwrap();
                    let _ = send.send(body);
                    let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (endpoint, receive)
}

#[test]
fn spans_reach_an_otlp_collector_without_arguments_urls_or_tokens() {
    let dir = scratch("telemetry");
    let config = host_config(&dir, false);
    let (token, _) = add_token(&dir, "ws_demo", "get_job_status,search_trend_signals");
    let (endpoint, exports) = otlp_collector();
    let mut server = Server::start(
        &dir,
        &config,
        &format!("tokens_file = \"tokens.toml\"\n[telemetry]\notlp_endpoint = \"{endpoint}\"\n"),
    );
    let canary = "CANARYotlp5";
    scenario("telemetry", &json!({"url": server.url, "token": token, "canary": canary}));
    // The batch is sent at the latest when the server stops.
    let status = Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let started = std::time::Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < std::time::Duration::from_secs(15), "serve did not stop");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut received = Vec::new();
    while let Ok(body) = exports.recv_timeout(std::time::Duration::from_secs(2)) {
        received.extend(body);
    }
    let text = String::from_utf8_lossy(&received);
    for wanted in [
        "harmonia.call",
        "harmonia.capability",
        "get_job_status",
        "search_trend_signals",
        "invalid_input",
        "harmonia-serve",
    ] {
        assert!(text.contains(wanted), "the exported spans lack {wanted}: {text:?}");
    }
    for secret in [canary, token.as_str(), "algolia", "ws_demo"] {
        assert!(!text.contains(secret), "{secret} reached the exported spans");
    }
}
