//! A `harmonia serve` HTTP server in this process, on 127.0.0.1, over the
//! mock built-in tools, the looping guest and the fetch guest (routed to
//! a [`Loopback`] upstream), with static tokens made by the test (and
//! the JWTs of the config's `[jwt]`); raw
//! requests to it, and a raw socket when the test plays a hostile client.

use harmonia_host::Host;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::metrics::Metrics;
use harmonia_serve::auth::Authenticator;
use harmonia_serve::auth::jwt::JwtVerifier;
use harmonia_serve::auth::tokens::{TokenFile, TokenStore};
use harmonia_serve::config::{Rate, ServeConfig};
use harmonia_serve::http::HttpServer;
use harmonia_serve::state::ServeState;
use harmonia_testkit::hosts::guest_path;
use harmonia_testkit::server::Loopback;
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The tools of the server's first token.
pub const TOOLS: [&str; 3] = ["get_job_status", "hostile_loop", "testing_fetch_url"];

/// The running server; stopped (and drained) on drop.
pub struct Server {
    pub url: String,
    /// The first token: workspace `ws_demo`, [`TOOLS`].
    pub token: String,
    pub agent: ureq::Agent,
    tokens_path: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    runtime: tokio::runtime::Runtime,
    running: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _dir: TempDir,
}

impl Server {
    pub fn start(upstream: &Loopback, config: ServeConfig) -> Self {
        let cache = TempDir::new("serve-metrics-cache");
        Self::start_cached(upstream, config, &cache)
    }

    /// Like [`Server::start`], with the component cache in `cache`.
    pub fn start_cached(upstream: &Loopback, config: ServeConfig, cache: &TempDir) -> Self {
        Self::start_with_skills(upstream, config, cache, job_status_skill)
    }

    /// Like [`Server::start_cached`], with the skills `skills` writes
    /// into the server's directory.
    pub fn start_with_skills(
        upstream: &Loopback,
        config: ServeConfig,
        cache: &TempDir,
        skills: impl FnOnce(&TempDir) -> harmonia_host::liaison::skills::SkillSet,
    ) -> Self {
        let dir = TempDir::new("serve-metrics");
        let mut host_config = HostConfig { mock: true, ..HostConfig::default() };
        host_config.cache.dir = Some(cache.path().to_owned());
        host_config.public_web.routes.insert("https://hn.algolia.com".into(), upstream.base_url());
        harmonia_serve::bound_calls(&mut host_config, &config);
        let mut builder = Host::builder(host_config).public_web_mock(false).metrics(Metrics::new());
        for guest in ["hostile-loop", "testing-fetch-url"] {
            builder = builder.component_file(guest_path(guest)).unwrap();
        }
        let host = builder.build().unwrap();
        let state = ServeState::with_rate_limits(
            Liaison::new(host, skills(&dir)).unwrap(),
            config.limits.clone(),
            config.rate_limits.clone(),
            None,
        )
        .unwrap();
        Self::serve(state, config, &TOOLS, dir)
    }

    /// Serve `state` as `config` says, the first token allowing `tools`;
    /// `dir` lives as long as the server.
    pub fn serve(
        state: std::sync::Arc<ServeState>,
        config: ServeConfig,
        tools: &[&str],
        dir: TempDir,
    ) -> Self {
        let mut tokens = TokenFile::default();
        let (token, _) = tokens.add("ws_demo", tools.iter().map(|tool| tool.to_string()).collect()).unwrap();
        let tokens_path = dir.path().join("tokens.toml");
        tokens.save(&tokens_path).unwrap();
        let jwt = config.jwt.clone().map(|jwt| JwtVerifier::new(jwt).unwrap());
        let auth = Authenticator::new(Some(TokenStore::open(&tokens_path).unwrap()), jwt);
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = HttpServer::new(state, auth, &config);
        let running = runtime.spawn(server.run(listener, async move {
            let _ = stopped.await;
        }));
        Self {
            url,
            token,
            agent: agent(),
            tokens_path,
            stop: Some(stop),
            runtime,
            running: Some(running),
            _dir: dir,
        }
    }

    /// The runtime serving it.
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    /// Add a token for `workspace` allowing `tools`, with its own `rate`
    /// when given; the running server sees it at once.
    pub fn add_token(&self, workspace: &str, tools: &[&str], rate: Option<Rate>) -> String {
        let mut file = TokenFile::load(&self.tokens_path).unwrap();
        let (token, record) =
            file.add(workspace, tools.iter().map(|tool| tool.to_string()).collect()).unwrap();
        let stored = file.tokens.iter_mut().find(|stored| stored.id == record.id).unwrap();
        stored.rate_limit = rate;
        file.save(&self.tokens_path).unwrap();
        token
    }

    /// Point the stored token `token` (its id unchanged) at `workspace`; the
    /// running server sees it at once.
    pub fn move_token(&self, token: &str, workspace: &str) {
        let mut file = TokenFile::load(&self.tokens_path).unwrap();
        let hash = harmonia_contract::digest::sha256_hex(token.as_bytes());
        let stored = file.tokens.iter_mut().find(|stored| stored.sha256 == hash).unwrap();
        stored.workspace = workspace.to_owned();
        file.save(&self.tokens_path).unwrap();
    }

    /// Stop the server (as on SIGTERM) without waiting for the drain.
    pub fn signal_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// One stateless (2026-07-28) `tools/call` with `token`: the status
    /// and the JSON-RPC answer.
    pub fn call_with(&self, token: &str, tool: &str, arguments: Value) -> (u16, Value) {
        call_at(&self.agent, &self.url, token, tool, arguments)
    }

