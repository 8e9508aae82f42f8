//! `harmonia.toml`: the host's configuration as plain data.
//!
//! Every table rejects unknown keys, naming them. Relative paths are taken
//! from the directory of the config file. Defaults:
//!
//! | key | default |
//! | --- | --- |
//! | `mock` | `false` |
//! | `plugins.builtin` | `true`: the six built-in tools |
//! | `plugins.dir` | none; every `*.wasm` in it when set |
//! | `plugins.files` | none |
//! | `plugins.pins` | none; `"file name" = "sha256 hex"` refuses other bytes |
//! | `plugins.lock` | none; a `plugins.lock` written by `harmonia plugin pull`: its components, verified from the store beside it on every load |
//! | `plugins.trust.require_signatures` | `false`; `true` refuses every component (built-in tools aside) without a valid signature by a trusted key or identity |
//! | `plugins.trust.keys` | none; public key files trusted for every repository |
//! | `plugins.trust.trusted_root` | none; Sigstore's `trusted_root.json`, which keyless signatures are checked against (needed by any identity) |
//! | `plugins.trust.identities` | none; keyless signers trusted for every repository, `{ subject = "…", issuer = "…" }` or `{ subject_regex = "…", issuer = "…" }` |
//! | `plugins.trust.repositories` | none; `"host[:port]/path" = { keys = [...], identities = [...] }`, a `/*` suffix for a prefix |
//! | `plugins.trust.plugins` | none; `name = { keys = [...], identities = [...] }` for one locked plugin |
//! | `limits.memory_mib` | 64 per instance |
//! | `limits.max_deadline_ms` | none; lowers every descriptor's deadline |
//! | `limits.wasm_stack_kib` | 512; 64 to 2048 (wasmtime's host stack for a call is 2 MiB) |
//! | `limits.fuel` | none (epoch deadlines only) |
//! | `limits.max_calls` | 256 calls in flight, blocking and async alike (`harmonia serve` sets it to its `max_in_flight_calls`); further calls wait up to their deadline, then end as the retryable `dependency_unavailable`. The old `max_concurrent_calls` and `max_async_calls` are refused, naming it |
//! | `limits.pooling` | `true` |
//! | `limits.max_core_instances_per_component` | 64; 1 to 1000 |
//! | `limits.max_memories_per_component` | 4; 1 to 100 |
//! | `limits.max_tables_per_component` | 32; 1 to 1000 |
//! | `wasi.inert_filesystem_and_sockets` | `true`: filesystem and sockets imports are linked and deny everything; `false` refuses them at load |
//! | `public_web.allow` | `["https://hn.algolia.com"]` |
//! | `public_web.routes` | none; `"origin" = "base URL"` |
//! | `public_web.max_body_kib` | 2048 |
//! | `workspace.source` | `sqlite` |
//! | `workspace.path` | `harmonia.db` |
//! | `workspace.base_url` | none (required for `http`) |
//! | `workspace.token_env` | `HARMONIA_API_TOKEN` |
//! | `workspace.max_body_kib` | 4096 |
//! | `cache.dir` | the user's cache dir, `harmonia/components` |
//! | `cache.enabled` | `true` |
//! | `trace.key_file` | the user's data dir, `harmonia/trace-key`, generated on first use |

//!
//! Parts: [`HostConfig`] composes the sections; each section lives with
//! what it configures, with its defaults and checks, and is re-exported
//! here: [`LimitsConfig`] (`crate::limits`), [`PublicWebConfig`] and
//! [`WorkspaceConfig`] (each capability's `config`); the plugins, WASI,
//! cache and trace sections are here.

