//! The host's log: structured records sent to a sink the embedder chooses.
//!
//! Records carry tool and skill names, status, durations, attempts, stable
//! error fields and trace ids (docs/contract.md §7). They never carry argument
//! values, data, prompts, answers, tokens or provider bodies. Two records
//! carry guest-produced text and are marked so: raw trap text and captured
//! guest stdout/stderr, both at `debug` level.

use std::fmt;
use std::sync::{Arc, Mutex};

/// Severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Something failed.
    Error,
    /// Something was refused or degraded.
    Warn,
    /// Normal operation.
    Info,
    /// Detail, including guest-produced text.
    Debug,
}

impl Level {
    /// Parse `error`, `warn`, `info` or `debug`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "error" => Some(Self::Error),
            "warn" => Some(Self::Warn),
            "info" => Some(Self::Info),
            "debug" => Some(Self::Debug),
            _ => None,
        }
    }
}

/// One log record: an event name and key/value fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Severity.
    pub level: Level,
    /// Stable event name, such as `call.finished`.
    pub event: &'static str,
    /// Fields, in order.
    pub fields: Vec<(&'static str, String)>,
}

impl fmt::Display for LogRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {}", self.level, self.event)?;
        for (key, value) in &self.fields {
            write!(f, " {key}={value:?}")?;
        }
        Ok(())
    }
}

/// Where log records go.
pub trait LogSink: Send + Sync {
    /// Receive one record.
    fn log(&self, record: &LogRecord);

    /// Whether records at `level` are wanted; the host skips building the
    /// others (its per-call records are on the hot path).
    fn enabled(&self, _level: Level) -> bool {
        true
    }
}

/// Writes records at or above a level to stderr, one line each.
#[derive(Debug)]
pub struct StderrLog {
    /// Lowest level written.
    pub min_level: Level,
}

impl LogSink for StderrLog {
    fn log(&self, record: &LogRecord) {
        if self.enabled(record.level) {
            eprintln!("harmonia: {record}");
        }
    }

    fn enabled(&self, level: Level) -> bool {
        level <= self.min_level
    }
}

/// Discards every record.
#[derive(Debug, Default)]
pub struct NullLog;

impl LogSink for NullLog {
    fn log(&self, _record: &LogRecord) {}

    fn enabled(&self, _level: Level) -> bool {
        false
    }
}

/// Keeps every record in memory (for tests and embedders that ship logs).
#[derive(Debug, Default)]
pub struct MemoryLog {
    records: Mutex<Vec<LogRecord>>,
}

impl MemoryLog {
    /// Every record so far.
    pub fn records(&self) -> Vec<LogRecord> {
        self.records.lock().map(|records| records.clone()).unwrap_or_default()
    }
}

impl LogSink for MemoryLog {
    fn log(&self, record: &LogRecord) {
        if let Ok(mut records) = self.records.lock() {
            records.push(record.clone());
        }
    }
}

/// A cheap handle to the configured sink.
#[derive(Clone)]
pub struct Logger(Arc<dyn LogSink>);

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Logger")
    }
}

impl Logger {
    /// Wrap a sink.
    pub fn new(sink: Arc<dyn LogSink>) -> Self {
        Self(sink)
    }

    /// Whether records at `level` reach the sink.
    pub fn enabled(&self, level: Level) -> bool {
        self.0.enabled(level)
    }

    /// Send one record.
    pub fn emit(&self, level: Level, event: &'static str, fields: Vec<(&'static str, String)>) {
        if self.enabled(level) {
            self.0.log(&LogRecord { level, event, fields });
        }
    }
}
