//! `harmonia tools`: loaded plugins and their contracts.

use crate::args::HostArgs;
use crate::setup::build_host;
use anyhow::Result;
use std::process::ExitCode;

pub fn run(host_args: &HostArgs, json: bool) -> Result<ExitCode> {
    let host = build_host(host_args)?;
    if json {
        let tools: Vec<_> = host.tools().collect();
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"tools": tools}))?);
        return Ok(ExitCode::SUCCESS);
    }
    for info in host.tools() {
        let descriptor = &info.descriptor;
        outln!(
            "{} {} ({} scope, deadline {} s)",
            descriptor.name,
            descriptor.version,
            descriptor.scope.as_str(),
            f64::from(descriptor.deadline_ms) / 1000.0
        );
        outln!("  purpose: {}", descriptor.purpose);
        outln!("  skills:  {}", descriptor.skills.join(", "));
        let codes: Vec<String> = descriptor
            .errors
            .iter()
            .map(|spec| {
                format!(
                    "{} ({}{})",
                    spec.code,
                    spec.category,
                    if spec.retryable { ", retryable" } else { "" }
                )
            })
            .collect();
        outln!("  errors:  {}", codes.join(", "));
        outln!("  input:   {}", descriptor.input_schema);
        outln!("  from:    {} (sha256 {})", info.origin, &info.sha256[..16]);
        if let Some(provenance) = &info.provenance {
            outln!("  signer:  {}", provenance.signer.as_deref().unwrap_or("none (unsigned)"));
        }
        outln!();
    }
    Ok(ExitCode::SUCCESS)
}
