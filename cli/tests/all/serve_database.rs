//! The shared PostgreSQL ledger as an operator meets it, on a real
//! server: the password comes from a file or the environment, never from
//! the URL, and never reaches a log line or an answer; `harmonia serve
//! migrate` brings the schema to this release; a replica whose database
//! refuses it starts all the same, says on `/readyz` that it is not ready
//! and why, refuses guarded calls as retryable, and serves them once the
//! database lets it in; TLS to the database verifies its certificate,
//! and never falls back to plain text.

use crate::support::{harmonia, spawn_listening};
use harmonia_testkit::postgres;
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const CANARY: &str = "CANARYpw7q-not-the-password";

/// A child killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into()
}

fn token(dir: &Path) -> String {
    crate::support::add_token(dir, "ws_demo", "get_job_status").0
}

fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}

/// `harmonia serve --http` with `dir`'s configs, `env` set: the child,
/// its URL, and the file its log goes to.
fn serve(dir: &Path, env: &[(&str, &str)]) -> (Running, String) {
    let log = std::fs::File::create(dir.join("serve.log")).unwrap();
    let (child, url) = spawn_listening(
        harmonia(dir)
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(dir.join("harmonia.toml"))
            .arg("--serve-config")
            .arg(dir.join("serve.toml"))
            .env_remove("HARMONIA_LEDGER_PASSWORD")
            .envs(env.iter().copied())
            .env("HARMONIA_LOG", "debug")
            .stderr(Stdio::from(log)),
    );
    (Running(child), url)
}

/// `/readyz`: status and body.
fn ready(agent: &ureq::Agent, url: &str) -> (u16, String) {
    let mut response = agent.get(format!("{url}/readyz")).call().unwrap();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
}

