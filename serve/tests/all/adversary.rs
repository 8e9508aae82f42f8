//! `harmonia serve` under a hostile client, over real sockets on
//! 127.0.0.1: each test plays one attack and shows it fails safely.
//!
//! - Silent sockets, and sockets that send a byte or half a preface, are
//!   cut at the header timeout, so they cannot hold the connection bound;
//!   connections past the bound are answered 503 at once. A refusal given
//!   before the body was read keeps the connection usable or says
//!   `Connection: close`.
//! - A session belongs to the credential that opened it: another
//!   credential's GET (with `Last-Event-ID`), DELETE, notification or
//!   request on its id is refused before the SDK sees it, and the owner's
//!   call in flight still gets its result.
//! - Every credential has a share of sessions, calls, connections,
//!   validations and request bodies on the way, and a rate: one holding
//!   its whole share leaves the others served.
//! - Host and Origin are checked on every route; malformed JSON-RPC gets
//!   400 / -32600; skill routes serve nothing outside a session;
//!   `/v1/validate` judges off the runtime's workers, in submission mode
//!   by default, and says whether the seal verified; a request admitted
//!   before shutdown is served.

use crate::support::{Server, TOOLS, initialize, stateless_call, stateless_request, validate_at};
use harmonia_serve::config::{Limits, Rate, RateLimits, ServeConfig};
use harmonia_testkit::metric_value;
use harmonia_testkit::server::Loopback;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn config(limits: Limits) -> ServeConfig {
    ServeConfig { limits, ..ServeConfig::default() }
}

