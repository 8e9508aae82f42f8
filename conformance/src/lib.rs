//! The conformance suite: does a component honour the contract?
//!
//! [`run`] loads one component in a host whose capabilities are scripted
//! ([`scripted`]) and runs these checks, each with a stable id:
//!
//! | id | passes when |
//! | --- | --- |
//! | `load.component` | the bytes are a component exporting `harmonia:tools/tool@0.1.0` |
//! | `load.imports` | every import is within its world's grant |
//! | `load.descriptor` | `describe` answers and the descriptor is valid |
//! | `load.scope` | the descriptor's scope matches the component's world |
//! | `load.denied_links` | under this config, filesystem and sockets imports are linked to implementations that deny everything (a probe guest finds no preopens, cannot read, list or write a file, connect or bind a socket, or resolve a name, and its call still answers), or are refused at load |
//! | `envelope.inputs` | every generated input ([`inputs`]) gets a valid envelope with a declared code, never a trap or a timeout, and malformed input gets a `validation` error |
//! | `fault.<kind>` | with the capability answering 401, 403, 404, 429, 500, 503, garbage JSON, an empty body, an oversized body, `denied`, or never, the tool returns the contract's code for that case, and no canary planted in failure bodies reaches its envelope |
//! | `determinism` | the same input and capability answers give the same envelope twice |
//! | `limits` | a normal call takes at most a quarter of the deadline and half the memory limit (figures reported) |
//! | `evidence` | a normal call succeeds with evidence whose ids match the formula, whose references are non-empty, and which cites only records the capability returned |
//!
//! A failing check's reason names what the tool returned and ends, after
//! ` — `, with the call's diagnostics ([`CallRecord::diagnostics`]): the rule its answer
//! broke and the JSON path, how it failed, what it wrote to stdout. The
//! envelope itself never carries them.
//!
//! [`outage::Outage`], a workspace source failing on cue and then
//! recovering, is here for the demo and the session tests alike.
//!
//! A reference counts as returned when it, or its last `/`-, `=`- or
//! `?`-separated segment (an id inside a URL), appears in a body the
//! capability served during that call. When loading fails, the later checks
//! are reported as not run, and fail.

pub mod inputs;
pub mod outage;
pub mod scripted;

use harmonia_contract::descriptor::DescriptorError;
use harmonia_contract::envelope::Envelope;
use harmonia_host::World;
use harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON;
use harmonia_host::config::HostConfig;
use harmonia_host::host::{CallContext, CallRecord, Host, HostError};
use harmonia_host::log::{LogSink, NullLog};
use harmonia_host::plugin::{CompileProgress, LoadError, PluginInfo};
use scripted::{CANARY, FAULTS, Fault, Script, ScriptedWeb, ScriptedWorkspace, Scripts};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The Hacker News fixture the scripted public web serves by default.
pub const DEFAULT_WEB_FIXTURE: &str = harmonia_host::capability::public_web::mock::HN_STORIES_JSON;

/// One check's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable id.
    pub id: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why (figures for passes, the first failure for failures).
    pub reason: String,
}

/// Every check for one component.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PluginReport {
    /// The component, as named on the command line.
    pub plugin: String,
    /// Its tool name, when it loaded.
    pub tool: Option<String>,
    /// True when every check passed.
    pub passed: bool,
    /// The checks, in order.
    pub checks: Vec<Check>,
}

/// How the suite runs.
#[derive(Clone)]
pub struct Options {
    /// Limits, policy and cache (plugins and capabilities are ignored).
    pub config: HostConfig,
    /// Deadline cap while checking, so "never answers" ends quickly.
    pub deadline_cap_ms: u32,
    /// Body the healthy public web serves for every URL.
    pub web_fixture: Vec<u8>,
    /// Workspace document the healthy workspace serves.
    pub workspace_fixture: Value,
    /// Where the checked component's calls are logged (default: discarded);
    /// at debug level, each call's stdout, stderr, trap and diagnostic.
    pub log: Arc<dyn LogSink>,
    /// Told when the component is compiled rather than mapped from the cache.
    pub compile_progress: Option<Arc<dyn CompileProgress>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("config", &self.config)
            .field("deadline_cap_ms", &self.deadline_cap_ms)
            .field("web_fixture_bytes", &self.web_fixture.len())
            .field("workspace_fixture", &self.workspace_fixture)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            config: HostConfig::default(),
            deadline_cap_ms: 2_000,
            web_fixture: DEFAULT_WEB_FIXTURE.as_bytes().to_vec(),
            workspace_fixture: serde_json::from_str(DEMO_WORKSPACE_JSON).unwrap_or(Value::Null),
            log: Arc::new(NullLog),
            compile_progress: None,
        }
    }
}

