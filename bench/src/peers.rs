//! `harmonia bench --only peers --peers DIR`: `harmonia serve` against its
//! closest peers, Microsoft's Wassette (wasmtime + rmcp) and hyper-mcp
//! (Extism + rmcp), each serving the same trivial tool (a fixed small
//! JSON), measured in one run by the same client.
//!
//! `DIR` is what `bench/peers/build.sh` fills with the pinned peers'
//! release binaries and the tool built for each ([`PeerFiles`]); a peer
//! whose files are absent is skipped and named. Harmonia is this binary's
//! `harmonia serve`, with the bench's trivial guest as its only plugin.
//!
//! The client is this module's own, so no SDK's cost is in any figure and
//! the three servers see the same bytes: newline-delimited JSON-RPC on a
//! child's pipes, and reqwest over HTTP (one MCP session per client:
//! `initialize`, `notifications/initialized`, then `tools/call`), on
//! streamable HTTP ([`Session`]) or, for the pinned Wassette, which serves
//! HTTP only that way, on the older HTTP+SSE transport ([`SseSession`]:
//! each answer an event on the session's stream, read with `sse-stream`).
//! The figures, each server a child process:
//! - the `tools/call` round trip, p50 and p99, over stdio and over HTTP.
//!   Over stdio the servers run side by side ([`stdio_side_by_side`]):
//!   all started, then
//!   called in alternating rounds, so a change in the machine's load
//!   falls on each alike; the ratio is also given paired by round (the
//!   median of each round's ratio), the figure least moved by the load;
//! - calls per second with 64 and 1,000 clients: over HTTP as many
//!   sessions, each calling again when answered; over stdio as many
//!   requests in flight on the one pipe (an agent host with that many
//!   calls outstanding);
//! - the server's CPU per call in each of those runs: its user and system
//!   time over the window ([`stats::cpu_seconds`], from `/proc/PID/stat`, its
//!   exited threads included) over the calls answered in it;
//! - the server's resident memory once warm (`VmRSS` after the round
//!   trips) and its peak by the end of the 1,000 (`VmHWM`);
//! - cold start to first answer over stdio: from spawning the process to
//!   the first `tools/call`'s answer (after `initialize`), median of
//!   several starts, Harmonia's component cache warm; and one start with
//!   its cache emptied first, so that it compiles, as the peers do at
//!   every start, as they ship.
//!
//! The peers run as they ship: default flags and logging (their stderr
//! is discarded), the tool loaded from a local file. Over HTTP each
//! session ([`HttpSession`]) opens, answers each call and closes within
//! [`ANSWER_TIME`], so a peer that stalls fails its figure rather than
//! hanging the bench.

use super::{Effort, Report, mcp, stats};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sse_stream::SseStream;

/// The files `bench/peers/build.sh` leaves in the peers directory.
struct PeerFiles;

impl PeerFiles {
    const WASSETTE: &str = "wassette";
    const WASSETTE_TOOL: &str = "trivial-probe.wasm";
    const HYPER_MCP: &str = "hyper-mcp";
    const HYPER_MCP_TOOL: &str = "trivial-probe.extism.wasm";
}

/// Each server's scratch home stands for all of these, so none reads or
/// writes the user's own.
const XDG: [&str; 4] = ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HOME"];

/// The port the pinned Wassette serves HTTP on (fixed in its source).
const WASSETTE_PORT: u16 = 9001;

/// The client counts of the throughput figures.
const CLIENTS: [usize; 2] = [64, 1_000];

/// Calls to each server in one round of the side-by-side round trip:
/// short enough that the machine's load barely moves within a round,
/// long enough for a round's median.
const ROUND: usize = 25;

/// The protocol revision the client asks for; each server's answer is
/// used from then on.
const PROTOCOL: &str = "2025-06-18";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Server {
    Harmonia,
    Wassette,
    HyperMcp,
}

impl Server {
    const ALL: [Server; 3] = [Server::Harmonia, Server::Wassette, Server::HyperMcp];

    fn name(self) -> &'static str {
        match self {
            Server::Harmonia => "harmonia",
            Server::Wassette => "wassette",
            Server::HyperMcp => "hyper-mcp",
        }
    }
}

/// Where each server's files are, and how each is started.
struct Setup {
    /// This run's scratch directory (configs, plugin dirs, caches).
    scratch: PathBuf,
    peers: PathBuf,
    harmonia: PathBuf,
    /// Harmonia's bearer token over HTTP (the peers take none).
    token: String,
}

