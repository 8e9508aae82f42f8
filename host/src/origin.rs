//! Where a plugin came from ([`PluginOrigin`]), and who is told while one
//! compiles ([`CompileProgress`]): named by the loader (`crate::plugin`)
//! and by the engine that holds the listener, so neither names the other.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a plugin came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum PluginOrigin {
    /// Built into the host binary.
    Builtin(String),
    /// A component file.
    File(PathBuf),
    /// A component pulled from an OCI registry and locked
    /// (`oci://host/repo@sha256:…`, the locked manifest digest).
    Oci(String),
}

impl fmt::Display for PluginOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin(name) => write!(f, "built-in {name}"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Oci(reference) => f.write_str(reference),
        }
    }
}

/// Told when a component is compiled rather than mapped from the cache:
/// the one slow step of a load (10 to 40 s for a Python or JavaScript
/// tool, under a second for most Rust ones), so a front end can say what
/// the wait is while it lasts.
pub trait CompileProgress: Send + Sync {
    /// Compiling `origin`, `bytes` long, starts; `cache_dir` is where the
    /// result will be kept (`None`: the cache is off).
    fn compiling(&self, origin: &PluginOrigin, bytes: usize, cache_dir: Option<&Path>);
    /// That compile ended (compiled or refused).
    fn compiled(&self, origin: &PluginOrigin);
}