/// A raw GET of `path` with `Host: 127.0.0.1` on a new connection: the
/// status line, or an empty string when the server closed without one.
fn raw_get(address: &str, path: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n");
    let _ = stream.write_all(request.as_bytes());
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// Whether the server closes `stream` (EOF or reset) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut byte = [0u8; 64];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => closed_within(stream, limit),
        Err(error) => !matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[test]
fn silent_connections_are_cut_at_the_header_timeout_and_cannot_lock_the_server_out() {
    let upstream = Loopback::start();
    let limits = Limits { header_timeout_s: 1, max_connections: 3, ..Limits::default() };
    let server = Server::start(&upstream, config(limits));
    // Three sockets fill the bound: one silent, one byte, half a request
    // line.
    let openers: [&[u8]; 3] = [b"", b"G", b"GET /healthz HT"];
    let mut held: Vec<TcpStream> = openers
        .iter()
        .map(|bytes| {
            let mut stream = TcpStream::connect(server.address()).unwrap();
            stream.write_all(bytes).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let full = raw_get(&server.address(), "/healthz", "");
    assert!(full.starts_with("HTTP/1.1 503"), "the bound is full while they are open: {full:?}");
    for (stream, opener) in held.iter_mut().zip(openers) {
        assert!(
            closed_within(stream, Duration::from_secs(5)),
            "{:?} was never cut",
            String::from_utf8_lossy(opener)
        );
    }
    // The client still holds its ends open; the server's places are free.
    assert!(raw_get(&server.address(), "/healthz", "").starts_with("HTTP/1.1 200"));
    // Half an HTTP/2 preface is no HTTP/1.1 request: closed at once.
    let mut preface = TcpStream::connect(server.address()).unwrap();
    preface.write_all(b"PRI * HTTP/2.0\r\n").unwrap();
    assert!(closed_within(&mut preface, Duration::from_secs(5)));
    drop(held);
}

#[test]
fn a_connection_past_the_bound_is_refused_at_once_and_refusals_cost_a_bounded_amount() {
    let upstream = Loopback::start();
    let limits = Limits { header_timeout_s: 30, max_connections: 2, ..Limits::default() };
    let server = Server::start(&upstream, config(limits));
    let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(server.address()).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    // Nothing sent: the 503 comes without the request being read.
    let mut refused = TcpStream::connect(server.address()).unwrap();
    refused.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = String::new();
    let _ = refused.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 2"), "{answer}");
    // A flood past the bound: each is answered or closed, none waits.
    let flood: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(server.address()).unwrap()).collect();
    for mut stream in flood {
        assert!(closed_within(&mut stream, Duration::from_secs(10)), "a refused connection was kept");
    }
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    assert!(raw_get(&server.address(), "/healthz", "").starts_with("HTTP/1.1 200"));
    let text = server.metrics();
    assert!(
        metric_value(&text, r#"harmonia_http_unavailable_total{reason="too_many_connections"}"#) >= 301.0
    );
}

/// A call in `session` on `/mcp` that waits on the upstream, read on a
/// thread: its SSE body.
fn call_in_session(server: &Server, session: &str, token: &str) -> std::thread::JoinHandle<String> {
    let (url, token, session) = (server.url.clone(), token.to_owned(), session.to_owned());
    std::thread::spawn(move || {
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "testing_fetch_url",
            "arguments": {"url": "https://hn.algolia.com/hold"}}});
        let mut response = crate::support::agent()
            .post(format!("{url}/mcp"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send(body.to_string())
            .unwrap();
        response.body_mut().read_to_string().unwrap_or_default()
    })
}

#[test]
fn another_credential_cannot_take_over_cancel_delete_or_listen_to_a_session() {
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(1500));
    let server = Server::start(&upstream, ServeConfig::default());
    let other = server.add_token("ws_other", &TOOLS, None);
    let session = server.open_session("/mcp", &server.token);
    let owner_call = call_in_session(&server, &session, &server.token);
    upstream.await_request();
    let on_session = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    // A resume of the call's stream (the takeover), a standalone stream.
    for last_event in ["0", "5", "0/0", "1/0"] {
        let mut response = server
            .agent
            .get(format!("{}/mcp", server.url))
            .header("Authorization", &format!("Bearer {other}"))
            .header("Accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .header("Last-Event-ID", last_event)
            .call()
            .unwrap();
        assert_eq!(response.status().as_u16(), 404, "resume from {last_event}");
        let _ = response.body_mut().read_to_string();
    }
    let listen = server
        .agent
        .get(format!("{}/mcp", server.url))
        .header("Authorization", &format!("Bearer {other}"))
        .header("Accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .call()
        .unwrap();
    assert_eq!(listen.status().as_u16(), 404, "another credential cannot open a stream on the session");
    // Cancelling the owner's request, reusing its id, answering for it.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    let reuse = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {}});
    for body in [cancel, reuse, answer] {
        let refused = server.post("/mcp", &other, &on_session, &body);
        assert_eq!(refused.status, 404, "{body}: {}", refused.body);
    }
    let delete = server
        .agent
        .delete(format!("{}/mcp", server.url))
        .header("Authorization", &format!("Bearer {other}"))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .call()
        .unwrap();
    assert_eq!(delete.status().as_u16(), 404);
    // The owner's call finished with its own result on its own stream.
    let result = owner_call.join().unwrap();
    assert!(result.contains("\"id\":5") && result.contains("structuredContent"), "{result}");
    // And the session is still the owner's.
    let listed = server.post(
        "/mcp",
        &server.token,
        &on_session,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(listed.body.contains("get_job_status"));
    let text = server.metrics();
    assert!(
        metric_value(&text, r#"harmonia_http_refused_total{reason="session_not_owned"}"#) >= 9.0,
        "{text}"
    );
}

#[test]
fn a_narrower_credential_of_the_same_workspace_cannot_read_a_broader_ones_session() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let narrow = server.add_token("ws_demo", &["get_job_status"], None);
    let session = server.open_session("/mcp/skills/job-status", &server.token);
    let read = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "harmonia://session/trace"}});
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    assert_eq!(server.post("/mcp/skills/job-status", &narrow, &headers, &read).status, 404);
    assert_eq!(server.post("/mcp/skills/job-status", &server.token, &headers, &read).status, 200);
}

/// The head of the next answer on `stream`: its status and its header
/// lines, lowercased (a 0 status when the server closed without one).
fn read_head(stream: &mut TcpStream) -> (u16, Vec<String>) {
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&head).to_lowercase();
    let mut lines = text.lines();
    let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|code| code.parse().ok());
    (status.unwrap_or(0), lines.filter(|line| !line.is_empty()).map(str::to_owned).collect())
}