impl Setup {
    fn new(peers: &Path, scratch: &Path) -> Result<Self> {
        let home = scratch.join("harmonia");
        // No skills: the built-in ones name the six tools, which are off.
        std::fs::create_dir_all(home.join("skills"))?;
        std::fs::create_dir_all(home.join("plugins"))?;
        let guest = harmonia_artifacts::bench_guest("testing-trivial").context("bench guest missing")?;
        std::fs::write(home.join("plugins/trivial_probe.wasm"), guest)?;
        std::fs::write(
            home.join("harmonia.toml"),
            "[plugins]\nbuiltin = false\ndir = \"plugins\"\n[cache]\ndir = \"cache\"\n",
        )?;
        let token = mcp::token_file(&home, "trivial_probe")?;
        // One credential drives every client: its shares are the server's
        // whole bounds, raised to 1,000 sessions; the rate limit stays on
        // at a rate no run reaches.
        std::fs::write(
            home.join("serve.toml"),
            "tokens_file = \"tokens.toml\"\n\
             [rate_limits]\ncalls_per_second = 1000000000.0\nburst = 1000000000\n\
             [limits]\nmax_sessions = 2048\nmax_sessions_per_credential = 2048\n\
             max_connections = 4096\nmax_connections_per_credential = 4096\n\
             max_in_flight_calls_per_credential = 1024\n",
        )?;
        let wassette = scratch.join("wassette/components");
        std::fs::create_dir_all(&wassette)?;
        if peers.join(PeerFiles::WASSETTE_TOOL).is_file() {
            std::fs::copy(peers.join(PeerFiles::WASSETTE_TOOL), wassette.join(PeerFiles::WASSETTE_TOOL))?;
        }
        let hyper = scratch.join("hyper-mcp");
        std::fs::create_dir_all(&hyper)?;
        let plugin = std::path::absolute(peers.join(PeerFiles::HYPER_MCP_TOOL))?;
        std::fs::write(
            hyper.join("config.yaml"),
            format!("plugins:\n  bench:\n    url: \"file://{}\"\n", plugin.display()),
        )?;
        Ok(Self {
            scratch: scratch.to_owned(),
            peers: peers.to_owned(),
            harmonia: std::env::current_exe()?,
            token,
        })
    }

    /// Why `server` cannot run here, if it cannot.
    fn missing(&self, server: Server) -> Option<String> {
        let files: &[&str] = match server {
            Server::Harmonia => return None,
            Server::Wassette => &[PeerFiles::WASSETTE, PeerFiles::WASSETTE_TOOL],
            Server::HyperMcp => &[PeerFiles::HYPER_MCP, PeerFiles::HYPER_MCP_TOOL],
        };
        let absent: Vec<String> = files
            .iter()
            .map(|file| self.peers.join(file))
            .filter(|path| !path.is_file())
            .map(|path| path.display().to_string())
            .collect();
        (!absent.is_empty()).then(|| format!("not built: {}", absent.join(", ")))
    }

    /// The command of `server` over stdio, its home as its XDG directories.
    fn stdio(&self, server: Server) -> Command {
        let home = self.scratch.join(server.name());
        let mut command = match server {
            Server::Harmonia => {
                let mut command = Command::new(&self.harmonia);
                command.args(["serve", "--stdio", "--workspace", "ws_demo", "--tools", "trivial_probe"]);
                command.arg("--skills").arg(home.join("skills"));
                command.arg("--config").arg(home.join("harmonia.toml"));
                command
            }
            Server::Wassette => {
                let mut command = Command::new(self.peers.join(PeerFiles::WASSETTE));
                command.args(["serve", "--stdio", "--plugin-dir"]).arg(home.join("components"));
                command
            }
            Server::HyperMcp => {
                let mut command = Command::new(self.peers.join(PeerFiles::HYPER_MCP));
                command.arg("--config-file").arg(home.join("config.yaml"));
                command
            }
        };
        for variable in XDG {
            command.env(variable, &home);
        }
        command
    }

    /// The command of `server` over HTTP on `port`.
    fn http(&self, server: Server, port: u16) -> Command {
        let address = format!("127.0.0.1:{port}");
        let home = self.scratch.join(server.name());
        let mut command = match server {
            Server::Harmonia => {
                let mut command = Command::new(&self.harmonia);
                command.args(["serve", "--http", &address]);
                command.arg("--serve-config").arg(home.join("serve.toml"));
                command.arg("--skills").arg(home.join("skills"));
                command.arg("--config").arg(home.join("harmonia.toml"));
                command
            }
            Server::Wassette => {
                // HTTP+SSE on WASSETTE_PORT, whatever `port` says.
                let mut command = Command::new(self.peers.join(PeerFiles::WASSETTE));
                command.args(["serve", "--http", "--plugin-dir"]).arg(home.join("components"));
                command
            }
            Server::HyperMcp => {
                let mut command = Command::new(self.peers.join(PeerFiles::HYPER_MCP));
                command.arg("--config-file").arg(home.join("config.yaml"));
                command.args(["--transport", "streamable-http", "--bind-address", &address]);
                command
            }
        };
        for variable in XDG {
            command.env(variable, &home);
        }
        command
    }
}

