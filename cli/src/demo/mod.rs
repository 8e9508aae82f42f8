//! `harmonia demo`: the whole story, offline.
//!
//! A seeded demo workspace is imported into a fresh SQLite store (live
//! provenance), public signals come from the built-in fixtures (mock
//! provenance), and every built-in skill runs a scripted session: activate,
//! call, a grounded answer, the validator's verdict. Then the accepted edge
//! cases and one rejected answer for every validator rule. With `--export`
//! each scenario is also written as an evaluation case; with `--html` as a
//! review page, beside an index of every verdict. Sessions sign
//! their traces with a key the demo generates in memory; the export writes
//! its public half to `trace-key.pub`.
//!
//! Parts: [`scenarios`] (the stage and a scenario), [`grounded`] (accepted
//! answers), [`rejections`] (the table of one rejection per rule),
//! [`answers`] (answer builders), [`html`] (the review pages). The source
//! that fails on cue is the conformance crate's `Outage`.

mod answers;
mod grounded;
mod html;
mod rejections;
mod scenarios;

use anyhow::{Context, Result, bail};
use harmonia_conformance::outage::Outage;
use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::{Mode, validate_received};
use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_host::Host;
use harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON;
use harmonia_host::capability::workspace::sqlite::{self, SqliteSource};
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::signing::{TraceSigner, verify};
use harmonia_host::liaison::skills::SkillSet;
use harmonia_host::log::StderrLog;
use scenarios::{Scenario, Stage};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Where an export names the public key its traces are signed with.
const PUBLIC_KEY_FILE: &str = "trace-key.pub";

/// A scratch directory removed when the demo ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stage(scratch: &Path) -> Result<Stage> {
    let db = scratch.join("demo.db");
    let document = WorkspaceDocument::parse(DEMO_WORKSPACE_JSON).map_err(anyhow::Error::msg)?;
    let summary = sqlite::import(&db, &document)?;
    outln!(
        "Seeded workspace {} into a fresh SQLite store: {} posts ({} measured), {} jobs.",
        summary.workspace_id,
        summary.posts,
        summary.measured_posts,
        summary.jobs
    );
    let flaky = Arc::new(Outage::new(Arc::new(SqliteSource::new(db))));
    let host = Host::builder(HostConfig::default())
        .log(Arc::new(StderrLog { min_level: crate::setup::log_level() }))
        .public_web_mock(true)
        .workspace_source(flaky.clone())
        .build()
        .context("cannot start the host")?;
    outln!(
        "Loaded {} sandboxed tools; public signals come from built-in fixtures (provenance mock).",
        host.tools().count()
    );
    // A key of the demo's own, in memory: exported cases name its public half.
    let liaison = Liaison::new(host, SkillSet::builtin())?.with_signer(TraceSigner::generate()?);
    Ok(Stage { liaison, flaky })
}

fn show_envelope(envelope: &harmonia_host::Envelope) {
    let text = serde_json::to_string_pretty(&envelope.to_value()).unwrap_or_default();
    for line in text.lines() {
        outln!("    {line}");
    }
}

fn export(dir: &Path, scenario: &Scenario) -> Result<()> {
    let case = dir.join(scenario.slug);
    std::fs::create_dir_all(&case)?;
    let pretty = |value: &serde_json::Value| serde_json::to_string_pretty(value).map(|text| text + "\n");
    let document = TraceDocument { trace: scenario.trace.clone(), seal: scenario.seal.clone() };
    std::fs::write(case.join("trace.json"), pretty(&document.to_value())?)?;
    std::fs::write(case.join("answer.json"), pretty(&scenario.answer)?)?;
    let mode = if scenario.mode == Mode::Submission { "submission" } else { "review" };
    let expected =
        json!({"title": scenario.title, "mode": mode, "rule": scenario.expected.map(|rule| rule.as_str())});
    std::fs::write(case.join("expected.json"), pretty(&expected)?)?;
    Ok(())
}

pub fn run(export_dir: Option<&Path>, html_dir: Option<&Path>) -> Result<ExitCode> {
    let scratch = Scratch(std::env::temp_dir().join(format!("harmonia-demo-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0)?;
    outln!("== Harmonia demo: sandboxed read-only tools, guarded sessions, validated answers ==\n");
    let stage = stage(&scratch.0)?;
    let scenarios = scenarios::all(&stage);
    let public_key = stage.liaison.trace_public_key()?;
    if let Some(dir) = export_dir {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(PUBLIC_KEY_FILE), format!("{public_key}\n"))?;
    }
    let mut pages = html_dir.map(html::Pages::new).transpose()?;
    let mut surprises = Vec::new();
    let mut section = "";
    for scenario in &scenarios {
        let heading = if scenario.expected.is_some() {
            "Rejected answers: one per validator rule"
        } else {
            "Grounded sessions"
        };
        if heading != section {
            section = heading;
            outln!("\n## {heading}\n");
        }
        let verification = verify(&scenario.trace, scenario.seal.as_ref(), &public_key);
        let verdict = validate_received(
            &scenario.trace,
            verification,
            &scenario.answer,
            stage.liaison.skills(),
            scenario.mode,
        );
        outln!("### {}", scenario.title);
        if scenario.expected.is_none() {
            for entry in &scenario.trace.entries {
                match (entry.skill.as_deref(), entry.name.as_deref()) {
                    (Some(skill), _) => {
                        outln!("  activate {skill} (sha256 {})", &entry.sha256.as_deref().unwrap_or("")[..16])
                    }
                    (_, Some(tool)) => outln!(
                        "  call {tool} {} (attempt {})",
                        entry.args.clone().unwrap_or_default(),
                        entry.attempt.unwrap_or(0)
                    ),
                    _ => {}
                }
            }
            for envelope in &scenario.envelopes {
                outln!("  envelope:");
                show_envelope(envelope);
            }
            outln!("  answer:");
            for line in scenario.answer["answer"].as_str().unwrap_or_default().lines() {
                outln!("    {line}");
            }
        }
        match (&verdict.rule, verdict.accepted) {
            (_, true) => outln!("  verdict: ACCEPTED\n"),
            (Some(rule), false) => {
                outln!("  verdict: REJECTED {}: {}\n", rule.as_str(), verdict.reason.as_deref().unwrap_or(""))
            }
            (None, false) => outln!("  verdict: REJECTED\n"),
        }
        if verdict.rule != scenario.expected {
            surprises
                .push(format!("{}: expected {:?}, got {:?}", scenario.slug, scenario.expected, verdict.rule));
        }
        if let Some(dir) = export_dir {
            export(dir, scenario).with_context(|| format!("cannot export {}", scenario.slug))?;
        }
        if let Some(pages) = &mut pages {
            pages.add(scenario, &verdict, &public_key, stage.liaison.skills())?;
        }
    }
    let accepted = scenarios.iter().filter(|scenario| scenario.expected.is_none()).count();
    outln!(
        "== {} scenarios: {accepted} grounded answers accepted, {} bad answers rejected, each by the rule it breaks ==",
        scenarios.len(),
        scenarios.len() - accepted
    );
    if let Some(dir) = export_dir {
        outln!("Exported every scenario to {}", dir.display());
    }
    if let Some(pages) = pages {
        outln!("Review pages: open {}", pages.finish()?.display());
    }
    if !surprises.is_empty() {
        bail!("the demo did not go as scripted: {}", surprises.join("; "));
    }
    Ok(ExitCode::SUCCESS)
}
