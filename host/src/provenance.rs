//! Components from `plugins.lock`, verified before anything is compiled.
//!
//! On every load (every start, every reload) each locked plugin is checked
//! from the content-addressed store beside the lock file, without the
//! network: the manifest's bytes against the locked manifest digest, its
//! one component layer against the locked layer digest, the component's
//! bytes against that digest, and its cosign signatures against
//! `[plugins.trust]`. Only then are the bytes handed to the loader, pinned
//! to the layer digest, and the precompiled cache is looked up by the
//! hash of those verified bytes: a component swapped on disk is refused
//! before the cache or the compiler sees it. Once compiled, the tool its
//! descriptor declares must be its lock entry's name, since the trust
//! rule was looked up by that name (`harmonia_registry::declared`): an
//! entry an earlier pull locked under another name is refused, saying how
//! to fix the lock (checked in `Host`'s load).
//!
//! With `plugins.trust.require_signatures = true`, a component from a
//! plain file (`plugins.dir`, `plugins.files`, `--plugin`) has no
//! signature to verify and is refused; the built-in tools, part of the
//! host binary, are not.

use crate::config::PluginsConfig;
use crate::plugin::{LoadError, PluginOrigin, Provenance};
use harmonia_registry::{Store, TrustPolicy};

/// A locked component, verified: its origin, bytes, layer digest hex (the
/// loader's pin) and provenance.
pub(crate) struct Locked {
    pub origin: PluginOrigin,
    pub bytes: Vec<u8>,
    pub pin: String,
    pub provenance: Provenance,
}

fn unverified(origin: PluginOrigin, error: impl std::fmt::Display) -> LoadError {
    LoadError::Unverified { origin, reason: error.to_string() }
}

/// The trust policy with its keys read.
pub(crate) fn policy(config: &PluginsConfig) -> Result<TrustPolicy, LoadError> {
    TrustPolicy::load(&config.trust)
        .map_err(|error| unverified(PluginOrigin::Builtin("plugins.trust".into()), error))
}

/// Every plugin of the configured lock file, verified.
pub(crate) fn locked(config: &PluginsConfig, policy: &TrustPolicy) -> Result<Vec<Locked>, LoadError> {
    let Some(lock_path) = &config.lock else {
        return Ok(Vec::new());
    };
    let lock_origin = PluginOrigin::File(lock_path.clone());
    let text = std::fs::read_to_string(lock_path)
        .map_err(|source| LoadError::Read { origin: lock_origin.clone(), source })?;
    let lock: harmonia_registry::LockFile = toml::from_str(&text).map_err(|error| {
        unverified(lock_origin.clone(), format!("not a plugins.lock: {}", error.message()))
    })?;
    let store = Store::new(lock_path.parent().unwrap_or(std::path::Path::new(".")));
    let mut out = Vec::new();
    for entry in &lock.plugins {
        let origin =
            PluginOrigin::Oci(format!("{} ({}@{})", entry.name, entry.reference, entry.manifest_digest));
        let verified = store
            .verify(entry, policy, harmonia_registry::store::MAX_COMPONENT_BYTES)
            .map_err(|error| unverified(origin.clone(), error))?;
        out.push(Locked {
            origin,
            pin: verified.entry.layer_digest.hex().to_owned(),
            bytes: verified.bytes,
            provenance: Provenance {
                name: entry.name.clone(),
                reference: entry.reference.clone(),
                manifest_digest: entry.manifest_digest.to_string(),
                signer: verified.entry.signer,
            },
        });
    }
    Ok(out)
}

/// Refuse `origin` when signatures are required: it is a plain file.
pub(crate) fn admit_unsigned(policy: &TrustPolicy, origin: &PluginOrigin) -> Result<(), LoadError> {
    match origin {
        PluginOrigin::File(_) if policy.require_signatures => Err(unverified(
            origin.clone(),
            "refused: plugins.trust.require_signatures = true and a plain component file carries no signature \
             (push it to a registry, sign it, and load it through plugins.lock)",
        )),
        _ => Ok(()),
    }
}