pub use crate::capability::public_web::config::PublicWebConfig;
pub use crate::capability::workspace::config::{WorkspaceConfig, WorkspaceSourceKind};
pub use crate::limits::{LimitsConfig, SlotReset};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a config is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown keys or wrong types.
    #[error("invalid config{at}: {message}")]
    Parse {
        /// ` in FILE` when read from a file.
        at: String,
        /// The parser's one-line message.
        message: String,
    },
    /// A value breaks its rule.
    #[error("invalid config: {0}")]
    Invalid(String),
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Serve every capability from built-in fixtures (provenance `mock`).
    pub mock: bool,
    /// Which plugins to load.
    pub plugins: PluginsConfig,
    /// Per-call limits.
    pub limits: LimitsConfig,
    /// WASI switches.
    pub wasi: WasiConfig,
    /// The public web capability.
    pub public_web: PublicWebConfig,
    /// The workspace capability.
    pub workspace: WorkspaceConfig,
    /// The precompiled component cache.
    pub cache: CacheConfig,
    /// Trace signing.
    pub trace: TraceConfig,
}

/// Trace signing.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// The host's ed25519 trace key (64 hex digits, mode 0600), generated
    /// there if absent; the user's data dir when unset.
    pub key_file: Option<PathBuf>,
}

/// Which plugins to load.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PluginsConfig {
    /// Load the six built-in tools.
    pub builtin: bool,
    /// Load every `*.wasm` in this directory.
    pub dir: Option<PathBuf>,
    /// Load these component files.
    pub files: Vec<PathBuf>,
    /// SHA-256 pins by file name: a plugin whose bytes differ is refused.
    pub pins: BTreeMap<String, String>,
    /// A lock file written by `harmonia plugin pull`: its plugins are
    /// loaded from the content-addressed store beside it, verified first.
    pub lock: Option<PathBuf>,
    /// Which keys may sign which plugin, and whether signatures are
    /// required.
    pub trust: harmonia_registry::TrustConfig,
    /// Hosts (`host` or `host:port`) a registry may redirect `harmonia
    /// plugin pull`'s downloads to besides itself (the object storage its
    /// blobs are served from), over HTTPS; any other redirect is refused.
    pub redirect_hosts: Vec<String>,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        Self {
            builtin: true,
            dir: None,
            files: Vec::new(),
            pins: BTreeMap::new(),
            lock: None,
            trust: harmonia_registry::TrustConfig::default(),
            redirect_hosts: Vec::new(),
        }
    }
}

/// WASI switches.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WasiConfig {
    /// Admit filesystem and sockets imports (language runtimes import
    /// them), linked to implementations that deny everything: no preopens,
    /// TCP, UDP and name lookup off, every address refused. `false` refuses
    /// them at load instead. Never admits wasi:http.
    pub inert_filesystem_and_sockets: bool,
}

impl Default for WasiConfig {
    fn default() -> Self {
        Self { inert_filesystem_and_sockets: true }
    }
}

/// The precompiled component cache.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Use the cache.
    pub enabled: bool,
    /// Cache directory; the user's cache dir when absent.
    pub dir: Option<PathBuf>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self { enabled: true, dir: None }
    }
}

/// Keys of `[limits]` that `limits.max_calls` replaced.
const RETIRED_LIMITS: [&str; 2] = ["max_concurrent_calls", "max_async_calls"];

/// The retired `[limits]` key `text` sets, if any.
fn retired_limit(text: &str) -> Option<&'static str> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let limits = table.get("limits")?.as_table()?;
    RETIRED_LIMITS.into_iter().find(|key| limits.contains_key(*key))
}

