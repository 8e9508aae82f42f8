//! `harmonia serve`'s integration tests, one binary (wasmtime is linked
//! once): the scrape and the in-flight bound ([`metrics`]), spans
//! ([`telemetry`]), the OAuth resource metadata ([`oauth`]) and scopes
//! ([`scopes`]), the server under a hostile client ([`adversary`]), guarded
//! sessions on the stateless revision ([`stateless`]), skills through
//! the skills extension ([`skills_extension`]), the plugin set
//! reloaded under load ([`reload`]), what every answer carries and a
//! review page costs ([`responses`]), and the stateless fast path
//! answering as rmcp does ([`fast_path`]).

mod adversary;
mod fast_path;
mod metrics;
mod oauth;
mod reload;
mod responses;
mod scopes;
mod skills_extension;
mod stateless;
mod support;
mod telemetry;
