//! Host keys for sealed traces ([`TraceSigner`]); the seal itself (the
//! hash chain, the signature and [`verify`]) is the contract crate's
//! `liaison::seal`, re-exported here.
//!
//! Host keys ([`TraceSigner`]): a 32-byte ed25519 seed, stored as 64 hex
//! characters in a file created exclusively with mode 0600 (a file, link
//! or symlink already at the path is never overwritten or followed); the
//! default file is `trace-key` in the user's data directory
//! (`$XDG_DATA_HOME/harmonia`, else `~/.local/share/harmonia`, created
//! 0700 and refused when another user could write to it). Loading refuses a
//! symbolic link, anything but a regular file, and a file others may read
//! or write ([`crate::secret_file`]: the owner only, or a root-owned
//! file's group, read-only, as a Kubernetes Secret mounted with `subPath`).

use super::trace::Trace;
use crate::config::TraceConfig;
use ed25519_dalek::SigningKey;
use harmonia_contract::digest::{from_hex, hex};
pub use harmonia_contract::liaison::seal::{ALGORITHM, PublicKey, Seal, Unverified, chain, verify};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The key file's name in the user's data directory.
pub const KEY_FILE_NAME: &str = "trace-key";
/// A key file is 64 hex digits and a newline; anything much larger is not one.
const MAX_KEY_FILE: u64 = 256;

/// A key that signs traces.
pub struct TraceSigner {
    key: SigningKey,
}

impl fmt::Debug for TraceSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret.
        f.debug_struct("TraceSigner").field("public_key", &self.public_key().to_hex()).finish()
    }
}

/// Why a host key cannot be loaded or made.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Neither `$XDG_DATA_HOME` nor `$HOME` names a directory.
    #[error("no data directory for the trace key: set trace.key_file, XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// The file system refused.
    #[error("trace key {path}: {source}")]
    Io {
        /// The key file or its directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The key file is unsafe or not a key.
    #[error("trace key {path}: {reason}")]
    Refused {
        /// The key file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The operating system gave no randomness.
    #[error("cannot generate a trace key: {0}")]
    Random(String),
}

/// `$XDG_DATA_HOME/harmonia/trace-key`, else `~/.local/share/harmonia/trace-key`.
pub fn default_key_path() -> Option<PathBuf> {
    // The XDG spec says a relative XDG_DATA_HOME is to be ignored.
    let base = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()).or_else(
        || {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".local").join("share"))
        },
    )?;
    Some(base.join("harmonia").join(KEY_FILE_NAME))
}