/// Skip the body of an answer whose head declared `Content-Length`.
fn skip_body(stream: &mut TcpStream, head: &[String]) {
    let length = head
        .iter()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
}

/// A refusal answered before the request's body was read (a wrong token,
/// a session another credential owns, a foreign Origin) never leaves a
/// pooling client a connection the server drops without a word: when the
/// body came with the headers, the connection serves the next request;
/// when the body is late, the answer comes within the linger and says
/// `Connection: close`. Without it, the client's next request on that
/// connection meets a reset ("peer disconnected").
#[test]
fn a_refusal_before_the_body_keeps_the_connection_usable_or_says_it_closes() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let other = server.add_token("ws_demo", &["get_job_status"], None);
    let session = server.open_session("/mcp", &server.token);
    let owned = format!("mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n");
    let cases = [
        ("a wrong token", "wrong".to_owned(), String::new(), 401),
        ("a session another credential owns", other, owned, 404),
        ("a foreign Origin", server.token.clone(), "origin: http://evil.example\r\n".to_owned(), 403),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for (what, token, extra, status) in cases {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n{extra}\r\n",
            body.len()
        );
        // The body with the headers: refused, and the connection serves
        // the next request.
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream.write_all(format!("{head}{body}").as_bytes()).unwrap();
        let (got, answer) = read_head(&mut stream);
        assert_eq!(got, status, "{what}: {answer:?}");
        assert!(
            !answer.iter().any(|line| line == "connection: close"),
            "{what}: closed needlessly: {answer:?}"
        );
        skip_body(&mut stream, &answer);
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        assert_eq!(read_head(&mut stream).0, 200, "{what}: the next request on the connection");

        // The headers alone, the body never sent: the refusal says that
        // the connection closes.
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let (got, answer) = read_head(&mut stream);
        assert_eq!(got, status, "{what}: {answer:?}");
        assert!(answer.iter().any(|line| line == "connection: close"), "{what}: {answer:?}");
    }
}

