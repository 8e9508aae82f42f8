//! Static bearer tokens, stored only as SHA-256 hashes.
//!
//! The store is a TOML file of `[[token]]` tables (`id`, `sha256`,
//! `workspace`, `tools`, `created`), written by `harmonia serve token
//! add|revoke` with mode 0600. The token itself is printed once when made
//! and never stored or logged. Each token is bound to exactly one
//! workspace and one allow-list.
//!
//! The running server re-reads the file when its size, modification or
//! change time, inode or mode changes, so a revocation (or a `chmod`)
//! takes effect on the next request. A file that can no longer be read or
//! parsed fails closed: no token is accepted until it is fixed. A file
//! whose owner may not read it (no `u+r`) counts as unreadable even for
//! root, who could still open it: the operator took the store away.

use super::{AuthError, Principal};
use crate::config::Rate;
use harmonia_contract::digest::{hex, sha256_hex};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One stored token: its hash and what it grants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    /// Public id, for listing and revoking.
    pub id: String,
    /// Lowercase hex SHA-256 of the token.
    pub sha256: String,
    /// The workspace the token acts for.
    pub workspace: String,
    /// The tools it may list and call.
    pub tools: Vec<String>,
    /// When it was made (RFC 3339).
    pub created: String,
    /// This token's own rate limit, replacing `[rate_limits]`'s
    /// per-credential bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<Rate>,
}

/// The token file's contents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// The tokens.
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenRecord>,
}

/// Why the token file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// Reading or writing failed.
    #[error("token file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The TOML is malformed.
    #[error("token file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A value breaks its rule.
    #[error("{0}")]
    Invalid(String),
    /// No randomness available.
    #[error("cannot make a token: {0}")]
    Random(String),
}

/// Longest workspace id a token may name.
const MAX_WORKSPACE_CHARS: usize = 200;

impl TokenFile {
    /// Read `path`; a missing file is an empty store.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        #[cfg(unix)]
        if let Ok(metadata) = std::fs::metadata(path)
            && std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o400 == 0
        {
            return Err(TokenFileError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "its owner may not read it",
                ),
            });
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(TokenFileError::Io { path: path.to_owned(), source }),
        };
        let file: Self = toml::from_str(&text).map_err(|error| TokenFileError::Parse {
            path: path.to_owned(),
            message: error.message().to_owned(),
        })?;
        for record in &file.tokens {
            if let Some(problem) = record.rate_limit.as_ref().and_then(Rate::problem) {
                return Err(TokenFileError::Invalid(format!("token `{}`: rate_limit: {problem}", record.id)));
            }
            if record.sha256.len() != 64 || !record.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(TokenFileError::Invalid(format!(
                    "token `{}`: sha256 must be 64 hex digits",
                    record.id
                )));
            }
        }
        Ok(file)
    }

    /// Write to `path` atomically, readable by its owner only.
    pub fn save(&self, path: &Path) -> Result<(), TokenFileError> {
        let io = |source| TokenFileError::Io { path: path.to_owned(), source };
        let text = format!(
            "# harmonia serve tokens: SHA-256 hashes only (harmonia serve token add|list|revoke)\n{}",
            toml::to_string(self).map_err(|error| TokenFileError::Invalid(error.to_string()))?
        );
        let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let temporary = dir.join(format!(
            ".{}.{}.tmp",
            path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default(),
            std::process::id()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary).map_err(io)?;
        file.write_all(text.as_bytes()).and_then(|()| file.sync_all()).map_err(io)?;
        drop(file);
        std::fs::rename(&temporary, path).map_err(io)
    }

    /// Make a token for `workspace` allowing `tools`; returns the token
    /// text (shown once) and stores only its hash.
    pub fn add(
        &mut self,
        workspace: &str,
        tools: Vec<String>,
    ) -> Result<(String, TokenRecord), TokenFileError> {
        self.add_with_rate(workspace, tools, None)
    }

    /// [`TokenFile::add`], the token limited to its own `rate` when given
    /// (instead of `[rate_limits]`).
    pub fn add_with_rate(
        &mut self,
        workspace: &str,
        tools: Vec<String>,
        rate: Option<Rate>,
    ) -> Result<(String, TokenRecord), TokenFileError> {
        if let Some(problem) = rate.as_ref().and_then(Rate::problem) {
            return Err(TokenFileError::Invalid(format!("rate limit: {problem}")));
        }
        let workspace = workspace.trim();
        if workspace.is_empty() || workspace.chars().count() > MAX_WORKSPACE_CHARS {
            return Err(TokenFileError::Invalid(format!(
                "the workspace must be 1 to {MAX_WORKSPACE_CHARS} characters"
            )));
        }
        if tools.is_empty() {
            return Err(TokenFileError::Invalid("a token must allow at least one tool".into()));
        }
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|error| TokenFileError::Random(error.to_string()))?;
        let mut id = [0u8; 6];
        getrandom::fill(&mut id).map_err(|error| TokenFileError::Random(error.to_string()))?;
        let token = format!("hmt_{}", hex(&secret));
        let record = TokenRecord {
            id: format!("tok_{}", hex(&id)),
            sha256: sha256_hex(token.as_bytes()),
            workspace: workspace.to_owned(),
            tools,
            created: harmonia_contract::time::now_rfc3339(),
            rate_limit: rate,
        };
        self.tokens.push(record.clone());
        Ok((token, record))
    }

    /// Remove the token `id`; false when there is none.
    pub fn revoke(&mut self, id: &str) -> bool {
        let before = self.tokens.len();
        self.tokens.retain(|record| record.id != id);
        self.tokens.len() != before
    }
}

