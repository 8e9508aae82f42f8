//! The on-disk cache of precompiled components.
//!
//! Compiling a component costs tens of milliseconds to seconds (a language
//! runtime's, 10 to 30 s); loading a precompiled one costs well under a
//! millisecond for a Rust tool and a few milliseconds for a language
//! runtime. Entries are keyed by the component's BLAKE3 hash and by an
//! engine key (the wasmtime version and
//! `Engine::precompile_compatibility_hash`, which covers every compilation
//! setting, the memory limits included), so a different engine never
//! reads another's entry.
//!
//! An entry is the artifact wasmtime wrote, then a trailer: a magic line,
//! the artifact's BLAKE3 hash and its length. A valid entry is mapped, not
//! copied (`Component::deserialize_file` through `/proc/self/fd`, so the
//! file checked is the file mapped), which lets wasmtime map memory images
//! straight from it: a 40 MB CPython artifact loads in a few milliseconds
//! instead of ~100 ms. Entries are therefore never rewritten in place, only
//! replaced by a rename.
//!
//! Precompiled bytes are machine code that wasmtime trusts, so:
//! - each entry carries the BLAKE3 hash of its artifact, checked before
//!   loading; a truncated, corrupt or mismatched entry is deleted and
//!   rebuilt;
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

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 16] = b"HARMONIA-CWASM2\n";
const TRAILER: usize = MAGIC.len() + 32 + 8;

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

    fn entry_name(&self, key: &str) -> String {
        format!("{key}-{}.cwasm", self.engine_key)
    }

    /// Entry `name` opened, with its artifact's length, if it exists, may
    /// be trusted, and its trailer and hash hold.
    fn open_entry(&self, name: &str) -> Option<(std::fs::File, u64)> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let file = rustix::fs::openat(&*self.handle, name, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&file).ok()?;
        let size = u64::try_from(stat.st_size).ok()?;
        let trusted = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
            && private_to_us(&stat)
            && stat.st_nlink == 1
            && size <= MAX_ENTRY_BYTES;
        if !trusted {
            return None;
        }
        let file = std::fs::File::from(file);
        let length = verified_length(&file, size)?;
        Some((file, length))
    }

    fn remove_entry(&self, name: &str) {
        let _ = rustix::fs::unlinkat(&*self.handle, name, AtFlags::empty());
    }

    /// True when an entry named `name` exists (of any kind).
    fn entry_exists(&self, name: &str) -> bool {
        rustix::fs::statat(&*self.handle, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// The stored component for `key`, if there is a valid entry; a broken
    /// entry is deleted.
    pub fn lookup(&self, engine: &Engine, key: &str) -> Lookup {
        let name = self.entry_name(key);
        if !self.entry_exists(&name) {
            return Lookup::Missing;
        }
        match self.open_entry(&name).and_then(|(file, length)| map_entry(engine, &file, length).ok()) {
            Some(component) => Lookup::Hit(component),
            None => {
                self.remove_entry(&name);
                Lookup::Broken
            }
        }
    }

    /// Compile `bytes` and store the result under `key`.
    pub fn compile_and_store(&self, engine: &Engine, bytes: &[u8], key: &str) -> wasmtime::Result<Component> {
        let artifact = engine.precompile_component(bytes)?;
        // A failed write only costs the next start a compile.
        let _ = self.store(&self.entry_name(key), &artifact);
        deserialize(engine, &artifact)
    }

    fn store(&self, name: &str, artifact: &[u8]) -> std::io::Result<()> {
        static STORED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = STORED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = format!(".tmp-{}-{serial}", std::process::id());
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = rustix::fs::openat(&*self.handle, temporary.as_str(), flags, Mode::from_raw_mode(0o600))?;
        let mut file = std::fs::File::from(file);
        let written = (|| {
            file.write_all(artifact)?;
            file.write_all(MAGIC)?;
            file.write_all(blake3::hash(artifact).as_bytes())?;
            file.write_all(&(artifact.len() as u64).to_le_bytes())?;
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

/// What a lookup found.
pub enum Lookup {
    /// A valid entry, mapped.
    Hit(Component),
    /// No entry.
    Missing,
    /// An entry that could not be trusted or loaded; it was deleted.
    Broken,
}

/// The cache key of component `bytes`: their BLAKE3 hash, hex.
pub fn key(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The artifact length an entry of `size` bytes declares, if its trailer is
/// ours and the artifact's hash matches it.
fn verified_length(file: &std::fs::File, size: u64) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let start = size.checked_sub(TRAILER as u64)?;
    let mut trailer = [0u8; TRAILER];
    file.read_exact_at(&mut trailer, start).ok()?;
    let (magic, rest) = trailer.split_at(MAGIC.len());
    let (hash, length) = rest.split_at(32);
    let length = u64::from_le_bytes(length.try_into().ok()?);
    if magic != MAGIC || length != start {
        return None;
    }
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut offset = 0;
    while offset < length {
        let chunk = (length - offset).min(buffer.len() as u64) as usize;
        file.read_exact_at(&mut buffer[..chunk], offset).ok()?;
        hasher.update(&buffer[..chunk]);
        offset += chunk as u64;
    }
    (hasher.finalize().as_bytes() == hash).then_some(length)
}

/// Load a verified entry: mapped through `/proc/self/fd` (the same open
/// file, so what was checked is what is mapped), or read into memory where
/// `/proc` is missing.
fn map_entry(engine: &Engine, file: &std::fs::File, length: u64) -> wasmtime::Result<Component> {
    use std::os::fd::AsRawFd;
    let through_proc = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    if through_proc.exists() {
        return deserialize_file(engine, &through_proc);
    }
    let mut artifact = Vec::with_capacity(length as usize);
    file.take(length).read_to_end(&mut artifact)?;
    deserialize(engine, &artifact)
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: the artifact was produced by `precompile_component` on an
    // engine with the same compatibility key (it is in the entry's name),
    // its hash was verified just before, and it was read from a directory
    // only this user can write; wasmtime additionally checks the engine
    // settings recorded in the artifact and refuses a mismatch.
    unsafe { Component::deserialize(engine, artifact) }
}

#[allow(unsafe_code)]
fn deserialize_file(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: as for `deserialize`, and the entry is never rewritten in
    // place (entries are replaced by rename), so the mapping stays what was
    // checked; the trailer after the artifact is outside every section
    // wasmtime reads.
    unsafe { Component::deserialize_file(engine, path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_file(name: &str, bytes: &[u8]) -> (std::fs::File, u64) {
        let path = std::env::temp_dir().join(format!("harmonia-cache-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let size = bytes.len() as u64;
        (file, size)
    }

    #[test]
    fn verified_length_refuses_broken_entries() {
        let artifact = b"machine code".to_vec();
        let mut entry = artifact.clone();
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(blake3::hash(&artifact).as_bytes());
        entry.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        let check = |name: &str, bytes: &[u8]| {
            let (file, size) = entry_file(name, bytes);
            verified_length(&file, size)
        };
        assert_eq!(check("good", &entry), Some(artifact.len() as u64));
        assert_eq!(check("truncated", &entry[1..]), None);
        let mut flipped = entry.clone();
        flipped[0] ^= 1;
        assert_eq!(check("corrupt", &flipped), None);
        let mut other_magic = entry.clone();
        other_magic[artifact.len()] = b'X';
        assert_eq!(check("not-ours", &other_magic), None);
        assert_eq!(check("empty", b""), None);
    }
}
