//! `harmonia serve` as an OAuth 2.1 resource server (RFC 9728): the
//! protected-resource metadata, and a 401 that names it and reads as a
//! JSON-RPC error.

use crate::support::{Server, initialize};
use harmonia_serve::config::{OAuthConfig, ServeConfig};
use harmonia_testkit::server::Loopback;
use serde_json::{Value, json};

#[test]
fn the_protected_resource_metadata_is_published_and_every_401_names_it() {
    let upstream = Loopback::start();
    let oauth = OAuthConfig {
        resource: "http://127.0.0.1/mcp".into(),
        authorization_servers: vec!["https://id.example".into()],
        scopes_supported: vec!["offline_access".into()],
        tool_scope: "harmonia:tools".into(),
        skill_scope: "harmonia:skills".into(),
    };
    let server = Server::start(&upstream, ServeConfig { oauth: Some(oauth), ..ServeConfig::default() });
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let mut response = server.agent.get(format!("{}{path}", server.url)).call().unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let metadata: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(
            metadata,
            json!({"resource": "http://127.0.0.1/mcp", "authorization_servers": ["https://id.example"],
                   "bearer_methods_supported": ["header"], "resource_name": "Harmonia read-only tools",
                   "scopes_supported": ["harmonia:skills", "harmonia:tools", "offline_access"]}),
            "{path}"
        );
    }
    let answer = server.post("/mcp", "hmt_wrong", &[], &initialize());
    assert_eq!(answer.status, 401);
    let mut response = server
        .agent
        .post(format!("{}/mcp", server.url))
        .header("Content-Type", "application/json")
        .send(initialize().to_string())
        .unwrap();
    let challenge = response.headers().get("www-authenticate").unwrap().to_str().unwrap().to_owned();
    assert_eq!(
        challenge,
        r#"Bearer realm="harmonia", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="harmonia:tools""#
    );
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["error"]["code"], -32001);
    assert!(body["error"]["message"].as_str().unwrap().starts_with("Unauthorized"), "{body}");
    // Without [oauth], nothing is published.
    let plain = Server::start(&upstream, ServeConfig::default());
    let missing =
        plain.agent.get(format!("{}/.well-known/oauth-protected-resource", plain.url)).call().unwrap();
    assert_eq!(missing.status().as_u16(), 404);
}
