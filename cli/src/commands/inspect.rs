//! `harmonia inspect PATH`: a component's imports, exports, descriptor and
//! SHA-256, whether or not the policy admits it.

use crate::setup::{UsageError, load_config};
use anyhow::Result;
use harmonia_host::inspect::inspect;
use harmonia_host::plugin::PluginOrigin;
use std::path::Path;
use std::process::ExitCode;

pub fn run(path: &Path, config: Option<&Path>, json: bool) -> Result<ExitCode> {
    let config = load_config(config)?;
    let bytes = std::fs::read(path)
        .map_err(|error| UsageError(format!("cannot read {}: {error}", path.display())))?;
    let report = inspect(&config, &bytes, PluginOrigin::File(path.to_owned())).map_err(anyhow::Error::msg)?;
    if json {
        let value = serde_json::json!({
            "sha256": report.sha256,
            "bytes": report.bytes,
            "imports": report.imports,
            "exports": report.exports,
            "world": report.world.as_ref().ok(),
            "refused": report.world.as_ref().err(),
            "descriptor": report.descriptor.as_ref().ok(),
            "descriptorError": report.descriptor.as_ref().err(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("file:    {}", path.display());
        println!("sha256:  {}", report.sha256);
        println!("bytes:   {}", report.bytes);
        println!("imports:");
        for import in &report.imports {
            println!("  {import}");
        }
        println!("exports:");
        for export in &report.exports {
            println!("  {export}");
        }
        match &report.world {
            Ok(world) => println!("world:   {world} (imports admitted)"),
            Err(reason) => println!("refused: {reason}"),
        }
        match &report.descriptor {
            Ok(descriptor) => println!("descriptor:\n{}", serde_json::to_string_pretty(descriptor)?),
            Err(reason) => println!("descriptor: none ({reason})"),
        }
    }
    let admitted = report.world.is_ok() && report.descriptor.is_ok();
    Ok(if admitted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