/// A server on a child's pipes.
struct StdioServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    fn start(mut command: Command) -> Result<Self> {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let input = child.stdin.take().context("stdin")?;
        let output = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(Self { child, input, output, next_id: 1 })
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.input, "{message}")?;
        self.input.flush()?;
        Ok(())
    }

    /// The next message with an id (notifications and log lines skipped).
    fn answer(output: &mut BufReader<ChildStdout>) -> Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if output.read_line(&mut line)? == 0 {
                bail!("the server closed its stdout");
            }
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && message.get("id").is_some()
            {
                return Ok(message);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let message = Self::answer(&mut self.output)?;
            if message["id"] == id {
                return Ok(message);
            }
        }
    }

    /// `initialize` and `notifications/initialized`.
    fn initialize(&mut self) -> Result<()> {
        let answer = self.request("initialize", initialize_params())?;
        anyhow::ensure!(answer.get("result").is_some(), "initialize refused: {answer}");
        self.send(&initialized_notification())
    }

    fn call(&mut self, tool: &str) -> Result<()> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": {}}))?;
        answered(&answer)
    }

    /// Calls per second with `in_flight` requests outstanding on the pipe
    /// for `window`: a request goes out each time an answer comes back.
    fn in_flight(&mut self, tool: &str, in_flight: usize, window: Duration) -> Result<Throughput> {
        let sent: Arc<Mutex<HashSet<u64>>> = Arc::default();
        let (more, wanted) = mpsc::channel::<()>();
        let first_id = self.next_id;
        let pid = self.child.id();
        let (input, output) = (&mut self.input, &mut self.output);
        let request = |id: u64| tools_call(tool, id);
        let (run, next_id) = std::thread::scope(|scope| -> Result<(Throughput, u64)> {
            let writer_sent = Arc::clone(&sent);
            let writer = scope.spawn(move || -> Result<u64> {
                let mut id = first_id;
                while wanted.recv().is_ok() {
                    let line = format!("{}\n", request(id));
                    writer_sent.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.insert(id);
                    input.write_all(line.as_bytes())?;
                    input.flush()?;
                    id += 1;
                }
                Ok(id)
            });
            for _ in 0..in_flight {
                more.send(())?;
            }
            let started = Instant::now();
            let cpu_at_start = stats::cpu_seconds(pid);
            let mut cpu_at_end = None;
            let (mut outstanding, mut answered_in_window, mut failed) = (in_flight, 0_usize, 0_u64);
            while outstanding > 0 {
                let message = Self::answer(output)?;
                outstanding -= 1;
                let id = message["id"].as_u64().context("an answer without a numeric id")?;
                let ours = sent.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.remove(&id);
                anyhow::ensure!(ours, "an answer to a request never sent: {message}");
                let in_window = started.elapsed() < window;
                if !in_window && cpu_at_end.is_none() {
                    cpu_at_end = Some(stats::cpu_seconds(pid));
                }
                match answered(&message) {
                    Ok(()) if in_window => answered_in_window += 1,
                    Ok(()) => {}
                    Err(_) => failed += 1,
                }
                if in_window {
                    more.send(())?;
                    outstanding += 1;
                }
            }
            drop(more);
            let next_id = writer.join().map_err(|_| anyhow::anyhow!("the writer panicked"))??;
            let cpu = cpu_at_end.unwrap_or_else(|| stats::cpu_seconds(pid)) - cpu_at_start;
            Ok((Throughput::new(answered_in_window, window, failed, cpu), next_id))
        })?;
        self.next_id = next_id;
        Ok(run)
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize_params() -> Value {
    json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "harmonia-bench", "version": "1"}})
}

/// The `initialize` request every HTTP session opens with (id 0).
fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params()})
}

