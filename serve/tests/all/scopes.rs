//! Tools and skills as OAuth scopes (MCP authorization, RFC 6750 §3.1):
//! with `[oauth]`, a JWT calls a tool only with that tool's scope and
//! uses a skill route only with the skill's; lacking it, the request gets
//! 403 `insufficient_scope` naming the scope (the challenge and a
//! JSON-RPC error body), before anything runs. Static tokens have no
//! scopes: their allow-list alone governs. Every scope is published in
//! the metadata, and a 401 names the scopes its route needs.

use crate::support::{Server, TOOLS, agent, initialize, stateless_call};
use harmonia_serve::auth::jwt::JwtConfig;
use harmonia_serve::config::{Limits, OAuthConfig, ServeConfig};
use harmonia_testkit::server::Loopback;
use harmonia_testkit::tempdir::TempDir;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const RESOURCE: &str = "http://127.0.0.1/mcp";
const ISSUER: &str = "https://id.example";
const METADATA: &str = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";

/// A test-only Ed25519 key (PKCS#8 DER): it signs the tokens; its public
/// half `X` is the JWKS the server trusts.
const KEY: [u8; 48] = [
    48, 46, 2, 1, 0, 48, 5, 6, 3, 43, 101, 112, 4, 34, 4, 32, 21, 9, 135, 62, 196, 85, 150, 48, 131, 245,
    163, 160, 237, 78, 175, 175, 77, 105, 77, 238, 94, 83, 26, 101, 63, 221, 168, 33, 96, 120, 101, 2,
];
const X: &str = "oaNGZ780GtkhsPwAPHVjomzAVTie9sqtuGx-hof0xII";

/// A server over the support tools trusting [`KEY`] for [`RESOURCE`],
/// with `oauth` adjusted by `adjust`.
fn server(upstream: &Loopback, dir: &TempDir, adjust: impl FnOnce(&mut OAuthConfig)) -> Server {
    bounded_server(upstream, dir, adjust, Limits::default())
}

/// [`server`] within `limits`.
fn bounded_server(
    upstream: &Loopback,
    dir: &TempDir,
    adjust: impl FnOnce(&mut OAuthConfig),
    limits: Limits,
) -> Server {
    let jwks = dir.path().join("jwks.json");
    let key = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1", "alg": "EdDSA"}]});
    std::fs::write(&jwks, key.to_string()).unwrap();
    let jwt: JwtConfig = toml::from_str(&format!(
        "jwks_file = {jwks:?}\nissuer = \"{ISSUER}\"\naudience = \"{RESOURCE}\"\n",
        jwks = jwks.display().to_string()
    ))
    .unwrap();
    let mut oauth: OAuthConfig = toml::from_str(&format!(
        "resource = \"{RESOURCE}\"\nauthorization_servers = [\"{ISSUER}\"]\nscopes_supported = [\"offline_access\"]\n"
    ))
    .unwrap();
    adjust(&mut oauth);
    let config = ServeConfig { jwt: Some(jwt), oauth: Some(oauth), limits, ..ServeConfig::default() };
    config.check().unwrap();
    Server::start(upstream, config)
}

/// A JWT for [`RESOURCE`] allowing `tools`, granting `scope` (the
/// claim left out when `None`).
fn jwt(tools: &[&str], scope: Option<Value>) -> String {
    jwt_for("ws_demo", tools, scope)
}

/// [`jwt`] naming `workspace`.
fn jwt_for(workspace: &str, tools: &[&str], scope: Option<Value>) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "agent-7", "nbf": now - 10,
        "exp": now + 600, "harmonia_workspace": workspace, "harmonia_tools": tools});
    if let Some(scope) = scope {
        claims["scope"] = scope;
    }
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("k1".into());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&KEY)).unwrap()
}

/// A POST of `body` to `path` with `token`: status, `WWW-Authenticate`
/// and the JSON body.
fn post(server: &Server, path: &str, token: &str, body: &Value) -> (u16, Option<String>, Value) {
    let mut request = server
        .agent
        .post(format!("{}{path}", server.url))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    if !token.is_empty() {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    if let Some(version) = body.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion") {
        // A stateless request names itself in its headers too.
        request = request
            .header("MCP-Protocol-Version", version.as_str().unwrap())
            .header("Mcp-Method", body["method"].as_str().unwrap())
            .header("Mcp-Name", body["params"]["name"].as_str().unwrap_or_default());
    }
    let mut response = request.send(body.to_string()).unwrap();
    let challenge =
        response.headers().get("www-authenticate").map(|value| value.to_str().unwrap().to_owned());
    let text = response.body_mut().read_to_string().unwrap();
    let json = text.lines().find_map(|line| line.strip_prefix("data:")).unwrap_or(&text).trim().to_owned();
    (response.status().as_u16(), challenge, serde_json::from_str(&json).unwrap_or(Value::Null))
}

fn refused_for(scope: &str) -> String {
    format!(
        r#"Bearer realm="harmonia", resource_metadata="{METADATA}", error="insufficient_scope", scope="{scope}""#
    )
}

