//! `harmonia serve`: Harmonia's tools for any agent host over the Model
//! Context Protocol, on the terms docs/contract.md §6 sets for adopting
//! MCP: an authenticated remote server, an explicit tool allow-list,
//! tenant-scoped credentials, the same envelope, read-only tools, and a
//! failure that cannot block the content pipeline.
//!
//! Parts:
//! - [`config`]: the serve config (tokens, JWT, bounds).
//! - [`auth`]: static tokens (hashes only) and JWTs → a [`auth::Principal`].
//! - [`catalog`]: tools as MCP tools, envelopes as MCP results.
//! - [`run`]: a whole server from its configs ([`run()`]): the host
//!   with the server's call bound, log and metrics, then stdio or HTTP
//!   until drained; the rules that make a start safe.
//! - [`logging`]: one log format, the host's records among the server's.
//! - [`metrics`]: the server's series (HTTP refusals, credentials,
//!   validator rules) on the host's shared registry.
//! - [`open_files`]: raising the process's open-files limit.
//! - [`stalled_writes`]: connections that fail once the client stops reading.
//! - [`state`]: what every connection shares; the in-flight call slots.
//! - [`tenants`]: every credential's share of the bounds, and its rate.
//! - [`handler`]: the MCP handler (tools, skills as prompts, the trace).
//! - [`http`]: streamable HTTP on axum: Host and Origin, authentication,
//!   session ownership, bounds, drain.
//! - [`sessions`]: guarded sessions on the stateless revision: sealed
//!   handles and the ledger replicas share (SQLite or PostgreSQL), which
//!   also counts the MCP sessions of every replica.
//! - [`database`]: the PostgreSQL database replicas on several machines
//!   share: its pool, bounded waits, migrations and health.
//! - [`reload`]: the plugin set swapped whole when the lock file or
//!   plugin directory changes, verified first; clients told.
//! - [`replica`]: session ids that name the replica holding them, and
//!   the credential owning them.
//! - [`stdio`]: the stdio transport for a local agent host.
//! - [`telemetry`]: OpenTelemetry spans per call, over OTLP when configured.
//!
//! Built on the official Rust MCP SDK (`rmcp`); no JSON-RPC by hand.

pub mod auth;
pub mod catalog;
pub mod config;
pub mod database;
pub mod handler;
pub mod http;
pub mod logging;
pub mod metrics;
pub mod open_files;
pub mod reload;
pub mod replica;
pub mod run;
pub mod sessions;
pub mod stalled_writes;
pub mod state;
pub mod stdio;
pub mod telemetry;
pub mod tenants;

pub use run::{Serve, ServeError, Transport, bound_calls, run};
