//! `harmonia demo --html DIR`: each scenario's review page (the page
//! `harmonia review` writes) and an `index.html` listing every verdict,
//! so a newcomer sees every scenario at a glance and one click shows why.

use super::scenarios::Scenario;
use anyhow::{Context, Result};
use harmonia_contract::liaison::trace::TraceDocument;
use harmonia_contract::liaison::validator::Verdict;
use harmonia_host::liaison::signing::PublicKey;
use harmonia_host::liaison::skills::SkillSet;
use harmonia_review::{IndexRow, Review, SealState, index_page, render};
use std::path::{Path, PathBuf};

/// The pages written so far.
pub struct Pages {
    dir: PathBuf,
    rows: Vec<IndexRow>,
}

impl Pages {
    /// Pages under `dir`, created if missing.
    pub fn new(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Self { dir: dir.to_owned(), rows: Vec::new() })
    }

    /// Write `scenario`'s page, showing `verdict` (the demo's own).
    pub fn add(
        &mut self,
        scenario: &Scenario,
        verdict: &Verdict,
        key: &PublicKey,
        skills: &SkillSet,
    ) -> Result<()> {
        let document = TraceDocument { trace: scenario.trace.clone(), seal: scenario.seal.clone() };
        let seal = SealState::of(&document, &document.verify(key));
        let page = render(&Review {
            title: Some(&scenario.title),
            document: &document,
            seal: &seal,
            answer: &scenario.answer,
            verdict,
            skills,
            mode: scenario.mode,
            input_bytes: harmonia_review::input_bytes(&document, &scenario.answer),
        });
        let file = format!("{}.html", scenario.slug);
        std::fs::write(self.dir.join(&file), page)
            .with_context(|| format!("cannot write {}", self.dir.join(&file).display()))?;
        self.rows.push(IndexRow {
            file,
            title: scenario.title.clone(),
            accepted: verdict.accepted,
            rule: verdict.rule.map(|rule| rule.as_str().to_owned()),
            reason: verdict.reason.clone(),
        });
        Ok(())
    }

    /// Write the index; returns its path.
    pub fn finish(self) -> Result<PathBuf> {
        let index = self.dir.join("index.html");
        std::fs::write(&index, index_page("Harmonia demo: every scenario's verdict", &self.rows))
            .with_context(|| format!("cannot write {}", index.display()))?;
        Ok(index)
    }
}
