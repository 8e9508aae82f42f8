//! `harmonia serve` driven by MCP clients other than the Python SDK, as
//! new users would drive it:
//! - the official TypeScript SDK (`serve/tests/clients/ts_client.mjs`): the
//!   whole OAuth discovery flow against a loopback authorization server
//!   written for the test (`oauth_server.mjs`: the SDK's own router issuing
//!   real EdDSA JWTs, its JWKS fetched by the server from `jwks_url`), then
//!   streamable HTTP with a bearer token, a skill route with the guard and
//!   the signed trace, and stdio;
//! - the MCP Inspector's CLI mode: listing and calling tools with a bearer
//!   token over HTTP, on a skill route, over stdio, and the 401 it shows
//!   for a wrong token;
//! - the OpenAI Agents SDK's MCP class over HTTP: every input schema
//!   converts to its strict mode (`serve/tests/clients/agents_strict.py`);
//! - an Agents SDK agent whose model is scripted (no network, no key)
//!   running through the SDK's `MCPServerStdio` and
//!   `MCPServerStreamableHttp`, on `/mcp` and on a skill route, where it
//!   carries the guarded session's handle and the guard refuses its second
//!   call (`serve/tests/clients/agents_scripted.py`);
//! - stock clients on the stateless revision (2026-07-28) that never send
//!   the guarded session's handle back, the Agents SDK's
//!   `MCPServerStreamableHttp` and the TypeScript SDK's v2 client
//!   (`serve/tests/clients/ts_stateless.mjs`): a retry after a success is
//!   refused, and so is a third attempt after two retryable failures (an
//!   upstream that refuses every connection), each judged by the
//!   credential's one guarded session on the skill;
//! - LangChain's MCP adapters (`MultiServerMCPClient`, `load_mcp_tools`)
//!   over stdio, HTTP and a skill route, their tools invoked as a tool node
//!   does (`serve/tests/clients/langchain_client.py`, in its own venv);
//! - the conformance suite's 0.2.0-alpha line, every requirement of the
//!   stateless revision (`--requirements 2026-07-28`), on `/mcp` and on a
//!   skill route, its fixture scenarios in
//!   `serve/tests/clients/conformance-next-baseline.yml`;
//! - the official MCP conformance suite, every server scenario, against a
//!   server also loading two fixture plugins (`guest/testing/simple-text`,
//!   `guest/testing/error-handling`), so `tools/call` runs through the
//!   whole stack: the scenarios that do not apply are its baseline
//!   (`serve/tests/clients/conformance-baseline.yml`, each with its reason),
//!   and the suite fails the run if one of them passes or any other fails.
//!
//! The Node packages and the Python virtual environments come from
//! `scripts/install-test-deps.sh` (into `target/test-deps`); the tests fail
//! naming it when they are missing.

use crate::support::{harmonia, python, repo, spawn_listening};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The test dependencies' node_modules, or a failure naming the script.
fn node_modules() -> PathBuf {
    let modules = repo().join("target/test-deps/node/node_modules");
    let missing: Vec<&str> = [
        "@modelcontextprotocol/sdk",
        "@modelcontextprotocol/inspector",
        "@modelcontextprotocol/conformance",
        "@modelcontextprotocol/client",
        "mcp-conformance-next",
        "express",
        "jose",
        "glob",
        "undici",
    ]
    .into_iter()
    .filter(|package| !modules.join(package).join("package.json").is_file())
    .collect();
    assert!(
        missing.is_empty(),
        "{} lacks {missing:?}: run scripts/install-test-deps.sh (it installs the MCP clients these tests use)",
        modules.display()
    );
    modules
}

/// `node` running `script` of `serve/tests/clients/` with the test
/// dependencies' modules.
fn node(script: &str) -> Command {
    let mut command = node_with_hooks();
    command.arg(repo().join("serve/tests/clients").join(script));
    command
}

/// `node` with the module hooks of `serve/tests/clients/node_hooks.mjs`
/// loaded: the script and its arguments follow.
fn node_with_hooks() -> Command {
    let mut command = Command::new("node");
    command
        .arg("--import")
        .arg(repo().join("serve/tests/clients/node_hooks.mjs"))
        .env("HARMONIA_NODE_MODULES", node_modules())
        .envs(quiet_harmonia());
    command
}

