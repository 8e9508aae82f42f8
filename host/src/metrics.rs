//! Prometheus metrics (docs/contract.md §7.1): one [`Metrics`] handle,
//! shared by a host (given with `HostBuilder::metrics`) and whatever
//! embeds it, whose [`Metrics::encode`] is the text exposition.
//!
//! Every label value comes from a bounded set: tool names of tools a host
//! loaded (any other name is `unknown`), the contract's codes and the
//! codes loaded tools declare, capability kinds and statuses, validator
//! rule codes, authentication failure reasons. Nothing a client sends
//! becomes a label, so a flood of made-up tool names adds no series, and
//! no argument, token or workspace ever reaches the text.
//!
//! The call path takes a read lock and a hash lookup per family and
//! updates atomics; it allocates nothing for a success.

use crate::cache::CacheOutcome;
use crate::capability::Receipt;
use crate::envelope::Envelope;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The label of a tool no host loaded.
pub const UNKNOWN_TOOL: &str = "unknown";

/// Duration buckets, seconds: 50 µs to 120 s.
pub const DURATION_BUCKETS: [f64; 20] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0, 120.0,
];

/// Which bound a call waited at: the host's call slots or the server's
/// in-flight permits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `limits.max_calls` in the host.
    HostSlots,
    /// `limits.max_in_flight_calls` in `harmonia serve`.
    ServeInFlight,
    /// `limits.max_in_flight_calls_per_credential` in `harmonia serve`.
    CredentialInFlight,
}

impl Bound {
    fn label(self) -> &'static str {
        match self {
            Self::HostSlots => "host_slots",
            Self::ServeInFlight => "serve_in_flight",
            Self::CredentialInFlight => "credential_in_flight",
        }
    }
}

