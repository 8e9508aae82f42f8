//! Inspecting a component without loading it as a plugin: its imports
//! (with how each is linked), exports, size, counts, SHA-256, the policy's
//! verdict and, when it can run, its descriptor.
//!
//! Everything but the descriptor is read from the bytes without compiling
//! them, so a component the host refuses is still listed whole; the
//! descriptor comes from a compile through the component cache.

use crate::capability::sha256_hex;
use crate::component_shape::{ComponentShape, Counts, ShapeError};
use crate::config::HostConfig;
use crate::descriptor::Descriptor;
use crate::engine::Runtime;
use crate::plugin::{self, CompileProgress, PluginOrigin};
use crate::policy::ImportPolicy;
use crate::sandbox::CallLimits;
use serde::Serialize;
use std::sync::Arc;

/// One import and how this host links it.
#[derive(Clone, Debug, Serialize)]
pub struct ImportGrant {
    /// The import as the component names it.
    pub import: String,
    /// `granted`, `capability`, `linked, denied`, or why it is refused.
    pub grant: &'static str,
}

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
    /// How each import is linked.
    pub grants: Vec<ImportGrant>,
    /// Every export.
    pub exports: Vec<String>,
    /// Core instances, memories and tables one instance creates.
    pub counts: Counts,
    /// `public-tool`, `workspace-tool` or `no capability`, or why the
    /// imports are refused.
    pub world: Result<String, String>,
    /// The checked descriptor, or why there is none.
    pub descriptor: Result<Descriptor, String>,
}

/// Why a component cannot be inspected at all (a component the host
/// would refuse is still inspected: [`Inspection::world`] says why).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    /// The bytes are not a WebAssembly component.
    #[error("{origin}: not a valid WebAssembly component: {source}")]
    NotAComponent {
        /// Where the bytes came from.
        origin: PluginOrigin,
        /// What the reader found.
        source: ShapeError,
    },
}

/// Inspect component bytes under `config`'s policy and limits; `progress`
/// is told when the descriptor needs a compile.
pub fn inspect(
    config: &HostConfig,
    bytes: &[u8],
    origin: PluginOrigin,
    progress: Option<Arc<dyn CompileProgress>>,
) -> Result<Inspection, InspectError> {
    let shape = ComponentShape::read(bytes)
        .map_err(|source| InspectError::NotAComponent { origin: origin.clone(), source })?;
    let policy = ImportPolicy::from(&config.wasi);
    let grants = shape
        .imports
        .iter()
        .map(|import| ImportGrant { import: import.clone(), grant: policy.grant(import).describe() })
        .collect();
    let world = policy
        .classify(shape.imports.iter().map(String::as_str))
        .map(|world| world.as_str().to_owned())
        .map_err(|error| error.to_string());
    let sha256 = sha256_hex(bytes);
    let descriptor = match &world {
        Ok(_) => describe(config, bytes, &shape, &sha256, origin, progress),
        Err(_) => Err("not run: its imports are refused".to_owned()),
    };
    Ok(Inspection {
        sha256,
        bytes: bytes.len(),
        imports: shape.imports,
        grants,
        exports: shape.exports,
        counts: shape.counts,
        world,
        descriptor,
    })
}

/// The tool `bytes` declare: the name of the checked descriptor their
/// `describe` returns, loaded as the host would load them under `config`'s
/// policy and limits (imports checked, cached compile, `describe`); or
/// why they declare none. What a pull and `plugin verify` compare a lock
/// entry's name with (`harmonia_registry::declared`).
pub fn declared_tool(config: &HostConfig, bytes: &[u8], origin: PluginOrigin) -> Result<String, String> {
    let inspection = inspect(config, bytes, origin, None).map_err(|error| error.to_string())?;
    inspection.world?;
    inspection.descriptor.map(|descriptor| descriptor.name)
}

/// Load the component as the host would (shape, cached compile,
/// `describe`) and return its checked descriptor.
fn describe(
    config: &HostConfig,
    bytes: &[u8],
    shape: &ComponentShape,
    sha256: &str,
    origin: PluginOrigin,
    progress: Option<Arc<dyn CompileProgress>>,
) -> Result<Descriptor, String> {
    let policy = ImportPolicy::from(&config.wasi);
    let limits = CallLimits::from(&config.limits);
    let mut runtime =
        Runtime::new(&config.limits, config.wasi.inert_filesystem_and_sockets, config.cache_dir().as_deref())
            .map_err(|error| format!("cannot start the wasm engine: {error}"))?;
    runtime.compile_progress = progress;
    plugin::check_shape(policy, limits, shape, &origin).map_err(|error| error.to_string())?;
    let (component, cache) = plugin::compile(&runtime, bytes, &origin).map_err(|error| error.to_string())?;
    plugin::load_compiled(&runtime, policy, limits, &component, sha256.to_owned(), origin, cache)
        .map(|plugin| plugin.info.descriptor)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn bytes_that_are_not_a_component_keep_the_readers_error_as_the_source() {
        let origin = PluginOrigin::File("tool.wasm".into());
        let error = inspect(&HostConfig::default(), b"not wasm", origin, None).unwrap_err();
        assert!(error.to_string().starts_with("tool.wasm: not a valid WebAssembly component: "), "{error}");
        let source = error.source().and_then(|source| source.downcast_ref::<ShapeError>());
        assert!(matches!(source, Some(ShapeError::Malformed(_))), "{source:?}");
    }
}
