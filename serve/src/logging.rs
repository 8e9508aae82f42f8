//! One log format for the whole server: `tracing` events on stderr, the
//! host's own records among them.
//!
//! The host logs through a [`LogSink`] its embedder picks; the server's
//! sink, [`TracingLog`], turns each record into a `tracing` event of
//! target `harmonia_host`, so `HARMONIA_LOG` filters both alike and a
//! record reads like every other line. Records carry names, codes and
//! durations only (the host's rule: never an argument value, body, token
//! or answer), and the SDK and HTTP crates, which log whole requests at
//! debug and trace, stay at `warn` whatever the level.

use harmonia_host::log::{Level, LogRecord, LogSink};
use std::fmt::Write as _;

/// Install the server's subscriber once (stderr, no colours), at the level
/// `HARMONIA_LOG` names (default `warn`). A second call changes nothing.
pub fn init() {
    let level = std::env::var("HARMONIA_LOG").unwrap_or_else(|_| "warn".into());
    let filter = format!("{level},rmcp=warn,hyper=warn,hyper_util=warn,axum=warn,tower=warn,h2=warn");
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// The host's records as `tracing` events (target `harmonia_host`).
#[derive(Debug, Default)]
pub struct TracingLog;

impl LogSink for TracingLog {
    fn log(&self, record: &LogRecord) {
        // `tracing` names its fields at compile time; a record's fields
        // are data, so they travel as one `key="value"` text after the
        // event's name.
        let mut fields = String::new();
        for (key, value) in &record.fields {
            let _ = write!(fields, " {key}={value:?}");
        }
        let fields = fields.trim_start();
        match record.level {
            Level::Error => tracing::error!(target: "harmonia_host", event = record.event, "{fields}"),
            Level::Warn => tracing::warn!(target: "harmonia_host", event = record.event, "{fields}"),
            Level::Info => tracing::info!(target: "harmonia_host", event = record.event, "{fields}"),
            Level::Debug => tracing::debug!(target: "harmonia_host", event = record.event, "{fields}"),
        }
    }

    fn enabled(&self, level: Level) -> bool {
        // The host skips building records nobody would print. (A callsite's
        // level is a constant, hence one arm per level.)
        match level {
            Level::Error => tracing::enabled!(target: "harmonia_host", tracing::Level::ERROR),
            Level::Warn => tracing::enabled!(target: "harmonia_host", tracing::Level::WARN),
            Level::Info => tracing::enabled!(target: "harmonia_host", tracing::Level::INFO),
            Level::Debug => tracing::enabled!(target: "harmonia_host", tracing::Level::DEBUG),
        }
    }
}
