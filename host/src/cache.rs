//! The on-disk cache of precompiled components.
//!
//! Compiling a component costs tens of milliseconds to seconds; loading a
//! precompiled one costs well under a millisecond. Entries are keyed by the
//! component's SHA-256 and by an engine key (the wasmtime version and
//! `Engine::precompile_compatibility_hash`, which covers every compilation
//! setting, the memory limits included), so a different engine never
//! reads another's entry.
//!
//! Precompiled bytes are machine code that wasmtime trusts, so:
//! - each entry carries the SHA-256 of its artifact, checked before loading;
//!   a truncated, corrupt or mismatched entry is deleted and rebuilt;
//! - entries are written to a temporary file and renamed into place;
//! - the directory must belong to this user and not be writable by group
//!   or others; otherwise the cache is not used at all.

use crate::capability::sha256_hex;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 16] = b"HARMONIA-CWASM1\n";
const HEADER: usize = MAGIC.len() + 32 + 8;

/// What happened when a component was fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a valid entry.
    Hit,
    /// No entry: compiled and stored.
    Miss,
    /// A broken entry was discarded: compiled and stored again.
    Rebuilt,
    /// The cache is off or unusable: compiled only.
    Bypassed,
}

/// A cache directory for one engine.
#[derive(Clone, Debug)]
pub struct ComponentCache {
    dir: PathBuf,
    engine_key: String,
}

/// Feeds `Hash` output into SHA-256, so the engine key is stable across
/// processes.
struct DigestHasher(Sha256);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// A key naming the engine's wasmtime version and compilation settings.
pub fn engine_key(engine: &Engine) -> String {
    let mut hasher = DigestHasher(Sha256::new());
    hasher.write(concat!("wasmtime-", "48").as_bytes());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = hasher.0.finalize();
    digest[..8].iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `$XDG_CACHE_HOME/harmonia/components`, else
/// `$HOME/.cache/harmonia/components`.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from).or_else(
        || {
            std::env::var_os("HOME")
                .filter(|dir| !dir.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        },
    )?;
    Some(base.join("harmonia").join("components"))
}

/// Create `dir` (mode 0700) or check an existing one is private to us.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let metadata = std::fs::metadata(dir)?;
        // std has no geteuid: a file we create here shows our uid.
        let probe = dir.join(format!(".owner-{}", std::process::id()));
        std::fs::write(&probe, b"")?;
        let ours = std::fs::metadata(&probe).map(|probe| probe.uid() == metadata.uid());
        let _ = std::fs::remove_file(&probe);
        if !ours? || metadata.permissions().mode() & 0o022 != 0 {
            return Err(std::io::Error::other("cache directory is not private to this user"));
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    Ok(())
}

impl ComponentCache {
    /// A cache in `dir` for `engine`; `None` when the directory cannot be
    /// made private to this user.
    pub fn open(dir: &Path, engine: &Engine) -> Option<Self> {
        private_dir(dir).ok()?;
        Some(Self { dir: dir.to_owned(), engine_key: engine_key(engine) })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, component_sha256: &str) -> PathBuf {
        self.dir.join(format!("{component_sha256}-{}.cwasm", self.engine_key))
    }

    /// The component for `bytes` (whose SHA-256 is `sha256`): from a valid
    /// entry, or compiled and stored.
    pub fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let path = self.entry(sha256);
        let mut outcome = CacheOutcome::Miss;
        if let Ok(stored) = std::fs::read(&path) {
            match verified_artifact(&stored).map(|artifact| deserialize(engine, artifact)) {
                Some(Ok(component)) => return Ok((component, CacheOutcome::Hit)),
                _ => {
                    let _ = std::fs::remove_file(&path);
                    outcome = CacheOutcome::Rebuilt;
                }
            }
        }
        let artifact = engine.precompile_component(bytes)?;
        // A failed write only costs the next start a compile.
        let _ = self.store(&path, &artifact);
        Ok((deserialize(engine, &artifact)?, outcome))
    }

    fn store(&self, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
        let temporary = self.dir.join(format!(".tmp-{}-{}", std::process::id(), sha256_hex(artifact)));
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(MAGIC)?;
        file.write_all(&Sha256::digest(artifact))?;
        file.write_all(&(artifact.len() as u64).to_le_bytes())?;
        file.write_all(artifact)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
    }

    /// Delete every entry; returns how many files were removed.
    pub fn clear(dir: &Path) -> std::io::Result<usize> {
        let mut removed = 0;
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(error) => return Err(error),
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".cwasm") || name.starts_with(".tmp-") {
                std::fs::remove_file(entry.path())?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// The artifact of a stored entry, if its header and checksum hold.
fn verified_artifact(stored: &[u8]) -> Option<&[u8]> {
    if stored.len() < HEADER || &stored[..MAGIC.len()] != MAGIC {
        return None;
    }
    let checksum = &stored[MAGIC.len()..MAGIC.len() + 32];
    let length = u64::from_le_bytes(stored[MAGIC.len() + 32..HEADER].try_into().ok()?);
    let artifact = &stored[HEADER..];
    (artifact.len() as u64 == length && Sha256::digest(artifact).as_slice() == checksum).then_some(artifact)
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: the artifact was produced by `precompile_component` on an
    // engine with the same compatibility key (it is in the entry's name),
    // its checksum was verified just before, and it was read from a
    // directory only this user can write; wasmtime additionally checks the
    // engine settings recorded in the artifact and refuses a mismatch.
    unsafe { Component::deserialize(engine, artifact) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_artifact_refuses_broken_entries() {
        let artifact = b"machine code".to_vec();
        let mut entry = MAGIC.to_vec();
        entry.extend_from_slice(&Sha256::digest(&artifact));
        entry.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        entry.extend_from_slice(&artifact);
        assert_eq!(verified_artifact(&entry), Some(artifact.as_slice()));
        assert_eq!(verified_artifact(&entry[..entry.len() - 1]), None, "truncated");
        let mut flipped = entry.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(verified_artifact(&flipped), None, "corrupt");
        let mut other_magic = entry.clone();
        other_magic[0] = b'X';
        assert_eq!(verified_artifact(&other_magic), None, "not ours");
        assert_eq!(verified_artifact(b""), None);
    }
}
