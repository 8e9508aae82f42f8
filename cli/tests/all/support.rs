//! What the CLI's test files share: the repository root, the Python with
//! the official MCP SDK, the `harmonia` command with a clean environment,
//! and starting a server on a loopback port.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The virtual environment's Python; the tests fail, naming the script
/// that installs it, when it is missing.
pub fn python() -> PathBuf {
    let python = repo().join("target/test-deps/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs the MCP Python SDK these tests use)",
        python.display()
    );
    python
}

/// The Python SDK client running one scenario of
/// `serve/tests/clients/mcp_checks.py` with `settings`.
pub fn scenario_command(name: &str, settings: &serde_json::Value) -> Command {
    let mut command = Command::new(python());
    command.arg(repo().join("serve/tests/clients/mcp_checks.py")).arg(name).arg(settings.to_string());
    command
}

/// A scenario's process ended well and said it passed.
pub fn assert_passed(output: &Output, name: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "scenario {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(&format!("scenario {name} passed")), "{stdout}");
}

/// `harmonia ARGS` with no config, workspace or log level from the
/// environment.
pub fn harmonia_with(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harmonia"));
    command
        .args(args)
        .env_remove("HARMONIA_CONFIG")
        .env_remove("HARMONIA_WORKSPACE")
        .env_remove("HARMONIA_LOG");
    command
}

/// [`harmonia_with`] no arguments yet and its data dir (the trace key) in
/// `dir`.
pub fn harmonia(dir: &Path) -> Command {
    let mut command = harmonia_with(&[]);
    command.env("XDG_DATA_HOME", dir);
    command
}

/// `harmonia serve token add` for `workspace` and `tools` into
/// `dir/tokens.toml`: the token and its id.
pub fn add_token(dir: &Path, workspace: &str, tools: &str) -> (String, String) {
    add_token_with(dir, workspace, tools, &[])
}

/// [`add_token`] with more of `token add`'s flags.
pub fn add_token_with(dir: &Path, workspace: &str, tools: &str, extra: &[&str]) -> (String, String) {
    let output = harmonia(dir)
        .args(["serve", "token", "add", "--file"])
        .arg(dir.join("tokens.toml"))
        .args(["--workspace", workspace, "--tools", tools])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let id = stderr.split_whitespace().find(|word| word.starts_with("tok_")).unwrap().to_owned();
    (token, id)
}

/// Run `command` (a server that should refuse to start) and wait at most
/// `limit` for it to exit: what it said on stderr when it exited with a
/// failure; `None` when it exited 0 or was still running at `limit`
/// (then stopped).
pub fn refused_at_start(command: &mut Command, limit: Duration) -> Option<String> {
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
    status.filter(|status| !status.success()).map(|_| said)
}

/// Spawn `serve --http 127.0.0.1:0 ...` and wait (at most 120 s) for the
/// first stdout line, which says where it listens: the child and its URL.
pub fn spawn_listening(command: &mut Command) -> (Child, String) {
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let line = receive.recv_timeout(Duration::from_secs(120)).expect("the server says where it listens");
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    (child, url)
}

/// An MCP client on a `harmonia serve --stdio` child's stdin and stdout,
/// as an agent host runs it (2025-06-18 handshake done on start).
pub struct StdioClient {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    messages: mpsc::Receiver<serde_json::Value>,
    next_id: u64,
}

impl StdioClient {
    /// Spawn `command` (a `serve --stdio ...`) and initialize; the
    /// initialize result.
    pub fn start(command: &mut Command) -> (Self, serde_json::Value) {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (seen, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let message = serde_json::from_str(&line).unwrap_or(serde_json::Value::Null);
                if seen.send(message).is_err() {
                    return;
                }
            }
        });
        let mut client = Self { child, stdin, messages, next_id: 1 };
        let initialized = client.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "harmonia-tests", "version": "1"}}),
        );
        client.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (client, initialized)
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, message: serde_json::Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server sends that `wanted` accepts (at most ten
    /// minutes of waiting, a first compile included, else panic).
    pub fn next(&self, wanted: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        loop {
            let message = self.messages.recv_timeout(Duration::from_secs(600)).expect("the server answered");
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Send a request; its answer.
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next(|message| message["id"] == id)
    }

    /// The names `tools/list` shows.
    pub fn tools(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", serde_json::json!({}));
        let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().map(|tool| tool["name"].as_str().unwrap_or_default().to_owned()).collect()
    }

    /// A call's envelope.
    pub fn call(&mut self, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
        let answer = self.request("tools/call", serde_json::json!({"name": tool, "arguments": arguments}));
        answer["result"]["structuredContent"].clone()
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        // End of input ends the server.
        self.stdin.take();
        let _ = self.child.wait();
    }
}
