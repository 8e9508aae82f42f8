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
//! goes on; end of input ends it.

use crate::args::HostArgs;
use crate::setup::{build_host, load_config, load_skills, workspace};
use anyhow::{Context, Result};
use harmonia_host::CallContext;
use harmonia_host::liaison::session::{Liaison, Session};
use harmonia_host::liaison::signing::TraceSigner;
use harmonia_host::liaison::validator::Mode;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Longest request line accepted, in bytes.
const MAX_LINE: usize = 4 * 1024 * 1024;

fn bad_request(message: &str) -> Value {
    json!({"ok": false, "error": {"code": "bad_request", "message": message}})
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

fn handle(session: &mut Session, liaison: &Liaison, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(request @ Value::Object(_)) => request,
        Ok(_) => return bad_request("a request is a JSON object"),
        Err(error) => return bad_request(&format!("not JSON: {error}")),
    };
    let outcome = (|| -> Result<Value, Value> {
        match string_field(&request, "op")? {
            "activate" => {
                only_keys(&request, &["op", "skill"])?;
                let skill = session
                    .activate(string_field(&request, "skill")?)
                    .map_err(|error| json!({"ok": false, "error": {"code": "activation_refused", "message": error.to_string()}}))?;
                Ok(
                    json!({"ok": true, "skill": skill.name, "sha256": skill.sha256, "allowedTools": skill.allowed_tools}),
                )
            }
            "call" => {
                only_keys(&request, &["op", "tool", "args"])?;
                let tool = string_field(&request, "tool")?.to_owned();
                let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
                Ok(session.call(&tool, &args).to_value())
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
    outcome.unwrap_or_else(|error| error)
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
        buffer.clear();
        let read = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buffer)?;
        if read == 0 {
            break;
        }
        let response = if buffer.len() > MAX_LINE && !buffer.ends_with(b"\n") {
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            reader.read_until(b'\n', &mut rest)?;
            bad_request("request line is over 4 MiB")
        } else {
            match std::str::from_utf8(&buffer) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => handle(&mut session, &liaison, line.trim()),
                Err(_) => bad_request("request line is not UTF-8"),
            }
        };
        writeln!(stdout, "{response}")?;
        stdout.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
