//! `harmonia session`: a guarded session over JSON lines, so an agent in
//! any language can drive it.
//!
//! One request per line on stdin, one response line per request on stdout:
//! - `{"op":"activate","skill":S}` → `{"ok":true,"skill":S,"sha256":HEX,"allowedTools":[..]}`
//! - `{"op":"call","tool":T,"args":{..}}` → the envelope
//! - `{"op":"trace"}` → `{"trace":{"entries":[..],"seal":{..}}}`, signed
//!   with the host's trace key
//! - `{"op":"validate","answer":{..},"mode":"review"|"submission"}` →
//!   `{"accepted":bool,"rule":CODE|null,"reason":TEXT|null}`
//! - `{"op":"skills"}` → `{"skills":[{"name","description","allowedTools","sha256"}]}`
//!
//! A line that is not a valid request gets
//! `{"ok":false,"error":{"code":"bad_request","message":..}}` and the session
//! goes on; so does a line over 4 MiB, which is skipped in chunks without
//! being held, and a request with a key given twice (at any depth), which
//! is never guessed at. End of input ends the session. A call past one of
//! the session's bounds gets `{"ok":false,"error":{"code":"session_limit",..}}`
//! and ends it: the command exits 1.

use crate::args::HostArgs;
use crate::setup::{build_host, load_config, load_skills, workspace};
use anyhow::{Context, Result};
use harmonia_contract::liaison::json as unique_json;
use harmonia_contract::liaison::validator::Mode;
use harmonia_host::CallContext;
use harmonia_host::liaison::session::{Liaison, Session, SessionError};
use harmonia_host::liaison::signing::TraceSigner;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Longest request line accepted, in bytes.
const MAX_LINE: usize = 4 * 1024 * 1024;

fn bad_request(message: &str) -> Value {
    json!({"ok": false, "error": {"code": "bad_request", "message": message}})
}

fn session_error(error: &SessionError) -> Value {
    json!({"ok": false, "error": {"code": error.code(), "message": error.to_string()}})
}

/// What one request did to the session.
enum Reply {
    /// Answer and go on.
    Continue(Value),
    /// Answer and end the session.
    End(Value),
}

fn string_field<'a>(request: &'a Value, name: &str) -> Result<&'a str, Value> {
    request
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| bad_request(&format!("`{name}` must be a string")))
}

fn only_keys(request: &Value, allowed: &[&str]) -> Result<(), Value> {
    match request.as_object().and_then(|object| object.keys().find(|key| !allowed.contains(&key.as_str()))) {
        Some(key) => Err(bad_request(&format!("unknown field `{key}`"))),
        None => Ok(()),
    }
}

fn handle(session: &mut Session, liaison: &Liaison, line: &str) -> Reply {
    let request: Value = match unique_json::from_str(line) {
        Ok(request @ Value::Object(_)) => request,
        Ok(_) => return Reply::Continue(bad_request("a request is a JSON object")),
        Err(error) => return Reply::Continue(bad_request(&format!("not JSON: {error}"))),
    };
    let outcome = (|| -> Result<Value, Value> {
        match string_field(&request, "op")? {
            "activate" => {
                only_keys(&request, &["op", "skill"])?;
                let skill = session
                    .activate(string_field(&request, "skill")?)
                    .map_err(|error| session_error(&error))?;
                Ok(
                    json!({"ok": true, "skill": skill.name, "sha256": skill.sha256, "allowedTools": skill.allowed_tools}),
                )
            }
            "call" => {
                only_keys(&request, &["op", "tool", "args"])?;
                let tool = string_field(&request, "tool")?.to_owned();
                let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
                match session.call(&tool, &args) {
                    Ok(envelope) => Ok(envelope.to_value()),
                    Err(error) => Err(session_error(&error)),
                }
            }
            "trace" => {
                only_keys(&request, &["op"])?;
                let signed = session.signed_trace().map_err(|error| {
                    json!({"ok": false, "error": {"code": "trace_unavailable", "message": error.to_string()}})
                })?;
                Ok(json!({"trace": signed.to_value()}))
            }
            "validate" => {
                only_keys(&request, &["op", "answer", "mode"])?;
                let mode = match request.get("mode").and_then(Value::as_str) {
                    None | Some("review") => Mode::Review,
                    Some("submission") => Mode::Submission,
                    Some(_) => return Err(bad_request("`mode` must be \"review\" or \"submission\"")),
                };
                let answer = request.get("answer").ok_or_else(|| bad_request("`answer` is required"))?;
                Ok(serde_json::to_value(session.validate(answer, mode)).unwrap_or(Value::Null))
            }
            "skills" => {
                only_keys(&request, &["op"])?;
                let skills: Vec<Value> = liaison
                    .skills()
                    .iter()
                    .map(|skill| {
                        json!({"name": skill.name, "description": skill.description,
                        "allowedTools": skill.allowed_tools, "sha256": skill.sha256})
                    })
                    .collect();
                Ok(json!({"skills": skills}))
            }
            other => Err(bad_request(&format!("unknown op `{other}`"))),
        }
    })();
    match outcome {
        Ok(reply) => Reply::Continue(reply),
        Err(reply) if reply["error"]["code"] == "session_limit" => Reply::End(reply),
        Err(reply) => Reply::Continue(reply),
    }
}

