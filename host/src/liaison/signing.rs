//! Signed traces: a hash chain over the entries and an ed25519 signature
//! by a host key, so `harmonia validate` can tell a trace the host emitted
//! from one written by hand or edited afterwards.
//!
//! The chain: `h0 = SHA-256("harmonia-trace-chain-v1")`, then for each
//! entry `hi = SHA-256(h(i-1) || canonical JSON of entry i)`. The canonical
//! JSON is the entry serialized by this crate (fields in their declared
//! order, `args`, `response` and `receipts` keys in document order, no
//! whitespace), so the bytes hashed are exactly what the validator reads:
//! reformatting a file keeps its seal, changing any value breaks it. The
//! signature covers `"harmonia-trace-seal-v1\0"`, the entry count (u64,
//! big-endian) and the last chain hash, so removing, reordering, altering
//! or appending an entry is detected, and the entry that first differs is
//! named when the recorded chain shows it.
//!
//! The [`Seal`] a trace carries holds the algorithm, the signer's public
//! key, the chain and the signature. The public key in a seal is never
//! trusted on its own: [`verify`] compares it with the key the caller
//! trusts.
//!
//! Host keys ([`TraceSigner`]): a 32-byte ed25519 seed, stored as 64 hex
//! characters in a file created exclusively with mode 0600 (a file, link
//! or symlink already at the path is never overwritten or followed); the
//! default file is `trace-key` in the user's data directory
//! (`$XDG_DATA_HOME/harmonia`, else `~/.local/share/harmonia`, created
//! 0700 and refused when another user could write to it). Loading refuses a
//! symbolic link, anything but a regular file, and a file group or others
//! may read or write.

use super::trace::{Trace, TraceEntry};
use crate::config::TraceConfig;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The only algorithm a seal may name.
pub const ALGORITHM: &str = "ed25519";
/// The key file's name in the user's data directory.
pub const KEY_FILE_NAME: &str = "trace-key";
const CHAIN_DOMAIN: &[u8] = b"harmonia-trace-chain-v1";
const SEAL_DOMAIN: &[u8] = b"harmonia-trace-seal-v1\0";
/// A key file is 64 hex digits and a newline; anything much larger is not one.
const MAX_KEY_FILE: u64 = 256;

/// What a signed trace carries besides its entries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Seal {
    /// Always `ed25519`.
    pub algorithm: String,
    /// The signer's public key, 64 hex digits.
    pub public_key: String,
    /// `h1..hn`, one lowercase hex SHA-256 per entry.
    pub chain: Vec<String>,
    /// The ed25519 signature, 128 hex digits.
    pub signature: String,
}

/// An ed25519 public key that verifies traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

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

/// Why a trace is not verified.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unverified {
    /// The trace carries no seal.
    #[error("the trace is not signed")]
    Unsigned,
    /// A seal field is malformed.
    #[error("the trace's seal is malformed: {0}")]
    Malformed(String),
    /// The seal's chain and the entries differ in number.
    #[error("the seal covers {sealed} entries but the trace has {entries}: entries were added or removed")]
    Length {
        /// Entries the seal covers.
        sealed: usize,
        /// Entries in the trace.
        entries: usize,
    },
    /// An entry is not the one that was signed.
    #[error("entry {0} is not the entry that was signed: it was altered, moved or inserted")]
    EntryChanged(usize),
    /// Signed by a key other than the trusted one.
    #[error("the trace is signed by key {signer}, not by the trusted key {trusted}")]
    OtherKey {
        /// The seal's key.
        signer: String,
        /// The trusted key.
        trusted: String,
    },
    /// The signature does not verify.
    #[error("the signature does not match the trace")]
    BadSignature,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Exactly `N` bytes from lowercase or uppercase hex.
fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.as_bytes();
    if text.len() != 2 * N {
        return None;
    }
    let digit = |byte: u8| (byte as char).to_digit(16).map(|value| value as u8);
    let mut out = [0u8; N];
    for (slot, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *slot = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Writes into a hasher, so an entry is hashed without a buffer.
struct HashWriter<'h>(&'h mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn link(previous: &[u8; 32], entry: &TraceEntry) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    // Serializing plain data into a writer that never fails cannot fail.
    let _ = serde_json::to_writer(HashWriter(&mut hasher), entry);
    hasher.finalize().into()
}

/// The chain `h1..hn` over `trace`'s entries.
pub fn chain(trace: &Trace) -> Vec<[u8; 32]> {
    let mut previous: [u8; 32] = Sha256::digest(CHAIN_DOMAIN).into();
    trace
        .entries
        .iter()
        .map(|entry| {
            previous = link(&previous, entry);
            previous
        })
        .collect()
}

fn signed_message(count: usize, head: &[u8; 32]) -> Vec<u8> {
    let mut message = SEAL_DOMAIN.to_vec();
    message.extend_from_slice(&(count as u64).to_be_bytes());
    message.extend_from_slice(head);
    message
}

fn head(chain: &[[u8; 32]]) -> [u8; 32] {
    chain.last().copied().unwrap_or_else(|| Sha256::digest(CHAIN_DOMAIN).into())
}

