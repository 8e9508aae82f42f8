//! `harmonia session` under a hostile client: duplicate keys, oversized
//! lines and a client that never stops calling.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_harmonia"))
            .args(["session", "--mock", "--workspace", "ws_demo"])
            .env_remove("HARMONIA_CONFIG")
            .env_remove("HARMONIA_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self { child, stdin, stdout }
    }

    fn write(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().unwrap().write_all(bytes).unwrap();
    }

    fn send(&mut self, request: &str) -> Value {
        self.write(request.as_bytes());
        self.write(b"\n");
        self.stdin.as_mut().unwrap().flush().unwrap();
        self.receive()
    }

    fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line:?}"))
    }

    /// Peak resident memory of the session process so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn a_key_given_twice_is_a_bad_request_naming_it() {
    let mut session = Session::start();
    for (request, key) in [
        (r#"{"op":"activate","skill":"trend-scan","skill":"job-status"}"#, "skill"),
        (r#"{"op":"call","tool":"get_job_status","args":{"job_id":"job-42","job_id":"job-7"}}"#, "job_id"),
        (r#"{"op":"trace","op":"skills"}"#, "op"),
    ] {
        let response = session.send(request);
        assert_eq!(response["ok"], false, "{request}");
        assert_eq!(response["error"]["code"], "bad_request");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("duplicate key `{key}`")), "{message}");
    }
    let trace = session.send(r#"{"op":"trace"}"#);
    assert_eq!(trace["trace"]["entries"], json!([]), "nothing was activated or called");
    assert_eq!(session.finish().0, Some(0));
}

#[cfg(target_os = "linux")]
#[test]
fn an_oversized_line_is_skipped_in_bounded_memory() {
    const LINE_MIB: usize = 256;
    let mut session = Session::start();
    assert_eq!(session.send(r#"{"op":"activate","skill":"job-status"}"#)["ok"], true);
    let before = session.peak_kib();
    let chunk = vec![b'x'; 1024 * 1024];
    for _ in 0..LINE_MIB {
        session.write(&chunk);
    }
    session.write(b"\n{\"op\":\"skills\"}\n");
    let skipped = session.receive();
    assert_eq!(skipped["error"]["code"], "bad_request");
    assert_eq!(skipped["error"]["message"], "request line is over 4 MiB");
    assert!(session.receive()["skills"].is_array(), "the session went on");
    let grown_mib = (session.peak_kib() - before) / 1024;
    assert!(grown_mib < 32, "a {LINE_MIB} MiB line grew the peak memory by {grown_mib} MiB");
    assert_eq!(session.finish().0, Some(0));
}

#[test]
fn a_client_that_keeps_calling_is_stopped() {
    let mut session = Session::start();
    assert_eq!(session.send(r#"{"op":"activate","skill":"job-status"}"#)["ok"], true);
    let blob = "x".repeat(1024);
    let call = format!(r#"{{"op":"call","tool":"get_operator_feed","args":{{"blob":"{blob}"}}}}"#);
    let mut refused = 0;
    let ended = loop {
        let response = session.send(&call);
        if response["error"]["code"] == "call_refused" {
            refused += 1;
            assert!(refused <= 16, "still refusing after {refused} calls");
            continue;
        }
        break response;
    };
    assert_eq!(refused, 16);
    assert_eq!(ended["ok"], false);
    assert_eq!(ended["error"]["code"], "session_limit");
    assert!(ended["error"]["message"].as_str().unwrap().contains("too many refused calls"), "{ended}");
    let (code, stderr) = session.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("the session has ended"), "{stderr}");
}
