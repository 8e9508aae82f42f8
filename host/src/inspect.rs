//! Inspecting a component without loading it as a plugin: its imports,
//! exports, SHA-256, the policy's verdict and, when it can run, its
//! descriptor.

use crate::capability::sha256_hex;
use crate::config::HostConfig;
use crate::descriptor::Descriptor;
use crate::engine::Runtime;
use crate::plugin::{self, PluginOrigin};
use crate::policy::ImportPolicy;
use crate::sandbox::CallLimits;
use serde::Serialize;

/// What `harmonia inspect` reports.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inspection {
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: usize,
    /// Every import, as named by the component.
    pub imports: Vec<String>,
    /// Every export.
    pub exports: Vec<String>,
    /// `public-tool`, `workspace-tool` or `no capability`, or why the
    /// imports are refused.
    pub world: Result<String, String>,
    /// The checked descriptor, or why there is none.
    pub descriptor: Result<Descriptor, String>,
}

/// Inspect component bytes under `config`'s policy and limits.
pub fn inspect(config: &HostConfig, bytes: &[u8], origin: PluginOrigin) -> Result<Inspection, String> {
    let runtime = Runtime::new(&config.limits, config.wasi.inert_filesystem_and_sockets, None)
        .map_err(|error| format!("cannot start the wasm engine: {error}"))?;
    let sha256 = sha256_hex(bytes);
    let (component, cache) =
        plugin::compile(&runtime, bytes, &sha256, &origin).map_err(|error| error.to_string())?;
    let (imports, exports) = plugin::interface_names(&runtime, &component);
    let policy = ImportPolicy { inert_filesystem_and_sockets: config.wasi.inert_filesystem_and_sockets };
    let world = policy
        .classify(imports.iter().map(String::as_str))
        .map(|world| world.as_str().to_owned())
        .map_err(|error| error.to_string());
    let limits = CallLimits {
        memory_bytes: config.limits.memory_mib as usize * 1024 * 1024,
        fuel: config.limits.fuel,
    };
    let descriptor = match &world {
        Ok(_) => plugin::load_compiled(&runtime, policy, limits, &component, sha256.clone(), origin, cache)
            .map(|plugin| plugin.info.descriptor)
            .map_err(|error| error.to_string()),
        Err(_) => Err("not run: its imports are refused".to_owned()),
    };
    Ok(Inspection { sha256, bytes: bytes.len(), imports, exports, world, descriptor })
}
