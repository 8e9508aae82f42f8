//! Plugins from `plugins.lock`: what verifying provenance costs.
//!
//! The six tools are locked into a temporary plugin directory as a pull
//! leaves them (manifest, component and an ECDSA P-256 cosign signature
//! each, stored by digest), without a registry. Figures:
//! - a pull of a digest reference already in the store: verified there,
//!   no network (the reference names a port nothing listens on), and
//!   described from the precompiled cache (its tool is its lock name);
//! - the verification a load runs per plugin (the digests of manifest and
//!   component, the signature), against a whole cached load of the six
//!   from the lock: the target is under 5 %;
//! - a hot reload of the six from the lock while 32 callers keep calls in
//!   flight: the whole reload (verified build and swap) and the swap
//!   alone, with the calls made meanwhile and how many failed (none may).

use super::{Effort, Report, median_ms};
use anyhow::Result;
use harmonia_host::Host;
use harmonia_host::config::HostConfig;
use harmonia_registry::keys::{Algorithm, PrivateKey};
use harmonia_registry::manifest::{Manifest, wasm_config};
use harmonia_registry::oci::{Client, Options};
use harmonia_registry::{LockEntry, LockFile, OciReference, Store, TrustPolicy, cosign};
use serde_json::json;
use std::time::{Duration, Instant};

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

    // A cached digest reference: verified in the store, never fetched,
    // and described (the tool it declares is its name) from the
    // precompiled cache.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reference = OciReference::parse(&entries[0].reference)?;
    let client = Client::new(&reference, Options::default())?;
    let mut describing = HostConfig::default();
    describing.cache.dir = Some(dir.join("cache"));
    let origin = harmonia_host::plugin::PluginOrigin::Oci(reference.to_string());
    let describe = |bytes: &[u8]| harmonia_host::inspect::declared_tool(&describing, bytes, origin.clone());
    let pulls = (0..effort.loads.max(5) * 4)
        .map(|_| {
            let started = Instant::now();
            runtime.block_on(client.pull(&reference, &entries[0].name, &store, &policy, false, &describe))?;
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
    // The same six bytes as plain files: what a load costs unverified
    // (hashed once all the same, for their pins and their sha256).
    let plain_dir = dir.join("plain");
    std::fs::create_dir_all(&plain_dir)?;
    let mut plain = HostConfig::default();
    plain.plugins.builtin = false;
    plain.cache.dir = config.cache.dir.clone();
    for (name, bytes) in harmonia_artifacts::BUILTIN_TOOLS {
        let path = plain_dir.join(format!("{name}.wasm"));
        std::fs::write(&path, bytes)?;
        plain.plugins.files.push(path);
    }
    Host::new(plain.clone())?;
    let plain_loads = (0..effort.loads * 2)
        .map(|_| {
            let started = Instant::now();
            Host::new(plain.clone())?;
            Ok(started.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    let plain_load = median_ms(plain_loads);
    let added = load - plain_load;
    let added_share = added / load * 100.0;
    out.say("\nplugins from plugins.lock (six tools, each signed with ECDSA P-256):");
    out.say(format!(
        "  pull of a cached digest reference (no network, described from the cache): {pull:8.2} ms"
    ));
    out.say(format!("  verifying the six (digests and signatures):      {verify:8.2} ms"));
    out.say(format!(
        "  cached load of the six from the lock, verified:  {load:8.2} ms   (the verification alone is {share:.1} % of it)"
    ));
    out.say(format!(
        "  cached load of the same six as plain files:      {plain_load:8.2} ms   (verifying adds {added:.2} ms, {added_share:.1} %)"
    ));
    out.insert("oci_cached_pull_ms", json!(pull));
    out.insert("oci_verify_six_ms", json!(verify));
    out.insert("oci_cached_load_six_ms", json!(load));
    out.insert("oci_verify_share_of_cached_load_pct", json!(share));
    out.insert("oci_cached_load_six_plain_ms", json!(plain_load));
    out.insert("oci_verify_added_share_of_cached_load_pct", json!(added_share));
    reload(effort, config, out)
}

/// Reloads of the lock's six while callers keep calls in flight.
fn reload(effort: &Effort, config: HostConfig, out: &mut Report) -> Result<()> {
    use harmonia_host::liaison::session::Liaison;
    use harmonia_host::liaison::skills::SkillSet;
    use harmonia_serve::reload::{Reloader, Source};
    use harmonia_serve::state::ServeState;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    const CALLERS: usize = 32;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let liaison = Liaison::new(Host::new(config.clone())?, SkillSet::builtin())?;
    let state = ServeState::new(liaison, harmonia_serve::config::Limits::default(), None)?;
    let build = Arc::new(move |slots: &harmonia_host::CallSlots| {
        Ok(Host::builder(config.clone()).call_slots(slots.clone()).build()?)
    });
    let reloader = {
        let _entered = runtime.enter();
        Reloader::spawn(
            Arc::clone(&state),
            Source { watch: Vec::new(), build },
            Duration::from_secs(600),
            false,
        )
    };
    let (stop, calls, failed) =
        (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let input = r#"{"job_id": "job-1"}"#;
    let context = harmonia_host::CallContext::default();
    // What the call answers with no reload under way: every call during
    // the reloads must answer the same.
    let expected = runtime.block_on(state.liaison().host().call_async("get_job_status", input, &context))?;
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let (state, stop, calls, failed) =
                (Arc::clone(&state), Arc::clone(&stop), Arc::clone(&calls), Arc::clone(&failed));
            let (expected, context) = (expected.clone(), context.clone());
            runtime.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let liaison = state.liaison();
                    let answer = liaison.host().call_async("get_job_status", input, &context).await;
                    calls.fetch_add(1, Ordering::Relaxed);
                    if answer.map(|envelope| envelope != expected).unwrap_or(true) {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let before = calls.load(Ordering::Relaxed);
    let reloads = (0..effort.loads.max(5))
        .map(|_| {
            let started = Instant::now();
            reloader.trigger();
            let status = runtime.block_on(reloader.settled());
            anyhow::ensure!(status.refused == 0, "a reload was refused: {:?}", status.last_refusal);
            Ok(started.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    let during = calls.load(Ordering::Relaxed) - before;
    // The swap alone: the step a reload ends with.
    let next = state.liaison().as_ref().clone();
    let swaps = (0..1_000)
        .map(|_| {
            let started = Instant::now();
            state.plugins.swap(next.clone(), false);
            started.elapsed()
        })
        .collect::<Vec<_>>();
    stop.store(true, Ordering::Relaxed);
    for caller in callers {
        runtime.block_on(caller)?;
    }
    let (reload, swap) = (median_ms(reloads), median_ms(swaps) * 1000.0);
    let failed = failed.load(Ordering::Relaxed);
    out.say(format!(
        "  hot reload of the six, {CALLERS} callers in flight: {reload:8.2} ms   (swap alone {swap:.2} us; {during} calls meanwhile, {failed} failed)"
    ));
    out.insert("reload_six_with_calls_in_flight_ms", json!(reload));
    out.insert("reload_swap_us", json!(swap));
    out.insert("reload_calls_during", json!(during));
    out.insert("reload_calls_failed", json!(failed));
    anyhow::ensure!(failed == 0, "{failed} calls failed during the reloads");
    Ok(())
}
