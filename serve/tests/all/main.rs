//! `harmonia serve`'s integration tests, one binary (wasmtime is linked
//! once): the scrape and the in-flight bound ([`metrics`]), spans
//! ([`telemetry`]), the OAuth resource metadata ([`oauth`]), and the
//! server under a hostile client ([`adversary`]).

mod adversary;
mod metrics;
mod oauth;
mod support;
mod telemetry;