/// The head of a POST to `/mcp` announcing a body of `length` bytes.
fn post_head(token: &str, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// A body of `length` bytes on its way: the head and one byte sent, the
/// rest never.
fn trickling(address: &str, token: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(format!("{}{{", post_head(token, length)).as_bytes()).unwrap();
    stream
}

/// A whole `tools/list` padded to `length` bytes on a new connection: its
/// status, and the answer's head.
fn padded_list(address: &str, token: &str, length: usize) -> (u16, Vec<String>) {
    let message = stateless_request("tools/list", json!({})).to_string();
    let body = format!("{message}{}", " ".repeat(length - message.len()));
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(format!("{}{body}", post_head(token, length)).as_bytes()).unwrap();
    read_head(&mut stream)
}

/// Bodies on the way are buffered whole before the MCP SDK parses them:
/// a client trickling large bodies on many connections would hold memory
/// for the whole request timeout. Each credential has a share of the
/// bytes announced by the bodies on their way, the server a bound over
/// all; past either the request gets 503 with `Retry-After` at once, and
/// other credentials' requests are served.
#[test]
fn request_bodies_on_the_way_are_bounded_per_credential_and_over_the_server() {
    let upstream = Loopback::start();
    let limits = Limits {
        max_body_kib: 64,
        max_request_bodies_kib_per_credential: 128,
        max_request_bodies_kib: 192,
        ..Limits::default()
    };
    let server = Server::start(&upstream, config(limits));
    let (second, third) =
        (server.add_token("ws_demo", &TOOLS, None), server.add_token("ws_demo", &TOOLS, None));
    let large = 60 * 1024;
    let mine: Vec<TcpStream> = (0..2).map(|_| trickling(&server.address(), &server.token, large)).collect();
    std::thread::sleep(Duration::from_millis(300));

    let (status, head) = padded_list(&server.address(), &server.token, large);
    assert_eq!(status, 503, "past the credential's share: {head:?}");
    assert!(head.iter().any(|line| line.starts_with("retry-after:")), "{head:?}");
    assert_eq!(padded_list(&server.address(), &second, 2048).0, 200, "another credential is served");

    let theirs = trickling(&server.address(), &second, large);
    std::thread::sleep(Duration::from_millis(300));
    let (status, head) = padded_list(&server.address(), &third, large);
    assert_eq!(status, 503, "past the server's bound: {head:?}");
    assert_eq!(padded_list(&server.address(), &third, 2048).0, 200, "a small body still fits");
    let metrics = server.metrics();
    assert_eq!(
        metric_value(&metrics, "harmonia_http_unavailable_total{reason=\"credential_request_bodies\"}"),
        1.0
    );
    assert_eq!(metric_value(&metrics, "harmonia_http_unavailable_total{reason=\"request_bodies\"}"), 1.0);

    // The bodies given up free their share.
    drop(mine);
    drop(theirs);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(padded_list(&server.address(), &server.token, large).0, 200);
}

#[test]
fn two_tenants_are_served_while_a_third_holds_its_whole_share_of_sessions_calls_and_connections() {
    let upstream = Loopback::start();
    upstream.hold("/hold", Duration::from_millis(2500));
    let limits = Limits {
        max_sessions: 6,
        max_sessions_per_credential: 2,
        max_in_flight_calls: 8,
        max_in_flight_calls_per_credential: 2,
        max_connections: 12,
        max_connections_per_credential: 4,
        ..Limits::default()
    };
    let server = Server::start(&upstream, config(limits));
    let hog = server.add_token("ws_hog", &TOOLS, None);
    let (alice, bob) = (server.add_token("ws_a", &TOOLS, None), server.add_token("ws_b", &TOOLS, None));
    // Sessions: the hog's third is refused, the others open theirs.
    for _ in 0..2 {
        server.open_session("/mcp", &hog);
    }
    let refused = server.post("/mcp", &hog, &[], &initialize());
    assert_eq!((refused.status, refused.retry_after.as_deref()), (503, Some("2")), "{}", refused.body);
    for token in [&alice, &bob] {
        server.open_session("/mcp", token);
        server.open_session("/mcp/skills/job-status", token);
    }
    // Calls: the hog's two hold the upstream; its third waits, the
    // others' run at once.
    let holding: Vec<_> = (0..3)
        .map(|_| {
            let (url, hog) = (server.url.clone(), hog.clone());
            std::thread::spawn(move || {
                let arguments = json!({"url": "https://hn.algolia.com/hold"});
                crate::support::call_at(&crate::support::agent(), &url, &hog, "testing_fetch_url", arguments)
                    .1
            })
        })
        .collect();
    let started = Instant::now();
    while upstream.requests().len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(10), "the hog's calls never reached the upstream");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(upstream.requests().len(), 2, "the hog's third call waits for its own share");
    // Connections: the hog's fifth connection is refused.
    let mut kept = Vec::new();
    for _ in 0..4 {
        let agent = crate::support::agent();
        let mut response = agent
            .get(format!("{}/metrics", server.url))
            .header("Authorization", &format!("Bearer {hog}"))
            .call()
            .unwrap();
        let _ = response.body_mut().read_to_string();
        kept.push(agent);
    }
    let mut fifth = TcpStream::connect(server.address()).unwrap();
    fifth.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {hog}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    fifth.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = fifth.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    // Meanwhile the two others are served promptly.
    for token in [&alice, &bob] {
        let envelope = server.envelope_with(token, "get_job_status", json!({"job_id": "job-7"}));
        assert_eq!(envelope["status"], "success", "{envelope}");
    }
    let held_for = started.elapsed();
    assert!(held_for < Duration::from_millis(2300), "served while the hog held its share: {held_for:?}");
    for holder in holding {
        let answer = holder.join().unwrap();
        assert_eq!(answer["result"]["structuredContent"]["status"], "success", "{answer}");
    }
    let text = server.metrics();
    assert_eq!(
        metric_value(&text, r#"harmonia_slot_waits_total{bound="credential_in_flight"}"#),
        1.0,
        "{text}"
    );
    assert_eq!(
        metric_value(&text, r#"harmonia_slot_wait_timeouts_total{bound="credential_in_flight"}"#),
        0.0
    );
    for reason in ["credential_sessions", "credential_connections"] {
        assert_eq!(
            metric_value(&text, &format!("harmonia_http_unavailable_total{{reason=\"{reason}\"}}")),
            1.0,
            "{reason}"
        );
    }
    for secret in ["ws_hog", "ws_a", "ws_b", hog.as_str()] {
        assert!(!text.contains(secret), "{secret} in the scrape");
    }
}

#[test]
fn calls_past_a_credentials_rate_get_a_retryable_envelope_saying_when_and_others_are_not_slowed() {
    let upstream = Loopback::start();
    let mut rates = RateLimits { calls_per_second: 1000.0, burst: 1000, ..RateLimits::default() };
    rates.tools.insert("hostile_loop".into(), Rate { calls_per_second: 0.1, burst: 1 });
    let server = Server::start(&upstream, ServeConfig { rate_limits: rates, ..ServeConfig::default() });
    let slow = server.add_token("ws_demo", &TOOLS, Some(Rate { calls_per_second: 0.2, burst: 2 }));
    for _ in 0..2 {
        assert_eq!(
            server.envelope_with(&slow, "get_job_status", json!({"job_id": "job-7"}))["status"],
            "success"
        );
    }
    let limited = server.envelope_with(&slow, "get_job_status", json!({"job_id": "job-7"}));
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert_eq!(limited["error"]["retryable"], true);
    assert_eq!(limited["error"]["category"], "dependency");
    let message = limited["error"]["message"].as_str().unwrap();
    let millis: u64 = message.split("retry after ").nth(1).unwrap().trim_end_matches(" ms.").parse().unwrap();
    assert!((4000..=5000).contains(&millis), "{message}");
    // The default credential's bucket is its own; a tool's bucket binds
    // every credential on its own.
    for _ in 0..20 {
        assert_eq!(server.envelope("get_job_status", json!({"job_id": "job-7"}))["status"], "success");
    }
    let loop_call = server.envelope("hostile_loop", json!({}));
    assert_eq!(loop_call["error"]["code"], "tool_timeout", "{loop_call}");
    let again = server.envelope("hostile_loop", json!({}));
    assert_eq!(again["error"]["code"], "rate_limited", "{again}");
    let text = server.metrics();
    assert_eq!(
        metric_value(&text, r#"harmonia_calls_total{tool="get_job_status",code="rate_limited"}"#),
        1.0
    );
    assert_eq!(metric_value(&text, r#"harmonia_calls_total{tool="hostile_loop",code="rate_limited"}"#), 1.0);
}

#[test]
fn host_and_origin_are_checked_on_every_route() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let address = server.address();
    for path in ["/metrics", "/healthz", "/readyz", "/v1/validate", "/mcp"] {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            )
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
        assert!(!answer.contains("harmonia_calls"), "{path}: nothing leaks");
    }
    assert!(raw_get(&address, "/metrics", "Origin: http://rebound.example\r\n").starts_with("HTTP/1.1 403"));
    assert!(raw_get(&address, "/metrics", "Origin: null\r\n").starts_with("HTTP/1.1 403"));
    assert!(raw_get(&address, "/metrics", "Origin: http://localhost:6274\r\n").starts_with("HTTP/1.1 200"));
    // An Origin on an authenticated MCP request: 403 before anything else.
    let refused = server.post("/mcp", &server.token, &[("Origin", "https://evil.example")], &initialize());
    assert_eq!(refused.status, 403, "{}", refused.body);
    let listed =
        ServeConfig { allowed_origins: vec!["https://app.example".into()], ..ServeConfig::default() };
    let server = Server::start(&upstream, listed);
    let allowed = server.post("/mcp", &server.token, &[("Origin", "https://app.example")], &initialize());
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let local = server.post("/mcp", &server.token, &[("Origin", "http://localhost:3000")], &initialize());
    assert_eq!(local.status, 403, "a list replaces the loopback default");
    let text = server.metrics();
    assert_eq!(metric_value(&text, r#"harmonia_http_refused_total{reason="origin_not_allowed"}"#), 1.0);
}

#[test]
fn a_forbidden_host_is_refused_before_the_session_bound_is_counted() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, config(Limits { max_sessions: 1, ..Limits::default() }));
    server.open_session("/mcp", &server.token);
    let mut stream = TcpStream::connect(server.address()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = initialize().to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: rebound.example\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.token,
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
}

#[test]
fn malformed_json_rpc_gets_400_with_invalid_request() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let bad = [
        json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": false, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}),
        json!([initialize()]),
    ];
    for body in bad {
        let answer = server.post("/mcp", &server.token, &[], &body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(answer.json()["error"]["code"], -32600, "{body}: {}", answer.body);
    }
    assert!(raw_get(&server.address(), "/healthz", "").starts_with("HTTP/1.1 200"), "the server is still up");
}

#[test]
fn skill_routes_serve_nothing_unguarded_outside_a_session() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_job_status",
        "arguments": {"job_id": "job-7"}}});
    // Neither in a session nor standing alone (no version in `_meta`),
    // whatever the header says: refused before anything runs.
    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let answer = server.post(
            "/mcp/skills/job-status",
            &server.token,
            &[("mcp-protocol-version", version)],
            &plain,
        );
        assert_eq!(answer.status, 400, "{version}: {}", answer.body);
        assert!(answer.body.contains("initialize"), "{}", answer.body);
    }
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(server.post("/mcp/skills/job-status", &server.token, &[], &list).status, 400);
    // Standing alone (its version in `_meta`), a call is guarded by the
    // credential's current session on the skill (opened by the first),
    // carried by the handle it is answered with: the second, without a
    // handle, goes on with it and is refused as a retry after a success.
    let per_request = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_job_status",
            "arguments": {"job_id": "job-7"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": version,
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
    };
    for (version, status) in [("2025-11-25", "success"), ("2026-07-28", "error")] {
        let answer = server.post(
            "/mcp/skills/job-status",
            &server.token,
            &[
                ("mcp-protocol-version", version),
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_job_status"),
            ],
            &per_request(version),
        );
        assert_eq!(answer.status, 200, "{version}: {}", answer.body);
        let result = &answer.json()["result"];
        assert_eq!(result["structuredContent"]["status"], status, "{version}: {}", answer.body);
        assert!(result["_meta"]["dev.harmonia/session"].is_string(), "{version}: {}", answer.body);
    }
    // Inside a session the guard runs and records.
    let session = server.open_session("/mcp/skills/job-status", &server.token);
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_job_status", "arguments": {"job_id": "job-7"}}});
    let answer = server.post("/mcp/skills/job-status", &server.token, &headers, &call);
    assert!(answer.body.contains("\\\"status\\\":\\\"success\\\""), "{}", answer.body);
}