/// What identifies one version of the file on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// The inode's change time and mode: a `chmod` changes only these.
    changed: (i64, i64),
    mode: u32,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (inode, changed, mode) = {
        use std::os::unix::fs::MetadataExt;
        (metadata.ino(), (metadata.ctime(), metadata.ctime_nsec()), metadata.mode())
    };
    #[cfg(not(unix))]
    let (inode, changed, mode) = (0, (0, 0), 0);
    Some(Stamp { len: metadata.len(), modified: metadata.modified().ok(), changed, mode, inode })
}

struct Loaded {
    stamp: Option<Stamp>,
    by_hash: HashMap<String, TokenRecord>,
}

/// The token file as the server checks it, re-read when it changes.
pub struct TokenStore {
    path: PathBuf,
    loaded: Mutex<Loaded>,
}

impl TokenStore {
    /// Open the store at `path`; it must be readable now.
    pub fn open(path: &Path) -> Result<Self, TokenFileError> {
        let file = TokenFile::load(path)?;
        Ok(Self {
            path: path.to_owned(),
            loaded: Mutex::new(Loaded { stamp: stamp(path), by_hash: index(file) }),
        })
    }

    /// The principal for `token`, if a stored hash matches.
    pub fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let hash = sha256_hex(token.as_bytes());
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = stamp(&self.path);
        if now != loaded.stamp {
            loaded.stamp = now;
            loaded.by_hash = match TokenFile::load(&self.path) {
                Ok(file) => index(file),
                Err(error) => {
                    tracing::error!(error = %error, "token file unusable; refusing every static token");
                    HashMap::new()
                }
            };
        }
        let record = loaded.by_hash.get(&hash).ok_or(AuthError::UnknownToken)?;
        Ok(Principal {
            id: format!("token:{}", record.id),
            workspace: Some(record.workspace.clone()),
            allow: record.tools.iter().cloned().collect(),
            rate: record.rate_limit,
        })
    }
}

fn index(file: TokenFile) -> HashMap<String, TokenRecord> {
    file.tokens.into_iter().map(|record| (record.sha256.to_ascii_lowercase(), record)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_stored_only_as_its_hash_and_revocation_is_seen_by_the_running_store() {
        let dir = std::env::temp_dir().join(format!("harmonia-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.toml");
        let mut file = TokenFile::default();
        let (token, record) = file.add("ws_demo", vec!["get_job_status".into()]).unwrap();
        file.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&token), "the token itself must never be stored");
        assert!(text.contains(&record.sha256));
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o777,
            0o600
        );
        let store = TokenStore::open(&path).unwrap();
        let principal = store.verify(&token).unwrap();
        assert_eq!(principal.workspace.as_deref(), Some("ws_demo"));
        assert!(principal.allows("get_job_status") && !principal.allows("get_operator_feed"));
        assert_eq!(store.verify("hmt_wrong"), Err(AuthError::UnknownToken));
        let mut file = TokenFile::load(&path).unwrap();
        assert!(file.revoke(&record.id));
        // A different length guarantees the stamp changes within one mtime tick.
        file.add("ws_other", vec!["get_job_status".into()]).unwrap();
        file.save(&path).unwrap();
        assert_eq!(store.verify(&token), Err(AuthError::UnknownToken));
        std::fs::write(&path, "not toml [").unwrap();
        let (fresh, _) = TokenFile::default().add("ws_demo", vec!["x".into()]).unwrap();
        assert_eq!(store.verify(&fresh), Err(AuthError::UnknownToken), "an unreadable store fails closed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_its_owner_may_not_read_refuses_every_token_until_readable_again() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("harmonia-tokens-chmod-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.toml");
        let mut file = TokenFile::default();
        let (token, _) = file.add("ws_demo", vec!["get_job_status".into()]).unwrap();
        file.save(&path).unwrap();
        let store = TokenStore::open(&path).unwrap();
        assert!(store.verify(&token).is_ok());
        // Only the mode and the change time move: no write, same length.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        assert_eq!(store.verify(&token), Err(AuthError::UnknownToken), "chmod 000 refuses every token");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(store.verify(&token).is_ok(), "readable again, the tokens are back");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_token_needs_a_workspace_and_a_tool() {
        let mut file = TokenFile::default();
        assert!(file.add("  ", vec!["t".into()]).is_err());
        assert!(file.add("ws", vec![]).is_err());
        let zero = Rate { calls_per_second: 0.0, burst: 5 };
        assert!(file.add_with_rate("ws", vec!["t".into()], Some(zero)).is_err(), "a rate must be usable");
        let rate = Rate { calls_per_second: 2.5, burst: 5 };
        let (_, record) = file.add_with_rate("ws", vec!["t".into()], Some(rate)).unwrap();
        assert_eq!(record.rate_limit, Some(rate));
    }
}
