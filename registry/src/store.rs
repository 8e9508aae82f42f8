//! The lock file and the content-addressed store beside it.
//!
//! A plugin directory holds `plugins.lock` and, under `oci/`, every pulled
//! manifest and component as `oci/sha256/<hex>` (named by the digest of its
//! bytes) and the signatures of each manifest as
//! `oci/signatures/<manifest hex>.json`. Nothing under `oci/` is a `*.wasm`
//! file in the directory itself, so a `plugins.dir` scan never loads a
//! stored component unverified.
//!
//! ```toml
//! version = 1
//!
//! [[plugin]]
//! name = "get_job_status"
//! reference = "oci://127.0.0.1:5000/tools/get_job_status:v1"
//! manifest_digest = "sha256:…"
//! layer_digest = "sha256:…"
//! signer = "key:sha256:…"
//! ```

use crate::RegistryError;
use crate::cosign::{self, Refusal, StoredSignature};
use crate::digest::Digest;
use crate::manifest::{MAX_MANIFEST_BYTES, Manifest};
use crate::reference::OciReference;
use crate::trust::TrustPolicy;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The lock file's name in a plugin directory.
pub const LOCK_FILE: &str = "plugins.lock";
/// The lock format's version.
pub const LOCK_VERSION: u32 = 1;
/// Default bound on a component's size.
pub const MAX_COMPONENT_BYTES: u64 = 256 * 1024 * 1024;

/// One locked plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The plugin's name in this directory.
    pub name: String,
    /// The reference it was pulled by (a tag is never followed again).
    pub reference: String,
    /// The manifest digest the reference resolved to.
    pub manifest_digest: Digest,
    /// The component layer's digest.
    pub layer_digest: Digest,
    /// The key that signed it (`key:sha256:…`), when one verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// `plugins.lock`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// [`LOCK_VERSION`].
    pub version: u32,
    /// The plugins, by name.
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<LockEntry>,
}

impl Default for LockFile {
    fn default() -> Self {
        Self { version: LOCK_VERSION, plugins: Vec::new() }
    }
}

