//! `harmonia validate --trace F --answer F`: exit 0 accepted, 1 rejected,
//! 2 unreadable, oversized or malformed files. And `harmonia trace-key`,
//! which prints the public key that verifies the host's traces.
//!
//! Both files are parsed straight from a bounded reader: a trace over
//! [`MAX_TRACE_BYTES`] or `trace::MAX_ENTRIES` entries, or an answer over
//! [`MAX_ANSWER_BYTES`], is refused naming the limit, and neither file is
//! ever held whole as text.
//!
//! Trust: the trace's seal is checked against `--public-key`, else the
//! host's own trace key (`trace.key_file` or the default one; never
//! generated here). In submission mode a trace that does not verify is
//! rejected with `trace_unverified`; in review mode the rules are checked
//! on what the trace says and a failed check is only noted on stderr.

use crate::setup::{UsageError, load_config, load_skills};
use anyhow::Result;
use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::{Mode, validate_received};
use harmonia_host::liaison::signing::{PublicKey, TraceSigner};
use serde_json::Value;
use std::cell::Cell;
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::ExitCode;
use std::rc::Rc;

/// Largest trace file read, in bytes.
pub const MAX_TRACE_BYTES: u64 = 32 * 1024 * 1024;
/// Largest answer file read, in bytes (an answer holds at most a few
/// tens of KiB of text).
pub const MAX_ANSWER_BYTES: u64 = 1024 * 1024;

/// Which key `validate` trusts.
pub struct Trust<'a> {
    /// `--public-key`.
    pub public_key: Option<&'a str>,
    /// `--config`.
    pub config: Option<&'a Path>,
}

/// A reader that fails once more than `limit` bytes were asked of it, and
/// remembers that it did.
struct Bounded<R> {
    inner: R,
    remaining: u64,
    exceeded: Rc<Cell<bool>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the limit tells a file at the limit from a larger one.
        let room = usize::try_from(self.remaining.saturating_add(1)).unwrap_or(usize::MAX).min(buffer.len());
        let read = self.inner.read(&mut buffer[..room])?;
        if read as u64 > self.remaining {
            self.exceeded.set(true);
            return Err(std::io::Error::other("over the size limit"));
        }
        self.remaining -= read as u64;
        Ok(read)
    }
}

fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Parse `path` with `parse`, reading at most `limit` bytes.
fn read_bounded<T>(
    path: &Path,
    what: &str,
    limit: u64,
    parse: impl FnOnce(&mut dyn Read) -> Result<T, String>,
) -> Result<T> {
    let usage = |message: String| -> anyhow::Error { UsageError(message).into() };
    let too_large = || usage(format!("{what} {} is over the {} limit", path.display(), mib(limit)));
    let file = std::fs::File::open(path)
        .map_err(|error| usage(format!("cannot read {what} {}: {error}", path.display())))?;
    // A regular file says its size; devices and pipes are cut at the limit.
    if file.metadata().is_ok_and(|metadata| metadata.is_file() && metadata.len() > limit) {
        return Err(too_large());
    }
    let exceeded = Rc::new(Cell::new(false));
    // Buffered outside the bound: the parser reads a byte at a time.
    let mut reader =
        BufReader::new(Bounded { inner: file, remaining: limit, exceeded: Rc::clone(&exceeded) });
    match parse(&mut reader) {
        Ok(parsed) => Ok(parsed),
        Err(_) if exceeded.get() => Err(too_large()),
        Err(message) => Err(usage(format!("{what} {}: {message}", path.display()))),
    }
}

pub(crate) fn read_trace(path: &Path) -> Result<TraceDocument> {
    read_bounded(path, "trace", MAX_TRACE_BYTES, |reader| {
        TraceDocument::from_reader(reader).map_err(|error| error.to_string())
    })
}

pub(crate) fn read_answer(path: &Path) -> Result<Value> {
    read_bounded(path, "answer", MAX_ANSWER_BYTES, |reader| {
        serde_json::from_reader(reader).map_err(|error| format!("not JSON: {error}"))
    })
}

/// The key to verify with, or why there is none.
fn trusted_key(trust: &Trust<'_>) -> Result<Result<PublicKey, String>> {
    if let Some(text) = trust.public_key {
        return match PublicKey::parse_hex(text) {
            Some(key) => Ok(Ok(key)),
            None => {
                Err(UsageError("--public-key must be an ed25519 public key, 64 hex digits".into()).into())
            }
        };
    }
    let config = load_config(trust.config)?;
    Ok(TraceSigner::existing_host_key(&config.trace)
        .map(|signer| signer.public_key())
        .map_err(|error| format!("no host key to verify with ({error}); give --public-key")))
}

/// Whether `document`'s seal verifies with the trusted key, or why not
/// (including that there is no key to check with).
pub(crate) fn verification(document: &TraceDocument, trust: &Trust<'_>) -> Result<Result<(), String>> {
    Ok(trusted_key(trust)?.and_then(|key| document.verify(&key).map_err(|error| error.to_string())))
}

/// What `harmonia validate` checks besides the trace and the answer.
pub struct Checks<'a> {
    /// `--submission`.
    pub submission: bool,
    /// `--require-signer`: every `tool_call` was made by a component
    /// signed by this signer (`key:sha256:…` or
    /// `identity:<issuer>#<subject>`, exactly); needs `--submission`, whose
    /// verified seal is what makes the recorded signer the host's word.
    pub require_signer: Option<&'a str>,
}

/// The name `--require-signer` rejections carry (not a validator rule: a
/// deployment's policy on top of the contract).
pub const COMPONENT_SIGNER: &str = "component_signer";

pub fn run(
    trace: &Path,
    answer: &Path,
    checks: &Checks<'_>,
    trust: &Trust<'_>,
    json: bool,
    skills: Option<&Path>,
) -> Result<ExitCode> {
    if checks.require_signer.is_some() && !checks.submission {
        return Err(UsageError(
            "--require-signer needs --submission: only a verified seal makes the recorded signer the host's"
                .into(),
        )
        .into());
    }
    let document = read_trace(trace)?;
    let answer = read_answer(answer)?;
    let skills = load_skills(skills)?;
    let mode = if checks.submission { Mode::Submission } else { Mode::Review };
    let verification = verification(&document, trust)?;
    if let (Mode::Review, Err(reason)) = (mode, &verification) {
        eprintln!("harmonia: note: trace not verified ({reason}); review mode checks the rules only");
    }
    let verdict = validate_received(&document.trace, verification, &answer, &skills, mode);
    let (accepted, rule, reason) = match (verdict.accepted, checks.require_signer) {
        (true, Some(signer)) => match document.trace.first_call_not_signed_by(signer) {
            Some((_, reason)) => (false, COMPONENT_SIGNER, Some(reason)),
            None => (true, "", None),
        },
        _ => (verdict.accepted, verdict.rule.map(|rule| rule.as_str()).unwrap_or_default(), verdict.reason),
    };
    if json {
        let rule = (!rule.is_empty()).then_some(rule);
        outln!("{}", serde_json::json!({"accepted": accepted, "rule": rule, "reason": reason}));
    } else if accepted {
        outln!("accepted");
    } else {
        outln!("rejected: {rule}: {}", reason.as_deref().unwrap_or_default());
    }
    Ok(if accepted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `harmonia trace-key`: the host key's public half, 64 hex digits.
pub fn print_trace_key(config: Option<&Path>) -> Result<ExitCode> {
    let config = load_config(config)?;
    let signer = TraceSigner::host_key(&config.trace)?;
    outln!("{}", signer.public_key());
    Ok(ExitCode::SUCCESS)
}
