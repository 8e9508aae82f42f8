//! What every answer of the HTTP server carries, whatever the route or the
//! error (`X-Content-Type-Options: nosniff`), and what a review page may
//! cost (at most 4 × the request that asked for it + 256 KiB).

use crate::support::{Server, initialize};
use harmonia_serve::config::{Limits, OAuthConfig, ServeConfig};
use harmonia_testkit::server::Loopback;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// One raw HTTP/1.1 exchange on a new connection: the whole answer,
/// read until the server closes it (`request` says `Connection: close`).
fn exchange(address: &str, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// A request of `method` for `path` with `body` and the header lines
/// `extra`, addressed to `127.0.0.1`, closing the connection after it.
fn request(method: &str, path: &str, extra: &str, body: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{extra}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The status of `answer` and whether its head says `nosniff`.
fn status_and_nosniff(answer: &str) -> (u16, bool) {
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let nosniff = head.lines().any(|line| line.eq_ignore_ascii_case("x-content-type-options: nosniff"));
    (status, nosniff)
}

fn catalogue(file: &str) -> Value {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status");
    serde_json::from_str(&std::fs::read_to_string(case.join(file)).unwrap()).unwrap()
}

/// Hostile (to a browser that sniffs): every answer, on every route and
/// for every error (200, 400, 401, 403, 404, 405, 413 and both kinds of
/// 503: the server's, and the listener's refusal of a connection past
/// the bound), carries `X-Content-Type-Options: nosniff`, so no answer is
/// ever read as another type than it says. Held by the outermost layer
/// of the router and the listener's refusal bytes.
#[test]
fn every_answer_says_nosniff_whatever_the_route_or_the_error() {
    let upstream = Loopback::start();
    let oauth = OAuthConfig {
        resource: "http://127.0.0.1/mcp".into(),
        authorization_servers: vec!["https://id.example".into()],
        scopes_supported: Vec::new(),
        tool_scope: "harmonia:tools".into(),
        skill_scope: "harmonia:skills".into(),
    };
    let limits = Limits { max_body_kib: 64, ..Limits::default() };
    let server =
        Server::start(&upstream, ServeConfig { oauth: Some(oauth), limits, ..ServeConfig::default() });
    let address = server.address();
    let bearer = format!("Authorization: Bearer {}\r\n", server.token);
    let initialize = initialize().to_string();
    let judged =
        json!({"trace": catalogue("trace.json"), "answer": catalogue("answer.json"), "mode": "review"})
            .to_string();
    let oversized = format!("{{\"trace\": [], \"answer\": \"{}\"}}", "x".repeat(70 * 1024));
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("/healthz", request("GET", "/healthz", "", ""), 200),
        ("/readyz", request("GET", "/readyz", "", ""), 200),
        ("/metrics", request("GET", "/metrics", "", ""), 200),
        ("the OAuth metadata", request("GET", "/.well-known/oauth-protected-resource", "", ""), 200),
        ("/mcp", request("POST", "/mcp", &bearer, &initialize), 200),
        ("a skill's route", request("POST", "/mcp/skills/job-status", &bearer, &initialize), 200),
        ("/v1/validate", request("POST", "/v1/validate", &bearer, &judged), 200),
        ("/v1/review", request("POST", "/v1/review", &bearer, &judged), 200),
        ("a malformed validation", request("POST", "/v1/validate", &bearer, "{"), 400),
        ("no credential", request("POST", "/mcp", "", &initialize), 401),
        (
            "a foreign Origin",
            request("POST", "/mcp", &format!("{bearer}Origin: http://evil.example\r\n"), &initialize),
            403,
        ),
        ("no such route", request("GET", "/nowhere", &bearer, ""), 404),
        ("a route's other method", request("GET", "/v1/validate", &bearer, ""), 405),
        ("a body past the bound", request("POST", "/v1/validate", &bearer, &oversized), 413),
    ];
    for (name, sent, expected) in cases {
        let answer = exchange(&address, &sent);
        let (status, nosniff) = status_and_nosniff(&answer);
        let shown = &answer[..answer.len().min(300)];
        assert_eq!(status, expected, "{name}: {shown}");
        assert!(nosniff, "{name}: no nosniff in {shown}");
    }

    // The server's 503 (a credential's bodies on their way past its
    // share), and the listener's (a connection past the bound).
    let limits = Limits { max_connections: 1, max_request_bodies_kib_per_credential: 1, ..Limits::default() };
    let bounded = Server::start(&upstream, ServeConfig { limits, ..ServeConfig::default() });
    let address = bounded.address();
    let bearer = format!("Authorization: Bearer {}\r\n", bounded.token);
    let answer = exchange(&address, &request("POST", "/v1/validate", &bearer, &judged));
    assert_eq!(status_and_nosniff(&answer), (503, true), "{}", &answer[..answer.len().min(300)]);
    let _held = TcpStream::connect(&address).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let answer = exchange(&address, b"");
    assert_eq!(status_and_nosniff(&answer), (503, true), "{answer}");
}

/// Hostile: a request under the body bound (0.9 MiB) built to blow its
/// review page up: a claim citing the trace's evidence id 40,000 times,
/// each citation once a tip line, a details line and a style rule. The
/// page is at most 4 × the body + 256 KiB, and says what it left out.
/// Held by the page's bound (`harmonia_review::bound`), sized by the body.
#[test]
fn a_review_page_is_at_most_four_times_its_request_and_a_constant() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let mut answer = catalogue("answer.json");
    let id = answer["claims"][0]["evidenceIds"][0].clone();
    answer["claims"][0]["evidenceIds"] = Value::Array(vec![id; 40_000]);
    let body = json!({"trace": catalogue("trace.json"), "answer": answer, "mode": "review"}).to_string();
    assert!(body.len() < 1024 * 1024, "{} bytes: under the default body bound", body.len());
    let mut response = server
        .agent
        .post(format!("{}/v1/review", server.url))
        .header("Authorization", &format!("Bearer {}", server.token))
        .header("Content-Type", "application/json")
        .send(&body)
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let page = response.body_mut().with_config().limit(u64::MAX).read_to_string().unwrap();
    let bound = 4 * body.len() + 256 * 1024;
    assert!(
        page.len() <= bound,
        "a {}-byte request made a {}-byte page ({:.1}×), past its bound of {bound}",
        body.len(),
        page.len(),
        page.len() as f64 / body.len() as f64
    );
    assert!(page.contains("more ids, not listed"), "the page says what it left out");
}