impl LockFile {
    /// Read a lock file; a missing one is empty.
    pub fn read(path: &Path) -> Result<Self, RegistryError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(error) => return Err(RegistryError::io(path, error)),
        };
        let lock: Self = toml::from_str(&text).map_err(|error| RegistryError::BadLock {
            path: path.to_owned(),
            message: error.message().to_owned(),
        })?;
        if lock.version != LOCK_VERSION {
            return Err(RegistryError::BadLock {
                path: path.to_owned(),
                message: format!("version {} (this harmonia reads {LOCK_VERSION})", lock.version),
            });
        }
        Ok(lock)
    }

    /// Write atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<(), RegistryError> {
        let mut text = String::from("# Written by `harmonia plugin pull`: what was pulled, by digest.\n");
        text.push_str(
            &toml::to_string(self).map_err(|error| RegistryError::BadLock {
                path: path.to_owned(),
                message: error.to_string(),
            })?,
        );
        write_atomically(path, text.as_bytes())
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&LockEntry> {
        self.plugins.iter().find(|entry| entry.name == name)
    }

    /// Add `entry`, replacing the entry of the same name.
    pub fn upsert(&mut self, entry: LockEntry) {
        match self.plugins.iter_mut().find(|old| old.name == entry.name) {
            Some(old) => *old = entry,
            None => {
                self.plugins.push(entry);
                self.plugins.sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RegistryError> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.tmp-{}-{serial}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(|error| RegistryError::io(path, error))
}

/// The content-addressed store of a plugin directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store of plugin directory `dir`.
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_owned() }
    }

    /// The plugin directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock file's path.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }

    fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.dir.join("oci").join("sha256").join(digest.hex())
    }

    fn signatures_path(&self, manifest: &Digest) -> PathBuf {
        self.dir.join("oci").join("signatures").join(format!("{}.json", manifest.hex()))
    }

    /// True when a blob is stored under `digest` (not yet verified).
    pub fn has(&self, digest: &Digest) -> bool {
        self.blob_path(digest).is_file()
    }

    /// The blob under `digest`, read up to `max` bytes and checked against
    /// its digest.
    pub fn read(&self, digest: &Digest, max: u64) -> Result<Vec<u8>, RegistryError> {
        let path = self.blob_path(digest);
        let file = std::fs::File::open(&path).map_err(|error| RegistryError::io(&path, error))?;
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).map_err(|error| RegistryError::io(&path, error))?;
        if bytes.len() as u64 > max {
            return Err(RegistryError::TooLarge { what: format!("stored blob {digest}"), limit: max });
        }
        let actual = Digest::of(&bytes);
        if &actual != digest {
            return Err(RegistryError::Tampered { path, expected: digest.clone(), actual });
        }
        Ok(bytes)
    }

    /// Store `bytes` under their digest (atomically; an existing blob is
    /// replaced by identical bytes).
    pub fn write(&self, bytes: &[u8]) -> Result<Digest, RegistryError> {
        let digest = Digest::of(bytes);
        let path = self.blob_path(&digest);
        create_parent(&path)?;
        write_atomically(&path, bytes)?;
        Ok(digest)
    }

    /// The stored signatures of `manifest` (none when there is no file).
    pub fn signatures(&self, manifest: &Digest) -> Result<Vec<StoredSignature>, RegistryError> {
        let path = self.signatures_path(manifest);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(RegistryError::io(&path, error)),
        };
        serde_json::from_slice(&text).map_err(|error| RegistryError::BadLock {
            path: path.clone(),
            message: format!("stored signatures: {error}"),
        })
    }

    /// Keep `signatures` for `manifest`.
    pub fn write_signatures(
        &self,
        manifest: &Digest,
        signatures: &[StoredSignature],
    ) -> Result<(), RegistryError> {
        let path = self.signatures_path(manifest);
        create_parent(&path)?;
        let text = serde_json::to_vec_pretty(signatures).unwrap_or_default();
        write_atomically(&path, &text)
    }

    /// Verify a locked plugin from the store alone (no network): the
    /// manifest's and the component's bytes against their digests, the
    /// manifest's layer against the lock, and its signatures against the
    /// trust policy. Nothing is compiled before this returns.
    pub fn verify(
        &self,
        entry: &LockEntry,
        policy: &TrustPolicy,
        max_component_bytes: u64,
    ) -> Result<VerifiedComponent, RegistryError> {
        let manifest_bytes = self.read(&entry.manifest_digest, MAX_MANIFEST_BYTES)?;
        let (layer, size) = Manifest::parse(&manifest_bytes)?.component_layer()?;
        if layer != entry.layer_digest {
            return Err(RegistryError::LayerMismatch {
                what: format!("the manifest of `{}`", entry.name),
                expected: entry.layer_digest.clone(),
                actual: layer,
            });
        }
        if size > max_component_bytes {
            return Err(RegistryError::TooLarge {
                what: format!("component `{}`", entry.name),
                limit: max_component_bytes,
            });
        }
        let signatures = self.signatures(&entry.manifest_digest)?;
        let repository = OciReference::parse(&entry.reference)?.repository_path();
        let signer = check_signatures(&entry.name, &repository, &signatures, &entry.manifest_digest, policy)?;
        let bytes = self.read(&entry.layer_digest, max_component_bytes)?;
        Ok(VerifiedComponent { entry: LockEntry { signer, ..entry.clone() }, bytes })
    }

    /// Every plugin of the lock file, verified (see [`Store::verify`]).
    pub fn verify_all(
        &self,
        policy: &TrustPolicy,
        max_component_bytes: u64,
    ) -> Result<Vec<VerifiedComponent>, RegistryError> {
        let lock = LockFile::read(&self.lock_path())?;
        self.verify_each(&lock.plugins, policy, max_component_bytes).into_iter().collect()
    }

    /// Each of `entries` verified (see [`Store::verify`]), in their order,
    /// on up to as many threads as the machine has cores: a load's
    /// verification is mostly the SHA-256 of every component's bytes,
    /// which a core hashes at about 1 GB/s, so a lock of several plugins
    /// verifies in a fraction of the time one after another would take.
    /// Every entry is verified whatever the others' verdicts; nothing is
    /// compiled before this returns.
    pub fn verify_each(
        &self,
        entries: &[LockEntry],
        policy: &TrustPolicy,
        max_component_bytes: u64,
    ) -> Vec<Result<VerifiedComponent, RegistryError>> {
        let workers = std::thread::available_parallelism().map_or(1, usize::from).min(entries.len());
        if workers <= 1 {
            return entries.iter().map(|entry| self.verify(entry, policy, max_component_bytes)).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let verified: Vec<std::sync::OnceLock<Result<VerifiedComponent, RegistryError>>> =
            entries.iter().map(|_| std::sync::OnceLock::new()).collect();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(entry) = entries.get(index) else { break };
                        let _ = verified[index].set(self.verify(entry, policy, max_component_bytes));
                    }
                });
            }
        });
        verified.into_iter().map(|slot| slot.into_inner().expect("every entry is verified")).collect()
    }
}

