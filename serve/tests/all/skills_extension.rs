//! Skills through the MCP skills extension (SEP-2640) as well as prompts:
//! `skills/list` and `skills/get` give each skill the credential may use,
//! with the digest of the file `resources/read` serves; a skill the
//! credential cannot use is neither listed nor readable.

use crate::support::{Server, stateless_request};
use harmonia_serve::config::ServeConfig;
use harmonia_testkit::server::Loopback;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const URI: &str = "skill://job-status/SKILL.md";

fn ask(server: &Server, token: &str, method: &str, params: Value) -> Value {
    let uri = params["uri"].as_str().unwrap_or_default().to_owned();
    let body = stateless_request(method, params);
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
    if !uri.is_empty() {
        headers.push(("mcp-name", uri.as_str()));
    }
    server.post("/mcp", token, &headers, &body).json()
}

#[test]
fn skills_are_served_through_the_skills_extension_with_their_files_digests() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let token = server.token.clone();
    let discovered = ask(&server, &token, "server/discover", json!({}));
    assert!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"].is_object(),
        "{discovered}"
    );
    let listed = ask(&server, &token, "skills/list", json!({}));
    let skills = listed["result"]["skills"].as_array().unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(skills.len(), 1, "{listed}");
    let skill = &skills[0];
    assert_eq!(skill["uri"], URI);
    assert_eq!(skill["frontmatter"]["name"], "job-status");
    assert_eq!(skill["frontmatter"]["allowed-tools"], "get_job_status");
    assert_eq!(listed["result"]["cacheScope"], "private");
    let read = ask(&server, &token, "resources/read", json!({"uri": URI}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{read}"));
    let on_disk = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/job-status/SKILL.md"),
    )
    .unwrap();
    assert_eq!(text, on_disk, "the file as it is");
    let digest = format!("sha256:{}", hex(&Sha256::digest(text.as_bytes())));
    assert_eq!(skill["resources"][0], json!({"uri": URI, "digest": digest, "size": text.len()}));
    let got = ask(&server, &token, "skills/get", json!({"uri": URI}));
    assert_eq!(&got["result"]["skill"], skill, "{got}");
    let resources = ask(&server, &token, "resources/list", json!({}));
    assert!(
        resources["result"]["resources"].as_array().unwrap().iter().any(|r| r["uri"] == URI),
        "{resources}"
    );
    let prompts = ask(&server, &token, "prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"][0]["name"], "job-status", "older clients keep the prompt");
    for unknown in ["skill://nope/SKILL.md", "skill://job-status/README.md", "skill://x/job-status/SKILL.md"]
    {
        let answer = ask(&server, &token, "skills/get", json!({"uri": unknown}));
        assert!(answer["error"].is_object(), "{unknown}: {answer}");
    }

    // A credential whose allow-list has none of the skill's tools neither
    // sees nor reads it.
    let narrow = server.add_token("ws_demo", &["hostile_loop"], None);
    let listed = ask(&server, &narrow, "skills/list", json!({}));
    assert_eq!(listed["result"]["skills"], json!([]), "{listed}");
    let read = ask(&server, &narrow, "resources/read", json!({"uri": URI}));
    assert!(read["error"].is_object(), "{read}");
    let got = ask(&server, &narrow, "skills/get", json!({"uri": URI}));
    assert!(got["error"].is_object(), "{got}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
