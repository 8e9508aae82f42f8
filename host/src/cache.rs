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
//! - the directory is opened once, without following a symbolic link, and
//!   must be a directory owned by this user and not writable by group or
//!   others; otherwise the cache is not used at all;
//! - every entry is opened relative to that directory handle, never
//!   following a link, and is read only when it is a regular file owned by
//!   this user, not writable by group or others, with one link;
//! - entries are written to a temporary file created exclusively (mode
//!   0600) and renamed into place, all relative to the same handle.
//!
//! The cache relies on Unix file ownership and `openat`.

use crate::capability::sha256_hex;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

/// Largest entry read back (a precompiled component is a few times the
/// size of its wasm; the largest language runtimes are well under this).
const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// A cache directory for one engine.
#[derive(Clone, Debug)]
pub struct ComponentCache {
    dir: PathBuf,
    handle: Arc<OwnedFd>,
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

/// True when `stat` is owned by this user and not writable by group or
/// others.
fn private_to_us(stat: &Stat) -> bool {
    stat.st_uid == rustix::process::geteuid().as_raw() && stat.st_mode & 0o022 == 0
}

/// Create `dir` (mode 0700) if missing, then open it without following a
/// link and check it is a directory private to us.
pub(crate) fn open_private_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let handle = rustix::fs::open(dir, flags, Mode::empty())?;
    let stat = rustix::fs::fstat(&handle)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory || !private_to_us(&stat) {
        return Err(std::io::Error::other("cache directory is not private to this user"));
    }
    Ok(handle)
}

impl ComponentCache {
    /// A cache in `dir` for `engine`; `None` when the directory cannot be
    /// made private to this user.
    pub fn open(dir: &Path, engine: &Engine) -> Option<Self> {
        let handle = open_private_dir(dir).ok()?;
        Some(Self { dir: dir.to_owned(), handle: Arc::new(handle), engine_key: engine_key(engine) })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_name(&self, component_sha256: &str) -> String {
        format!("{component_sha256}-{}.cwasm", self.engine_key)
    }

    /// The bytes of entry `name`, if it exists and may be trusted.
    fn read_entry(&self, name: &str) -> Option<Vec<u8>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let file = rustix::fs::openat(&*self.handle, name, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&file).ok()?;
        let trusted = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
            && private_to_us(&stat)
            && stat.st_nlink == 1
            && u64::try_from(stat.st_size).is_ok_and(|size| size <= MAX_ENTRY_BYTES);
        if !trusted {
            return None;
        }
        let mut bytes = Vec::new();
        std::fs::File::from(file).take(MAX_ENTRY_BYTES).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    fn remove_entry(&self, name: &str) {
        let _ = rustix::fs::unlinkat(&*self.handle, name, AtFlags::empty());
    }

    /// True when an entry named `name` exists (of any kind).
    fn entry_exists(&self, name: &str) -> bool {
        rustix::fs::statat(&*self.handle, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// The component for `bytes` (whose SHA-256 is `sha256`): from a valid
    /// entry, or compiled and stored.
    pub fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let name = self.entry_name(sha256);
        let mut outcome = CacheOutcome::Miss;
        if self.entry_exists(&name) {
            let stored = self.read_entry(&name);
            match stored.as_deref().and_then(verified_artifact).map(|artifact| deserialize(engine, artifact))
            {
                Some(Ok(component)) => return Ok((component, CacheOutcome::Hit)),
                _ => {
                    self.remove_entry(&name);
                    outcome = CacheOutcome::Rebuilt;
                }
            }
        }
        let artifact = engine.precompile_component(bytes)?;
        // A failed write only costs the next start a compile.
        let _ = self.store(&name, &artifact);
        Ok((deserialize(engine, &artifact)?, outcome))
    }

    fn store(&self, name: &str, artifact: &[u8]) -> std::io::Result<()> {
        let temporary = format!(".tmp-{}-{}", std::process::id(), sha256_hex(artifact));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = rustix::fs::openat(&*self.handle, temporary.as_str(), flags, Mode::from_raw_mode(0o600))?;
        let mut file = std::fs::File::from(file);
        let written = (|| {
            file.write_all(MAGIC)?;
            file.write_all(&Sha256::digest(artifact))?;
            file.write_all(&(artifact.len() as u64).to_le_bytes())?;
            file.write_all(artifact)?;
            file.sync_all()?;
            rustix::fs::renameat(&*self.handle, temporary.as_str(), &*self.handle, name)?;
            Ok(())
        })();
        if written.is_err() {
            self.remove_entry(&temporary);
        }
        written
    }

    /// Delete every entry; returns how many files were removed. Links are
    /// removed, never followed.
    pub fn clear(dir: &Path) -> std::io::Result<usize> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let handle = match rustix::fs::open(dir, flags, Mode::empty()) {
            Ok(handle) => handle,
            Err(rustix::io::Errno::NOENT) => return Ok(0),
            Err(error) => return Err(error.into()),
        };
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&handle)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.ends_with(".cwasm") || name.starts_with(".tmp-") {
                names.push(name);
            }
        }
        for name in &names {
            rustix::fs::unlinkat(&handle, name.as_str(), AtFlags::empty())?;
        }
        Ok(names.len())
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
