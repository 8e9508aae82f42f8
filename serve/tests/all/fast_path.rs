//! The stateless `tools/call` fast path answers exactly as rmcp's path
//! does: the same requests sent to a server with it and to one without,
//! the same status, content type and JSON-RPC answer (the sealed handles
//! aside, which differ by their random nonce), for successes, a tool's
//! own error, invalid input, an unknown tool, a guarded session's
//! refusals and handle refusals; requests it does not take (a `_meta`
//! without the revision's required keys, routing headers that disagree)
//! go to rmcp on both. The metrics say which path answered.

use crate::support::{Server, stateless_request};
use harmonia_serve::config::ServeConfig;
use harmonia_testkit::metric_value;
use harmonia_testkit::server::Loopback;
use serde_json::{Value, json};

const SKILL: &str = "/mcp/skills/job-status";

/// The answer with every sealed handle replaced by `HANDLE`.
fn normalized(answer: &crate::support::Answer) -> (u16, Value) {
    let mut text = answer.body.clone();
    while let Some(start) = text.find("rs1.") {
        let end = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
            .map_or(text.len(), |end| start + end);
        text.replace_range(start..end, "HANDLE");
    }
    (answer.status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// A request's routing headers.
type Headers = Vec<(&'static str, String)>;

fn headers(tool: &str) -> Headers {
    vec![
        ("mcp-protocol-version", "2026-07-28".into()),
        ("mcp-method", "tools/call".into()),
        ("mcp-name", tool.into()),
    ]
}

fn send(server: &Server, path: &str, body: &Value, headers: &Headers) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
    normalized(&server.post(path, &server.token, &headers, body))
}

fn fast_path_calls(server: &Server) -> f64 {
    metric_value(&server.metrics(), "harmonia_http_fast_path_calls_total")
}

#[test]
fn the_fast_path_answers_a_stateless_call_exactly_as_rmcp_does() {
    let upstream = Loopback::start();
    let fast = Server::start(&upstream, ServeConfig::default());
    let rmcp = Server::start(&upstream, ServeConfig { stateless_fast_path: false, ..ServeConfig::default() });
    let call = |tool: &str, arguments: Value| {
        stateless_request("tools/call", json!({"name": tool, "arguments": arguments}))
    };
    // Each request to both servers, in the same order (the skill route's
    // requests carry on one guarded session on each).
    let mut cases: Vec<(&str, Value, Headers)> = vec![
        ("/mcp", call("get_job_status", json!({"job_id": "job-7"})), headers("get_job_status")),
        ("/mcp", call("get_job_status", json!({"job_id": "job-404"})), headers("get_job_status")),
        ("/mcp", call("get_job_status", json!({"job_id": 7})), headers("get_job_status")),
        ("/mcp", call("no_such_tool", json!({})), headers("no_such_tool")),
        (
            SKILL,
            call("get_job_status", json!({"job_id": "job-7", "harmonia_session": "new"})),
            headers("get_job_status"),
        ),
        (SKILL, call("get_job_status", json!({"job_id": "job-7"})), headers("get_job_status")),
        (
            SKILL,
            call("get_job_status", json!({"job_id": "job-7", "harmonia_session": "rs1.AAAA.BBBB"})),
            headers("get_job_status"),
        ),
        (
            SKILL,
            call("get_job_status", json!({"job_id": "job-7", "harmonia_session": 7})),
            headers("get_job_status"),
        ),
        (SKILL, call("hostile_loop", json!({})), headers("hostile_loop")),
    ];
    let qualifying = cases.len() as f64;
    // Not the fast path's: rmcp answers both.
    let mut bare = call("get_job_status", json!({"job_id": "job-7"}));
    bare["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    cases.push(("/mcp", bare, headers("get_job_status")));
    cases.push(("/mcp", call("get_job_status", json!({"job_id": "job-7"})), headers("hostile_loop")));
    // A request that also carries a response's member is no message: the
    // fast path's own parse would take it, the gate's reading sends it on.
    let mut with_result = call("get_job_status", json!({"job_id": "job-7"}));
    with_result["result"] = json!({});
    cases.push(("/mcp", with_result, headers("get_job_status")));
    for (path, body, headers) in &cases {
        let (from_fast, from_rmcp) = (send(&fast, path, body, headers), send(&rmcp, path, body, headers));
        assert_eq!(from_fast, from_rmcp, "{path} {body}");
    }
    assert_eq!(fast_path_calls(&fast), qualifying, "the fast path answered what it takes, and only that");
    assert_eq!(fast_path_calls(&rmcp), 0.0, "off, rmcp answers every request");
    // The answers were the real ones, not two equal failures.
    let (status, success) = send(&fast, "/mcp", &cases[0].1, &cases[0].2);
    assert_eq!(status, 200);
    assert_eq!(success["result"]["structuredContent"]["status"], "success", "{success}");
}
