//! The server's own series, on the host's shared registry: requests
//! refused before MCP handling (403/404 by reason, 503 by reason),
//! refused credentials by reason, validator refusals by rule, hot
//! reloads of the plugin set by outcome, and the stateless calls the fast
//! path answered. Calls
//! the server answers without running them (not allowed, past a rate, a
//! guard's refusal, no credential share before the deadline) count in the
//! host's call families, by tool and code, so one scrape has every call.
//!
//! Every label is a `&'static str` from a fixed set named where it is
//! counted; nothing a client sends becomes a label.

use harmonia_host::metrics::{Bound, Metrics};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use std::time::Duration;

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
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabel {
    rule: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The server's metrics: its families, and the host's it counts into.
#[derive(Clone, Debug)]
pub struct ServeMetrics {
    host: Metrics,
    refusals: Family<RuleLabel, Counter>,
    auth_failures: Family<ReasonLabel, Counter>,
    unavailable: Family<ReasonLabel, Counter>,
    forbidden: Family<ReasonLabel, Counter>,
    reloads: Family<OutcomeLabel, Counter>,
    fast_path: Counter,
}

impl ServeMetrics {
    /// The server's families, registered beside `host`'s.
    pub fn new(host: &Metrics) -> Self {
        let metrics = Self {
            host: host.clone(),
            refusals: Family::default(),
            auth_failures: Family::default(),
            unavailable: Family::default(),
            forbidden: Family::default(),
            reloads: Family::default(),
            fast_path: Counter::default(),
        };
        host.register(|registry| {
            registry.register("harmonia_refusals", "Refusals by validator rule code", metrics.refusals.clone());
            registry.register(
                "harmonia_authentication_failures",
                "Refused credentials by reason",
                metrics.auth_failures.clone(),
            );
            registry.register(
                "harmonia_http_unavailable",
                "Requests answered 503 with Retry-After before MCP handling, by reason",
                metrics.unavailable.clone(),
            );
            registry.register(
                "harmonia_http_refused",
                "Requests refused before MCP handling as not addressed to this server or on a session the caller does not own, by reason",
                metrics.forbidden.clone(),
            );
            registry.register(
                "harmonia_http_fast_path_calls",
                "Stateless tools/call requests answered without rmcp's per-request service",
                metrics.fast_path.clone(),
            );
            registry.register(
                "harmonia_plugin_reloads",
                "Plugin set reloads by outcome (swapped, unchanged, or refused: the old set kept serving)",
                metrics.reloads.clone(),
            );
        });
        metrics
    }

    /// The whole scrape: the host's families and the server's.
    pub fn encode(&self) -> String {
        self.host.encode()
    }

    /// Count a call refused before it ran (`call_refused`): by a
    /// credential's allow-list, or by a session's guard for `rule`.
    pub fn call_refused(&self, tool: &str, rule: Option<&'static str>) {
        self.host.call_not_run(tool, "call_refused");
        if let Some(rule) = rule {
            self.refusal(rule);
        }
    }

    /// Count a call refused because its credential was past its rate
    /// (`rate_limited`); by tool, never by tenant.
    pub fn call_rate_limited(&self, tool: &str) {
        self.host.call_not_run(tool, "rate_limited");
    }

    /// Count a call whose credential's share stayed full until its
    /// deadline: the wait, and the call as `dependency_unavailable`.
    pub fn credential_wait(&self, tool: &str, waited: Duration, acquired: bool) {
        self.host.slot_wait(Bound::CredentialInFlight, waited, acquired);
        if !acquired {
            self.host.call_unavailable(tool, waited);
        }
    }

    /// Count a request refused with 403 or answered as not found before
    /// MCP handling; `reason` is one of a fixed set (`host_not_allowed`,
    /// `origin_not_allowed`, `insufficient_scope`, `session_not_owned`).
    pub fn http_forbidden(&self, reason: &'static str) {
        self.forbidden.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Count a refusal by a validator rule (`rule` is its stable code).
    pub fn refusal(&self, rule: &'static str) {
        self.refusals.get_or_create(&RuleLabel { rule }).inc();
    }

    /// Count a stateless `tools/call` the fast path answered.
    pub fn fast_path_call(&self) {
        self.fast_path.inc();
    }

    /// Count a refused credential; `reason` is one of a fixed set.
    pub fn authentication_failure(&self, reason: &'static str) {
        self.auth_failures.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Count a reload of the plugin set by how it ended.
    pub fn plugin_reload(&self, outcome: Reload) {
        let outcome = match outcome {
            Reload::Swapped => "swapped",
            Reload::Unchanged => "unchanged",
            Reload::Refused => "refused",
        };
        self.reloads.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    /// Count a request refused with 503 before MCP handling; `reason` is
    /// one of a fixed set (`draining`, `too_many_sessions`,
    /// `too_many_connections`).
    pub fn http_unavailable(&self, reason: &'static str) {
        self.unavailable.get_or_create(&ReasonLabel { reason }).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_series_share_the_hosts_scrape() {
        let host = Metrics::new();
        let serve = ServeMetrics::new(&host);
        serve.http_forbidden("host_not_allowed");
        serve.authentication_failure("invalid_token");
        serve.call_refused("made_up", Some("retry_without_retryable_error"));
        serve.credential_wait("made_up", Duration::from_millis(5), false);
        let text = host.encode();
        for series in [
            r#"harmonia_http_refused_total{reason="host_not_allowed"} 1"#,
            r#"harmonia_authentication_failures_total{reason="invalid_token"} 1"#,
            r#"harmonia_refusals_total{rule="retry_without_retryable_error"} 1"#,
            r#"harmonia_calls_total{tool="unknown",code="call_refused"} 1"#,
            r#"harmonia_calls_total{tool="unknown",code="dependency_unavailable"} 1"#,
            r#"harmonia_slot_wait_timeouts_total{bound="credential_in_flight"} 1"#,
        ] {
            assert!(text.lines().any(|line| line == series), "{series} in {text}");
        }
        assert_eq!(serve.encode(), host.encode());
    }
}
