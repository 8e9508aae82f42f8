//! Plugins from `plugins.lock`: what verifying provenance costs.
//!
//! The six tools are locked into a temporary plugin directory as a pull
//! leaves them (manifest, component and an ECDSA P-256 cosign signature
//! each, stored by digest), without a registry. Figures:
//! - a pull of a digest reference already in the store: verified there,
//!   no network (the reference names a port nothing listens on);
//! - the verification a load runs per plugin (the digests of manifest and
//!   component, the signature), against a whole cached load of the six
//!   from the lock: the target is under 5 %.

use super::{Effort, Report, median_ms};
use anyhow::Result;
use harmonia_host::Host;
use harmonia_host::config::HostConfig;
use harmonia_registry::keys::{Algorithm, PrivateKey};
use harmonia_registry::manifest::{Manifest, wasm_config};
use harmonia_registry::oci::{Client, Options};
use harmonia_registry::{LockEntry, LockFile, OciReference, Store, TrustPolicy, cosign};
use serde_json::json;
use std::time::Instant;

/// Lock the six tools into `dir`, signed by `key`; their entries.
fn lock_builtins(dir: &std::path::Path, key: &PrivateKey) -> Result<Vec<LockEntry>> {
    use base64::Engine as _;
    let store = Store::new(dir);
    let mut lock = LockFile::default();
    for (name, bytes) in harmonia_artifacts::BUILTIN_TOOLS {
        let manifest = Manifest::for_component(&wasm_config(bytes), bytes).to_bytes();
        let manifest_digest = store.write(&manifest)?;
        let layer_digest = store.write(bytes)?;
        let repository = format!("127.0.0.1:1/bench/{name}");
        let payload = cosign::payload(&repository, &manifest_digest);
        let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&payload));
        store.write_signatures(&manifest_digest, &[cosign::StoredSignature::new(&payload, &signature)])?;
        lock.upsert(LockEntry {
            name: (*name).to_owned(),
            reference: format!("oci://{repository}@{manifest_digest}"),
            manifest_digest,
            layer_digest,
            signer: Some(key.public().fingerprint().to_owned()),
        });
    }
    lock.write(&store.lock_path())?;
    Ok(lock.plugins)
}

pub(super) fn run(effort: &Effort, out: &mut Report) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("harmonia-bench-oci-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let measured = measure(effort, &dir, out);
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

fn measure(effort: &Effort, dir: &std::path::Path, out: &mut Report) -> Result<()> {
    let key = PrivateKey::generate(Algorithm::EcdsaP256)?;
    let entries = lock_builtins(dir, &key)?;
    let key_file = dir.join("ci.pub");
    std::fs::write(&key_file, key.public().to_pem())?;
    let policy = TrustPolicy::with_keys(true, vec![key.public().clone()]);
    let store = Store::new(dir);

    // A cached digest reference: verified in the store, never fetched.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reference = OciReference::parse(&entries[0].reference)?;
    let client = Client::new(&reference, Options::default())?;
    let pulls = (0..effort.loads.max(5) * 4)
        .map(|_| {
            let started = Instant::now();
            runtime.block_on(client.pull(&reference, &entries[0].name, &store, &policy, false))?;
            Ok(started.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    let pull = median_ms(pulls);

    // Verification of the six, as a load runs it.
    let verifications = (0..effort.loads.max(5) * 4)
        .map(|_| {
            let started = Instant::now();
            for entry in &entries {
                store.verify(entry, &policy, harmonia_registry::store::MAX_COMPONENT_BYTES)?;
            }
            Ok(started.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    let verify = median_ms(verifications);

    // A whole cached load of the six from the lock.
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config.plugins.lock = Some(store.lock_path());
    config.plugins.trust.require_signatures = true;
    config.plugins.trust.keys = vec![key_file];
    config.cache.dir = Some(dir.join("cache"));
    Host::new(config.clone())?; // warm the cache
    let loads = (0..effort.loads)
        .map(|_| {
            let started = Instant::now();
            let host = Host::new(config.clone())?;
            anyhow::ensure!(host.tools().count() == 6, "six tools");
            Ok(started.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    let load = median_ms(loads);
    let share = verify / load * 100.0;
    out.say("\nplugins from plugins.lock (six tools, each signed with ECDSA P-256):");
    out.say(format!("  pull of a cached digest reference (no network): {pull:8.2} ms"));
    out.say(format!("  verifying the six (digests and signatures):      {verify:8.2} ms"));
    out.say(format!(
        "  cached load of the six from the lock, verified:  {load:8.2} ms   (verification {share:.1} % of it)"
    ));
    out.insert("oci_cached_pull_ms", json!(pull));
    out.insert("oci_verify_six_ms", json!(verify));
    out.insert("oci_cached_load_six_ms", json!(load));
    out.insert("oci_verify_share_of_cached_load_pct", json!(share));
    Ok(())
}