impl HostConfig {
    /// Parse TOML text; relative paths stay relative to the working directory.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        let parse_error = |error: toml::de::Error| ConfigError::Parse {
            at: String::new(),
            message: one_line(&error.to_string()),
        };
        // Parsed once, straight into the config, so errors keep their
        // position; only a refused text is looked at again, for a retired
        // key whose rename is worth naming.
        let config: Self = toml::from_str(text).map_err(|error| {
            retired_limit(text).map_or_else(
                || parse_error(error),
                |old| ConfigError::Parse {
                    at: String::new(),
                    message: format!(
                        "limits.{old} was replaced by limits.max_calls, one bound for blocking and async \
                         calls alike (default 256); rename it"
                    ),
                },
            )
        })?;
        config.check()?;
        Ok(config)
    }

    /// Read a config file; relative paths are taken from its directory.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        let mut config = Self::from_toml_str(&text).map_err(|error| match error {
            ConfigError::Parse { message, .. } => {
                ConfigError::Parse { at: format!(" in {}", path.display()), message }
            }
            other => other,
        })?;
        if let Some(base) = path.parent() {
            config.resolve_paths(base);
        }
        Ok(config)
    }

    fn resolve_paths(&mut self, base: &Path) {
        let resolve = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        if let Some(dir) = &mut self.plugins.dir {
            resolve(dir);
        }
        self.plugins.files.iter_mut().for_each(resolve);
        if let Some(lock) = &mut self.plugins.lock {
            resolve(lock);
        }
        self.plugins.trust.resolve_paths(base);
        self.workspace.resolve_paths(base);
        if let Some(dir) = &mut self.cache.dir {
            resolve(dir);
        }
        if let Some(file) = &mut self.trace.key_file {
            resolve(file);
        }
    }

    /// Where compiled components are cached, when the cache is on.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if !self.cache.enabled {
            return None;
        }
        self.cache.dir.clone().or_else(crate::cache::default_dir)
    }

    /// Check the rules serde cannot express.
    pub fn check(&self) -> Result<(), ConfigError> {
        let invalid = |message: String| Err(ConfigError::Invalid(message));
        self.limits.check().map_err(ConfigError::Invalid)?;
        self.public_web.check().map_err(ConfigError::Invalid)?;
        self.workspace.check().map_err(ConfigError::Invalid)?;
        for host in &self.plugins.redirect_hosts {
            harmonia_registry::reference::check_host(host)
                .map_err(|reason| ConfigError::Invalid(format!("plugins.redirect_hosts: {reason}")))?;
        }
        for (name, pin) in &self.plugins.pins {
            if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
                return invalid(format!(
                    "plugins.pins value for `{name}` is not a lowercase SHA-256 hex digest"
                ));
            }
        }
        Ok(())
    }
}

/// The first line of a multi-line message, trimmed.
pub(crate) fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    // toml puts the position first and the reason last; keep both.
    match lines.as_slice() {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [first, .., last] => format!("{first}: {last}"),
    }
}