/// `/readyz` until it answers `status` with a body holding `saying` (at
/// most 30 s): its body.
fn ready_as(agent: &ureq::Agent, url: &str, status: u16, saying: &str) -> String {
    let started = Instant::now();
    loop {
        let (now, body) = ready(agent, url);
        if now == status && body.contains(saying) {
            return body;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "/readyz stayed {now}: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A guarded call on the job-status skill route, opening a new session:
/// the JSON-RPC answer's text.
fn guarded_call(agent: &ureq::Agent, url: &str, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_job_status", "arguments": {"job_id": "job-7", "harmonia_session": "new"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut response = agent
        .post(format!("{url}/mcp/skills/job-status"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "get_job_status")
        .send(body.to_string())
        .unwrap();
    response.body_mut().read_to_string().unwrap()
}

/// A replica that cannot use its ledger: `/readyz` answers 503 saying
/// `saying` and `ledger_unavailable`, and a guarded call is refused as
/// retryable. What `/readyz` and the call said, to look through after.
fn unready_and_refusing(agent: &ureq::Agent, url: &str, token: &str, saying: &str) -> (String, String) {
    let why = ready_as(agent, url, 503, saying);
    assert!(why.contains("ledger_unavailable"), "{why}");
    let answer = guarded_call(agent, url, token);
    let message: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        message["error"]["data"],
        json!({"reason": "ledger_unavailable", "retryable": true}),
        "{answer}"
    );
    (why, answer)
}

#[test]
fn the_database_password_comes_from_a_file_or_the_environment_and_never_reaches_a_log_or_an_answer() {
    let server = postgres::shared();
    let database = server.database("passwords");
    let dir = TempDir::new("serve-database");
    let dir = dir.path();
    std::fs::write(dir.join("harmonia.toml"), "mock = true\n").unwrap();
    let token = token(dir);
    let agent = agent();
    let url = server.url(&database);
    let config = |ledger: &str, password_file: Option<&str>| {
        let password = password_file.map(|file| format!("password_file = \"{file}\"\n")).unwrap_or_default();
        std::fs::write(
            dir.join("serve.toml"),
            format!("tokens_file = \"tokens.toml\"\n[sessions]\nledger = \"{ledger}\"\n{password}timeout_ms = 1000\n"),
        )
        .unwrap();
    };

    // A URL carrying a password is refused at start, without repeating it.
    let with_password =
        url.replacen(&format!("{}@", postgres::ROLE), &format!("{}:{CANARY}@", postgres::ROLE), 1);
    config(&with_password, None);
    let refused = harmonia(dir)
        .args(["serve", "--http", "127.0.0.1:0", "--serve-config"])
        .arg(dir.join("serve.toml"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("must not carry the password") && said.contains("password_file"), "{said}");
    assert!(!said.contains(CANARY), "the refusal repeats the password: {said}");

    // `harmonia serve migrate`, the password from a file.
    write_private(&dir.join("right.password"), &format!("{}\n", server.password()));
    config(&url, Some("right.password"));
    let migrate = |expected: &str| {
        let output = harmonia(dir)
            .args(["serve", "migrate", "--serve-config"])
            .arg(dir.join("serve.toml"))
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{shown}{}", String::from_utf8_lossy(&output.stderr));
        assert!(shown.contains(expected), "{shown}");
    };
    migrate("applied [1]");
    migrate("the schema is current");

    // The wrong password: the server starts, is not ready, says why, and
    // refuses guarded calls as retryable; the password is nowhere.
    write_private(&dir.join("wrong.password"), &format!("{CANARY}\n"));
    config(&url, Some("wrong.password"));
    let (running, served) = serve(dir, &[]);
    let (why, answer) = unready_and_refusing(&agent, &served, &token, "password authentication failed");
    drop(running);
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap();
    for shown in [&why, &answer, &log] {
        assert!(!shown.contains(CANARY), "the password was shown: {shown}");
        assert!(!shown.contains(server.password()), "a password was shown: {shown}");
    }

    // The right one from the environment: ready, and the call runs.
    config(&url, None);
    let (_running, served) = serve(dir, &[("HARMONIA_LEDGER_PASSWORD", server.password())]);
    ready_as(&agent, &served, 200, "ready");
    let answer = guarded_call(&agent, &served, &token);
    assert!(answer.contains("\"status\":\"success\""), "{answer}");
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap();
    assert!(!log.contains(server.password()), "the password was logged: {log}");
}

/// `harmonia serve --http` with `dir`'s serve config, when it refuses to
/// start: what it said. `None` when it failed to refuse: it exited 0, or
/// was still running after 20 s (then stopped).
fn refused_at_start(dir: &Path) -> Option<String> {
    crate::support::refused_at_start(
        harmonia(dir).args(["serve", "--http", "127.0.0.1:0", "--serve-config"]).arg(dir.join("serve.toml")),
        Duration::from_secs(20),
    )
}

#[test]
fn the_ledger_speaks_tls_to_postgresql_and_verifies_the_servers_certificate() {
    // A server that takes TCP clients only over TLS, its certificate
    // issued by an authority of the test's own.
    let server = postgres::PostgresServer::start_tls();
    let database = server.database("tls");
    let url = server.url(&database);
    let dir = TempDir::new("serve-database-tls");
    let dir = dir.path();
    std::fs::write(dir.join("harmonia.toml"), "mock = true\n").unwrap();
    let token = token(dir);
    let agent = agent();
    write_private(&dir.join("ledger.password"), &format!("{}\n", server.password()));
    let config = |ledger: &str, ca_file: Option<&Path>| {
        let ca = ca_file.map(|file| format!("ca_file = \"{}\"\n", file.display())).unwrap_or_default();
        std::fs::write(
            dir.join("serve.toml"),
            format!(
                "tokens_file = \"tokens.toml\"\n[sessions]\nledger = \"{ledger}\"\npassword_file = \"ledger.password\"\n{ca}timeout_ms = 1000\n"
            ),
        )
        .unwrap();
    };

    // `prefer`, which anything in between can turn into plain text, is
    // refused at start, saying what to write instead.
    config(&format!("{url}?sslmode=prefer"), None);
    let said = refused_at_start(dir).expect("sslmode=prefer was accepted: the server started");
    assert!(said.contains("sslmode=prefer") && said.contains("sslmode=require"), "{said}");
    // A CA file with no TLS to use it is a mistake, said at start.
    config(&url, Some(&server.ca_file()));
    let said = refused_at_start(dir).expect("a ca_file without TLS was accepted: the server started");
    assert!(said.contains("ca_file"), "{said}");

    // TLS, the certificate checked against the Mozilla roots, which never
    // issued it: no connection (never one in plain text instead), not
    // ready, saying why, and a guarded call refused as retryable.
    config(&format!("{url}?sslmode=require"), None);
    let (running, served) = serve(dir, &[]);
    unready_and_refusing(&agent, &served, &token, "invalid peer certificate");
    drop(running);

    // libpq's `verify-full` with the authority that issued it: ready, the
    // guarded call runs, and every connection the server holds is TLS.
    config(&format!("{url}?sslmode=verify-full"), Some(&server.ca_file()));
    let (_running, served) = serve(dir, &[]);
    let ready = ready_as(&agent, &served, 200, "ready");
    let answer = guarded_call(&agent, &served, &token);
    assert!(answer.contains("\"status\":\"success\""), "{answer} ({ready})");
    let counted = server.psql(
        "postgres",
        "SELECT count(*) FILTER (WHERE s.ssl) || '/' || count(*) FROM pg_stat_ssl s \
         JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'harmonia-serve'",
    );
    let (encrypted, all) = counted.split_once('/').unwrap();
    assert!(all != "0" && encrypted == all, "{encrypted} of {all} of the server's connections are TLS");
}
