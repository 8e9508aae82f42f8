//! A scripted HTTP/1.1 server on 127.0.0.1 for tests.
//!
//! Each route answers with a [`Reply`]; unknown paths get 404. Every
//! request is recorded (method, target, headers). The server stops, and
//! every connection closes, when the [`Loopback`] is dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What a route answers.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A status and a JSON body.
    Json(u16, String),
    /// A 200 whose body is `bytes` bytes of JSON-ish filler.
    Oversized(usize),
    /// Headers promising a body, part of it, then silence until shutdown.
    NeverFinishes,
    /// A 200 with this `Content-Length` (none: the body ends when the
    /// connection closes), this many bytes of filler, then silence until
    /// shutdown: a body a client must judge before its end.
    Stalls(Option<usize>, usize),
    /// A redirect to `location` with this status.
    Redirect(u16, String),
    /// Wait, then answer.
    Delayed(Duration, Box<Reply>),
    /// Wait until the gate opens (or the server stops), then answer.
    Gated(Gate, Box<Reply>),
    /// A status, extra headers (`name: value` lines) and a body of any bytes.
    Raw(u16, Vec<String>, Vec<u8>),
}

/// A gate a [`Reply::Gated`] waits at; shut until [`Gate::open`].
#[derive(Clone, Debug, Default)]
pub struct Gate(Arc<AtomicBool>);

impl Gate {
    /// Let every waiting and later reply through.
    pub fn open(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// One recorded request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, ...
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lowercased header names and their values.
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Reply>,
    requests: Vec<Request>,
}

/// The running server.
pub struct Loopback {
    address: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Loopback {
    /// Start on an ephemeral port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop) = (Arc::clone(&state), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (state, stop) = (Arc::clone(&state), Arc::clone(&stop));
                    std::thread::spawn(move || serve(stream, &state, &stop));
                }
            })
        };
        Self { address, state, stop, thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Answer `path` (without the query) with `reply`.
    pub fn route(&self, path: &str, reply: Reply) {
        self.state.lock().unwrap().routes.insert(path.to_owned(), reply);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Answer `path` with an empty JSON object after `delay`: a slow
    /// upstream that holds a call while it waits.
    pub fn hold(&self, path: &str, delay: std::time::Duration) {
        self.route(path, Reply::Delayed(delay, Box::new(Reply::Json(200, "{}".into()))));
    }

    /// Wait (at most 10 s, else panic) until some request has arrived.
    pub fn await_request(&self) {
        let started = std::time::Instant::now();
        while self.requests().is_empty() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "no request reached the upstream"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 || stop.load(Ordering::SeqCst) {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers.get("content-length").and_then(|value| value.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length.min(1 << 20)];
    let _ = reader.read_exact(&mut body);
    let path = target.split('?').next().unwrap_or_default().to_owned();
    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push(Request { method, target, headers });
        state.routes.get(&path).cloned()
    };
    let reply = reply.unwrap_or_else(|| Reply::Json(404, r#"{"message":"no such route"}"#.into()));
    respond(stream, reply, stop);
}

/// Write `bytes` bytes of filler; false when the client hung up.
fn filler(stream: &mut TcpStream, bytes: usize) -> bool {
    let chunk = vec![b' '; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let now = left.min(chunk.len());
        if stream.write_all(&chunk[..now]).is_err() {
            return false;
        }
        left -= now;
    }
    true
}

fn respond(mut stream: TcpStream, reply: Reply, stop: &AtomicBool) {
    let head = |status: u16, length: usize, extra: &str| {
        format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {length}\r\nconnection: close\r\n{extra}\r\n"
        )
    };
    match reply {
        Reply::Json(status, body) => {
            let _ = stream.write_all(head(status, body.len(), "").as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Reply::Oversized(bytes) => {
            let _ = stream.write_all(head(200, bytes, "").as_bytes());
            if !filler(&mut stream, bytes) {
                return;
            }
        }
        Reply::NeverFinishes => {
            let _ = stream.write_all(head(200, 1000, "").as_bytes());
            let _ = stream.write_all(b"{\"hits\": [");
            let _ = stream.flush();
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Reply::Stalls(length, sent) => {
            let length = length.map(|length| format!("content-length: {length}\r\n")).unwrap_or_default();
            let head = format!(
                "HTTP/1.1 200 X\r\ncontent-type: application/json\r\n{length}connection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            if !filler(&mut stream, sent) {
                return;
            }
            let _ = stream.flush();
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Reply::Raw(status, headers, body) => {
            let extra: String = headers.iter().map(|header| format!("{header}\r\n")).collect();
            let _ = stream.write_all(head(status, body.len(), &extra).as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Redirect(status, location) => {
            let _ = stream.write_all(head(status, 0, &format!("location: {location}\r\n")).as_bytes());
        }
        Reply::Gated(gate, reply) => {
            while !gate.0.load(Ordering::SeqCst) && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            return respond(stream, *reply, stop);
        }
        Reply::Delayed(wait, reply) => {
            let step = Duration::from_millis(10);
            let mut waited = Duration::ZERO;
            while waited < wait && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(step);
                waited += step;
            }
            return respond(stream, *reply, stop);
        }
    }
    let _ = stream.flush();
}