/// How a reload of the plugin set ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reload {
    /// A new set, verified and loaded, replaced the old one.
    Swapped,
    /// The new set was verified and loaded but offers the same tools
    /// (same names and bytes): swapped, and no client is told.
    Unchanged,
    /// The new set was refused (verification or loading failed): the old
    /// one keeps serving.
    Refused,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: Arc<str>,
    code: Cow<'static, str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CapabilityLabels {
    kind: &'static str,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BoundLabel {
    bound: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabel {
    rule: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

struct Series {
    registry: Registry,
    tools: RwLock<HashMap<String, Arc<str>>>,
    unknown: Arc<str>,
    calls: Family<CallLabels, Counter>,
    call_seconds: HistogramFamily<ToolLabel>,
    capability_uses: Family<CapabilityLabels, Counter>,
    in_flight: Gauge,
    slot_waits: Family<BoundLabel, Counter>,
    slot_wait_seconds: HistogramFamily<BoundLabel>,
    slot_wait_timeouts: Family<BoundLabel, Counter>,
    refusals: Family<RuleLabel, Counter>,
    auth_failures: Family<ReasonLabel, Counter>,
    unavailable: Family<ReasonLabel, Counter>,
    forbidden: Family<ReasonLabel, Counter>,
    cache: Family<OutcomeLabel, Counter>,
    load_failures: Counter,
    reloads: Family<OutcomeLabel, Counter>,
}

/// A set of Harmonia's metrics. Cheap to clone: clones share the series.
#[derive(Clone)]
pub struct Metrics {
    series: Arc<Series>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every series, registered and at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "harmonia_calls",
            "Tool calls by tool and outcome code (success or the error code)",
            calls.clone(),
        );
        let call_seconds: HistogramFamily<ToolLabel> = Family::new_with_constructor(duration_histogram);
        registry.register_with_unit(
            "harmonia_call_duration",
            "Wall-clock time of a tool call, slot wait included",
            Unit::Seconds,
            call_seconds.clone(),
        );
        let capability_uses = Family::<CapabilityLabels, Counter>::default();
        registry.register(
            "harmonia_capability_uses",
            "Capability uses by kind and status",
            capability_uses.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "harmonia_calls_in_flight",
            "Tool calls holding a host call slot",
            in_flight.clone(),
        );
        let slot_waits = Family::<BoundLabel, Counter>::default();
        registry.register(
            "harmonia_slot_waits",
            "Calls that found every slot taken and waited",
            slot_waits.clone(),
        );
        let slot_wait_seconds: HistogramFamily<BoundLabel> = Family::new_with_constructor(duration_histogram);
        registry.register_with_unit(
            "harmonia_slot_wait",
            "Time a call waited for a slot (calls that waited)",
            Unit::Seconds,
            slot_wait_seconds.clone(),
        );
        let slot_wait_timeouts = Family::<BoundLabel, Counter>::default();
        registry.register(
            "harmonia_slot_wait_timeouts",
            "Calls whose deadline passed before a slot was free (answered dependency_unavailable)",
            slot_wait_timeouts.clone(),
        );
        let refusals = Family::<RuleLabel, Counter>::default();
        registry.register("harmonia_refusals", "Refusals by validator rule code", refusals.clone());
        let auth_failures = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "harmonia_authentication_failures",
            "Refused credentials by reason",
            auth_failures.clone(),
        );
        let unavailable = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "harmonia_http_unavailable",
            "Requests answered 503 with Retry-After before MCP handling, by reason",
            unavailable.clone(),
        );
        let forbidden = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "harmonia_http_refused",
            "Requests refused before MCP handling as not addressed to this server or on a session the caller does not own, by reason",
            forbidden.clone(),
        );
        let cache = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "harmonia_component_loads",
            "Component loads by cache outcome (hit, or compiled: miss, rebuilt, bypassed)",
            cache.clone(),
        );
        let load_failures = Counter::default();
        registry.register(
            "harmonia_component_load_failures",
            "Plugins refused at load",
            load_failures.clone(),
        );
        let reloads = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "harmonia_plugin_reloads",
            "Plugin set reloads by outcome (swapped, unchanged, or refused: the old set kept serving)",
            reloads.clone(),
        );
        Self {
            series: Arc::new(Series {
                registry,
                tools: RwLock::new(HashMap::new()),
                unknown: Arc::from(UNKNOWN_TOOL),
                calls,
                call_seconds,
                capability_uses,
                in_flight,
                slot_waits,
                slot_wait_seconds,
                slot_wait_timeouts,
                refusals,
                auth_failures,
                unavailable,
                forbidden,
                cache,
                load_failures,
                reloads,
            }),
        }
    }

    /// The Prometheus text exposition format (version 0.0.4 compatible,
    /// ending in `# EOF`).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.series.registry);
        text
    }

    /// The `Content-Type` of [`Metrics::encode`]'s text.
    pub const CONTENT_TYPE: &'static str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    /// Make `tool` a label value: called for each loaded tool.
    pub(crate) fn register_tool(&self, tool: &str) {
        if let Ok(mut tools) = self.series.tools.write() {
            tools.entry(tool.to_owned()).or_insert_with(|| Arc::from(tool));
        }
    }

    /// The label of `tool`: its name when a host loaded it, else `unknown`.
    fn tool(&self, tool: &str) -> Arc<str> {
        let known = self.series.tools.read().ok().and_then(|tools| tools.get(tool).cloned());
        known.unwrap_or_else(|| Arc::clone(&self.series.unknown))
    }

    /// Count a finished call of `tool`: its outcome, duration and
    /// capability uses.
    pub(crate) fn call_finished(
        &self,
        tool: &str,
        envelope: &Envelope,
        duration: Duration,
        receipts: &[Receipt],
    ) {
        let tool = self.tool(tool);
        let code = match &envelope.error {
            None => Cow::Borrowed("success"),
            Some(error) => match crate::contract::stable_code(&error.code) {
                Some(stable) => Cow::Borrowed(stable.code),
                // A code the loaded tool declares (the sandbox refuses any
                // other), so the set stays bounded.
                None => Cow::Owned(error.code.clone()),
            },
        };
        self.series.calls.get_or_create(&CallLabels { tool: Arc::clone(&tool), code }).inc();
        self.series.call_seconds.get_or_create(&ToolLabel { tool }).observe(duration.as_secs_f64());
        for receipt in receipts {
            let labels = CapabilityLabels {
                kind: capability_kind(receipt.capability),
                status: status(&receipt.status),
            };
            self.series.capability_uses.get_or_create(&labels).inc();
        }
    }

    /// Count a call refused before it ran (`call_refused`): by a
    /// credential's allow-list, or by a session's guard for `rule`.
    pub fn call_refused(&self, tool: &str, rule: Option<&'static str>) {
        let labels = CallLabels { tool: self.tool(tool), code: Cow::Borrowed("call_refused") };
        self.series.calls.get_or_create(&labels).inc();
        if let Some(rule) = rule {
            self.refusal(rule);
        }
    }

    /// Count a call answered with the retryable `dependency_unavailable`
    /// because no slot was free before its deadline.
    pub fn call_unavailable(&self, tool: &str, waited: Duration) {
        let tool = self.tool(tool);
        let labels = CallLabels { tool: Arc::clone(&tool), code: Cow::Borrowed("dependency_unavailable") };
        self.series.calls.get_or_create(&labels).inc();
        self.series.call_seconds.get_or_create(&ToolLabel { tool }).observe(waited.as_secs_f64());
    }

    /// Count a call refused because its credential was past its rate
    /// (`rate_limited`); by tool, never by tenant.
    pub fn call_rate_limited(&self, tool: &str) {
        let labels = CallLabels { tool: self.tool(tool), code: Cow::Borrowed("rate_limited") };
        self.series.calls.get_or_create(&labels).inc();
    }

    /// Count a request refused with 403 or answered as not found before
    /// MCP handling; `reason` is one of a fixed set (`host_not_allowed`,
    /// `origin_not_allowed`, `insufficient_scope`, `session_not_owned`).
    pub fn http_forbidden(&self, reason: &'static str) {
        self.series.forbidden.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Count a refusal by a validator rule (`rule` is its stable code).
    pub fn refusal(&self, rule: &'static str) {
        self.series.refusals.get_or_create(&RuleLabel { rule }).inc();
    }

    /// Count a refused credential; `reason` is one of a fixed set.
    pub fn authentication_failure(&self, reason: &'static str) {
        self.series.auth_failures.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Count a request refused with 503 before MCP handling; `reason` is
    /// one of a fixed set (`draining`, `too_many_sessions`,
    /// `too_many_connections`).
    pub fn http_unavailable(&self, reason: &'static str) {
        self.series.unavailable.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Count a wait at `bound`: `waited` long, ending with a slot or not.
    pub fn slot_wait(&self, bound: Bound, waited: Duration, acquired: bool) {
        let label = BoundLabel { bound: bound.label() };
        self.series.slot_waits.get_or_create(&label).inc();
        self.series.slot_wait_seconds.get_or_create(&label).observe(waited.as_secs_f64());
        if !acquired {
            self.series.slot_wait_timeouts.get_or_create(&label).inc();
        }
    }

    /// Count a call as running until the guard drops.
    pub(crate) fn running(&self) -> Running<'_> {
        self.series.in_flight.inc();
        Running(self)
    }

    /// Count a component load by its cache outcome.
    pub(crate) fn component_loaded(&self, outcome: CacheOutcome) {
        let outcome = match outcome {
            CacheOutcome::Hit => "hit",
            CacheOutcome::Miss => "miss",
            CacheOutcome::Rebuilt => "rebuilt",
            CacheOutcome::Bypassed => "bypassed",
        };
        self.series.cache.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    /// Count a plugin refused at load.
    pub(crate) fn load_failed(&self) {
        self.series.load_failures.inc();
    }

    /// Count a reload of the plugin set by how it ended.
    pub fn plugin_reload(&self, outcome: Reload) {
        let outcome = match outcome {
            Reload::Swapped => "swapped",
            Reload::Unchanged => "unchanged",
            Reload::Refused => "refused",
        };
        self.series.reloads.get_or_create(&OutcomeLabel { outcome }).inc();
    }
}

/// A call counted in `harmonia_calls_in_flight` while it lives.
pub(crate) struct Running<'a>(&'a Metrics);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.series.in_flight.dec();
    }
}

