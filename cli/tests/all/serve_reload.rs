//! `harmonia serve --stdio` reloading its plugin directory on `SIGHUP`:
//! the client, on stdin and stdout as an agent host runs it, is told the
//! tools changed and then lists the new ones. Watching is off in the
//! serve config, so only the signal can have caused the reload.

use crate::support::harmonia;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

fn send(stdin: &mut ChildStdin, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// The next message from the server that `wanted` accepts (at most two
/// minutes of waiting, else panic).
fn next(lines: &Receiver<Value>, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let message = lines.recv_timeout(Duration::from_secs(120)).expect("the server answered");
        if wanted(&message) {
            return message;
        }
    }
}

fn tools(lines: &Receiver<Value>, stdin: &mut ChildStdin, id: u64) -> Vec<String> {
    send(stdin, json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    let listed = next(lines, |message| message["id"] == id);
    let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

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

    let mut child = harmonia(&dir)
        .args(["serve", "--stdio", "--workspace", "ws_demo", "--quiet", "--config"])
        .arg(&config)
        .arg("--serve-config")
        .arg(&serve_config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (seen, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if seen.send(serde_json::from_str::<Value>(&line).unwrap_or(Value::Null)).is_err() {
                return;
            }
        }
    });

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "reload-test", "version": "1"}}}),
    );
    let initialized = next(&lines, |message| message["id"] == 1);
    assert_eq!(initialized["result"]["capabilities"]["tools"]["listChanged"], true, "{initialized}");
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let before = tools(&lines, &mut stdin, 2);
    assert!(before.contains(&"test_simple_text".to_owned()) && !before.contains(&"test_error_handling".to_owned()));

    std::fs::copy(guest("testing-error-handling"), plugins.join("errors.wasm")).unwrap();
    let hup = std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
    assert!(hup.success());
    next(&lines, |message| message["method"] == "notifications/tools/list_changed");
    let after = tools(&lines, &mut stdin, 3);
    assert!(after.contains(&"test_error_handling".to_owned()), "{after:?}");

    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
