//! `harmonia review --trace F --answer F [--out FILE]`: the review page of
//! `harmonia-review`, one self-contained HTML file showing why the answer
//! was accepted or refused, at most 4 × the trace and answer (as compact
//! JSON) + 256 KiB, whatever they hold (`harmonia_review::bound`).
//!
//! The files are read, the seal checked and the verdict reached exactly as
//! `harmonia validate` does (its bounded readers and its trust: `--public-key`,
//! alias `--key`, else the host's trace key). The page goes to `--out`, or
//! to stdout without it. Exit codes are `validate`'s: 0 accepted, 1 refused
//! (the page is written either way), 2 unreadable, oversized or malformed files.

use super::validate::{self, Trust};
use crate::setup::{UsageError, load_skills};
use anyhow::Result;
use harmonia_contract::liaison::validator::Mode;
use std::path::Path;
use std::process::ExitCode;

/// What `harmonia review` was asked.
pub struct Request<'a> {
    /// `--trace`.
    pub trace: &'a Path,
    /// `--answer`.
    pub answer: &'a Path,
    /// `--out`, else stdout.
    pub out: Option<&'a Path>,
    /// `--submission`.
    pub submission: bool,
    /// `--skills`.
    pub skills: Option<&'a Path>,
}

pub fn run(request: &Request<'_>, trust: &Trust<'_>) -> Result<ExitCode> {
    let document = validate::read_trace(request.trace)?;
    let answer = validate::read_answer(request.answer)?;
    let skills = load_skills(request.skills)?;
    let mode = if request.submission { Mode::Submission } else { Mode::Review };
    let verification = validate::verification(&document, trust)?;
    let input = harmonia_review::input_bytes(&document, &answer);
    let (page, verdict) =
        harmonia_review::review_with_verdict(&document, verification, &answer, &skills, mode, None, input);
    let summary = match (verdict.accepted, verdict.rule) {
        (true, _) => "accepted".to_owned(),
        (false, rule) => format!(
            "rejected: {}: {}",
            rule.map(|rule| rule.as_str()).unwrap_or_default(),
            verdict.reason.as_deref().unwrap_or_default()
        ),
    };
    match request.out {
        Some(path) => {
            std::fs::write(path, page)
                .map_err(|error| UsageError(format!("cannot write {}: {error}", path.display())))?;
            outln!("{summary}; review written to {}", path.display());
        }
        None => {
            outln!("{}", page.trim_end());
            eprintln!("harmonia: {summary}");
        }
    }
    Ok(if verdict.accepted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
