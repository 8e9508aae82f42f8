//! `harmonia serve --stdio` reloading its plugin directory on `SIGHUP`:
//! the client, on stdin and stdout as an agent host runs it, is told the
//! tools changed and then lists the new ones. Watching is off in the
//! serve config, so only the signal can have caused the reload.

use crate::support::{StdioClient, harmonia};

#[test]
fn a_stdio_client_is_told_of_a_reload_on_sighup_and_lists_the_new_tools() {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let guest = |name: &str| harmonia_artifacts::test_guest(name).expect("the fixture guest is built");
    std::fs::copy(guest("testing-simple-text"), plugins.join("simple.wasm")).unwrap();
    let config = dir.join("harmonia.toml");
    std::fs::write(&config, format!("mock = true\n[plugins]\ndir = {plugins:?}\n")).unwrap();
    let serve_config = dir.join("serve.toml");
    std::fs::write(&serve_config, "[reload]\nenabled = false\n").unwrap();

    let (mut client, initialized) = StdioClient::start(
        harmonia(&dir)
            .args(["serve", "--stdio", "--workspace", "ws_demo", "--quiet", "--config"])
            .arg(&config)
            .arg("--serve-config")
            .arg(&serve_config),
    );
    assert_eq!(initialized["result"]["capabilities"]["tools"]["listChanged"], true, "{initialized}");
    let before = client.tools();
    assert!(
        before.contains(&"test_simple_text".to_owned())
            && !before.contains(&"test_error_handling".to_owned())
    );

    std::fs::copy(guest("testing-error-handling"), plugins.join("errors.wasm")).unwrap();
    let hup = std::process::Command::new("kill").args(["-HUP", &client.id().to_string()]).status().unwrap();
    assert!(hup.success());
    client.next(|message| message["method"] == "notifications/tools/list_changed");
    let after = client.tools();
    assert!(after.contains(&"test_error_handling".to_owned()), "{after:?}");

    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A line of the child's stderr, or its end (the process has exited).
fn next_line(lines: &std::sync::mpsc::Receiver<String>) -> Option<String> {
    lines.recv_timeout(std::time::Duration::from_secs(120)).ok()
}

#[test]
fn sigterm_after_a_reload_waits_for_the_call_still_running_on_the_replaced_set() {
    use harmonia_testkit::server::{Gate, Loopback, Reply};
    use harmonia_testkit::tempdir::TempDir;
    use std::io::{BufRead, BufReader, Write};

    // The upstream never answers the built-in fetch: the call ends at its
    // deadline (20 s), as `tool_timeout`, which is what the drain waits
    // for. (Its gate is never opened: the order of the log lines, not a
    // clock, decides.)
    let upstream = Loopback::start();
    let never = Reply::Gated(Gate::default(), Box::new(Reply::Json(200, r#"{"hits": []}"#.into())));
    upstream.route("/api/v1/search", never);
    let dir = TempDir::new("serve-reload-drain");
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        format!(
            "[workspace]\nsource = \"mock\"\n[public_web.routes]\n\"https://hn.algolia.com\" = \"{}\"\n[cache]\ndir = {:?}\n[trace]\nkey_file = {:?}\n",
            upstream.base_url(),
            dir.path().join("cache"),
            dir.path().join("trace-key")
        ),
    )
    .unwrap();
    let tokens = dir.path().join("tokens.toml");
    let (token, _) = crate::support::add_token(dir.path(), "ws_demo", "fetch_trend_signals");
    let serve_config = dir.path().join("serve.toml");
    std::fs::write(&serve_config, format!("tokens_file = {tokens:?}\n[reload]\nenabled = false\n")).unwrap();

    let (child, url) = crate::support::spawn_listening(
        harmonia(dir.path())
            .env("HARMONIA_LOG", "info")
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(&config)
            .arg("--serve-config")
            .arg(&serve_config)
            .stderr(std::process::Stdio::piped()),
    );
    let mut child = KilledOnDrop(child);
    let (seen, lines) = std::sync::mpsc::channel();
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if seen.send(line).is_err() {
                return;
            }
        }
    });
    let mut log = Vec::new();
    let wait_for = |wanted: &str, log: &mut Vec<String>| -> String {
        loop {
            let line = next_line(&lines).unwrap_or_else(|| {
                panic!("the server exited before logging {wanted:?}:\n{}", log.join("\n"))
            });
            log.push(line.clone());
            if line.contains(wanted) {
                return line;
            }
        }
    };

    // A client calls the fetch on the first set, then goes away.
    let address = url.trim_start_matches("http://");
    let mut client = std::net::TcpStream::connect(address).unwrap();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "fetch_trend_signals", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    write!(
        client,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: fetch_trend_signals\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    upstream.await_request();
    drop(client);

    // The set is replaced (SIGHUP), then the server is told to stop.
    let hup = std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
    assert!(hup.success());
    wait_for("plugins reloaded", &mut log);
    let term = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let draining = wait_for("waiting for the calls in flight", &mut log);
    assert!(draining.contains("calls=1"), "the call on the replaced set is waited for: {draining}");
    assert!(child.0.try_wait().unwrap().is_none(), "the server exited while a call ran:\n{}", log.join("\n"));

    // The call ends (at its deadline) in the server's log, then the drain
    // ends and the server exits 0.
    let finished = wait_for("call.finished", &mut log);
    assert!(finished.contains("fetch_trend_signals") && finished.contains("tool_timeout"), "{finished}");
    assert!(
        !log.iter().any(|line| line.contains("drained, exiting")),
        "the drain ended before the call did:\n{}",
        log.join("\n")
    );
    wait_for("drained, exiting", &mut log);
    while next_line(&lines).is_some() {}
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", log.join("\n"));
}

/// The server, killed if the test fails before it exits.
struct KilledOnDrop(std::process::Child);

impl KilledOnDrop {
    fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