fn check(id: impl Into<String>, passed: bool, reason: impl Into<String>) -> Check {
    Check { id: id.into(), passed, reason: reason.into() }
}

/// The ids of every check, in order.
pub fn check_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "load.component",
        "load.imports",
        "load.descriptor",
        "load.scope",
        "load.denied_links",
        "envelope.inputs",
    ]
    .map(String::from)
    .into();
    ids.extend(FAULTS.iter().map(|fault| format!("fault.{}", fault.id())));
    ids.extend(["determinism", "limits", "evidence"].map(String::from));
    ids
}

/// Load failures as the four load checks; `None` when loading succeeded.
fn load_checks(error: Option<&HostError>) -> Vec<Check> {
    let stage = match error {
        None => 4,
        Some(HostError::Load(LoadError::Import { .. })) => 1,
        Some(HostError::Load(LoadError::Descriptor { error: DescriptorError::Scope { .. }, .. })) => 3,
        Some(HostError::Load(LoadError::Describe { .. } | LoadError::Descriptor { .. })) => 2,
        Some(_) => 0,
    };
    let names = ["load.component", "load.imports", "load.descriptor", "load.scope"];
    let passes = [
        "a component exporting harmonia:tools/tool",
        "every import is granted",
        "the descriptor is valid",
        "scope matches the world",
    ];
    names
        .iter()
        .enumerate()
        .map(|(index, name)| match index.cmp(&stage) {
            std::cmp::Ordering::Less => check(*name, true, passes[index]),
            std::cmp::Ordering::Equal => {
                check(*name, false, error.map(ToString::to_string).unwrap_or_default())
            }
            std::cmp::Ordering::Greater => check(*name, false, "not run: loading failed"),
        })
        .collect()
}

/// Run every check on one component.
pub fn run(name: &str, bytes: Vec<u8>, options: &Options) -> PluginReport {
    let scripts = Arc::new(Scripts::new(options.web_fixture.clone(), options.workspace_fixture.clone()));
    let mut config = options.config.clone();
    config.plugins = Default::default();
    config.plugins.builtin = false;
    config.limits.max_deadline_ms = Some(
        config.limits.max_deadline_ms.map_or(options.deadline_cap_ms, |cap| cap.min(options.deadline_cap_ms)),
    );
    let mut builder = Host::builder(config)
        .log(Arc::clone(&options.log))
        .component_from(std::path::Path::new(name), bytes)
        .public_web_source(Arc::new(ScriptedWeb(Arc::clone(&scripts))))
        .workspace_source(Arc::new(ScriptedWorkspace(Arc::clone(&scripts))));
    if let Some(progress) = &options.compile_progress {
        builder = builder.compile_progress(Arc::clone(progress));
    }
    let host = builder.build();
    let mut checks = load_checks(host.as_ref().err());
    checks.push(denied_links(&options.config));
    let (tool, more) = match &host {
        Ok(host) => match host.tools().next().cloned() {
            Some(info) => {
                let suite = Suite {
                    host,
                    scripts: &scripts,
                    info: &info,
                    memory_limit: options.config.limits.memory_mib,
                };
                (Some(info.descriptor.name.clone()), suite.checks())
            }
            None => (None, Vec::new()),
        },
        Err(_) => (
            None,
            check_ids()[5..].iter().map(|id| check(id.clone(), false, "not run: loading failed")).collect(),
        ),
    };
    checks.extend(more);
    PluginReport { plugin: name.to_owned(), tool, passed: checks.iter().all(|check| check.passed), checks }
}