#[test]
fn a_jwt_lacking_a_tools_scope_gets_403_insufficient_scope_naming_it_and_static_tokens_are_unaffected() {
    let upstream = Loopback::start();
    let dir = TempDir::new("serve-scopes");
    let server = server(&upstream, &dir, |_| {});
    let token = jwt(&["get_job_status", "hostile_loop"], Some(json!("harmonia:tools:get_job_status")));
    let job = json!({"job_id": "job-7"});

    // The scope held: the call runs.
    let (status, _, answer) = post(&server, "/mcp", &token, &stateless_call("get_job_status", job.clone()));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["status"], "success", "{answer}");

    // Allowed by the tools claim, the scope missing: 403 before it runs.
    let (status, challenge, answer) =
        post(&server, "/mcp", &token, &stateless_call("hostile_loop", json!({})));
    assert_eq!(status, 403, "{answer}");
    assert_eq!(challenge.as_deref(), Some(refused_for("harmonia:tools:hostile_loop").as_str()));
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["id"], 1, "the refused request's id: {answer}");
    assert_eq!(answer["error"]["data"]["scope"], "harmonia:tools:hostile_loop", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("insufficient_scope") && message.contains("harmonia:tools:hostile_loop"),
        "{message}"
    );

    // The same inside an MCP session.
    let (status, _, _) = post(&server, "/mcp", &token, &initialize());
    assert_eq!(status, 200);
    let session = server.open_session("/mcp", &token);
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "hostile_loop", "arguments": {}}});
    let answer = server.post(
        "/mcp",
        &token,
        &[("mcp-session-id", &session), ("mcp-protocol-version", "2025-06-18")],
        &call,
    );
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(answer.json()["id"], 9);

    // A tool outside the allow-list is an unknown tool (-32602), naming no
    // scope (the same answer whether or not the tool exists).
    for tool in ["testing_fetch_url", "no_such_tool"] {
        let (status, _, answer) = post(&server, "/mcp", &token, &stateless_call(tool, json!({})));
        assert_eq!(status, 200, "{tool}: {answer}");
        assert_eq!(answer["error"], json!({"code": -32602, "message": format!("Unknown tool: {tool}")}));
    }

    // No scope claim at all: no tool.
    let bare = jwt(&["get_job_status"], None);
    let (status, challenge, _) = post(&server, "/mcp", &bare, &stateless_call("get_job_status", job.clone()));
    assert_eq!(status, 403);
    assert_eq!(challenge.as_deref(), Some(refused_for("harmonia:tools:get_job_status").as_str()));

    // Scopes as an array work as well as a space-separated string.
    let listed = jwt(&["get_job_status"], Some(json!(["openid", "harmonia:tools:get_job_status"])));
    let (status, _, answer) = post(&server, "/mcp", &listed, &stateless_call("get_job_status", job.clone()));
    assert_eq!((status, &answer["result"]["structuredContent"]["status"]), (200, &json!("success")));

    // A static token has no scopes: its allow-list governs.
    let (status, answer) = server.call_with(&server.token, "get_job_status", job);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["status"], "success");
}