/// The wasm stack sizes the engine accepts (see [`crate::limits`]).
pub use crate::limits::WASM_STACK_KIB;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_hold_without_a_file() {
        let config = HostConfig::from_toml_str("").unwrap();
        assert_eq!(config, HostConfig::default());
        assert_eq!(config.limits.memory_mib, 64);
        assert_eq!(config.public_web.allow, vec!["https://hn.algolia.com".to_owned()]);
        assert!(config.plugins.builtin);
    }

    /// `key = value` lines of the README's configuration block with their
    /// table, skipping lines marked as examples.
    fn readme_defaults(block: &str) -> Vec<(Vec<String>, toml::Value)> {
        let mut table: Vec<String> = Vec::new();
        let mut shown = Vec::new();
        for line in block.lines() {
            let (code, comment) = line.split_once('#').unwrap_or((line, ""));
            let code = code.trim();
            if code.starts_with('[') {
                table = code.trim_matches(['[', ']']).split('.').map(str::to_owned).collect();
            } else if let Some((key, value)) = code.split_once(" = ")
                && !comment.contains("example")
            {
                let value: toml::Table = toml::from_str(&format!("v = {value}")).unwrap();
                let mut path = table.clone();
                path.push(key.trim().trim_matches('"').to_owned());
                shown.push((path, value["v"].clone()));
            }
        }
        shown
    }

    fn leaves(value: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match value {
            toml::Value::Table(table) => {
                for (key, inner) in table {
                    path.push(key.clone());
                    leaves(inner, path, out);
                    path.pop();
                }
            }
            toml::Value::Array(items) if items.is_empty() => {}
            _ => out.push(path.clone()),
        }
    }

    #[test]
    fn the_readme_configuration_shows_every_default() {
        let readme = include_str!("../../README.md");
        let section = readme.split("\n## Configuration\n").nth(1).expect("a Configuration section");
        let block = section.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
        HostConfig::from_toml_str(block).expect("the README's configuration is valid");
        let defaults = toml::Value::try_from(HostConfig::default()).unwrap();
        let shown = readme_defaults(block);
        for (path, value) in &shown {
            let expected = path.iter().try_fold(&defaults, |value, key| value.get(key));
            assert_eq!(Some(value), expected, "README shows {} = {value}", path.join("."));
        }
        let mut every = Vec::new();
        leaves(&defaults, &mut Vec::new(), &mut every);
        for path in every {
            assert!(shown.iter().any(|(shown, _)| *shown == path), "README does not show {}", path.join("."));
        }
    }

    #[test]
    fn unknown_keys_are_named() {
        for (text, key) in [
            ("colour = 1", "colour"),
            ("[limits]\nmemory = 3", "memory"),
            ("[public_web]\nallowed = []", "allowed"),
            ("[nonsense]", "nonsense"),
            ("[trace]\nkey = \"k\"", "key"),
        ] {
            let error = HostConfig::from_toml_str(text).unwrap_err().to_string();
            assert!(error.contains(key), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn the_retired_call_bounds_are_refused_naming_max_calls() {
        for key in RETIRED_LIMITS {
            let error = HostConfig::from_toml_str(&format!("[limits]\n{key} = 8")).unwrap_err().to_string();
            assert!(error.contains(key) && error.contains("limits.max_calls"), "{error}");
        }
        let config = HostConfig::from_toml_str("[limits]\nmax_calls = 8").unwrap();
        assert_eq!(config.limits.max_calls, 8);
        // Any other refusal keeps the parser's position.
        let error = HostConfig::from_toml_str("[limits]\nmemory = 3").unwrap_err().to_string();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn bad_values_are_refused() {
        for text in [
            "[limits]\nmemory_mib = 0",
            "[limits]\nmemory_mib = \"big\"",
            "[limits]\nfuel = 0",
            "[limits]\nmax_calls = 0",
            "[limits]\nmax_calls = 16385",
            "[limits]\nwasm_stack_kib = 63",
            "[limits]\nwasm_stack_kib = 2049",
            "[limits]\nmax_core_instances_per_component = 0",
            "[limits]\nmax_memories_per_component = 101",
            "[limits]\nmax_tables_per_component = 0",
            "[public_web]\nallow = [\"hn.algolia.com\"]",
            "[public_web]\nallow = [\"https://a.example/path\"]",
            "[public_web.routes]\n\"https://other.example\" = \"http://127.0.0.1:1\"",
            "[workspace]\nsource = \"http\"",
            "[workspace]\nsource = \"postgres\"",
            "[plugins.pins]\n\"a.wasm\" = \"xyz\"",
            "mock = \"yes\"",
        ] {
            assert!(HostConfig::from_toml_str(text).is_err(), "{text}");
        }
    }

    #[test]
    fn file_paths_resolve_against_the_config_directory() {
        let dir = std::env::temp_dir().join(format!("harmonia-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("harmonia.toml");
        std::fs::write(
            &file,
            "[plugins]\ndir = \"plugins\"\n[workspace]\npath = \"/abs/h.db\"\n[trace]\nkey_file = \"keys/trace\"\n",
        )
        .unwrap();
        let config = HostConfig::from_file(&file).unwrap();
        assert_eq!(config.plugins.dir, Some(dir.join("plugins")));
        assert_eq!(config.trace.key_file, Some(dir.join("keys/trace")));
        assert_eq!(config.workspace.path, PathBuf::from("/abs/h.db"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