fn create_parent(path: &Path) -> Result<(), RegistryError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|error| RegistryError::io(parent, error))
}

/// The policy's verdict on `signatures` of `digest`: the signer, `None`
/// when unsigned and signatures are not required, or the refusal.
pub fn check_signatures(
    name: &str,
    repository: &str,
    signatures: &[StoredSignature],
    digest: &Digest,
    policy: &TrustPolicy,
) -> Result<Option<String>, RegistryError> {
    match cosign::verify_trusted(signatures, digest, &policy.trusted_for(name, repository)) {
        Ok(signer) => Ok(Some(signer)),
        Err(reason) if policy.require_signatures => {
            Err(RegistryError::Refused { name: name.to_owned(), digest: digest.clone(), reason })
        }
        Err(
            Refusal::Unsigned
            | Refusal::NoTrustedKey
            | Refusal::UntrustedKey { .. }
            | Refusal::OtherDigest { .. }
            | Refusal::Keyless(_),
        ) => Ok(None),
    }
}

/// A locked component whose bytes and signature verified.
#[derive(Clone, Debug)]
pub struct VerifiedComponent {
    /// Its lock entry, `signer` the key that verified now.
    pub entry: LockEntry,
    /// The component bytes (their SHA-256 is `entry.layer_digest`).
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::wasm_config;

    fn temp_store(name: &str) -> (PathBuf, Store) {
        let dir = std::env::temp_dir().join(format!("harmonia-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::new(&dir);
        (dir, store)
    }

    /// A component stored with its manifest; its lock entry.
    fn stored(store: &Store, name: &str, component: &[u8]) -> LockEntry {
        let manifest = Manifest::for_component(&wasm_config(component), component);
        let manifest_digest = store.write(&manifest.to_bytes()).unwrap();
        let layer_digest = store.write(component).unwrap();
        LockEntry {
            name: name.into(),
            reference: format!("oci://127.0.0.1:5000/tools/{name}:v1"),
            manifest_digest,
            layer_digest,
            signer: None,
        }
    }

    /// Verified on several threads, a lock's entries keep their order, each
    /// its own verdict: one swapped component is refused at its place and
    /// the others verify, whatever thread took which.
    #[test]
    fn each_entry_gets_its_own_verdict_in_the_locks_order() {
        let (dir, store) = temp_store("each");
        let entries: Vec<LockEntry> = (0..9)
            .map(|n| stored(&store, &format!("tool{n}"), format!("component {n}").as_bytes()))
            .collect();
        let swapped = &entries[4].layer_digest;
        std::fs::write(store.blob_path(swapped), b"another component").unwrap();
        let verdicts = store.verify_each(&entries, &TrustPolicy::default(), 1 << 20);
        assert_eq!(verdicts.len(), entries.len());
        for (n, verdict) in verdicts.iter().enumerate() {
            match verdict {
                Ok(verified) if n != 4 => {
                    assert_eq!(verified.entry.name, format!("tool{n}"));
                    assert_eq!(verified.bytes, format!("component {n}").as_bytes());
                }
                Err(_) if n == 4 => {}
                other => panic!("entry {n}: {other:?}"),
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