#[test]
fn a_skill_route_needs_the_skills_scope_and_every_scope_is_published() {
    let upstream = Loopback::start();
    let dir = TempDir::new("serve-scopes-skill");
    let server = server(&upstream, &dir, |_| {});
    let path = "/mcp/skills/job-status";
    let tools_only = jwt(&["get_job_status"], Some(json!("harmonia:tools:get_job_status")));
    let (status, challenge, answer) = post(&server, path, &tools_only, &initialize());
    assert_eq!(status, 403, "{answer}");
    assert_eq!(challenge.as_deref(), Some(refused_for("harmonia:skills:job-status").as_str()));
    assert_eq!(answer["error"]["data"]["scope"], "harmonia:skills:job-status");
    let skilled = jwt(&["get_job_status"], Some(json!("harmonia:skills:job-status")));
    let session = server.open_session(path, &skilled);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_job_status", "arguments": {"job_id": "job-7"}}});
    let answer = server.post(
        path,
        &skilled,
        &[("mcp-session-id", &session), ("mcp-protocol-version", "2025-06-18")],
        &call,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let message =
        answer.body.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim).next_back();
    let message: Value = serde_json::from_str(message.unwrap_or_default()).unwrap_or_default();
    assert_eq!(message["result"]["structuredContent"]["status"], "success", "{}", answer.body);

    // A 401 names the scopes its route needs: every tool's on /mcp, the
    // skill's on its route.
    let (status, challenge, _) = post(&server, path, "", &initialize());
    assert_eq!(status, 401);
    assert_eq!(
        challenge.as_deref(),
        Some(
            format!(r#"Bearer realm="harmonia", resource_metadata="{METADATA}", scope="harmonia:skills:job-status""#)
                .as_str()
        )
    );
    let (status, challenge, _) = post(&server, "/mcp", "not.a.jwt", &initialize());
    assert_eq!(status, 401);
    let challenge = challenge.unwrap();
    assert!(challenge.contains(r#"error="invalid_token""#), "{challenge}");
    let scope = challenge.split("scope=\"").nth(1).unwrap().trim_end_matches('"');
    let mut named: Vec<&str> = scope.split(' ').collect();
    named.sort();
    for tool in TOOLS {
        assert!(named.contains(&format!("harmonia:tools:{tool}").as_str()), "{challenge}");
    }
    assert!(named.iter().all(|scope| scope.starts_with("harmonia:tools:")), "{challenge}");

    // The metadata lists every tool's and skill's scope, and the
    // configured extras.
    let mut response =
        agent().get(format!("{}/.well-known/oauth-protected-resource/mcp", server.url)).call().unwrap();
    let metadata: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    let supported: Vec<&str> = metadata["scopes_supported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|scope| scope.as_str().unwrap())
        .collect();
    for scope in named.iter().copied().chain(["harmonia:skills:job-status", "offline_access"]) {
        assert!(supported.contains(&scope), "{scope} not in {supported:?}");
    }
}

#[test]
fn the_scope_names_are_configurable() {
    let upstream = Loopback::start();
    let dir = TempDir::new("serve-scopes-named");
    let server = server(&upstream, &dir, |oauth| {
        oauth.tool_scope = "tools/{tool}.read".into();
        oauth.skill_scope = "harmonia".into();
    });
    let token = jwt(&["get_job_status", "hostile_loop"], Some(json!("tools/get_job_status.read harmonia")));
    let (status, challenge, _) = post(&server, "/mcp", &token, &stateless_call("hostile_loop", json!({})));
    assert_eq!(status, 403);
    assert_eq!(challenge.as_deref(), Some(refused_for("tools/hostile_loop.read").as_str()));
    let (status, _, answer) =
        post(&server, "/mcp", &token, &stateless_call("get_job_status", json!({"job_id": "job-7"})));
    assert_eq!((status, &answer["result"]["structuredContent"]["status"]), (200, &json!("success")));
    // One scope for every skill: this token has it.
    server.open_session("/mcp/skills/job-status", &token);
}

#[test]
fn a_token_lacking_the_skills_scope_gets_403_before_the_session_bound_is_counted() {
    let upstream = Loopback::start();
    let dir = TempDir::new("serve-scopes-bound");
    let limits = Limits { max_sessions: 1, ..Limits::default() };
    let server = bounded_server(&upstream, &dir, |_| {}, limits);
    let skilled = jwt(&["get_job_status"], Some(json!("harmonia:skills:job-status")));
    server.open_session("/mcp/skills/job-status", &skilled);
    // The sessions are full; a token without the skill's scope still
    // hears what it lacks, not to come back later.
    let unscoped = jwt(&["get_job_status"], Some(json!("harmonia:tools:get_job_status")));
    let (status, challenge, _) = post(&server, "/mcp/skills/job-status", &unscoped, &initialize());
    assert_eq!(status, 403);
    assert_eq!(challenge.as_deref(), Some(refused_for("harmonia:skills:job-status").as_str()));
    let (status, _, _) = post(&server, "/mcp/skills/job-status", &skilled, &initialize());
    assert_eq!(status, 503, "the bound is full for a token that may open one");
}

/// The same JWT subject presenting a token for another workspace cannot
/// carry a stateless guarded session (and its trace) over: a JWT's
/// identity names its workspace, and the handle is bound to both.
#[test]
fn a_handle_moved_to_another_workspace_of_the_same_subject_licenses_nothing() {
    let upstream = Loopback::start();
    let dir = TempDir::new("serve-scopes-workspace");
    let server = server(&upstream, &dir, |_| {});
    let path = "/mcp/skills/job-status";
    let scope = Some(json!("harmonia:skills:job-status"));
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_job_status"),
    ];
    let call = |token: &str, handle: Option<&str>| {
        let mut body = crate::support::stateless_call("get_job_status", json!({"job_id": "job-7"}));
        if let Some(handle) = handle {
            body["params"]["_meta"]["dev.harmonia/session"] = json!(handle);
        }
        server.post(path, token, &headers, &body).json()
    };
    let first = call(&jwt_for("ws_demo", &["get_job_status"], scope.clone()), None);
    assert_eq!(first["result"]["structuredContent"]["status"], "success", "{first}");
    let handle = first["result"]["_meta"]["dev.harmonia/session"].as_str().unwrap().to_owned();
    let elsewhere = call(&jwt_for("ws_other", &["get_job_status"], scope.clone()), Some(&handle));
    assert_eq!(elsewhere["error"]["data"]["reason"], "invalid_handle", "{elsewhere}");
    // The same workspace goes on with it.
    let again = call(&jwt_for("ws_demo", &["get_job_status"], scope), Some(&handle));
    assert_eq!(again["result"]["structuredContent"]["error"]["code"], "call_refused", "{again}");
}
