//! The trust policy: which keys may sign which plugin.
//!
//! In the host config:
//!
//! ```toml
//! [plugins.trust]
//! require_signatures = true          # refuse unsigned or wrongly signed components
//! keys = ["keys/ci.pub"]             # trusted for every repository
//! [plugins.trust.repositories."127.0.0.1:5000/tools/*"]
//! keys = ["keys/tools.pub"]          # for the repositories under this path
//! [plugins.trust.plugins.get_job_status]
//! keys = ["keys/jobs.pub"]           # for the plugin locked under this name
//! ```
//!
//! The most specific rule decides alone: a plugin's own rule, else the
//! longest matching repository rule (an exact `host[:port]/path`, or a
//! prefix ending `/*`), else the top-level `keys`.

use crate::RegistryError;
use crate::keys::PublicKey;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `[plugins.trust]` as written.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrustConfig {
    /// Refuse any component (other than the built-in tools) without a valid
    /// signature by a key trusted for it.
    pub require_signatures: bool,
    /// Public key files (SPKI PEM) trusted for every repository.
    pub keys: Vec<PathBuf>,
    /// By repository: `host[:port]/path` or `host[:port]/prefix/*`.
    pub repositories: BTreeMap<String, TrustRule>,
    /// By plugin name (the lock file's `name`).
    pub plugins: BTreeMap<String, TrustRule>,
}

/// The keys one rule trusts.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrustRule {
    /// Public key files (SPKI PEM).
    pub keys: Vec<PathBuf>,
}

impl TrustConfig {
    /// Take relative key paths from `base`.
    pub fn resolve_paths(&mut self, base: &Path) {
        let resolve = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        self.keys.iter_mut().for_each(resolve);
        for rule in self.repositories.values_mut().chain(self.plugins.values_mut()) {
            rule.keys.iter_mut().for_each(resolve);
        }
    }

    /// True when nothing is configured.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The policy with its keys read.
#[derive(Clone, Debug, Default)]
pub struct TrustPolicy {
    /// Refuse what does not verify.
    pub require_signatures: bool,
    keys: Vec<PublicKey>,
    repositories: Vec<(String, Vec<PublicKey>)>,
    plugins: BTreeMap<String, Vec<PublicKey>>,
}

fn read_keys(paths: &[PathBuf]) -> Result<Vec<PublicKey>, RegistryError> {
    paths.iter().map(|path| PublicKey::from_file(path)).collect()
}

impl TrustPolicy {
    /// Read every key the config names; a missing or malformed key file
    /// is an error naming it.
    pub fn load(config: &TrustConfig) -> Result<Self, RegistryError> {
        let mut repositories = Vec::new();
        for (pattern, rule) in &config.repositories {
            repositories.push((pattern.clone(), read_keys(&rule.keys)?));
        }
        let mut plugins = BTreeMap::new();
        for (name, rule) in &config.plugins {
            plugins.insert(name.clone(), read_keys(&rule.keys)?);
        }
        Ok(Self {
            require_signatures: config.require_signatures,
            keys: read_keys(&config.keys)?,
            repositories,
            plugins,
        })
    }

    /// A policy trusting `keys` everywhere.
    pub fn with_keys(require_signatures: bool, keys: Vec<PublicKey>) -> Self {
        Self { require_signatures, keys, ..Self::default() }
    }

    /// The keys trusted to sign plugin `name` from `repository`
    /// (`host[:port]/path`).
    pub fn keys_for(&self, name: &str, repository: &str) -> &[PublicKey] {
        if let Some(keys) = self.plugins.get(name) {
            return keys;
        }
        let matches = |pattern: &str| match pattern.strip_suffix("/*") {
            Some(prefix) => repository.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/')),
            None => pattern == repository,
        };
        self.repositories
            .iter()
            .filter(|(pattern, _)| matches(pattern))
            .max_by_key(|(pattern, _)| pattern.len())
            .map_or(&self.keys, |(_, keys)| keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Algorithm, PrivateKey};

    #[test]
    fn the_most_specific_rule_decides() {
        let key = |_| PrivateKey::generate(Algorithm::Ed25519).unwrap().public().clone();
        let (global, tools, exact, plugin) = (key(0), key(1), key(2), key(3));
        let policy = TrustPolicy {
            require_signatures: true,
            keys: vec![global.clone()],
            repositories: vec![
                ("r:5000/tools/*".into(), vec![tools.clone()]),
                ("r:5000/tools/special".into(), vec![exact.clone()]),
            ],
            plugins: BTreeMap::from([("jobs".to_owned(), vec![plugin.clone()])]),
        };
        let fingerprint = |keys: &[PublicKey]| keys[0].fingerprint().to_owned();
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/tools/a")), tools.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/tools/special")), exact.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("jobs", "r:5000/tools/a")), plugin.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/toolsmith/a")), global.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "other/a")), global.fingerprint());
    }
}
