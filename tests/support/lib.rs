//! Shared test support: hosts over test guests, a loopback HTTP server
//! that can misbehave on cue, and an independent evidence id formula.
//!
//! Parts:
//! - [`runtime`]: a shared tokio runtime for tests of `Host::call_async`,
//!   and [`read_source`], one workspace read awaited on it.
//! - [`server`]: [`server::Loopback`], a scripted HTTP/1.1 server on
//!   127.0.0.1 that records what it was asked and stops when dropped.
//! - [`hosts`]: hosts over chosen guests, with an in-memory log.
//! - [`hostile`]: the table of which test drives each hostile guest.
//! - [`expected_evidence_id`]: the contract's id formula, written again
//!   here so tests do not trust the host's own implementation.
//! - [`dependency_unavailable`]: the exact envelope of that stable error.
//! - [`sigstore`]: a fake Fulcio CA and Rekor log, their
//!   `trusted_root.json`, and keyless signatures as cosign stores them.
//! - [`netns`]: several hosts on one machine, as network namespaces on a
//!   private bridge, and links cut between them.
//! - [`postgres`]: a real PostgreSQL server in a temporary directory, on
//!   127.0.0.1 or inside a network namespace; stopped, crashed and
//!   restarted on cue.
//! - [`metric_value`], [`assert_metric`]: one series' value in a
//!   Prometheus text scrape.

pub mod hostile;
pub mod hosts;
pub mod netns;
pub mod postgres;
pub mod server;
pub mod sigstore;
pub mod tempdir;

use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The runtime async calls run on in tests: two workers (the machine's
/// cores) and every driver, as an embedder's would have.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime starts")
    })
}

/// One read from a workspace source, awaited on [`runtime`] (SQLite reads
/// run on its blocking pool).
pub fn read_source<S: harmonia_host::capability::workspace::WorkspaceSource>(
    source: &std::sync::Arc<S>,
    workspace: &str,
    read: harmonia_host::capability::workspace::WorkspaceRead<'_>,
    deadline: std::time::Instant,
) -> harmonia_host::capability::workspace::Answer {
    runtime().block_on(std::sync::Arc::clone(source).read(workspace, read, deadline))
}

/// `ev-` and the first 16 hex digits of SHA-256 over
/// `source|provenance|reference`.
pub fn expected_evidence_id(source: &str, provenance: &str, reference: Option<&str>) -> String {
    let text = format!("{source}|{provenance}|{}", reference.unwrap_or(""));
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("ev-{}", &hex[..16])
}

/// The exact envelope of the stable `dependency_unavailable` error, written
/// out here rather than taken from the host.
pub fn dependency_unavailable() -> serde_json::Value {
    serde_json::json!({"status": "error", "data": null, "error": {"code": "dependency_unavailable",
        "category": "dependency", "message": "The data source is unavailable right now.", "retryable": true},
        "evidence": []})
}

/// Assert one series' value in a Prometheus text scrape, showing the
/// whole scrape when it differs.
pub fn assert_metric(text: &str, series: &str, expected: f64) {
    assert_eq!(metric_value(text, series), expected, "{series} in:\n{text}");
}

/// The value of one series (`name{labels}`) in a Prometheus text scrape;
/// 0 when it was never created.
pub fn metric_value(text: &str, series: &str) -> f64 {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok()).unwrap_or(0.0)
}