#[test]
fn validate_defaults_to_submission_and_says_whether_the_seal_verified() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let catalogue =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(catalogue.join("trace.json")).unwrap()).unwrap();
    let answer: Value =
        serde_json::from_str(&std::fs::read_to_string(catalogue.join("answer.json")).unwrap()).unwrap();
    // Signed by the demo's key, not this server's: refused by default.
    let verdict = server.validate(json!({"trace": trace, "answer": answer}));
    assert_eq!(verdict["rule"], "trace_unverified", "{verdict}");
    assert_eq!(verdict["mode"], "submission");
    assert_eq!(verdict["seal"]["verified"], false);
    assert_eq!(verdict["seal"]["state"], "other_key", "{verdict}");
    // Review mode judges the answer, and still says the seal failed.
    let reviewed = server.validate(json!({"trace": trace, "answer": answer, "mode": "review"}));
    assert_eq!(reviewed["accepted"], true, "{reviewed}");
    assert_eq!(reviewed["seal"]["verified"], false);
    let mut tampered = trace.clone();
    if let Some(entries) = tampered["entries"].as_array_mut() {
        entries.pop();
    }
    let reviewed = server.validate(json!({"trace": tampered, "answer": answer, "mode": "review"}));
    assert_eq!(reviewed["seal"]["state"], "altered", "{reviewed}");
    let unsigned = server.validate(json!({"trace": tampered["entries"], "answer": answer, "mode": "review"}));
    assert_eq!(unsigned["seal"]["state"], "unsigned", "{unsigned}");
}

