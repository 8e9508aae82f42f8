//! Loading plugins: bytes to a checked, ready-to-instantiate tool.
//!
//! For each component the loader: checks its SHA-256 against a configured
//! pin; reads its shape from the bytes ([`crate::component_shape`]) and
//! refuses, before compiling, any import outside its world's grant (naming
//! every one, [`crate::policy`]), a missing tool export, and counts past the
//! configured limits (naming the config key); compiles it (from the cache
//! when it can); pre-instantiates it against the
//! shared linker (`InstancePre`); calls `describe` once and validates the
//! descriptor, including that its scope matches the world the imports place
//! the component in.

use crate::bindings::ToolHostPre;
use crate::cache::{CacheOutcome, Lookup};
use crate::call_state::CallState;
use crate::capability::sha256_hex;
use crate::component_shape::{ComponentShape, ShapeLimitError};
use crate::descriptor::{Descriptor, DescriptorError};
use crate::engine::Runtime;
pub use crate::origin::{CompileProgress, PluginOrigin};
use crate::policy::{ImportError, ImportPolicy, TOOL_INTERFACE, World, unversioned};
pub use crate::sandbox::DescribeError;
use crate::sandbox::{self, CallLimits};
use serde::Serialize;
use std::path::{Path, PathBuf};
use wasmtime::component::Component;

/// Why a plugin was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{origin}: cannot read: {source}")]
    Read {
        /// Which plugin.
        origin: PluginOrigin,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes differ from the configured pin.
    #[error("{origin}: sha256 {actual} does not match the pinned {expected}")]
    Pin {
        /// Which plugin.
        origin: PluginOrigin,
        /// The pin.
        expected: String,
        /// The bytes' hash.
        actual: String,
    },
    /// Not a valid component.
    #[error("{origin}: not a valid WebAssembly component: {message}")]
    Compile {
        /// Which plugin.
        origin: PluginOrigin,
        /// The compiler's first line.
        message: String,
    },
    /// The component would create more than a configured limit allows.
    #[error("{origin}: {error}")]
    Limit {
        /// Which plugin.
        origin: PluginOrigin,
        /// Which limit, with its config key.
        error: ShapeLimitError,
    },
    /// An import outside the grant.
    #[error("{origin}: {error}")]
    Import {
        /// Which plugin.
        origin: PluginOrigin,
        /// Which import and why.
        error: ImportError,
    },
    /// The component does not export `harmonia:tools/tool`, or its types
    /// disagree with this host's WIT.
    #[error("{origin}: does not fit the harmonia:tools@0.1.0 worlds: {message}")]
    Link {
        /// Which plugin.
        origin: PluginOrigin,
        /// Why.
        message: String,
    },
    /// `describe` failed.
    #[error("{origin}: {source}")]
    Describe {
        /// Which plugin.
        origin: PluginOrigin,
        /// Why.
        source: sandbox::DescribeError,
    },
    /// The descriptor breaks a rule.
    #[error("{origin}: invalid descriptor: {error}")]
    Descriptor {
        /// Which plugin.
        origin: PluginOrigin,
        /// The rule.
        error: DescriptorError,
    },
    /// The component's provenance did not verify: a locked component
    /// whose bytes, manifest or signature do not hold, or an unsigned
    /// component where signatures are required. Nothing was compiled.
    #[error("{origin}: {reason}")]
    Unverified {
        /// Which plugin.
        origin: PluginOrigin,
        /// Why, naming the digest and the trust rule.
        reason: String,
    },
    /// Two plugins with one name.
    #[error("{second}: tool name `{name}` is already loaded from {first}")]
    DuplicateName {
        /// The name.
        name: String,
        /// The plugin loaded first.
        first: PluginOrigin,
        /// The plugin refused.
        second: PluginOrigin,
    },
}

/// What the host knows about a loaded plugin.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginInfo {
    /// The checked descriptor.
    pub descriptor: Descriptor,
    /// Lowercase hex SHA-256 of the component bytes.
    pub sha256: String,
    /// Where it came from.
    pub origin: PluginOrigin,
    /// Its imports, as the component names them.
    pub imports: Vec<String>,
    /// The world its imports place it in.
    #[serde(serialize_with = "serialize_world")]
    pub world: World,
    /// Where its bytes were verified to come from, when pulled from a
    /// registry (see [`Provenance`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// What was verified about a component pulled from an OCI registry
/// before it was compiled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// Its name in the lock file.
    pub name: String,
    /// The reference it was pulled by.
    pub reference: String,
    /// The locked manifest digest (what a signature signs).
    pub manifest_digest: String,
    /// The verified signer (`key:sha256:…`), `None` when unsigned and
    /// signatures are not required.
    pub signer: Option<String>,
}

fn serialize_world<S: serde::Serializer>(world: &World, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(world.as_str())
}

/// A loaded plugin.
pub struct Plugin {
    /// What is known about it.
    pub info: PluginInfo,
    pub(crate) pre: ToolHostPre<CallState>,
    /// Whether it came from the precompiled cache.
    pub cache: CacheOutcome,
}

