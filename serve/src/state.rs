//! What every connection shares: the plugin set (host, skills, trace
//! key; swapped whole on a reload), the bounds, every credential's share
//! and the call spans. The calls in flight are bounded once, by the
//! host's call slots (`harmonia serve` sizes them to
//! `limits.max_in_flight_calls`); every set a reload swaps in runs on the
//! first set's slots, so calls still running on a replaced set count
//! against the same bound, and the drain waits for them.

use crate::config::{Limits, RateLimits, ServeConfig, SessionsConfig};
use crate::metrics::ServeMetrics;
use crate::reload::Plugins;
use crate::sessions::{GuardedSessions, SetupError};
use crate::telemetry::CallSpans;
use crate::tenants::Tenants;
use harmonia_host::CallSlots;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::signing::PublicKey;
use std::sync::Arc;

/// Shared server state.
pub struct ServeState {
    /// Host, skills and the trace signer: the set serving now.
    pub plugins: Plugins,
    /// The server's series beside the host's, shared by every set a
    /// reload swaps in.
    metrics: Option<ServeMetrics>,
    /// The bounds.
    pub limits: Limits,
    /// Every credential's share of the bounds, and its rate.
    pub tenants: Arc<Tenants>,
    /// The key that verifies traces this server signs.
    pub trace_key: PublicKey,
    /// Where each call's spans go, when telemetry is on.
    pub spans: Option<CallSpans>,
    /// Guarded sessions on the stateless revision, and the ledger that
    /// counts every session.
    pub sessions: Arc<GuardedSessions>,
    /// The call slots of every set served, replaced ones included.
    slots: CallSlots,
}

/// Why the shared state could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The trace key.
    #[error(transparent)]
    Key(#[from] harmonia_host::liaison::signing::KeyError),
    /// The stateless sessions' key or ledger.
    #[error(transparent)]
    Sessions(#[from] SetupError),
}

impl ServeState {
    /// State for `liaison` under `limits` and the default rate limits,
    /// recording each call's spans in `spans` when given.
    pub fn new(liaison: Liaison, limits: Limits, spans: Option<CallSpans>) -> Result<Arc<Self>, StateError> {
        Self::with_rate_limits(liaison, limits, RateLimits::default(), spans)
    }

    /// State for `liaison` as `config` says (bounds, rates, sessions).
    pub fn from_config(
        liaison: Liaison,
        config: &ServeConfig,
        spans: Option<CallSpans>,
    ) -> Result<Arc<Self>, StateError> {
        Self::build(
            liaison,
            config.limits.clone(),
            config.rate_limits.clone(),
            &config.sessions,
            config.replica_id.as_deref(),
            spans,
        )
    }

    /// State for `liaison` under `limits`, calls limited by `rates`.
    pub fn with_rate_limits(
        liaison: Liaison,
        limits: Limits,
        rates: RateLimits,
        spans: Option<CallSpans>,
    ) -> Result<Arc<Self>, StateError> {
        Self::build(liaison, limits, rates, &SessionsConfig::default(), None, spans)
    }

    fn build(
        liaison: Liaison,
        limits: Limits,
        rates: RateLimits,
        sessions: &SessionsConfig,
        replica: Option<&str>,
        spans: Option<CallSpans>,
    ) -> Result<Arc<Self>, StateError> {
        let trace_key = liaison.trace_public_key()?;
        // A name for this process among the replicas sharing a database.
        let replica = match replica {
            Some(id) => id.to_owned(),
            None => format!("r-{}", crate::sessions::ledger::new_id().unwrap_or_default()),
        };
        let sessions = Arc::new(GuardedSessions::new(sessions, &limits, &replica)?);
        let database = sessions.database().cloned();
        Ok(Arc::new(Self {
            sessions,
            tenants: Arc::new(Tenants::shared(limits.clone(), rates, database)),
            metrics: liaison.host().metrics().map(ServeMetrics::new),
            slots: liaison.host().call_slots().clone(),
            plugins: Plugins::new(liaison),
            limits,
            trace_key,
            spans,
        }))
    }

    /// The metrics, when the host counts any (served at `GET /metrics`).
    pub fn metrics(&self) -> Option<&ServeMetrics> {
        self.metrics.as_ref()
    }

    /// The plugin set serving now: a call holds it to its end, so a
    /// reload never changes the set under a running call.
    pub fn liaison(&self) -> Arc<Liaison> {
        self.plugins.current()
    }

    /// Record the spans of a call of `tool` that just ended, when
    /// telemetry is on, under the client's span when `parent` names one.
    pub fn record_spans(
        &self,
        tool: &str,
        record: &harmonia_host::CallRecord,
        parent: Option<&crate::telemetry::TraceParent>,
    ) {
        if let Some(spans) = &self.spans {
            spans.record_within(tool, record, parent);
        }
    }

    /// The call slots every set served runs on: a reload's new host is
    /// built on them ([`harmonia_host::HostBuilder::call_slots`]).
    pub fn call_slots(&self) -> &CallSlots {
        &self.slots
    }

    /// The work the state needs while the server runs, until `stop` is
    /// cancelled: the shared database kept (migrated, its heartbeat
    /// beaten), and the MCP sessions' places renewed.
    pub async fn keep(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        if let Some(database) = self.sessions.database() {
            tokio::spawn(Arc::clone(database).keep(stop.clone()));
        }
        let every = crate::sessions::PLACE_LEASE / 3;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            if let Err(error) = self.sessions.renew_places().await {
                tracing::warn!(%error, "the MCP sessions' places could not be renewed; retrying");
            }
        }
    }

    /// Wait until no call runs, on the set serving now or on any set a
    /// reload replaced (they share one gate), or `timeout` passes; true
    /// when idle.
    pub async fn drained(&self, timeout: std::time::Duration) -> bool {
        self.slots.drained(timeout).await
    }
}