/// The notification that ends a session's opening.
fn initialized_notification() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A `tools/call` of `tool` with no arguments, as request `id`.
fn tools_call(tool: &str, id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

/// Whether a `tools/call` answer is the tool's result (not a JSON-RPC
/// error, not `isError`).
fn answered(answer: &Value) -> Result<()> {
    let result = answer.get("result").with_context(|| format!("not a result: {answer}"))?;
    anyhow::ensure!(result["isError"] != true, "the tool failed: {answer}");
    anyhow::ensure!(result["content"][0]["text"].is_string(), "no text in the answer: {answer}");
    Ok(())
}

/// A throughput figure: calls answered within the window, per second,
/// and the calls that failed.
struct Throughput {
    calls_per_second: f64,
    /// The server's CPU time over the window per call answered in it (µs).
    cpu_us_per_call: f64,
    failed: u64,
}

impl Throughput {
    fn new(answered: usize, window: Duration, failed: u64, cpu_seconds: f64) -> Self {
        Self {
            calls_per_second: answered as f64 / window.as_secs_f64(),
            // No call answered: no figure, rather than the window's CPU.
            cpu_us_per_call: if answered == 0 { f64::NAN } else { cpu_seconds * 1e6 / answered as f64 },
            failed,
        }
    }
}

/// One MCP session over streamable HTTP.
struct Session {
    client: reqwest::Client,
    url: Arc<str>,
    token: Option<Arc<str>>,
    id: Option<String>,
    protocol: String,
}

impl Session {
    async fn post(&self, body: &Value) -> Result<(Option<String>, String)> {
        let mut request = self
            .client
            .post(&*self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body.to_string());
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(id) = &self.id {
            request = request.header("mcp-session-id", id).header("mcp-protocol-version", &self.protocol);
        }
        let response = request.send().await?;
        let status = response.status();
        let session =
            response.headers().get("mcp-session-id").and_then(|value| value.to_str().ok()).map(str::to_owned);
        let text = response.text().await?;
        anyhow::ensure!(status.is_success(), "HTTP {status}: {text}");
        Ok((session, text))
    }

    async fn open(client: &reqwest::Client, url: &Arc<str>, token: Option<&Arc<str>>) -> Result<Self> {
        let mut session = Self {
            client: client.clone(),
            url: Arc::clone(url),
            token: token.cloned(),
            id: None,
            protocol: PROTOCOL.to_owned(),
        };
        let init = initialize_request();
        let (id, text) = session.post(&init).await?;
        let answer = mcp::message(&text)?;
        session.protocol = answer["result"]["protocolVersion"].as_str().unwrap_or(PROTOCOL).to_owned();
        session.id = Some(id.context("no session id")?);
        session.post(&initialized_notification()).await?;
        Ok(session)
    }

    async fn call(&self, tool: &str, n: u64) -> Result<()> {
        let (_, text) = self.post(&tools_call(tool, n)).await?;
        answered(&mcp::message(&text)?)
    }

    async fn close(self) {
        let mut request = self.client.delete(&*self.url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(id) = &self.id {
            request = request.header("mcp-session-id", id).header("mcp-protocol-version", &self.protocol);
        }
        let _ = request.send().await;
    }
}

/// One MCP session on the older HTTP+SSE transport (revision 2024-11-05),
/// the only HTTP the pinned Wassette serves: a `GET /sse` stream whose
/// first event, `endpoint`, names where to POST; each POST is accepted
/// with no body, and its answer comes as a `message` event on the stream.
/// One call at a time, so the next answer with the call's id is its own.
struct SseSession {
    client: reqwest::Client,
    endpoint: String,
    events: std::pin::Pin<Box<SseStream<reqwest::Body>>>,
}

impl SseSession {
    async fn open(client: &reqwest::Client, base: &str) -> Result<Self> {
        let response = client.get(format!("{base}/sse")).header("Accept", "text/event-stream").send().await?;
        let status = response.status();
        anyhow::ensure!(status.is_success(), "GET /sse: HTTP {status}");
        let mut events = Box::pin(SseStream::new(reqwest::Body::from(response)));
        let endpoint = loop {
            let event = events.next().await.context("the stream ended before naming its endpoint")??;
            if event.event.as_deref() == Some("endpoint") {
                break event.data.context("an endpoint event without data")?;
            }
        };
        // Relative to the stream's URL, as rmcp sends it, or absolute.
        let endpoint = reqwest::Url::parse(base)?.join(&endpoint)?.to_string();
        let mut session = Self { client: client.clone(), endpoint, events };
        let init = initialize_request();
        let answer = session.request(&init).await?;
        anyhow::ensure!(answer.get("result").is_some(), "initialize refused: {answer}");
        session.post(&initialized_notification()).await?;
        Ok(session)
    }

    async fn post(&self, body: &Value) -> Result<()> {
        let response = self
            .client
            .post(&self.endpoint)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        anyhow::ensure!(status.is_success(), "HTTP {status}: {text}");
        Ok(())
    }

    /// `body` posted, and the message on the stream that answers its id.
    async fn request(&mut self, body: &Value) -> Result<Value> {
        self.post(body).await?;
        loop {
            let event = self.events.next().await.context("the session's stream ended")??;
            if event.event.as_deref().is_some_and(|name| name != "message") {
                continue;
            }
            let Some(data) = event.data else { continue };
            let message: Value = serde_json::from_str(&data)?;
            if message.get("id") == body.get("id") {
                return Ok(message);
            }
        }
    }

    async fn call(&mut self, tool: &str, n: u64) -> Result<()> {
        answered(&self.request(&tools_call(tool, n)).await?)
    }
}

/// How long a session waits for a server to open it or answer a call: a
/// peer that stalls fails the figure instead of hanging the bench.
const ANSWER_TIME: Duration = Duration::from_secs(30);

async fn within_answer_time<T>(work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(ANSWER_TIME, work)
        .await
        .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {} s", ANSWER_TIME.as_secs())))
}

/// Where a server answers MCP over HTTP, and on which transport.
struct Endpoint {
    /// Streamable HTTP's endpoint, or the HTTP+SSE transport's base URL.
    url: Arc<str>,
    token: Option<Arc<str>>,
    sse: bool,
}

/// A session on either HTTP transport.
enum HttpSession {
    Streamable(Session),
    Sse(SseSession),
}

impl HttpSession {
    async fn open(client: &reqwest::Client, endpoint: &Endpoint) -> Result<Self> {
        within_answer_time(async {
            Ok(if endpoint.sse {
                Self::Sse(SseSession::open(client, &endpoint.url).await?)
            } else {
                Self::Streamable(Session::open(client, &endpoint.url, endpoint.token.as_ref()).await?)
            })
        })
        .await
    }

    async fn call(&mut self, tool: &str, n: u64) -> Result<()> {
        within_answer_time(async {
            match self {
                Self::Streamable(session) => session.call(tool, n).await,
                Self::Sse(session) => session.call(tool, n).await,
            }
        })
        .await
    }

    /// Streamable HTTP's session deleted (a peer that does not answer the
    /// `DELETE` in time is left to end it); an SSE session ends with its
    /// stream, dropped here.
    async fn close(self) {
        if let Self::Streamable(session) = self {
            let _ = tokio::time::timeout(ANSWER_TIME, session.close()).await;
        }
    }
}

/// `clients` sessions, each calling `tool` again as soon as it is
/// answered, for `window`, on the server of process `pid`. Sessions are
/// opened before the window, 32 at a time; one that cannot open counts as
/// failed.
fn http_clients(
    runtime: &tokio::runtime::Runtime,
    endpoint: &Arc<Endpoint>,
    pid: u32,
    tool: &str,
    clients: usize,
    window: Duration,
) -> Result<(Throughput, usize)> {
    let client = reqwest::Client::builder().http1_only().pool_max_idle_per_host(clients).build()?;
    let mut sessions = Vec::with_capacity(clients);
    let mut refused = 0;
    let mut first_refusal = None;
    for chunk in (0..clients).collect::<Vec<_>>().chunks(32) {
        let opening: Vec<_> = chunk
            .iter()
            .map(|_| {
                let (client, endpoint) = (client.clone(), Arc::clone(endpoint));
                runtime.spawn(async move { HttpSession::open(&client, &endpoint).await })
            })
            .collect();
        for task in opening {
            match runtime.block_on(task)? {
                Ok(session) => sessions.push(session),
                Err(error) => {
                    refused += 1;
                    if first_refusal.is_none() {
                        first_refusal = Some(error);
                    }
                }
            }
        }
    }
    if sessions.is_empty() {
        return Err(first_refusal.unwrap_or_else(|| anyhow::anyhow!("no session opened")));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let cpu_at_start = stats::cpu_seconds(pid);
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|mut session| {
            let (stop, tool) = (Arc::clone(&stop), tool.to_owned());
            runtime.spawn(async move {
                let (mut answered, mut failed, mut n) = (0_usize, 0_u64, 1_u64);
                while !stop.load(Ordering::Relaxed) {
                    match session.call(&tool, n).await {
                        Ok(()) if started.elapsed() < window => answered += 1,
                        Ok(()) => {}
                        Err(_) => failed += 1,
                    }
                    n += 1;
                }
                (session, answered, failed)
            })
        })
        .collect();
    runtime.block_on(async { tokio::time::sleep(window).await });
    let cpu = stats::cpu_seconds(pid) - cpu_at_start;
    stop.store(true, Ordering::Relaxed);
    let (mut answered, mut failed, mut sessions) = (0, refused as u64, Vec::new());
    for task in tasks {
        let (session, task_answered, task_failed) = runtime.block_on(task)?;
        answered += task_answered;
        failed += task_failed;
        sessions.push(session);
    }
    runtime.block_on(async {
        for session in sessions {
            session.close().await;
        }
    });
    Ok((Throughput::new(answered, window, failed, cpu), refused))
}

/// A server's resident memory: (`VmRSS`, `VmHWM`) in MiB.
fn resident_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One server's figures, by key (see [`FIGURES`]).
type Figures = BTreeMap<&'static str, f64>;

/// The figures' keys and labels: the table's rows, in order.
const FIGURES: &[(&str, &str)] = &[
    ("stdio_p50_us", "stdio tools/call round trip p50 (µs)"),
    ("stdio_p99_us", "stdio tools/call round trip p99 (µs)"),
    ("http_p50_us", "HTTP tools/call round trip p50 (µs)"),
    ("http_p99_us", "HTTP tools/call round trip p99 (µs)"),
    ("stdio_64_calls_s", "stdio, 64 calls in flight (calls/s)"),
    ("stdio_1000_calls_s", "stdio, 1,000 calls in flight (calls/s)"),
    ("http_64_calls_s", "HTTP, 64 clients (calls/s)"),
    ("http_1000_calls_s", "HTTP, 1,000 clients (calls/s)"),
    ("stdio_64_cpu_us", "stdio, 64 in flight: server CPU per call (µs)"),
    ("stdio_1000_cpu_us", "stdio, 1,000 in flight: server CPU per call (µs)"),
    ("http_64_cpu_us", "HTTP, 64 clients: server CPU per call (µs)"),
    ("http_1000_cpu_us", "HTTP, 1,000 clients: server CPU per call (µs)"),
    ("stdio_rss_warm_mib", "stdio server resident once warm (MiB)"),
    ("stdio_rss_peak_mib", "stdio server peak resident, to 1,000 in flight (MiB)"),
    ("http_rss_warm_mib", "HTTP server resident once warm (MiB)"),
    ("http_rss_peak_mib", "HTTP server peak resident, to 1,000 clients (MiB)"),
    ("cold_start_ms", "cold start to first answer, stdio, median (ms)"),
    ("first_start_ms", "first start, Harmonia's cache emptied, stdio (ms)"),
];

/// The tool `server` lists (the names differ: `trivial_probe`,
/// `trivial-probe`, hyper-mcp's `bench-trivial_probe`).
fn tool_name(server: &mut StdioServer) -> Result<String> {
    let list = server.request("tools/list", json!({}))?;
    list["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| name.contains("trivial"))
        .map(str::to_owned)
        .with_context(|| format!("no trivial tool listed: {list}"))
}

/// One server's stdio round trips, side by side with the others'.
struct SideBySide {
    server: Server,
    process: StdioServer,
    tool: String,
    times: Vec<Duration>,
    /// Each round's median, µs.
    rounds_p50_us: Vec<f64>,
}

/// The stdio round trips of `servers`, side by side: every server started,
/// initialized and warmed, then called in rounds of [`ROUND`] calls each,
/// the order of the servers rotating every round, until each has made
/// twice `effort.tool_calls`. Each server's p50, p99 and resident memory
/// once warm go into its figures; a server that fails is named in its
/// problems and left out of the rounds. The ratios paired by round, by
/// peer: the median over rounds of Harmonia's round median over the
/// peer's.
fn stdio_side_by_side(
    setup: &Setup,
    servers: &[Server],
    effort: &Effort,
    measured: &mut [(Server, Figures, Vec<String>)],
) -> Vec<(Server, f64, usize)> {
    let mut running: Vec<SideBySide> = Vec::new();
    for &server in servers {
        match warmed_over_stdio(setup, server, effort) {
            Ok((process, tool)) => running.push(SideBySide {
                server,
                process,
                tool,
                times: Vec::new(),
                rounds_p50_us: Vec::new(),
            }),
            Err(error) => problem(measured, server, format!("stdio: {error:#}")),
        }
    }
    let rounds = (effort.tool_calls * 2).div_ceil(ROUND);
    let mut failed: Vec<(Server, String)> = Vec::new();
    'rounds: for round in 0..rounds {
        let count = running.len();
        for turn in 0..count {
            let each = &mut running[(round + turn) % count];
            let mut times = Vec::with_capacity(ROUND);
            for _ in 0..ROUND {
                let started = Instant::now();
                if let Err(error) = each.process.call(&each.tool) {
                    failed.push((each.server, format!("stdio: {error:#}")));
                    break 'rounds;
                }
                times.push(started.elapsed());
            }
            each.times.extend_from_slice(&times);
            each.rounds_p50_us.push(super::stats::Samples::new(times).p50_us());
        }
    }
    for (server, why) in failed {
        problem(measured, server, why);
        if let Some(index) = running.iter().position(|each| each.server == server) {
            running.remove(index).process.stop();
        }
    }
    let harmonia = running.iter().position(|each| each.server == Server::Harmonia);
    let mut paired = Vec::new();
    for each in &running {
        if let Some(ours) = harmonia.map(|index| &running[index].rounds_p50_us)
            && each.server != Server::Harmonia
        {
            let mut ratios: Vec<f64> =
                ours.iter().zip(&each.rounds_p50_us).map(|(ours, theirs)| ours / theirs).collect();
            ratios.sort_by(f64::total_cmp);
            if !ratios.is_empty() {
                paired.push((each.server, ratios[ratios.len() / 2], ratios.len()));
            }
        }
        let samples = super::stats::Samples::new(each.times.clone());
        if let Some((_, figures, _)) = measured.iter_mut().find(|(server, ..)| *server == each.server) {
            figures.insert("stdio_p50_us", samples.p50_us());
            figures.insert("stdio_p99_us", samples.p99_us());
            figures.insert("stdio_rss_warm_mib", resident_mib(each.process.child.id()).0);
        }
    }
    for each in running {
        each.process.stop();
    }
    paired
}

/// Note `why` among `server`'s problems.
fn problem(measured: &mut [(Server, Figures, Vec<String>)], server: Server, why: String) {
    if let Some((_, _, problems)) = measured.iter_mut().find(|(each, ..)| *each == server) {
        problems.push(why);
    }
}

/// `server` started over stdio, initialized and warmed by a fifth of
/// `effort.tool_calls`: the process and its trivial tool's name (the
/// process stopped if any step failed).
fn warmed_over_stdio(setup: &Setup, server: Server, effort: &Effort) -> Result<(StdioServer, String)> {
    let mut process = StdioServer::start(setup.stdio(server))?;
    let warmed = (|| -> Result<String> {
        process.initialize()?;
        let tool = tool_name(&mut process)?;
        for _ in 0..effort.tool_calls / 5 {
            process.call(&tool)?;
        }
        Ok(tool)
    })();
    match warmed {
        Ok(tool) => Ok((process, tool)),
        Err(error) => {
            process.stop();
            Err(error)
        }
    }
}

/// Throughput and memory over stdio.
fn over_stdio(setup: &Setup, server: Server, effort: &Effort, figures: &mut Figures) -> Result<String> {
    let (mut stdio, tool) = warmed_over_stdio(setup, server, effort)?;
    let result = (|| -> Result<String> {
        for clients in CLIENTS {
            let run = stdio.in_flight(&tool, clients, effort.concurrency_window)?;
            anyhow::ensure!(run.failed == 0, "{} calls failed with {clients} in flight", run.failed);
            figures.insert(
                if clients == 64 { "stdio_64_calls_s" } else { "stdio_1000_calls_s" },
                run.calls_per_second,
            );
            figures.insert(
                if clients == 64 { "stdio_64_cpu_us" } else { "stdio_1000_cpu_us" },
                run.cpu_us_per_call,
            );
        }
        figures.insert("stdio_rss_peak_mib", resident_mib(stdio.child.id()).1);
        Ok(tool)
    })();
    stdio.stop();
    result
}

/// Round trips, throughput, CPU and memory over HTTP (streamable HTTP,
/// or Wassette's HTTP+SSE).
fn over_http(
    setup: &Setup,
    server: Server,
    tool: &str,
    effort: &Effort,
    figures: &mut Figures,
) -> Result<()> {
    let port = match server {
        // The pinned Wassette always binds this one. Checked free first so
        // that a taken port is named; a process taking it between this
        // check and Wassette's bind would be measured instead (an accepted
        // race: this is a bench run by hand).
        Server::Wassette => {
            std::net::TcpListener::bind(("127.0.0.1", WASSETTE_PORT)).with_context(|| {
                format!("port {WASSETTE_PORT}, which the pinned Wassette binds, is taken")
            })?;
            WASSETTE_PORT
        }
        _ => std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port(),
    };
    let mut command = setup.http(server, port);
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    let result = (|| -> Result<()> {
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            anyhow::ensure!(started.elapsed() < Duration::from_secs(60), "{} never listened", server.name());
            if let Some(status) = child.try_wait()? {
                bail!("{} exited: {status}", server.name());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let endpoint = Arc::new(Endpoint {
            url: match server {
                Server::Wassette => format!("http://127.0.0.1:{port}"),
                _ => format!("http://127.0.0.1:{port}/mcp"),
            }
            .into(),
            token: (server == Server::Harmonia).then(|| setup.token.as_str().into()),
            sse: server == Server::Wassette,
        });
        let client = reqwest::Client::builder().http1_only().build()?;
        let samples = runtime.block_on(async {
            let mut session = HttpSession::open(&client, &endpoint).await?;
            for n in 0..(effort.tool_calls / 5) as u64 {
                session.call(tool, n).await?;
            }
            let mut times = Vec::with_capacity(effort.tool_calls * 2);
            for n in 0..(effort.tool_calls * 2) as u64 {
                let started = Instant::now();
                session.call(tool, n).await?;
                times.push(started.elapsed());
            }
            session.close().await;
            anyhow::Ok(super::stats::Samples::new(times))
        })?;
        figures.insert("http_p50_us", samples.p50_us());
        figures.insert("http_p99_us", samples.p99_us());
        figures.insert("http_rss_warm_mib", resident_mib(child.id()).0);
        for clients in CLIENTS {
            let (run, refused) =
                http_clients(&runtime, &endpoint, child.id(), tool, clients, effort.concurrency_window)?;
            anyhow::ensure!(
                run.failed == 0,
                "{} of {clients} clients' calls failed ({refused} sessions refused)",
                run.failed
            );
            figures.insert(
                if clients == 64 { "http_64_calls_s" } else { "http_1000_calls_s" },
                run.calls_per_second,
            );
            figures.insert(
                if clients == 64 { "http_64_cpu_us" } else { "http_1000_cpu_us" },
                run.cpu_us_per_call,
            );
        }
        figures.insert("http_rss_peak_mib", resident_mib(child.id()).1);
        Ok(())
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// From spawning `server` to its first `tools/call` answered, over stdio.
fn first_answer(setup: &Setup, server: Server, tool: &str) -> Result<Duration> {
    let started = Instant::now();
    let mut stdio = StdioServer::start(setup.stdio(server))?;
    let answered = stdio.initialize().and_then(|()| stdio.call(tool)).map(|()| started.elapsed());
    stdio.stop();
    answered
}

fn cold_start(
    setup: &Setup,
    server: Server,
    tool: &str,
    effort: &Effort,
    figures: &mut Figures,
) -> Result<()> {
    // Harmonia's first start compiles, as the peers' every start does.
    let _ = std::fs::remove_dir_all(setup.scratch.join("harmonia/cache"));
    figures.insert("first_start_ms", first_answer(setup, server, tool)?.as_secs_f64() * 1000.0);
    let mut times: Vec<Duration> =
        (0..effort.loads * 2).map(|_| first_answer(setup, server, tool)).collect::<Result<_>>()?;
    times.sort();
    figures.insert("cold_start_ms", times[times.len() / 2].as_secs_f64() * 1000.0);
    Ok(())
}

/// Everything but the stdio round trips, for one server that made them.
fn measure(
    setup: &Setup,
    server: Server,
    effort: &Effort,
    figures: &mut Figures,
    problems: &mut Vec<String>,
) {
    let tool = match over_stdio(setup, server, effort, figures) {
        Ok(tool) => tool,
        Err(error) => {
            problems.push(format!("stdio: {error:#}"));
            return;
        }
    };
    if let Err(error) = over_http(setup, server, &tool, effort, figures) {
        problems.push(format!("HTTP: {error:#}"));
    }
    if let Err(error) = cold_start(setup, server, &tool, effort, figures) {
        problems.push(format!("cold start: {error:#}"));
    }
}

fn cell(value: Option<f64>) -> String {
    match value {
        Some(value) if value.is_finite() && value >= 100.0 => format!("{value:.0}"),
        Some(value) if value.is_finite() => format!("{value:.1}"),
        _ => "—".to_owned(),
    }
}

/// The peers' figures against Harmonia's, peers read from `dir`.
pub fn run(dir: &Path, effort: &Effort, out: &mut Report) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("harmonia-bench-peers-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    // reqwest is built with rustls but no provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let result = (|| -> Result<()> {
        let setup = Setup::new(dir, &scratch)?;
        out.say("\npeers: the same trivial tool (a fixed small JSON), the same client, one run");
        let mut present = Vec::new();
        for server in Server::ALL {
            match setup.missing(server) {
                Some(why) => {
                    out.say(format!("  {}: skipped, {why}", server.name()));
                    out.insert(&format!("peers_{}_skipped", server.name().replace('-', "_")), json!(why));
                }
                None => present.push(server),
            }
        }
        let mut measured: Vec<(Server, Figures, Vec<String>)> =
            present.iter().map(|&server| (server, Figures::new(), Vec::new())).collect();
        let paired = stdio_side_by_side(&setup, &present, effort, &mut measured);
        for (server, figures, problems) in &mut measured {
            if problems.is_empty() {
                measure(&setup, *server, effort, figures, problems);
            }
            for problem in problems.iter() {
                out.say(format!("  {}: {problem}", server.name()));
            }
            let key = server.name().replace('-', "_");
            for (figure, value) in figures.iter() {
                out.insert(&format!("peers_{key}_{figure}"), json!(value));
            }
            if !problems.is_empty() {
                out.insert(&format!("peers_{key}_problems"), json!(problems));
            }
        }
        let measured: Vec<(Server, Figures)> =
            measured.into_iter().map(|(server, figures, _)| (server, figures)).collect();
        let harmonia =
            measured.iter().find(|(server, _)| *server == Server::Harmonia).map(|(_, f)| f.clone());
        let harmonia = harmonia.unwrap_or_default();
        let names: Vec<&str> = measured.iter().map(|(server, _)| server.name()).collect();
        out.say(format!(
            "  {:<54}{}",
            "",
            names.iter().map(|name| format!("{name:>11}")).collect::<String>()
        ));
        for (key, label) in FIGURES {
            let cells: String = measured
                .iter()
                .map(|(_, figures)| format!("{:>11}", cell(figures.get(key).copied())))
                .collect();
            out.say(format!("  {label:<54}{cells}"));
        }
        out.say("  ratios, harmonia / peer (below 1 is better for times and memory, above 1 for calls/s):");
        for (server, figures) in measured.iter().filter(|(server, _)| *server != Server::Harmonia) {
            for (key, label) in FIGURES {
                if let (Some(ours), Some(theirs)) = (harmonia.get(key), figures.get(key)) {
                    let ratio = ours / theirs;
                    out.say(format!("    {:<10} {label:<54} {ratio:.2}", server.name()));
                    out.insert(
                        &format!("peers_ratio_{}_{key}", server.name().replace('-', "_")),
                        json!(ratio),
                    );
                }
            }
        }
        for (server, ratio, rounds) in paired {
            let label = format!("stdio round trip p50, paired by round ({rounds} rounds)");
            out.say(format!("    {:<10} {label:<54} {ratio:.2}", server.name()));
            out.insert(
                &format!("peers_ratio_{}_stdio_p50_paired", server.name().replace('-', "_")),
                json!(ratio),
            );
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::{get, post};
    use tokio::sync::mpsc as channel;

    /// The events a stand-in HTTP+SSE server has yet to send on its one
    /// stream, and what it sends.
    type Outbox = Arc<Mutex<Option<channel::UnboundedSender<String>>>>;

    fn event(name: &str, data: &str) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// A stand-in for Wassette's transport: `GET /sse` names the endpoint
    /// (relative, as rmcp's `SseServer` sends it, or absolute), and each
    /// POST is accepted with 202 and answered on the stream, after a
    /// comment, a `ping` event with the caller's id and an answer to
    /// another id, which the client must pass over. A `tools/call` of
    /// `broken` is answered `isError`.
    async fn stand_in(absolute: bool) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let named =
            if absolute { format!("{base}/message?sessionId=7") } else { "/message?sessionId=7".into() };
        let outbox: Outbox = Arc::default();
        let stream = get(move |State(outbox): State<Outbox>| async move {
            let (sender, receiver) = channel::unbounded_channel();
            sender.send(event("endpoint", &named)).unwrap();
            *outbox.lock().unwrap() = Some(sender);
            let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
                let text = receiver.recv().await?;
                Some((Ok::<_, std::convert::Infallible>(text), receiver))
            });
            ([("content-type", "text/event-stream")], Body::from_stream(body))
        });
        let message = post(|State(outbox): State<Outbox>, body: String| async move {
            let request: Value = serde_json::from_str(&body).unwrap();
            let Some(id) = request.get("id").cloned() else { return StatusCode::ACCEPTED };
            let result = match request["method"].as_str() {
                Some("initialize") => {
                    json!({"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "stand-in", "version": "1"}})
                }
                _ if request["params"]["name"] == "broken" => {
                    json!({"content": [{"type": "text", "text": "no"}], "isError": true})
                }
                _ => json!({"content": [{"type": "text", "text": "{}"}]}),
            };
            let outbox = outbox.lock().unwrap();
            let sender = outbox.as_ref().unwrap();
            sender.send(": a comment\n\n".to_owned()).unwrap();
            // A named event that is not a message, with the caller's id.
            let ping = json!({"jsonrpc": "2.0", "id": id, "result": {"content": "not this"}});
            sender.send(event("ping", &ping.to_string())).unwrap();
            sender
                .send(event("message", &json!({"jsonrpc": "2.0", "id": "other", "result": {}}).to_string()))
                .unwrap();
            sender
                .send(event("message", &json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()))
                .unwrap();
            StatusCode::ACCEPTED
        });
        let app = axum::Router::new().route("/sse", stream).route("/message", message).with_state(outbox);
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_sse_session_posts_to_the_named_endpoint_and_reads_its_own_answer() {
        // reqwest is built with rustls but no provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().http1_only().build().unwrap();
        for absolute in [false, true] {
            let base = stand_in(absolute).await;
            let endpoint = Endpoint { url: base.as_str().into(), token: None, sse: true };
            let mut session = HttpSession::open(&client, &endpoint).await.unwrap();
            for n in 1..=3 {
                session.call("trivial-probe", n).await.unwrap();
            }
            let failed = session.call("broken", 4).await.unwrap_err();
            assert!(failed.to_string().contains("the tool failed"), "{failed}");
            session.close().await;
        }
    }
}