impl TraceSigner {
    /// A signer for this seed (tests and fixed keys).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self { key: SigningKey::from_bytes(&seed) }
    }

    /// A fresh key from the operating system's randomness, kept in memory.
    pub fn generate() -> Result<Self, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|error| KeyError::Random(error.to_string()))?;
        Ok(Self::from_seed(seed))
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey::of(&self.key)
    }

    /// The seal of `trace`'s entries.
    pub fn seal(&self, trace: &Trace) -> Seal {
        harmonia_contract::liaison::seal::seal(&self.key, trace)
    }

    /// The key in `path`; never creates it.
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let refused = |reason: &str| KeyError::Refused { path: path.to_owned(), reason: reason.to_owned() };
        let io = |source| KeyError::Io { path: path.to_owned(), source };
        let before = std::fs::symlink_metadata(path).map_err(io)?;
        if before.file_type().is_symlink() {
            return Err(refused("is a symbolic link; refusing to follow it"));
        }
        if !before.is_file() {
            return Err(refused("is not a regular file"));
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let opened = file.metadata().map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // The path may have been swapped between the two looks.
            if (opened.dev(), opened.ino()) != (before.dev(), before.ino()) {
                return Err(refused("changed while it was opened; refusing"));
            }
            if let Some(problem) = crate::secret_file::metadata_problem(&opened) {
                return Err(refused(&problem));
            }
        }
        if opened.len() > MAX_KEY_FILE {
            return Err(refused("is too large to be a key file"));
        }
        let mut text = String::new();
        (&file).take(MAX_KEY_FILE).read_to_string(&mut text).map_err(io)?;
        let seed = from_hex::<32>(text.trim()).ok_or_else(|| refused("does not hold 64 hex digits"))?;
        Ok(Self::from_seed(seed))
    }

    /// The key in `path`, generated there first if nothing is at `path`.
    /// The directory must exist; see [`TraceSigner::load_or_create_default`]
    /// for the data directory.
    pub fn load_or_create(path: &Path) -> Result<Self, KeyError> {
        match std::fs::symlink_metadata(path) {
            Ok(_) => Self::load(path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Self::create(path),
            Err(source) => Err(KeyError::Io { path: path.to_owned(), source }),
        }
    }

    /// The key in [`default_key_path`], its private directory and the key
    /// generated on first use.
    pub fn load_or_create_default() -> Result<Self, KeyError> {
        let path = default_key_path().ok_or(KeyError::NoDataDir)?;
        if let Some(dir) = path.parent() {
            crate::cache::open_private_dir(dir)
                .map_err(|source| KeyError::Io { path: dir.to_owned(), source })?;
        }
        Self::load_or_create(&path)
    }

    /// The host key `config` names (`trace.key_file`), else the default
    /// one; either is generated on first use.
    pub fn host_key(config: &TraceConfig) -> Result<Self, KeyError> {
        match &config.key_file {
            Some(path) => Self::load_or_create(path),
            None => Self::load_or_create_default(),
        }
    }

    /// The host key `config` names, else the default one, only if it
    /// exists: a key made now could not have signed anything.
    pub fn existing_host_key(config: &TraceConfig) -> Result<Self, KeyError> {
        match &config.key_file {
            Some(path) => Self::load(path),
            None => Self::load(&default_key_path().ok_or(KeyError::NoDataDir)?),
        }
    }

    /// Generate a key and publish it at `path` in one step: written to an
    /// exclusive temporary file, then hard-linked to `path`, which fails
    /// rather than replace anything (a file, or a planted symlink) that
    /// appeared there meanwhile. Losing that race to another process
    /// loads the key it wrote.
    fn create(path: &Path) -> Result<Self, KeyError> {
        let io = |source| KeyError::Io { path: path.to_owned(), source };
        let signer = Self::generate()?;
        let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).map_err(|error| KeyError::Random(error.to_string()))?;
        let temporary = dir.join(format!(".{KEY_FILE_NAME}.tmp-{}", hex(&nonce)));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = (|| {
            let mut file = options.open(&temporary)?;
            file.write_all(format!("{}\n", hex(signer.key.as_bytes())).as_bytes())?;
            file.sync_all()?;
            std::fs::hard_link(&temporary, path)
        })();
        let _ = std::fs::remove_file(&temporary);
        match written {
            Ok(()) => Ok(signer),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Self::load(path),
            Err(error) => Err(io(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(byte: u8) -> TraceSigner {
        TraceSigner::from_seed([byte; 32])
    }

    #[test]
    fn debug_never_shows_the_secret() {
        assert!(!format!("{:?}", signer(7)).contains(&hex(&[7u8; 32])));
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("harmonia-signing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_is_created_0600_once_and_reloaded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("create");
        let path = dir.join(KEY_FILE_NAME);
        let first = TraceSigner::load_or_create(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let again = TraceSigner::load_or_create(&path).unwrap();
        assert_eq!(first.public_key(), again.public_key());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn processes_racing_to_create_the_key_all_get_the_same_one() {
        let dir = scratch("race");
        let path = dir.join(KEY_FILE_NAME);
        let keys: Vec<PublicKey> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| TraceSigner::load_or_create(&path).map(|signer| signer.public_key())))
                .collect();
            handles.into_iter().map(|handle| handle.join().unwrap().unwrap()).collect()
        });
        assert!(keys.iter().all(|key| *key == keys[0]), "one key wins: {keys:?}");
        assert_eq!(TraceSigner::load(&path).unwrap().public_key(), keys[0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_key_path_is_refused_and_left_alone() {
        let dir = scratch("symlink");
        let target = dir.join("attacker-owned");
        let path = dir.join(KEY_FILE_NAME);
        // Dangling: creating through it would write where the attacker wants.
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let error = TraceSigner::load_or_create(&path).unwrap_err().to_string();
        assert!(error.contains("symbolic link"), "{error}");
        assert!(!target.exists(), "nothing was written through the link");
        // Pointing at a valid key file does not make it acceptable either.
        std::fs::write(&target, format!("{}\n", hex(&[3u8; 32]))).unwrap();
        let error = TraceSigner::load(&path).unwrap_err().to_string();
        assert!(error.contains("symbolic link"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn key_files_others_can_read_or_that_are_not_keys_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("modes");
        let path = dir.join(KEY_FILE_NAME);
        std::fs::write(&path, format!("{}\n", hex(&[3u8; 32]))).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = TraceSigner::load(&path).unwrap_err().to_string();
        assert!(error.contains("mode 644") && error.contains("chmod 600"), "{error}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(TraceSigner::load(&path).unwrap().public_key(), signer(3).public_key());
        std::fs::write(&path, "not a key").unwrap();
        assert!(TraceSigner::load(&path).unwrap_err().to_string().contains("64 hex digits"));
        std::fs::write(&path, vec![b'a'; 4096]).unwrap();
        assert!(TraceSigner::load(&path).unwrap_err().to_string().contains("too large"));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(TraceSigner::load_or_create(&path).unwrap_err().to_string().contains("regular file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