/// The component's imports and exports, by name.
pub fn interface_names(runtime: &Runtime, component: &Component) -> (Vec<String>, Vec<String>) {
    let component_type = component.component_type();
    let imports = component_type.imports(&runtime.engine).map(|(name, _)| name.to_owned()).collect();
    let exports = component_type.exports(&runtime.engine).map(|(name, _)| name.to_owned()).collect();
    (imports, exports)
}

/// Read a component file.
pub fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path)
        .map_err(|source| LoadError::Read { origin: PluginOrigin::File(path.to_owned()), source })
}

/// Compile `bytes` (from the precompiled cache when the runtime has one).
pub fn compile(
    runtime: &Runtime,
    bytes: &[u8],
    origin: &PluginOrigin,
) -> Result<(Component, CacheOutcome), LoadError> {
    let lookup = lookup(runtime, bytes);
    if let Lookup::Hit(component) = lookup {
        return Ok((component, CacheOutcome::Hit));
    }
    let progress = runtime.compile_progress.as_deref();
    if let Some(progress) = progress {
        progress.compiling(origin, bytes.len(), runtime.cache.as_ref().map(|cache| cache.dir()));
    }
    let compiled = match &runtime.cache {
        Some(cache) => {
            cache.compile_and_store(&runtime.engine, bytes, &crate::cache::key(bytes)).map(|component| {
                let outcome =
                    if matches!(lookup, Lookup::Broken) { CacheOutcome::Rebuilt } else { CacheOutcome::Miss };
                (component, outcome)
            })
        }
        None => Component::from_binary(&runtime.engine, bytes)
            .map(|component| (component, CacheOutcome::Bypassed)),
    };
    if let Some(progress) = progress {
        progress.compiled(origin);
    }
    compiled.map_err(|error| LoadError::Compile { origin: origin.clone(), message: compile_message(&error) })
}

/// Wasmtime's first line, with the config key when it names a pool limit
/// (the shape check normally refuses those first).
fn compile_message(error: &wasmtime::Error) -> String {
    let message = first_line(error);
    let key = [
        ("core module instances", "limits.max_core_instances_per_component"),
        ("linear memories", "limits.max_memories_per_component"),
        ("tables, which exceeds", "limits.max_tables_per_component"),
    ]
    .into_iter()
    .find(|(what, _)| message.contains(what) && message.contains("pooling allocator"));
    match key {
        Some((_, key)) => format!("{message} (raise {key})"),
        None => message,
    }
}

/// Read the component's shape and refuse it before compiling when its
/// imports, its exports or its counts are outside what this host admits.
pub fn admit_shape(
    policy: ImportPolicy,
    limits: CallLimits,
    bytes: &[u8],
    origin: &PluginOrigin,
) -> Result<ComponentShape, LoadError> {
    let shape = ComponentShape::read(bytes)
        .map_err(|error| LoadError::Compile { origin: origin.clone(), message: error.to_string() })?;
    check_shape(policy, limits, &shape, origin)?;
    Ok(shape)
}

/// Refuse a shape whose imports, exports or counts are outside what this
/// host admits.
pub fn check_shape(
    policy: ImportPolicy,
    limits: CallLimits,
    shape: &ComponentShape,
    origin: &PluginOrigin,
) -> Result<(), LoadError> {
    policy
        .classify(shape.imports.iter().map(String::as_str))
        .map_err(|error| LoadError::Import { origin: origin.clone(), error })?;
    if !shape.exports.iter().any(|export| unversioned(export) == TOOL_INTERFACE) {
        return Err(LoadError::Link {
            origin: origin.clone(),
            message: format!("no `{TOOL_INTERFACE}` export"),
        });
    }
    shape
        .check(limits.component, limits.memory_bytes as u64)
        .map_err(|error| LoadError::Limit { origin: origin.clone(), error })?;
    Ok(())
}

/// Components at least this large have their SHA-256 computed on a second
/// thread while the shape is read and the cache looked up (16 ms for an
/// 18 MB CPython component, a third of its load).
const HASH_ON_THE_SIDE_BYTES: usize = 1 << 20;

/// Load one plugin from its bytes.
///
/// Nothing is compiled or run before the pin holds: the SHA-256 is computed
/// alongside the shape check and the cache lookup (a hit only maps code
/// already compiled from these bytes), and awaited before compiling on a
/// miss and before `describe`.
pub fn load(
    runtime: &Runtime,
    policy: ImportPolicy,
    limits: CallLimits,
    bytes: &[u8],
    origin: PluginOrigin,
    pin: Option<&str>,
) -> Result<Plugin, LoadError> {
    let checked_hash = |sha256: String| match pin {
        Some(expected) if expected != sha256 => {
            Err(LoadError::Pin { origin: origin.clone(), expected: expected.to_owned(), actual: sha256 })
        }
        _ => Ok(sha256),
    };
    let (sha256, cached) = if bytes.len() >= HASH_ON_THE_SIDE_BYTES {
        std::thread::scope(|scope| {
            let hashing = scope.spawn(|| sha256_hex(bytes));
            let cached = admit_shape(policy, limits, bytes, &origin).map(|_| lookup(runtime, bytes));
            let sha256 = hashing.join().unwrap_or_else(|_| sha256_hex(bytes));
            (sha256, cached)
        })
    } else {
        let sha256 = checked_hash(sha256_hex(bytes))?;
        (sha256, admit_shape(policy, limits, bytes, &origin).map(|_| lookup(runtime, bytes)))
    };
    let sha256 = checked_hash(sha256)?;
    let (component, cache) = compiled(runtime, bytes, &origin, cached?)?;
    load_compiled(runtime, policy, limits, &component, sha256, origin, cache)
}

