//! The trust policy: which keys and which keyless identities may sign which
//! plugin.
//!
//! In the host config:
//!
//! ```toml
//! [plugins.trust]
//! require_signatures = true          # refuse unsigned or wrongly signed components
//! keys = ["keys/ci.pub"]             # trusted for every repository
//! trusted_root = "sigstore/trusted_root.json"   # Sigstore's trust root, for identities
//! identities = [{ subject = "https://github.com/acme/tools/.github/workflows/release.yml@refs/heads/main",
//!                 issuer = "https://token.actions.githubusercontent.com" }]
//! [plugins.trust.repositories."127.0.0.1:5000/tools/*"]
//! keys = ["keys/tools.pub"]          # for the repositories under this path
//! [plugins.trust.repositories."ghcr.io/acme/*"]
//! identities = [{ subject_regex = "https://github.com/acme/.*", issuer = "https://token.actions.githubusercontent.com" }]
//! [plugins.trust.plugins.get_job_status]
//! keys = ["keys/jobs.pub"]           # for the plugin locked under this name
//! ```
//!
//! The most specific rule decides alone, its keys and its identities
//! together: a plugin's own rule, else the longest matching repository
//! rule (an exact `host[:port]/path`, or a prefix ending `/*`), else the
//! top-level `keys` and `identities`. A component counts as signed when a
//! signature verifies with one of the rule's keys or is a keyless
//! signature by one of its identities.
//!
//! An identity (see [`crate::identity`]) is a Fulcio certificate's
//! subject, exact (`subject`) or a regular expression that must match the
//! whole subject (`subject_regex`), and its OIDC `issuer`, exact. Keyless
//! signatures are checked offline against `trusted_root`, Sigstore's
//! `trusted_root.json` (see [`crate::trusted_root`]): an identity anywhere
//! without a `trusted_root` is a config error naming the fix.

use crate::RegistryError;
use crate::cosign::Trusted;
use crate::identity::{Identity, IdentityConfig};
use crate::keys::PublicKey;
use crate::trusted_root::TrustedRoot;
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
    /// Sigstore's `trusted_root.json`, which keyless signatures are
    /// checked against (needed by any identity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_root: Option<PathBuf>,
    /// Keyless identities trusted for every repository.
    pub identities: Vec<IdentityConfig>,
    /// By repository: `host[:port]/path` or `host[:port]/prefix/*`.
    pub repositories: BTreeMap<String, TrustRule>,
    /// By plugin name (the lock file's `name`).
    pub plugins: BTreeMap<String, TrustRule>,
}

/// The keys and identities one rule trusts.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrustRule {
    /// Public key files (SPKI PEM).
    pub keys: Vec<PathBuf>,
    /// Keyless identities.
    pub identities: Vec<IdentityConfig>,
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
        self.trusted_root.iter_mut().for_each(resolve);
        for rule in self.repositories.values_mut().chain(self.plugins.values_mut()) {
            rule.keys.iter_mut().for_each(resolve);
        }
    }

    /// True when nothing is configured.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One rule with its keys read and its identities compiled.
#[derive(Clone, Debug, Default)]
pub struct Signers {
    /// Trusted keys.
    pub keys: Vec<PublicKey>,
    /// Trusted keyless identities.
    pub identities: Vec<Identity>,
}

/// The policy with its keys and trust root read.
#[derive(Clone, Debug, Default)]
pub struct TrustPolicy {
    /// Refuse what does not verify.
    pub require_signatures: bool,
    global: Signers,
    root: Option<std::sync::Arc<TrustedRoot>>,
    repositories: Vec<(String, Signers)>,
    plugins: BTreeMap<String, Signers>,
}

fn read_rule(keys: &[PathBuf], identities: &[IdentityConfig], at: &str) -> Result<Signers, RegistryError> {
    let identities = identities
        .iter()
        .enumerate()
        .map(|(index, identity)| Identity::from_config(identity, &format!("{at}.identities[{index}]")))
        .collect::<Result<_, _>>()
        .map_err(RegistryError::Trust)?;
    Ok(Signers {
        keys: keys.iter().map(|path| PublicKey::from_file(path)).collect::<Result<_, _>>()?,
        identities,
    })
}