/// One request line read from the client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line of at most [`MAX_LINE`] bytes is in the buffer.
    Read,
    /// A longer line was skipped, through its newline.
    TooLong,
    /// End of input.
    End,
}

/// Read the next line into `buffer`. A line over [`MAX_LINE`] bytes is
/// never held: past the cap, the rest is discarded chunk by chunk.
fn read_line(reader: &mut impl BufRead, buffer: &mut Vec<u8>) -> std::io::Result<Line> {
    buffer.clear();
    let read = reader.by_ref().take(MAX_LINE as u64 + 1).read_until(b'\n', buffer)?;
    if read == 0 {
        return Ok(Line::End);
    }
    if buffer.len() > MAX_LINE && !buffer.ends_with(b"\n") {
        buffer.clear();
        skip_through_newline(reader)?;
        return Ok(Line::TooLong);
    }
    Ok(Line::Read)
}

fn skip_through_newline(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if chunk.is_empty() {
            return Ok(());
        }
        match chunk.iter().position(|byte| *byte == b'\n') {
            Some(newline) => {
                reader.consume(newline + 1);
                return Ok(());
            }
            None => {
                let length = chunk.len();
                reader.consume(length);
            }
        }
    }
}

pub fn run(workspace_flag: Option<String>, host_args: &HostArgs, skills: Option<&Path>) -> Result<ExitCode> {
    let host = build_host(host_args)?;
    let signer = TraceSigner::host_key(&load_config(host_args.config.as_deref())?.trace)?;
    let liaison =
        Liaison::new(host, load_skills(skills)?).context("skills and tools disagree")?.with_signer(signer);
    let mut session = liaison.session(CallContext { workspace: workspace(workspace_flag), trace_id: None });
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut reader = stdin.lock();
    let mut buffer = Vec::new();
    loop {
        let reply = match read_line(&mut reader, &mut buffer)? {
            Line::End => break,
            Line::TooLong => Reply::Continue(bad_request("request line is over 4 MiB")),
            Line::Read => match std::str::from_utf8(&buffer) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => handle(&mut session, &liaison, line.trim()),
                Err(_) => Reply::Continue(bad_request("request line is not UTF-8")),
            },
        };
        let (Reply::Continue(response) | Reply::End(response)) = &reply;
        writeln!(stdout, "{response}")?;
        stdout.flush()?;
        if let Reply::End(response) = reply {
            eprintln!(
                "harmonia: {}",
                response["error"]["message"].as_str().unwrap_or("the session has ended")
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// `size` bytes of `a`, then `tail`, produced on demand: nothing holds
    /// the whole input.
    struct Generated {
        left: u64,
        tail: std::io::Cursor<Vec<u8>>,
    }

    impl Read for Generated {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return self.tail.read(out);
            }
            let count = out.len().min(self.left as usize);
            out[..count].fill(b'a');
            self.left -= count as u64;
            Ok(count)
        }
    }

    #[test]
    fn an_oversized_line_is_skipped_without_being_held() {
        let input = Generated {
            left: 3 * MAX_LINE as u64,
            tail: std::io::Cursor::new(b"\n{\"op\":\"skills\"}\n".to_vec()),
        };
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        let mut buffer = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buffer).unwrap(), Line::TooLong);
        assert!(buffer.capacity() <= 2 * (MAX_LINE + 1), "held {} bytes", buffer.capacity());
        assert_eq!(read_line(&mut reader, &mut buffer).unwrap(), Line::Read);
        assert_eq!(buffer, b"{\"op\":\"skills\"}\n");
        assert_eq!(read_line(&mut reader, &mut buffer).unwrap(), Line::End);
    }

    #[test]
    fn a_line_of_exactly_the_cap_is_read() {
        let mut text = vec![b' '; MAX_LINE];
        text.push(b'\n');
        let mut reader = std::io::Cursor::new(text);
        let mut buffer = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buffer).unwrap(), Line::Read);
        assert_eq!(buffer.len(), MAX_LINE + 1);
        let mut unended = std::io::Cursor::new(vec![b'x'; MAX_LINE + 1]);
        assert_eq!(read_line(&mut unended, &mut buffer).unwrap(), Line::TooLong);
        assert_eq!(read_line(&mut unended, &mut buffer).unwrap(), Line::End);
    }
}
