//! `harmonia call TOOL`: one sandboxed call; the envelope on stdout.

use crate::args::HostArgs;
use crate::setup::{UsageError, build_host};
use anyhow::Result;
use harmonia_host::CallContext;
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
    Ok(ExitCode::SUCCESS)
}