/// `load.denied_links`: run the embedded probe guest under `config`'s
/// linker and policy; every attempt it makes must be denied.
fn denied_links(config: &HostConfig) -> Check {
    const ID: &str = "load.denied_links";
    let Some(probe) = harmonia_artifacts::bench_guest("testing-denied-probe") else {
        return check(ID, false, "the probe guest is missing from this build");
    };
    let mut config = config.clone();
    config.plugins = Default::default();
    config.plugins.builtin = false;
    config.mock = true;
    let host = match Host::builder(config)
        .component_from(std::path::Path::new("denied-probe"), probe.to_vec())
        .build()
    {
        Ok(host) => host,
        Err(HostError::Load(LoadError::Import { .. })) => {
            return check(
                ID,
                true,
                "filesystem and sockets imports are refused at load (wasi.inert_filesystem_and_sockets = false)",
            );
        }
        Err(error) => return check(ID, false, format!("the probe did not load: {error}")),
    };
    let envelope = match host.call("denied_probe", "{}", &CallContext::default()) {
        Ok(envelope) => envelope,
        Err(error) => return check(ID, false, format!("the probe's call failed: {error}")),
    };
    let Some(attempts) = envelope.data.as_ref() else {
        return check(ID, false, format!("the probe did not answer: {}", describe(&envelope)));
    };
    let allowed: Vec<&str> = attempts
        .iter()
        .filter(|(_, outcome)| !outcome.as_str().is_some_and(|text| text.starts_with("denied")))
        .map(|(attempt, _)| attempt.as_str())
        .collect();
    if allowed.is_empty() {
        let tried: Vec<&str> = attempts.keys().map(String::as_str).collect();
        check(ID, true, format!("linked, denied: {} all refused and the call answered", tried.join(", ")))
    } else {
        check(ID, false, format!("allowed: {}", allowed.join(", ")))
    }
}

struct Suite<'a> {
    host: &'a Host,
    scripts: &'a Scripts,
    info: &'a PluginInfo,
    memory_limit: u32,
}

fn code(envelope: &Envelope) -> Option<&str> {
    envelope.error.as_ref().map(|error| error.code.as_str())
}

fn describe(envelope: &Envelope) -> String {
    match &envelope.error {
        None => "success".into(),
        Some(error) => {
            format!("{} ({}: {})", error.code, error.category, error.message.trim_end_matches('.'))
        }
    }
}

/// Why a call answered as it did, from its diagnostics: ` — ` and each
/// line, or nothing. Appended at the end of a failing check's reason.
fn why(record: &CallRecord) -> String {
    if record.diagnostics.is_empty() {
        String::new()
    } else {
        format!(" — {}", record.diagnostics.join("; "))
    }
}

