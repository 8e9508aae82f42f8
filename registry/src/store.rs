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
        lock.plugins.iter().map(|entry| self.verify(entry, policy, max_component_bytes)).collect()
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