/// A review-mode request near the body bound that made the validator do
/// work quadratic in its size: the catalogue's job-status trace with a
/// job holding `records` extra records, 100 evidence items, and 20 record
/// claims each citing 8 of them, naming only the last (so every citation
/// is looked up in the whole data).
fn heavy_validation(records: usize) -> Value {
    let case =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("trace.json")).unwrap()).unwrap();
    let mut entries = trace["entries"].as_array().unwrap().clone();
    let filler: Vec<Value> = (0..records)
        .map(|i| json!({"id": format!("rec-{i}"), "note": format!("note {i}"), "size": i}))
        .collect();
    let references: Vec<String> = (0..100).map(|i| format!("rec-{i}")).collect();
    let evidence: Vec<Value> = references
        .iter()
        .map(|reference| {
            json!({"evidenceId": harmonia_testkit::expected_evidence_id("harmonia_job", "live", Some(reference)),
                   "source": "harmonia_job", "provenance": "live", "reference": reference})
        })
        .collect();
    let response = &mut entries[1]["response"];
    response["data"]["job"]["records"] = Value::Array(filler);
    response["evidence"] = Value::Array(evidence.clone());
    let mut claims = Vec::new();
    let mut text = String::new();
    for claim in 0..20 {
        let cited: Vec<Value> =
            (0..8).map(|k| evidence[(claim * 5 + k) % 100]["evidenceId"].clone()).collect();
        let named = &references[(claim * 5 + 7) % 100];
        let claim_text = format!("the record {named} is listed");
        text.push_str(&format!(
            "{claim_text} ({}). ",
            cited.iter().map(|id| id.as_str().unwrap()).collect::<Vec<_>>().join(", ")
        ));
        claims.push(json!({"text": claim_text, "kind": "record", "evidenceIds": cited}));
    }
    let answer = json!({"status": "success", "skillName": "job-status", "answer": text.trim_end(), "claims": claims, "error": null, "uncertainty": []});
    json!({"trace": {"entries": entries}, "answer": answer, "mode": "review"})
}

