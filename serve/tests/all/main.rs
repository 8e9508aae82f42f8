//! `harmonia serve`'s integration tests, one binary (wasmtime is linked
//! once): the scrape and the in-flight bound ([`metrics`]), spans
//! ([`telemetry`]), the OAuth resource metadata ([`oauth`]) and scopes
//! ([`scopes`]), the server under a hostile client ([`adversary`]), guarded
//! sessions on the stateless revision ([`stateless`]), skills through
//! the skills extension ([`skills_extension`]), and the plugin set
//! reloaded under load ([`reload`]).

mod adversary;
mod metrics;
mod oauth;
mod reload;
mod scopes;
mod skills_extension;
mod stateless;
mod support;
mod telemetry;