impl Suite<'_> {
    fn name(&self) -> &str {
        &self.info.descriptor.name
    }

    fn call(&self, script: Script, input: &str) -> CallRecord {
        self.scripts.set(script);
        let context = CallContext::for_workspace("ws_conformance");
        match self.host.call_recorded(self.name(), input, &context) {
            Ok(record) => record,
            Err(error) => unreachable!("the suite's own tool is loaded: {error}"),
        }
    }

    fn sample(&self) -> String {
        inputs::sample(&self.info.descriptor.input_schema).to_string()
    }

    fn checks(&self) -> Vec<Check> {
        let mut checks = vec![self.inputs()];
        checks.extend(FAULTS.iter().map(|fault| self.fault(*fault)));
        checks.push(self.determinism());
        checks.push(self.limits());
        checks.push(self.evidence());
        checks
    }

    fn inputs(&self) -> Check {
        let probes = inputs::probes(&self.info.descriptor.input_schema);
        for probe in &probes {
            let record = self.call(Script::Healthy, &probe.input);
            let envelope = &record.envelope;
            let problem = if Envelope::from_value(&envelope.to_value()).is_err() {
                Some("is not a valid envelope".to_owned())
            } else if code(envelope).is_some_and(|code| self.info.descriptor.declared(code).is_none()) {
                Some(format!("returned undeclared {}", describe(envelope)))
            } else if matches!(code(envelope), Some("tool_execution_failed" | "tool_timeout")) {
                Some(format!("returned {}", describe(envelope)))
            } else if probe.malformed
                && envelope.error.as_ref().is_none_or(|error| error.category.as_str() != "validation")
            {
                Some(format!("returned {}; malformed input must be a validation error", describe(envelope)))
            } else {
                None
            };
            if let Some(problem) = problem {
                return check(
                    "envelope.inputs",
                    false,
                    format!("{}: {problem}{}", probe.label, why(&record)),
                );
            }
        }
        check(
            "envelope.inputs",
            true,
            format!("{} generated inputs, each a valid envelope with a declared code", probes.len()),
        )
    }

    fn fault(&self, fault: Fault) -> Check {
        let id = format!("fault.{}", fault.id());
        if self.info.world == World::NoCapability {
            return check(id, true, "not applicable: the component imports no capability");
        }
        let record = self.call(Script::Fault(fault), &self.sample());
        let reads = self.scripts.reads();
        if reads.is_empty() {
            return check(id, false, format!("the sample input {} never read the capability", self.sample()));
        }
        let expected = match (self.info.world, fault) {
            (_, Fault::NeverAnswers) => "tool_timeout",
            (World::WorkspaceTool, Fault::Status(401 | 403) | Fault::Denied) => "authorization_failed",
            (World::WorkspaceTool, Fault::Status(404)) if reads.contains(&"job") => "job_not_found",
            (World::WorkspaceTool, Fault::Status(404)) => "provider_request_rejected",
            _ => "dependency_unavailable",
        };
        let text = record.envelope.to_json();
        if text.contains(CANARY) {
            return check(id, false, "the canary planted in the failure body reached the envelope");
        }
        match code(&record.envelope) {
            Some(code) if code == expected => check(id, true, format!("{expected}, nothing leaked")),
            _ => check(
                id,
                false,
                format!("returned {}; expected {expected}{}", describe(&record.envelope), why(&record)),
            ),
        }
    }

    fn determinism(&self) -> Check {
        let first = self.call(Script::Healthy, &self.sample()).envelope.to_value();
        let second = self.call(Script::Healthy, &self.sample()).envelope.to_value();
        if first == second {
            check("determinism", true, "two identical calls gave identical envelopes")
        } else {
            check("determinism", false, "two identical calls gave different envelopes")
        }
    }

    fn limits(&self) -> Check {
        let record = self.call(Script::Healthy, &self.sample());
        let deadline = self.info.descriptor.deadline();
        let memory_limit = u64::from(self.memory_limit) * 1024 * 1024;
        let peak = record.peak_memory_bytes as u64;
        let figures = format!(
            "{:.1} ms of a {} ms deadline, {:.1} MiB of {} MiB memory",
            record.duration.as_secs_f64() * 1000.0,
            deadline.as_millis(),
            peak as f64 / (1024.0 * 1024.0),
            self.memory_limit
        );
        let failed = matches!(code(&record.envelope), Some("tool_execution_failed" | "tool_timeout"));
        let fast = record.duration <= deadline / 4 && record.duration < Duration::from_millis(500);
        let small = peak <= memory_limit / 2;
        let passed = !failed && fast && small;
        let verdict =
            if failed { format!("returned {}; ", describe(&record.envelope)) } else { String::new() };
        let why = if passed { String::new() } else { why(&record) };
        check("limits", passed, format!("{verdict}{figures}{why}"))
    }

    fn evidence(&self) -> Check {
        let record = self.call(Script::Healthy, &self.sample());
        let envelope = &record.envelope;
        if !envelope.is_success() {
            return check(
                "evidence",
                false,
                format!("a normal call returned {}{}", describe(envelope), why(&record)),
            );
        }
        if envelope.evidence.is_empty() {
            return check("evidence", false, "a successful call returned no evidence");
        }
        if let Err(error) = Envelope::from_value(&envelope.to_value()) {
            return check("evidence", false, error.to_string());
        }
        let bodies: Vec<String> =
            self.scripts.bodies().iter().map(|body| String::from_utf8_lossy(body).into_owned()).collect();
        for item in &envelope.evidence {
            let Some(reference) = &item.reference else { continue };
            if reference.trim().is_empty() {
                return check("evidence", false, format!("{} has an empty reference", item.evidence_id));
            }
            let tail = reference.rsplit(['/', '=', '?']).next().unwrap_or(reference);
            let returned = bodies
                .iter()
                .any(|body| body.contains(reference.as_str()) || (!tail.is_empty() && body.contains(tail)));
            if !returned {
                return check(
                    "evidence",
                    false,
                    format!("{} cites `{reference}`, which the capability never returned", item.evidence_id),
                );
            }
        }
        let records = envelope.evidence.iter().filter(|item| item.reference.is_some()).count();
        check(
            "evidence",
            true,
            format!(
                "{} items ({records} record-level), ids and references check out",
                envelope.evidence.len()
            ),
        )
    }
}