/// The environment of a `harmonia serve --stdio` a client starts: no
/// config from the caller's, its data dir (the trace key) a scratch one.
fn quiet_harmonia() -> [(&'static str, PathBuf); 1] {
    [("XDG_DATA_HOME", std::env::temp_dir().join(format!("harmonia-clients-data-{}", std::process::id())))]
}

/// A port free on 127.0.0.1 a moment ago (the OAuth resource URI must name
/// the server's port before it starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harmonia-clients-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("harmonia.toml"), "mock = true\n").unwrap();
    dir
}

/// A child killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `harmonia serve --http` on `address` with `serve_config` in `dir`: the
/// child and its URL.
fn serve(dir: &Path, address: &str, serve_config: &str) -> (Running, String) {
    serve_with(dir, address, serve_config, &[])
}

/// [`serve`] with `env` set for the server.
fn serve_with(dir: &Path, address: &str, serve_config: &str, env: &[(&str, &str)]) -> (Running, String) {
    std::fs::write(dir.join("serve.toml"), serve_config).unwrap();
    let log = std::fs::File::create(dir.join("serve.log")).unwrap();
    let (child, url) = spawn_listening(
        harmonia(dir)
            .args(["serve", "--http", address, "--config"])
            .arg(dir.join("harmonia.toml"))
            .arg("--serve-config")
            .arg(dir.join("serve.toml"))
            .envs(env.iter().copied())
            .stderr(log),
    );
    (Running(child), url)
}

/// A static token for `ws_demo` allowing `tools`.
fn token(dir: &Path, tools: &str) -> String {
    crate::support::add_token(dir, "ws_demo", tools).0
}