    /// The envelope of a call with the server's token.
    pub fn envelope(&self, tool: &str, arguments: Value) -> Value {
        self.envelope_with(&self.token, tool, arguments)
    }

    /// The envelope of a call with `token`.
    pub fn envelope_with(&self, token: &str, tool: &str, arguments: Value) -> Value {
        let (status, answer) = self.call_with(token, tool, arguments);
        assert_eq!(status, 200, "{answer}");
        answer["result"]["structuredContent"].clone()
    }

    /// The JSON-RPC error a call of `tool` is answered with, with the
    /// server's token (a call not answered with one fails the test).
    pub fn call_error(&self, tool: &str, arguments: Value) -> Value {
        let (status, answer) = self.call_with(&self.token, tool, arguments);
        assert_eq!(status, 200, "{answer}");
        assert!(answer["result"].is_null(), "answered as a tool result: {answer}");
        answer["error"].clone()
    }

    /// `POST /v1/validate` with the server's token: status and body.
    pub fn validate_status(&self, request: &Value) -> (u16, Value) {
        let (status, body) = validate_at(&self.agent, &self.url, &self.token, request);
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    pub fn validate(&self, request: Value) -> Value {
        self.validate_status(&request).1
    }

    pub fn scrape(&self) -> (u16, Option<String>, String) {
        let mut response = self.agent.get(format!("{}/metrics", self.url)).call().unwrap();
        let content_type =
            response.headers().get("content-type").and_then(|value| value.to_str().ok()).map(str::to_owned);
        (response.status().as_u16(), content_type, response.body_mut().read_to_string().unwrap())
    }

    pub fn metrics(&self) -> String {
        let (status, _, text) = self.scrape();
        assert_eq!(status, 200, "{text}");
        text
    }

    /// A POST of `body` to `path` with `token` and `headers`: status,
    /// headers' session id and the body text.
    pub fn post(&self, path: &str, token: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.url))
            .header("Authorization", &format!("Bearer {token}"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Answer::of(request.send(body.to_string()).unwrap())
    }

    /// Open an MCP session (2025-06-18 handshake) on `path` with `token`;
    /// its id.
    pub fn open_session(&self, path: &str, token: &str) -> String {
        let answer = self.post(path, token, &[], &initialize());
        assert_eq!(answer.status, 200, "{}", answer.body);
        let id = answer.session.expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post(
            path,
            token,
            &[("mcp-session-id", &id), ("mcp-protocol-version", "2025-06-18")],
            &initialized,
        );
        assert_eq!(answer.status, 202, "{}", answer.body);
        id
    }
}

/// Only the job-status skill, copied into `dir`: the test guests name
/// skills whose files do not allow them.
pub fn job_status_skill(dir: &TempDir) -> harmonia_host::liaison::skills::SkillSet {
    let skills = dir.path().join("skills/job-status");
    std::fs::create_dir_all(&skills).unwrap();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/job-status/SKILL.md");
    std::fs::copy(repo, skills.join("SKILL.md")).unwrap();
    harmonia_host::liaison::skills::load_dir(&dir.path().join("skills")).unwrap()
}

/// A response, read whole.
pub struct Answer {
    pub status: u16,
    pub session: Option<String>,
    pub retry_after: Option<String>,
    pub body: String,
}

impl Answer {
    pub fn of(mut response: ureq::http::Response<ureq::Body>) -> Self {
        let header =
            |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (session, retry_after) = (header("mcp-session-id"), header("retry-after"));
        let status = response.status().as_u16();
        let body = response.body_mut().read_to_string().unwrap_or_default();
        Self { status, session, retry_after, body }
    }

    /// The body as JSON (an SSE body's first `data:` line).
    pub fn json(&self) -> Value {
        let text = self.body.lines().find_map(|line| line.strip_prefix("data:")).unwrap_or(&self.body);
        serde_json::from_str(text.trim()).unwrap_or(Value::Null)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Close the pooled connections, so the drain need not wait for them.
        self.agent = ureq::Agent::new_with_defaults();
        self.signal_stop();
        if let Some(running) = self.running.take() {
            let _ =
                self.runtime.block_on(async { tokio::time::timeout(Duration::from_secs(20), running).await });
        }
    }
}

/// One stateless (2026-07-28) `tools/call` to the server at `url` with
/// `token` (none when empty), from any thread: the status and the
/// JSON-RPC answer.
pub fn call_at(agent: &ureq::Agent, url: &str, token: &str, tool: &str, arguments: Value) -> (u16, Value) {
    let body = stateless_call(tool, arguments);
    let mut request = agent
        .post(format!("{url}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool);
    if !token.is_empty() {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    let mut response = request.send(body.to_string()).unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// `POST /v1/validate` at `url` with `token` (from any thread): status
/// and body text.
pub fn validate_at(agent: &ureq::Agent, url: &str, token: &str, request: &Value) -> (u16, String) {
    let mut response = agent
        .post(format!("{url}/v1/validate"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(request.to_string())
        .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// The test's HTTP client: statuses are answers, not errors.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// A 2025-06-18 `initialize`.
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "serve-test", "version": "1"}}})
}

/// A stateless (2026-07-28) `tools/call` body.
pub fn stateless_call(tool: &str, arguments: Value) -> Value {
    stateless_request("tools/call", json!({"name": tool, "arguments": arguments}))
}

/// A stateless (2026-07-28) request of `method` with `params`, the
/// revision's `_meta` added.
pub fn stateless_request(method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "serve-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}