impl PublicKey {
    /// From 64 hex digits.
    pub fn parse_hex(text: &str) -> Option<Self> {
        from_hex::<32>(text.trim()).and_then(|bytes| VerifyingKey::from_bytes(&bytes).ok()).map(Self)
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Check that `seal` signs exactly `trace`'s entries with `trusted`.
pub fn verify(trace: &Trace, seal: Option<&Seal>, trusted: &PublicKey) -> Result<(), Unverified> {
    let seal = seal.ok_or(Unverified::Unsigned)?;
    if seal.algorithm != ALGORITHM {
        return Err(Unverified::Malformed(format!("algorithm must be `{ALGORITHM}`")));
    }
    let signer = PublicKey::parse_hex(&seal.public_key)
        .ok_or_else(|| Unverified::Malformed("publicKey is not an ed25519 key in hex".into()))?;
    let signature = from_hex::<64>(&seal.signature)
        .map(|bytes| Signature::from_bytes(&bytes))
        .ok_or_else(|| Unverified::Malformed("signature is not 128 hex digits".into()))?;
    if seal.chain.len() != trace.entries.len() {
        return Err(Unverified::Length { sealed: seal.chain.len(), entries: trace.entries.len() });
    }
    let computed = chain(trace);
    for (position, (recorded, computed)) in seal.chain.iter().zip(&computed).enumerate() {
        if from_hex::<32>(recorded).as_ref() != Some(computed) {
            return Err(Unverified::EntryChanged(position + 1));
        }
    }
    if signer != *trusted {
        return Err(Unverified::OtherKey { signer: signer.to_hex(), trusted: trusted.to_hex() });
    }
    let message = signed_message(computed.len(), &head(&computed));
    trusted.0.verify_strict(&message, &signature).map_err(|_| Unverified::BadSignature)
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
        PublicKey(self.key.verifying_key())
    }

    /// The seal of `trace`'s entries.
    pub fn seal(&self, trace: &Trace) -> Seal {
        let chain = chain(trace);
        let signature = self.key.sign(&signed_message(chain.len(), &head(&chain)));
        Seal {
            algorithm: ALGORITHM.to_owned(),
            public_key: self.public_key().to_hex(),
            chain: chain.iter().map(|hash| hex(hash)).collect(),
            signature: hex(&signature.to_bytes()),
        }
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
            if opened.mode() & 0o077 != 0 {
                return Err(refused("is readable or writable by group or others (it must be mode 0600)"));
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
    use crate::liaison::trace::EntryKind;
    use serde_json::json;

    fn trace() -> Trace {
        let mut call = TraceEntry::new(2, EntryKind::ToolCall);
        call.name = Some("get_job_status".into());
        call.args = Some(json!({"job_id": "job-42"}));
        call.attempt = Some(1);
        call.duration_ms = Some(0.5);
        call.response = Some(json!({"status": "success"}));
        call.receipts = Some(Vec::new());
        let mut activation = TraceEntry::new(1, EntryKind::SkillActivation);
        activation.skill = Some("job-status".into());
        activation.sha256 = Some("ab".into());
        Trace { entries: vec![activation, call] }
    }

    fn signer(byte: u8) -> TraceSigner {
        TraceSigner::from_seed([byte; 32])
    }

    #[test]
    fn a_sealed_trace_verifies_with_its_key_only() {
        let trace = trace();
        let seal = signer(1).seal(&trace);
        assert_eq!(verify(&trace, Some(&seal), &signer(1).public_key()), Ok(()));
        assert!(matches!(
            verify(&trace, Some(&seal), &signer(2).public_key()),
            Err(Unverified::OtherKey { .. })
        ));
        assert_eq!(verify(&trace, None, &signer(1).public_key()), Err(Unverified::Unsigned));
    }

    #[test]
    fn any_change_after_signing_is_caught() {
        let trace = trace();
        let key = signer(1).public_key();
        let seal = signer(1).seal(&trace);

        let mut altered = trace.clone();
        altered.entries[1].args = Some(json!({"job_id": "job-999"}));
        assert_eq!(verify(&altered, Some(&seal), &key), Err(Unverified::EntryChanged(2)));

        let mut reordered = trace.clone();
        reordered.entries.swap(0, 1);
        assert_eq!(verify(&reordered, Some(&seal), &key), Err(Unverified::EntryChanged(1)));

        let mut removed = trace.clone();
        removed.entries.pop();
        assert!(matches!(
            verify(&removed, Some(&seal), &key),
            Err(Unverified::Length { sealed: 2, entries: 1 })
        ));

        let mut appended = trace.clone();
        appended.entries.push(trace.entries[1].clone());
        assert!(matches!(verify(&appended, Some(&seal), &key), Err(Unverified::Length { .. })));

        // A forger who rewrites the chain to match still lacks the key.
        let mut rechained = signer(1).seal(&altered);
        rechained.signature = seal.signature.clone();
        assert_eq!(verify(&altered, Some(&rechained), &key), Err(Unverified::BadSignature));

        // A seal made with another key, relabelled with the trusted key.
        let mut relabelled = signer(2).seal(&trace);
        relabelled.public_key = key.to_hex();
        assert_eq!(verify(&trace, Some(&relabelled), &key), Err(Unverified::BadSignature));

        let mut wrong_algorithm = seal.clone();
        wrong_algorithm.algorithm = "none".into();
        assert!(matches!(verify(&trace, Some(&wrong_algorithm), &key), Err(Unverified::Malformed(_))));
        let mut short_signature = seal;
        short_signature.signature.truncate(10);
        assert!(matches!(verify(&trace, Some(&short_signature), &key), Err(Unverified::Malformed(_))));
    }

    #[test]
    fn public_keys_round_trip_through_hex() {
        let key = signer(7).public_key();
        assert_eq!(PublicKey::parse_hex(&key.to_hex()), Some(key));
        assert_eq!(PublicKey::parse_hex(&format!(" {}\n", key.to_hex().to_uppercase())), Some(key));
        for bad in ["", "zz", &key.to_hex()[..62], &format!("{}00", key.to_hex())] {
            assert_eq!(PublicKey::parse_hex(bad), None, "{bad}");
        }
        assert!(!format!("{:?}", signer(7)).contains(&hex(&[7u8; 32])), "Debug never shows the secret");
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
        assert!(error.contains("0600"), "{error}");
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