/// [`load`] for bytes already hashed to `sha256` by whoever read them (a
/// locked component, whose bytes the store hashed against the locked
/// layer digest as it read them into this buffer): the same checks,
/// without hashing the same bytes twice.
pub fn load_verified(
    runtime: &Runtime,
    policy: ImportPolicy,
    limits: CallLimits,
    bytes: &[u8],
    origin: PluginOrigin,
    sha256: &str,
) -> Result<Plugin, LoadError> {
    let cached = admit_shape(policy, limits, bytes, &origin).map(|_| lookup(runtime, bytes))?;
    let (component, cache) = compiled(runtime, bytes, &origin, cached)?;
    load_compiled(runtime, policy, limits, &component, sha256.to_owned(), origin, cache)
}

/// The component for `bytes`: from the cache's answer, else compiled.
fn compiled(
    runtime: &Runtime,
    bytes: &[u8],
    origin: &PluginOrigin,
    cached: Lookup,
) -> Result<(Component, CacheOutcome), LoadError> {
    Ok(match cached {
        Lookup::Hit(component) => (component, CacheOutcome::Hit),
        // The lookup deleted a broken entry; the compile rebuilds it.
        Lookup::Broken => (compile(runtime, bytes, origin)?.0, CacheOutcome::Rebuilt),
        Lookup::Missing => compile(runtime, bytes, origin)?,
    })
}

/// The cache entry for `bytes`, if the runtime has a cache (a broken entry
/// is deleted and rebuilt by the compile that follows).
fn lookup(runtime: &Runtime, bytes: &[u8]) -> Lookup {
    match &runtime.cache {
        Some(cache) => cache.lookup(&runtime.engine, &crate::cache::key(bytes)),
        None => Lookup::Missing,
    }
}

/// Check and prepare a compiled component: imports, export, `describe`,
/// descriptor and scope.
pub fn load_compiled(
    runtime: &Runtime,
    policy: ImportPolicy,
    limits: CallLimits,
    component: &Component,
    sha256: String,
    origin: PluginOrigin,
    cache: CacheOutcome,
) -> Result<Plugin, LoadError> {
    let (imports, exports) = interface_names(runtime, component);
    let world = policy
        .classify(imports.iter().map(String::as_str))
        .map_err(|error| LoadError::Import { origin: origin.clone(), error })?;
    if !exports.iter().any(|export| unversioned(export) == TOOL_INTERFACE) {
        return Err(LoadError::Link { origin, message: format!("no `{TOOL_INTERFACE}` export") });
    }
    let link_error =
        |error: wasmtime::Error| LoadError::Link { origin: origin.clone(), message: first_line(&error) };
    let pre = runtime.linker.instantiate_pre(component).map_err(link_error)?;
    let pre = ToolHostPre::new(pre).map_err(link_error)?;
    let raw = runtime
        .facade
        .block_on(sandbox::describe(runtime, &pre, limits))
        .map_err(|source| LoadError::Describe { origin: origin.clone(), source })?;
    let descriptor = sandbox::descriptor_from_wit(raw)
        .map_err(|_| LoadError::Descriptor { origin: origin.clone(), error: DescriptorError::InputSchema })?;
    descriptor.validate().map_err(|error| LoadError::Descriptor { origin: origin.clone(), error })?;
    if !world.admits(descriptor.scope) {
        let error = DescriptorError::Scope { declared: descriptor.scope.as_str(), world: world.as_str() };
        return Err(LoadError::Descriptor { origin, error });
    }
    Ok(Plugin {
        info: PluginInfo { descriptor, sha256, origin, imports, world, provenance: None },
        pre,
        cache,
    })
}

fn first_line(error: &wasmtime::Error) -> String {
    error.to_string().lines().next().unwrap_or_default().to_owned()
}

/// Every `*.wasm` file in `dir`, sorted by name.
pub fn components_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let origin = PluginOrigin::File(dir.to_owned());
    let entries = std::fs::read_dir(dir).map_err(|source| LoadError::Read { origin, source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_keeps_the_io_error_as_the_source() {
        let missing = std::env::temp_dir().join(format!("harmonia-missing-{}.wasm", std::process::id()));
        let error = read_file(&missing).unwrap_err();
        let source =
            std::error::Error::source(&error).and_then(|source| source.downcast_ref::<std::io::Error>());
        assert_eq!(source.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound), "{error:?}");
        assert!(error.to_string().contains("cannot read"), "{error}");
    }
}