#[test]
fn heavy_validations_run_off_the_workers_and_never_stall_health_probes() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let request = heavy_validation(12_000);
    assert!(request.to_string().len() < 1024 * 1024, "within the body bound");
    let running: Vec<_> = (0..4)
        .map(|_| {
            let (url, token, request) = (server.url.clone(), server.token.clone(), request.clone());
            std::thread::spawn(move || validate_at(&crate::support::agent(), &url, &token, &request))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let probe = Instant::now();
        assert!(raw_get(&server.address(), "/healthz", "").starts_with("HTTP/1.1 200"));
        slowest = slowest.max(probe.elapsed());
    }
    for handle in running {
        let (status, body) = handle.join().unwrap();
        assert_eq!(status, 200, "{body}");
        let verdict: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(verdict["accepted"], true, "the request is valid, and judged whole: {verdict}");
    }
    // A liveness bound, not a speed target: inline, the validations held
    // both workers for seconds.
    assert!(slowest < Duration::from_secs(1), "a health probe waited {slowest:?} behind validations");
    println!("slowest of five health probes during four heavy validations: {slowest:?}");
}

/// POST `request` to `/v1/validate` with `token`; the status and when
/// the answer came.
fn validated_when(url: &str, token: &str, request: &Value) -> (u16, Instant) {
    let (status, _) = validate_at(&crate::support::agent(), url, token, request);
    (status, Instant::now())
}