impl TrustPolicy {
    /// Read every key and the trust root the config names and compile its
    /// identities; a missing or malformed key or trust root file, a bad
    /// identity, or an identity without a trust root is an error naming it.
    pub fn load(config: &TrustConfig) -> Result<Self, RegistryError> {
        let mut repositories = Vec::new();
        for (pattern, rule) in &config.repositories {
            let at = format!("plugins.trust.repositories.\"{pattern}\"");
            repositories.push((pattern.clone(), read_rule(&rule.keys, &rule.identities, &at)?));
        }
        let mut plugins = BTreeMap::new();
        for (name, rule) in &config.plugins {
            let at = format!("plugins.trust.plugins.{name}");
            plugins.insert(name.clone(), read_rule(&rule.keys, &rule.identities, &at)?);
        }
        let global = read_rule(&config.keys, &config.identities, "plugins.trust")?;
        let any_identity = std::iter::once(&global)
            .chain(repositories.iter().map(|(_, rule)| rule))
            .chain(plugins.values())
            .any(|rule| !rule.identities.is_empty());
        let root = match &config.trusted_root {
            Some(path) => Some(std::sync::Arc::new(TrustedRoot::from_file(path)?)),
            None if any_identity => {
                return Err(RegistryError::Trust(
                    "identities are configured but no trusted root is: set plugins.trust.trusted_root to \
                     Sigstore's trusted_root.json (e.g. the one `cosign initialize` keeps in \
                     ~/.sigstore/root/targets/trusted_root.json), which keyless signatures are checked against offline"
                        .into(),
                ));
            }
            None => None,
        };
        Ok(Self { require_signatures: config.require_signatures, global, root, repositories, plugins })
    }

    /// A policy trusting `keys` everywhere.
    pub fn with_keys(require_signatures: bool, keys: Vec<PublicKey>) -> Self {
        Self { require_signatures, global: Signers { keys, identities: Vec::new() }, ..Self::default() }
    }

    /// A policy trusting keyless `identities` everywhere, checked against
    /// `root`.
    pub fn with_identities(require_signatures: bool, identities: Vec<Identity>, root: TrustedRoot) -> Self {
        Self {
            require_signatures,
            global: Signers { keys: Vec::new(), identities },
            root: Some(std::sync::Arc::new(root)),
            ..Self::default()
        }
    }

    /// The rule that decides for plugin `name` from `repository`
    /// (`host[:port]/path`).
    pub fn signers_for(&self, name: &str, repository: &str) -> &Signers {
        if let Some(rule) = self.plugins.get(name) {
            return rule;
        }
        let matches = |pattern: &str| match pattern.strip_suffix("/*") {
            Some(prefix) => repository.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/')),
            None => pattern == repository,
        };
        self.repositories
            .iter()
            .filter(|(pattern, _)| matches(pattern))
            .max_by_key(|(pattern, _)| pattern.len())
            .map_or(&self.global, |(_, rule)| rule)
    }

    /// The keys trusted to sign plugin `name` from `repository`.
    pub fn keys_for(&self, name: &str, repository: &str) -> &[PublicKey] {
        &self.signers_for(name, repository).keys
    }