fn capability_kind(capability: &str) -> &'static str {
    match capability {
        "public-web" => "public_web",
        "workspace" => "workspace",
        _ => "other",
    }
}

/// A receipt's status as a bounded label: `ok` for a read that returned
/// data, `http_4xx` / `http_5xx` (and `http_3xx`) for other HTTP answers,
/// a failure kind from the capabilities' fixed set, else `other`.
fn status(status: &str) -> &'static str {
    const KINDS: [&str; 10] = [
        "denied",
        "invalid_url",
        "timed_out",
        "too_large",
        "unavailable",
        "refused_address",
        "unauthorized",
        "not_found",
        "rejected",
        "invalid_job_id",
    ];
    if status == "ok" {
        return "ok";
    }
    if let Ok(code) = status.parse::<u16>() {
        return match code {
            200..=299 => "ok",
            300..=399 => "http_3xx",
            400..=499 => "http_4xx",
            500..=599 => "http_5xx",
            _ => "other",
        };
    }
    KINDS.iter().find(|kind| **kind == status).copied().unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract;

    fn line_value(text: &str, series: &str) -> Option<f64> {
        text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn unknown_tools_share_one_series_and_statuses_are_bounded() {
        let metrics = Metrics::new();
        metrics.register_tool("known");
        let envelope = Envelope::stable_error(&contract::TOOL_TIMEOUT);
        for index in 0..500 {
            metrics.call_refused(&format!("made_up_{index}"), None);
            metrics.call_finished(&format!("other_{index}"), &envelope, Duration::from_millis(1), &[]);
        }
        metrics.call_finished(
            "known",
            &Envelope::success(Default::default(), Vec::new()),
            Duration::ZERO,
            &[],
        );
        let text = metrics.encode();
        assert!(!text.contains("made_up_"), "{text}");
        assert_eq!(
            line_value(&text, r#"harmonia_calls_total{tool="unknown",code="call_refused"}"#),
            Some(500.0)
        );
        assert_eq!(
            line_value(&text, r#"harmonia_calls_total{tool="unknown",code="tool_timeout"}"#),
            Some(500.0)
        );
        assert_eq!(line_value(&text, r#"harmonia_calls_total{tool="known",code="success"}"#), Some(1.0));
        assert_eq!(text.lines().filter(|line| line.starts_with("harmonia_calls_total{")).count(), 3);
        for (raw, label) in [
            ("200", "ok"),
            ("ok", "ok"),
            ("404", "http_4xx"),
            ("503", "http_5xx"),
            ("denied", "denied"),
            ("secret-token", "other"),
        ] {
            assert_eq!(status(raw), label, "{raw}");
        }
        assert_eq!(capability_kind("public-web"), "public_web");
    }

    #[test]
    fn slot_waits_and_in_flight_are_counted() {
        let metrics = Metrics::new();
        metrics.slot_wait(Bound::HostSlots, Duration::from_millis(3), true);
        metrics.slot_wait(Bound::HostSlots, Duration::from_millis(30), false);
        let running = metrics.running();
        let text = metrics.encode();
        assert_eq!(line_value(&text, r#"harmonia_slot_waits_total{bound="host_slots"}"#), Some(2.0));
        assert_eq!(line_value(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#), Some(1.0));
        assert_eq!(line_value(&text, r#"harmonia_slot_wait_seconds_count{bound="host_slots"}"#), Some(2.0));
        assert_eq!(line_value(&text, "harmonia_calls_in_flight"), Some(1.0));
        drop(running);
        assert_eq!(line_value(&metrics.encode(), "harmonia_calls_in_flight"), Some(0.0));
    }
}
