//! `harmonia call TOOL`: one sandboxed call; the envelope on stdout.
//!
//! Stderr is for the person at the terminal, never parsed: a workspace
//! tool called with no workspace bound says why it was refused, and an
//! envelope the debug log explains further ends with one line naming the
//! cause and how to see the rest (`HARMONIA_LOG=debug`).

use crate::args::HostArgs;
use crate::setup::{UsageError, build_host, log_level};
use anyhow::Result;
use harmonia_contract::descriptor::Scope;
use harmonia_host::log::Level;
use harmonia_host::{CallContext, CallRecord};
use std::io::Read;
use std::process::ExitCode;

pub fn run(
    tool: &str,
    input: &str,
    workspace: Option<String>,
    host_args: &HostArgs,
    pretty: bool,
    show_receipts: bool,
) -> Result<ExitCode> {
    let input = if input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| UsageError(format!("cannot read stdin: {error}")))?;
        text
    } else {
        input.to_owned()
    };
    let host = build_host(host_args)?;
    let context = CallContext { workspace: crate::setup::workspace(workspace), trace_id: None };
    let record = host.call_recorded(tool, &input, &context)?;
    let value = record.envelope.to_value();
    let text = if pretty { serde_json::to_string_pretty(&value)? } else { value.to_string() };
    outln!("{text}");
    if show_receipts {
        for receipt in &record.receipts {
            eprintln!("receipt {}", serde_json::to_string(receipt)?);
        }
    }
    let scope = host.descriptor(tool).map(|descriptor| descriptor.scope);
    if let Some(why) = unbound_workspace(scope, context.workspace.as_deref(), &record) {
        eprintln!("harmonia: {why}");
    }
    if let Some(hint) = hint(&record, log_level()) {
        eprintln!("harmonia: {hint}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a workspace tool called with no workspace bound was refused.
fn unbound_workspace(scope: Option<Scope>, workspace: Option<&str>, record: &CallRecord) -> Option<String> {
    let refused = record.envelope.error.as_ref().is_some_and(|error| error.code == "authorization_failed");
    (scope == Some(Scope::Workspace) && workspace.is_none() && refused).then(|| {
        "no workspace is bound, so every workspace read is unauthorized (authorization_failed): pass \
         --workspace ID or set HARMONIA_WORKSPACE (with --mock, the demo workspace is ws_demo)"
            .to_owned()
    })
}

/// The call's diagnostics on one line and how to see the rest; `None`
/// when the debug log holds nothing about the call, or was on (it just
/// said it all).
fn hint(record: &CallRecord, level: Level) -> Option<String> {
    if record.diagnostics.is_empty() || level >= Level::Debug {
        return None;
    }
    Some(format!(
        "{} (run with HARMONIA_LOG=debug to see the tool's output and the trap)",
        record.diagnostics.join("; ")
    ))
}