    /// Everything trusted to sign plugin `name` from `repository`.
    pub fn trusted_for(&self, name: &str, repository: &str) -> Trusted<'_> {
        let rule = self.signers_for(name, repository);
        Trusted { keys: &rule.keys, identities: &rule.identities, root: self.root.as_deref() }
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
        let rule = |key: &PublicKey| Signers { keys: vec![key.clone()], identities: Vec::new() };
        let policy = TrustPolicy {
            require_signatures: true,
            global: rule(&global),
            root: None,
            repositories: vec![
                ("r:5000/tools/*".into(), rule(&tools)),
                ("r:5000/tools/special".into(), rule(&exact)),
            ],
            plugins: BTreeMap::from([("jobs".to_owned(), rule(&plugin))]),
        };
        let fingerprint = |keys: &[PublicKey]| keys[0].fingerprint().to_owned();
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/tools/a")), tools.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/tools/special")), exact.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("jobs", "r:5000/tools/a")), plugin.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "r:5000/toolsmith/a")), global.fingerprint());
        assert_eq!(fingerprint(policy.keys_for("x", "other/a")), global.fingerprint());
    }

    fn config(text: &str) -> Result<TrustConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn an_identity_without_a_trusted_root_is_a_config_error_naming_the_fix() {
        let top = config(
            r#"identities = [{ subject = "ci@acme.example", issuer = "https://accounts.google.com" }]"#,
        )
        .unwrap();
        let nested = config(
            r#"[repositories."ghcr.io/acme/*"]
identities = [{ subject_regex = "https://github.com/acme/.*", issuer = "https://token.actions.githubusercontent.com" }]"#,
        )
        .unwrap();
        for config in [top, nested] {
            let error = TrustPolicy::load(&config).unwrap_err().to_string();
            assert!(error.contains("plugins.trust.trusted_root"), "{error}");
        }
        let bad = config(r#"identities = [{ subject = "s", subject_regex = "s", issuer = "i" }]"#).unwrap();
        let error = TrustPolicy::load(&bad).unwrap_err().to_string();
        assert!(error.contains("plugins.trust.identities[0]"), "{error}");
        assert!(config(r#"identities = [{ subject = "s", issuer = "i", email = "e" }]"#).is_err());
        let missing = config(r#"trusted_root = "/nonexistent/trusted_root.json""#).unwrap();
        let error = TrustPolicy::load(&missing).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/trusted_root.json"), "{error}");
    }

    #[test]
    fn identities_follow_the_most_specific_rule_like_keys() {
        let dir = std::env::temp_dir().join(format!("harmonia-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = dir.join("trusted_root.json");
        let (fulcio, rekor) =
            (harmonia_testkit::sigstore::Fulcio::new(), harmonia_testkit::sigstore::Rekor::new());
        let window = harmonia_testkit::sigstore::default_window();
        std::fs::write(&root, harmonia_testkit::sigstore::trusted_root(&fulcio, &rekor, window, window))
            .unwrap();
        let mut config = config(
            r#"trusted_root = "trusted_root.json"
identities = [{ subject = "global@acme.example", issuer = "https://accounts.google.com" }]
[repositories."r:5000/tools/*"]
identities = [{ subject_regex = "https://github.com/acme/.*", issuer = "https://token.actions.githubusercontent.com" }]
[plugins.jobs]
keys = []
"#,
        )
        .unwrap();
        config.resolve_paths(&dir);
        let policy = TrustPolicy::load(&config).unwrap();
        let signer = |subject: &str, issuer: &str| crate::identity::CertificateIdentity {
            subject: subject.into(),
            issuer: issuer.into(),
        };
        let github = signer(
            "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1",
            "https://token.actions.githubusercontent.com",
        );
        let global = signer("global@acme.example", "https://accounts.google.com");
        let accepts = |name: &str, repository: &str, who: &crate::identity::CertificateIdentity| {
            let trusted = policy.trusted_for(name, repository);
            assert!(trusted.root.is_some());
            trusted.identities.iter().any(|identity| identity.accepts(who))
        };
        assert!(accepts("x", "r:5000/tools/a", &github) && !accepts("x", "r:5000/tools/a", &global));
        assert!(accepts("x", "other/a", &global) && !accepts("x", "other/a", &github));
        // The plugin's own rule names no identity: none is trusted for it.
        assert!(!accepts("jobs", "r:5000/tools/a", &github) && !accepts("jobs", "other/a", &global));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