#[test]
fn one_credential_queueing_validations_leaves_another_its_place() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let heavy = heavy_validation(12_000);
    let flood: Vec<_> = (0..4)
        .map(|_| {
            let (url, token, request) = (server.url.clone(), server.token.clone(), heavy.clone());
            std::thread::spawn(move || validated_when(&url, &token, &request))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let other = server.add_token("ws_demo", &crate::support::TOOLS, None);
    let (status, answered) = validated_when(&server.url, &other, &heavy_validation(10));
    assert_eq!(status, 200);
    let flooded: Vec<(u16, Instant)> = flood.into_iter().map(|handle| handle.join().unwrap()).collect();
    assert!(flooded.iter().all(|(status, _)| *status == 200), "the flood waits its turn: {flooded:?}");
    let before = flooded.iter().filter(|(_, at)| *at < answered).count();
    // The order of answers, not a time: with one queue for every
    // credential, the second credential waited behind the first's three
    // queued validations.
    assert!(
        before <= 1,
        "{before} of the first credential's validations were answered before the second's one"
    );
}

#[test]
fn a_request_admitted_before_shutdown_is_served_not_failed_and_the_drain_is_alive_but_not_ready() {
    let upstream = Loopback::start();
    let mut server = Server::start(&upstream, ServeConfig::default());
    let body = stateless_call("get_job_status", json!({"job_id": "job-7"})).to_string();
    let (head, tail) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(server.address()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: get_job_status\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
        server.token,
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    server.signal_stop();
    std::thread::sleep(Duration::from_millis(300));
    // Draining: not ready for new work, but alive (a liveness probe that
    // failed now would have the process killed before its calls end).
    assert!(raw_get(&server.address(), "/readyz", "").starts_with("HTTP/1.1 503"), "draining is not ready");
    assert!(raw_get(&server.address(), "/healthz", "").starts_with("HTTP/1.1 200"), "but it is alive");
    stream.write_all(tail.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("structuredContent"), "{answer}");
}

#[test]
fn the_review_page_is_served_with_its_policy_and_shows_hostile_text_as_text() {
    let upstream = Loopback::start();
    let server = Server::start(&upstream, ServeConfig::default());
    let case =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("trace.json")).unwrap()).unwrap();
    let mut answer: Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("answer.json")).unwrap()).unwrap();
    answer["uncertainty"] = json!(["<script>window.pwned = 1</script><img src=x onerror=alert(1)>"]);
    let mut response = server
        .agent
        .post(format!("{}/v1/review", server.url))
        .header("Authorization", &format!("Bearer {}", server.token))
        .header("Content-Type", "application/json")
        .send(json!({"trace": trace, "answer": answer, "mode": "review"}).to_string())
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let header = |name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    };
    assert_eq!(header("content-type"), "text/html; charset=utf-8");
    assert!(
        header("content-security-policy").contains("default-src 'none'"),
        "{}",
        header("content-security-policy")
    );
    let page = response.body_mut().read_to_string().unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"),
        "{}",
        &page[..40.min(page.len())]
    );
    assert!(!page.contains("<script>window.pwned"), "the hostile text is escaped");
    assert!(page.contains("&lt;script&gt;"), "and shown as text");
    // The same credentials as /v1/validate.
    let refused = crate::support::agent()
        .post(format!("{}/v1/review", server.url))
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
}
