//! `harmonia inspect PATH`: a component's imports, exports, descriptor and
//! SHA-256, whether or not the policy admits it.

use crate::setup::{UsageError, load_config};
use anyhow::Result;
use harmonia_host::inspect::inspect;
use harmonia_host::plugin::PluginOrigin;
use std::path::Path;
use std::process::ExitCode;

pub fn run(path: &Path, config: Option<&Path>, json: bool, quiet: bool) -> Result<ExitCode> {
    let config = load_config(config)?;
    let bytes = std::fs::read(path)
        .map_err(|error| UsageError(format!("cannot read {}: {error}", path.display())))?;
    let progress = crate::progress::CompileSpinner::unless_quiet(quiet);
    let report = inspect(&config, &bytes, PluginOrigin::File(path.to_owned()), progress)?;
    if json {
        let value = serde_json::json!({
            "sha256": report.sha256,
            "bytes": report.bytes,
            "imports": report.imports,
            "grants": report.grants,
            "counts": report.counts,
            "exports": report.exports,
            "world": report.world.as_ref().ok(),
            "refused": report.world.as_ref().err(),
            "descriptor": report.descriptor.as_ref().ok(),
            "descriptorError": report.descriptor.as_ref().err(),
        });
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        outln!("file:    {}", path.display());
        outln!("sha256:  {}", report.sha256);
        outln!("bytes:   {}", report.bytes);
        outln!(
            "counts:  {} core instances, {} memories, {} tables",
            report.counts.core_instances,
            report.counts.memories,
            report.counts.tables
        );
        outln!("imports:");
        for grant in &report.grants {
            outln!("  {}  ({})", grant.import, grant.grant);
        }
        outln!("exports:");
        for export in &report.exports {
            outln!("  {export}");
        }
        match &report.world {
            Ok(world) => outln!("world:   {world} (imports admitted)"),
            Err(reason) => outln!("refused: {reason}"),
        }
        match &report.descriptor {
            Ok(descriptor) => outln!("descriptor:\n{}", serde_json::to_string_pretty(descriptor)?),
            Err(reason) => outln!("descriptor: none ({reason})"),
        }
    }
    let admitted = report.world.is_ok() && report.descriptor.is_ok();
    Ok(if admitted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
