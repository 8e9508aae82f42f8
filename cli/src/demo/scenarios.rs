//! The demo's scenarios, by purpose: [`super::grounded`] (a grounded
//! session per skill, and the accepted edge cases: a retry, a preserved
//! error, an honest `no_data`) and [`super::rejections`] (one rejected
//! answer for every validator rule, from a table). This module holds what
//! both use: the stage they run on, a finished run, and the scenario.

use harmonia_conformance::outage::Outage;
use harmonia_contract::envelope::Envelope;
use harmonia_contract::liaison::trace::Trace;
use harmonia_contract::liaison::validator::{Mode, RuleCode};
use harmonia_host::CallContext;
use harmonia_host::liaison::session::{Liaison, Session};
use harmonia_host::liaison::signing::Seal;
use serde_json::Value;
use std::sync::Arc;

/// One scenario, run.
pub struct Scenario {
    /// Directory name in the exported catalogue.
    pub slug: &'static str,
    /// What it shows.
    pub title: String,
    /// The recorded invocation (possibly tampered with, to show the check).
    pub trace: Trace,
    /// The seal the session emitted with it (`None` for a hand-written trace).
    pub seal: Option<Seal>,
    /// The agent's answer.
    pub answer: Value,
    /// Review or submission.
    pub mode: Mode,
    /// The rule it must break, or `None` when it must be accepted.
    pub expected: Option<RuleCode>,
    /// Envelopes worth showing.
    pub envelopes: Vec<Envelope>,
}

/// What the scenarios run against.
pub struct Stage {
    pub liaison: Liaison,
    pub flaky: Arc<Outage>,
}

/// A finished session and what it returned.
#[derive(Clone)]
pub struct Run {
    /// The session's trace.
    pub trace: Trace,
    /// Its seal.
    pub seal: Option<Seal>,
    /// What each call returned.
    pub envelopes: Vec<Envelope>,
}

impl Stage {
    fn session(&self) -> Session {
        self.liaison.session(CallContext::for_workspace("ws_demo"))
    }

    /// A session on `ws_demo`: activate `skill`, make `calls`.
    pub fn run(&self, skill: Option<&str>, calls: &[(&str, Value)]) -> Run {
        let mut session = self.session();
        if let Some(skill) = skill {
            session.activate(skill).unwrap_or_else(|error| panic!("demo skill: {error}"));
        }
        let envelopes = calls
            .iter()
            .map(|(tool, args)| session.call(tool, args).unwrap_or_else(|error| panic!("demo call: {error}")))
            .collect();
        // The stage's liaison has its signer, so sealing cannot fail.
        let seal = session.signed_trace().ok().and_then(|document| document.seal);
        Run { trace: session.trace().clone(), seal, envelopes }
    }
}

/// A review-mode scenario of `run` answered with `answer`.
pub fn scenario(
    slug: &'static str,
    title: &str,
    run: &Run,
    answer: Value,
    expected: Option<RuleCode>,
) -> Scenario {
    Scenario {
        slug,
        title: title.to_owned(),
        trace: run.trace.clone(),
        seal: run.seal.clone(),
        answer,
        mode: Mode::Review,
        expected,
        envelopes: run.envelopes.clone(),
    }
}

/// Every scenario, in the order the demo prints them: the grounded ones,
/// then one rejection per rule.
pub fn all(stage: &Stage) -> Vec<Scenario> {
    let (mut out, grounded) = super::grounded::all(stage);
    out.extend(super::rejections::all(stage, &grounded));
    out
}
