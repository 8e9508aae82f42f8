//! The `harmonia` command's integration tests, one binary (wasmtime is
//! linked once), each driving the built binary as a user or an agent host
//! does:
//! - [`cli`]: exit codes, one-line errors, every subcommand;
//! - [`trace`]: signed traces and what `harmonia validate` trusts;
//! - [`catalogue`]: the evaluation catalogue's verdicts, replayed;
//! - [`conformance`]: `harmonia conformance` on our tools and hostile guests;
//! - [`first_hour`]: a plugin author's first hour, `harmonia new` onwards;
//! - [`oci`]: plugins pushed to, signed in and pulled from a real registry;
//! - [`review`]: `harmonia review` and `harmonia demo --html`;
//! - [`session_lines`]: `harmonia session` under a hostile client;
//! - [`python_agent`]: a Python agent on the standard library;
//! - [`serve_mcp`], [`serve_bounds`], [`serve_replicas`], [`serve_clients`]:
//!   `harmonia serve` driven by the official MCP SDKs and clients, under
//!   hostile plugins and clients, and as two replicas behind nginx;
//! - [`serve_cluster`]: three replicas on three hosts (network
//!   namespaces) sharing one PostgreSQL behind nginx, through a killed
//!   replica, a restarted database and a cut link;
//! - [`serve_database`]: the shared PostgreSQL ledger's password, its
//!   migrations, and a replica its database refuses;
//! - [`serve_reload`]: `harmonia serve --stdio` reloading on `SIGHUP`;
//! - [`slot_reset`]: the cheaper reset of a call slot given only where
//!   nothing can be swapped out, and refused from the moment swap turns on;
//! - [`deploy`]: the image and Kubernetes manifests under `deploy/`, held
//!   to Kubernetes' schemas and to what `harmonia serve` reads;
//! - [`support`]: what they share.

mod catalogue;
mod cli;
mod conformance;
mod deploy;
mod first_hour;
mod oci;
mod python_agent;
mod review;
mod serve_bounds;
mod serve_clients;
mod serve_cluster;
mod serve_database;
mod serve_mcp;
mod serve_reload;
mod serve_replicas;
mod session_lines;
mod slot_reset;
mod support;
mod trace;