fn text(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Run a `ts_client.mjs` scenario: it passed, on `2025-11-25` (the newest
/// revision this SDK speaks).
fn typescript(scenario: &str, args: &[&str]) {
    let output = node("ts_client.mjs").arg(scenario).args(args).output().unwrap();
    let shown = text(&output);
    assert!(output.status.success(), "{scenario}: {shown}");
    assert!(shown.contains(&format!("scenario {scenario} passed")), "{shown}");
    assert!(shown.contains("protocol 2025-11-25"), "{scenario}: {shown}");
}

#[test]
fn the_typescript_sdk_finds_the_authorization_server_gets_a_token_and_calls_a_tool() {
    let dir = scratch("ts");
    let mut authorization = Running(
        node("oauth_server.mjs")
            .args(["ws_demo", "get_job_status,get_operator_feed"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(authorization.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let issued: serde_json::Value = serde_json::from_str(&line).unwrap();
    let (issuer, jwks) = (issued["issuer"].as_str().unwrap(), issued["jwks_url"].as_str().unwrap());
    let address = format!("127.0.0.1:{}", free_port());
    let resource = format!("http://{address}/mcp");
    let static_token = token(&dir, "get_job_status,get_operator_feed");
    let (_server, url) = serve(
        &dir,
        &address,
        &format!(
            "tokens_file = \"tokens.toml\"\n[jwt]\njwks_url = \"{jwks}\"\nissuer = \"{issuer}\"\naudience = \"{resource}\"\n\
             [oauth]\nresource = \"{resource}\"\nauthorization_servers = [\"{issuer}\"]\n"
        ),
    );
    typescript("oauth", &[&resource]);
    // The token the flow got was issued for this resource, with the tools'
    // scopes the server's 401 named.
    let _ = authorization.0.kill();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut authorization.0.stderr.take().unwrap(), &mut log).unwrap();
    let grant: serde_json::Value =
        serde_json::from_str(log.lines().find(|line| line.contains("issued")).expect(&log)).unwrap();
    assert_eq!(grant["issued"]["aud"], resource.as_str());
    let scope = grant["issued"]["scope"].as_str().unwrap();
    assert!(scope.split(' ').any(|scope| scope == "harmonia:tools:get_job_status"), "{scope}");

    typescript("http", &[&format!("{url}/mcp"), &static_token]);
    typescript("skill", &[&format!("{url}/mcp/skills/job-status"), &static_token]);
    let binary = env!("CARGO_BIN_EXE_harmonia");
    let config = dir.join("harmonia.toml");
    typescript(
        "stdio",
        &[binary, "serve", "--stdio", "--workspace", "ws_demo", "--config", config.to_str().unwrap()],
    );
}

/// The Inspector's CLI mode (`mcp-inspector --cli TARGET ...`).
fn inspector(target: &[&str], args: &[&str]) -> Output {
    let cli = node_modules().join("@modelcontextprotocol/inspector/cli/build/cli.js");
    Command::new("node")
        .arg(cli)
        .arg("--cli")
        .args(target)
        .args(args)
        .envs(quiet_harmonia())
        .output()
        .unwrap()
}

fn json_of(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", text(output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {}", text(output)))
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_with_a_bearer_token() {
    let dir = scratch("inspector");
    let token = token(&dir, "get_job_status,get_operator_feed");
    let (_server, url) = serve(&dir, "127.0.0.1:0", "tokens_file = \"tokens.toml\"\n");
    let bearer = format!("Authorization: Bearer {token}");
    let http = |path: &str, args: &[&str]| {
        let target = format!("{url}{path}");
        let mut all = vec!["--header", &bearer];
        all.extend_from_slice(args);
        inspector(&[&target, "--transport", "http"], &all)
    };
    let listed = json_of(&http("/mcp", &["--method", "tools/list"]));
    let mut names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["get_job_status", "get_operator_feed"]);
    let called = json_of(&http(
        "/mcp",
        &["--method", "tools/call", "--tool-name", "get_job_status", "--tool-arg", "job_id=job-7"],
    ));
    assert_eq!(called["structuredContent"]["status"], "success", "{called}");
    assert_eq!(called["isError"], false);
    let skill = json_of(&http("/mcp/skills/job-status", &["--method", "tools/list"]));
    assert_eq!(skill["tools"].as_array().unwrap().len(), 1, "{skill}");

    // A wrong token: the Inspector shows the JSON-RPC error body.
    let refused = inspector(
        &[&format!("{url}/mcp"), "--transport", "http"],
        &["--header", "Authorization: Bearer hmt_wrong", "--method", "tools/list"],
    );
    assert!(!refused.status.success());
    assert!(text(&refused).contains("Unauthorized"), "{}", text(&refused));

    // (The launcher takes `--config` for itself: the server runs `--mock`.)
    let binary = env!("CARGO_BIN_EXE_harmonia");
    let stdio = json_of(&inspector(
        &[binary, "serve", "--stdio", "--workspace", "ws_demo", "--mock"],
        &["--method", "tools/call", "--tool-name", "get_job_status", "--tool-arg", "job_id=job-7"],
    ));
    assert_eq!(stdio["structuredContent"]["status"], "success", "{stdio}");
}

/// Both paths of a stateless call answer it: the fast one and rmcp's.
#[test]
fn the_official_conformance_suite_passes_every_scenario_that_applies() {
    the_official_conformance_suite_passes_every_scenario_that_applies_on(true);
    the_official_conformance_suite_passes_every_scenario_that_applies_on(false);
}

fn the_official_conformance_suite_passes_every_scenario_that_applies_on(fast_path: bool) {
    let dir = scratch("conformance");
    let plugins: Vec<String> = ["testing-simple-text", "testing-error-handling"]
        .into_iter()
        .map(|guest| {
            format!("{:?}", harmonia_artifacts::test_guest(guest).expect("the fixture guest is built"))
        })
        .collect();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!("mock = true\n[plugins]\nfiles = [{}]\n", plugins.join(", ")),
    )
    .unwrap();
    let token = token(&dir, "test_simple_text,test_error_handling,get_job_status");
    // The suite opens a session per scenario and closes none.
    let (_server, url) = serve(
        &dir,
        "127.0.0.1:0",
        &format!(
            "tokens_file = \"tokens.toml\"\nstateless_fast_path = {fast_path}\n[limits]\nmax_sessions_per_credential = 64\n"
        ),
    );
    let clients = repo().join("serve/tests/clients");
    // The serving guide lists every scenario of the baseline, with its reason.
    let baseline = std::fs::read_to_string(clients.join("conformance-baseline.yml")).unwrap();
    let readme = std::fs::read_to_string(repo().join("docs/serving.md")).unwrap();
    let skipped: Vec<&str> = baseline.lines().filter_map(|line| line.trim().strip_prefix("- ")).collect();
    assert_eq!(skipped.len(), 21, "{baseline}");
    for scenario in skipped {
        assert!(readme.contains(&format!("`{scenario}`")), "docs/serving.md does not list {scenario}");
    }
    // The suite has no option for a credential: a preload gives every
    // request it makes the token.
    let output = node_with_hooks()
        .arg("--import")
        .arg(clients.join("conformance_bearer.mjs"))
        .arg(node_modules().join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", &format!("{url}/mcp"), "--output-dir"])
        .arg(dir.join("results"))
        .arg("--expected-failures")
        .arg(clients.join("conformance-baseline.yml"))
        .env("HARMONIA_BEARER", &token)
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    for passed in [
        "server-initialize: 1 passed, 0 failed",
        "ping: 1 passed, 0 failed",
        "tools-list: 1 passed, 0 failed",
        "tools-call-simple-text: 1 passed, 0 failed",
        "tools-call-error: 1 passed, 0 failed",
        "server-sse-multiple-streams: 2 passed, 0 failed",
        "resources-list: 1 passed, 0 failed",
        "prompts-list: 1 passed, 0 failed",
        "dns-rebinding-protection: 2 passed, 0 failed",
    ] {
        assert!(shown.contains(passed), "{passed}: {shown}");
    }
}

/// The checks of the 0.2.0-alpha line's `server-stateless` scenario that
/// need its own test server's fixture tools: the only ones that may fail.
const STATELESS_FIXTURE_CHECKS: [&str; 5] = [
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
    "sep-2575-server-sends-tools-list-changed-on-subscription",
];

/// Both paths of a stateless call answer it: the fast one and rmcp's.
#[test]
fn the_conformance_suites_next_line_passes_every_2026_07_28_requirement_that_applies() {
    the_conformance_suites_next_line_passes_every_2026_07_28_requirement_that_applies_on(true);
    the_conformance_suites_next_line_passes_every_2026_07_28_requirement_that_applies_on(false);
}

fn the_conformance_suites_next_line_passes_every_2026_07_28_requirement_that_applies_on(fast_path: bool) {
    let dir = scratch("conformance-next");
    let plugins: Vec<String> = ["testing-simple-text", "testing-error-handling"]
        .into_iter()
        .map(|guest| {
            format!("{:?}", harmonia_artifacts::test_guest(guest).expect("the fixture guest is built"))
        })
        .collect();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!("mock = true\n[plugins]\nfiles = [{}]\n", plugins.join(", ")),
    )
    .unwrap();
    let token = token(&dir, "test_simple_text,test_error_handling,get_job_status");
    let (_server, url) = serve(
        &dir,
        "127.0.0.1:0",
        &format!(
            "tokens_file = \"tokens.toml\"\nstateless_fast_path = {fast_path}\n[limits]\nmax_sessions_per_credential = 64\n"
        ),
    );
    let clients = repo().join("serve/tests/clients");
    let baseline = std::fs::read_to_string(clients.join("conformance-next-baseline.yml")).unwrap();
    let guide = std::fs::read_to_string(repo().join("docs/serving.md")).unwrap();
    for scenario in baseline.lines().filter_map(|line| line.trim().strip_prefix("- ")) {
        assert!(guide.contains(&format!("`{scenario}`")), "docs/serving.md does not list {scenario}");
    }
    // On the unguarded route and on a skill route (where the handle, the
    // current session and the trace's caching hints live).
    for route in ["/mcp", "/mcp/skills/job-status"] {
        let results = dir.join(format!("results{}", route.replace('/', "-")));
        let output = node_with_hooks()
            .arg("--import")
            .arg(clients.join("conformance_bearer.mjs"))
            .arg(node_modules().join("mcp-conformance-next/dist/index.js"))
            .args(["server", "--url", &format!("{url}{route}"), "--requirements", "2026-07-28"])
            .arg("--output-dir")
            .arg(&results)
            .arg("--expected-failures")
            .arg(clients.join("conformance-next-baseline.yml"))
            .env("HARMONIA_BEARER", &token)
            .output()
            .unwrap();
        let shown = text(&output);
        assert!(output.status.success(), "{route}: {shown}");
        for scenario in [
            "tools-list",
            "tools-call-simple-text",
            "tools-call-error",
            "caching",
            "sep-2164-resource-not-found",
        ] {
            assert!(shown.contains(&format!("✓ {scenario}: ")), "{route}: {scenario} did not pass: {shown}");
        }
        // In the scenario the baseline lists for its fixture checks, every
        // other check passes.
        let stateless = std::fs::read_dir(&results)
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .find(|path| path.file_name().unwrap().to_string_lossy().starts_with("server-server-stateless"))
            .expect("server-stateless ran");
        let checks: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(stateless.join("checks.json")).unwrap()).unwrap();
        assert!(checks.len() >= 25, "{route}: {checks:?}");
        for check in &checks {
            let id = check["id"].as_str().unwrap_or_default();
            if matches!(check["status"].as_str(), Some("FAILURE" | "WARNING")) {
                assert!(STATELESS_FIXTURE_CHECKS.contains(&id), "{route}: {id} failed: {check}");
            }
        }
    }
    // Which path answered the suite's stateless calls.
    let scrape = ureq::get(format!("{url}/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    let fast = harmonia_testkit::metric_value(&scrape, "harmonia_http_fast_path_calls_total");
    assert_eq!(fast > 0.0, fast_path, "fast path calls {fast} with stateless_fast_path = {fast_path}");
}

#[test]
fn the_openai_agents_sdk_converts_every_input_schema_to_strict_mode() {
    let python = agents_python();
    let dir = scratch("agents");
    let token = token(
        &dir,
        "fetch_trend_signals,search_trend_signals,get_engagement_insights,get_operator_feed,get_job_status,suggest_posting_windows",
    );
    let (_server, url) = serve(&dir, "127.0.0.1:0", "tokens_file = \"tokens.toml\"\n");
    let output = Command::new(python)
        .arg(repo().join("serve/tests/clients/agents_strict.py"))
        .args([&format!("{url}/mcp"), &token])
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(output.status.success() && shown.contains("scenario agents-strict passed"), "{shown}");
}

/// The test dependencies' Python with the OpenAI Agents SDK, or a failure
/// naming the script.
fn agents_python() -> PathBuf {
    let python = python();
    let found = Command::new(&python).args(["-c", "import agents"]).output().unwrap();
    assert!(
        found.status.success(),
        "the OpenAI Agents SDK is missing: run scripts/install-test-deps.sh ({})",
        String::from_utf8_lossy(&found.stderr)
    );
    python
}

/// `harmonia serve --stdio` for `ws_demo` with `dir`'s config, as a client
/// starts it: the command and its arguments.
fn stdio_server(dir: &Path) -> Vec<String> {
    let config = dir.join("harmonia.toml");
    [env!("CARGO_BIN_EXE_harmonia"), "serve", "--stdio", "--workspace", "ws_demo", "--config"]
        .into_iter()
        .map(str::to_owned)
        .chain([config.to_str().unwrap().to_owned()])
        .collect()
}

/// Run `script` of `serve/tests/clients/` with `python` for `scenario`: it
/// passed, on `revision`; its output.
fn python_scenario(python: &Path, script: &str, scenario: &str, args: &[String], revision: &str) -> String {
    let output = Command::new(python)
        .arg(repo().join("serve/tests/clients").join(script))
        .arg(scenario)
        .args(args)
        .envs(quiet_harmonia())
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(output.status.success(), "{script} {scenario}: {shown}");
    assert!(shown.contains(&format!("scenario {scenario} passed")), "{shown}");
    assert!(shown.contains(&format!("protocol {revision}\n")), "{script} {scenario}: {shown}");
    shown
}

/// The agent's final output, as the script printed it.
fn final_output(shown: &str) -> &str {
    shown
        .lines()
        .find_map(|line| line.strip_prefix("final: "))
        .unwrap_or_else(|| panic!("no final output: {shown}"))
}

/// Both paths of a stateless call answer it: the fast one and rmcp's.
#[test]
fn an_agents_sdk_agent_with_a_scripted_model_calls_a_tool_over_stdio_http_and_a_guarded_skill_route() {
    an_agents_sdk_agent_with_a_scripted_model_calls_a_tool_over_stdio_http_and_a_guarded_skill_route_on(true);
    an_agents_sdk_agent_with_a_scripted_model_calls_a_tool_over_stdio_http_and_a_guarded_skill_route_on(
        false,
    );
}

fn an_agents_sdk_agent_with_a_scripted_model_calls_a_tool_over_stdio_http_and_a_guarded_skill_route_on(
    fast_path: bool,
) {
    let python = agents_python();
    let dir = scratch("agents-scripted");
    let token = token(&dir, "get_job_status,get_operator_feed");
    let (_server, url) = serve(
        &dir,
        "127.0.0.1:0",
        &format!("tokens_file = \"tokens.toml\"\nstateless_fast_path = {fast_path}\n"),
    );
    // What job-7 is in the mock workspace (host/fixtures/demo_workspace.json):
    // the final answer quotes the envelope the tool really returned.
    let job =
        "first call success: job job-7 (Repost benchmark results) is failed, error provider_rate_limited";
    // The Agents SDK speaks the stateless revision on every transport.
    let revision = "2026-07-28";
    let agents = |scenario: &str, args: &[String]| {
        python_scenario(&python, "agents_scripted.py", scenario, args, revision)
    };

    let stdio = agents("stdio", &stdio_server(&dir));
    assert_eq!(final_output(&stdio), job, "{stdio}");
    let http = agents("http", &[format!("{url}/mcp"), token.clone()]);
    assert_eq!(final_output(&http), job, "{http}");
    // On the skill route the host carried the handle from the first result
    // to the second call, and the guard refused that second call.
    let skill = agents("skill", &[format!("{url}/mcp/skills/job-status"), token]);
    assert_eq!(final_output(&skill), format!("{job}; then error call_refused"), "{skill}");
}

/// What a stock client, carrying no handle, gets on a skill route of the
/// stateless revision: every call goes on with its credential's current
/// guarded session, so dropping the handle never buys a fresh guard.
/// Each client has its own credential (its own current session); the
/// outage server's workspace is an upstream that refuses connections, so
/// every call there fails retryably.
/// Both paths of a stateless call answer it: the fast one and rmcp's.
#[test]
fn stock_clients_that_drop_the_handle_get_one_guard_a_retry_after_success_and_a_third_attempt_refused() {
    stock_clients_that_drop_the_handle_get_one_guard_a_retry_after_success_and_a_third_attempt_refused_on(
        true,
    );
    stock_clients_that_drop_the_handle_get_one_guard_a_retry_after_success_and_a_third_attempt_refused_on(
        false,
    );
}

fn stock_clients_that_drop_the_handle_get_one_guard_a_retry_after_success_and_a_third_attempt_refused_on(
    fast_path: bool,
) {
    let python = agents_python();
    let dir = scratch("stock-clients");
    let (agents_token, ts_token) = (token(&dir, "get_job_status"), token(&dir, "get_job_status"));
    let (_server, url) = serve(
        &dir,
        "127.0.0.1:0",
        &format!("tokens_file = \"tokens.toml\"\nstateless_fast_path = {fast_path}\n"),
    );
    let outage = scratch("stock-clients-outage");
    let closed = free_port();
    std::fs::write(
        outage.join("harmonia.toml"),
        format!("[workspace]\nsource = \"http\"\nbase_url = \"http://127.0.0.1:{closed}\"\ntoken_env = \"HARMONIA_TEST_API_TOKEN\"\n"),
    )
    .unwrap();
    let (outage_agents, outage_ts) = (token(&outage, "get_job_status"), token(&outage, "get_job_status"));
    let (_outage_server, outage_url) = serve_with(
        &outage,
        "127.0.0.1:0",
        &format!("tokens_file = \"tokens.toml\"\nstateless_fast_path = {fast_path}\n"),
        &[("HARMONIA_TEST_API_TOKEN", "unused: nothing answers")],
    );
    let skill = |url: &str| format!("{url}/mcp/skills/job-status");

    let agents = |url: &str, token: &str, calls: usize| {
        let args = [skill(url), token.to_owned(), calls.to_string()];
        let shown = python_scenario(&python, "agents_scripted.py", "stock", &args, "2026-07-28");
        final_output(&shown).to_owned()
    };
    let job =
        "first call success: job job-7 (Repost benchmark results) is failed, error provider_rate_limited";
    assert_eq!(agents(&url, &agents_token, 2), format!("{job}; then error call_refused"));
    assert_eq!(
        agents(&outage_url, &outage_agents, 3),
        "first call error dependency_unavailable; then error dependency_unavailable; then error call_refused"
    );

    let typescript = |url: &str, token: &str, outcomes: &[&str]| {
        let output =
            node("ts_stateless.mjs").arg("stock").arg(skill(url)).arg(token).args(outcomes).output().unwrap();
        let shown = text(&output);
        assert!(output.status.success() && shown.contains("scenario stock passed"), "{shown}");
        assert!(shown.contains("protocol 2026-07-28"), "{shown}");
    };
    typescript(&url, &ts_token, &["success", "call_refused"]);
    typescript(
        &outage_url,
        &outage_ts,
        &["dependency_unavailable", "dependency_unavailable", "call_refused"],
    );
}

/// The LangChain adapters' own Python, or a failure naming the script.
fn langchain_python() -> PathBuf {
    let python = repo().join("target/test-deps/venv-langchain/bin/python");
    let found = Command::new(&python).args(["-c", "import langchain_mcp_adapters"]).output();
    let why = match &found {
        Ok(found) => String::from_utf8_lossy(&found.stderr).into_owned(),
        Err(error) => error.to_string(),
    };
    assert!(
        found.is_ok_and(|found| found.status.success()),
        "{} lacks langchain-mcp-adapters: run scripts/install-test-deps.sh ({why})",
        python.display()
    );
    python
}

#[test]
fn langchains_mcp_adapters_load_and_invoke_tools_over_stdio_http_and_a_guarded_skill_route() {
    let python = langchain_python();
    let dir = scratch("langchain");
    let token = token(&dir, "get_job_status,get_operator_feed");
    let (_server, url) = serve(&dir, "127.0.0.1:0", "tokens_file = \"tokens.toml\"\n");
    // The adapters need the MCP Python SDK 1.x, whose newest revision is
    // 2025-11-25.
    let revision = "2025-11-25";
    let langchain = |scenario: &str, args: &[String]| {
        python_scenario(&python, "langchain_client.py", scenario, args, revision)
    };
    // The job the tool returned, from the mock workspace, and a missing
    // job's error envelope.
    for shown in
        [langchain("stdio", &stdio_server(&dir)), langchain("http", &[format!("{url}/mcp"), token.clone()])]
    {
        assert!(
            shown.contains("job job-7: Repost benchmark results, failed, provider_rate_limited\n"),
            "{shown}"
        );
        assert!(shown.contains("missing job: job_not_found\n"), "{shown}");
    }
    let skill = langchain("skill", &[format!("{url}/mcp/skills/job-status"), token]);
    assert!(skill.contains("first call: success provider_rate_limited\n"), "{skill}");
    assert!(skill.contains("second call: call_refused\n"), "{skill}");
    // The signed trace records the refusal under the guard's rule.
    assert!(skill.contains("trace reasons: [None, None, 'retry_without_retryable_error']\n"), "{skill}");
}
