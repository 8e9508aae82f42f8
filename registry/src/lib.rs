//! Plugins from OCI registries, pinned by digest and verified by signature.
//!
//! - [`reference`]: `oci://host[:port]/repo:tag` and `…@sha256:…`.
//! - [`manifest`]: the OCI manifest of a component (the CNCF Wasm artifact
//!   layout) and the bounds on what is read.
//! - [`store`]: `plugins.lock` and the content-addressed store beside it;
//!   [`store::Store::verify`] is the offline check the host runs on every
//!   load, before anything is compiled.
//! - [`keys`], [`cosign`]: ECDSA P-256 and Ed25519 keys and the cosign
//!   signature format (a simple-signing payload in a `sha256-<hex>.sig`
//!   manifest), so cosign verifies what `harmonia plugin sign` signs and
//!   the host verifies what `cosign sign --key` signs.
//! - [`trusted_root`], [`rekor`], [`identity`], [`keyless`]: keyless
//!   (Fulcio) cosign signatures, verified offline: Sigstore's
//!   `trusted_root.json`, the Rekor bundle (its signed entry timestamp
//!   and the entry binding it to the signature), the certificate's
//!   subject and OIDC issuer, and the whole check (chain to a trusted CA
//!   at the log's time, then the signature with the certificate's key).
//! - [`trust`]: `[plugins.trust]`, which keys and keyless identities may
//!   sign which plugin.
//! - [`declared`]: a lock entry's name is the tool its component
//!   declares (trust rules are looked up by that name).
//! - [`signature_layers`]: which layers of a signature manifest a pull
//!   reads: malformed ones skipped, never fatal, the work bounded.
//! - `oci` (feature `oci`): push, pull and sign against a registry, through
//!   the `oci-client` crate, with credentials from the Docker config file,
//!   a deadline on every registry wait and bounded downloads.
//! - `download` (feature `oci`): a pull's reads, bounded while the bytes
//!   arrive and never redirected off the registry unless allowed.
//! - `challenge` (feature `oci`): where the registry's authentication
//!   challenge would send the credentials; never over plain HTTP to
//!   another host.

#[cfg(feature = "oci")]
pub mod challenge;
pub mod cosign;
pub mod declared;
pub mod digest;
#[cfg(feature = "oci")]
pub mod download;
pub mod identity;
pub mod keyless;
pub mod keys;
pub mod manifest;
#[cfg(feature = "oci")]
pub mod oci;
pub mod reference;
pub mod rekor;
pub mod signature_layers;
pub mod store;
pub mod trust;
pub mod trusted_root;

pub use digest::Digest;
pub use reference::OciReference;
pub use store::{LockEntry, LockFile, Store, VerifiedComponent};
pub use trust::{TrustConfig, TrustPolicy};

use std::path::{Path, PathBuf};

/// Everything that can go wrong, each naming what it is about. No variant
/// ever holds a credential.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Not a `sha256:<64 hex>` digest.
    #[error("`{0}` is not a sha256 digest (sha256: and 64 lowercase hex digits)")]
    BadDigest(String),
    /// Not a plugin reference.
    #[error("`{reference}` is not a plugin reference: {reason}")]
    BadReference {
        /// The text.
        reference: String,
        /// Why.
        reason: String,
    },
    /// A key file is missing or malformed.
    #[error("key {path}: {message}")]
    Key {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The trust policy is inconsistent (e.g. an identity without a trust
    /// root); the message names the key to fix.
    #[error("plugins.trust: {0}")]
    Trust(String),
    /// The Sigstore trust root file is missing or malformed.
    #[error("trusted root {path}: {message}")]
    TrustedRoot {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The lock file (or a stored signature file) is malformed.
    #[error("{path}: {message}")]
    BadLock {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// More bytes than allowed.
    #[error("{what} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// What.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A stored blob's bytes are not those of its digest.
    #[error("{path} was changed after it was pulled: its sha256 is {actual}, not {expected}")]
    Tampered {
        /// The file.
        path: PathBuf,
        /// Its name's digest.
        expected: Digest,
        /// Its bytes' digest.
        actual: Digest,
    },
    /// Not a plugin manifest.
    #[error("invalid manifest: {0}")]
    BadManifest(String),
    /// Bytes or a layer that do not match the digest they were named by.
    #[error("{what} does not match its digest: expected {expected}, got {actual}")]
    LayerMismatch {
        /// What.
        what: String,
        /// The digest it was named by.
        expected: Digest,
        /// What it is.
        actual: Digest,
    },
    /// The trust policy refused the component.
    #[error("plugin `{name}` ({digest}) refused: {reason}")]
    Refused {
        /// The plugin.
        name: String,
        /// Its manifest digest.
        digest: Digest,
        /// Why.
        reason: cosign::Refusal,
    },
    /// A locked tag now names another manifest.
    #[error(
        "`{reference}` is locked at {locked}, but the registry now resolves it to {now}: the tag moved; \
         pull with --update to accept the new digest"
    )]
    TagMoved {
        /// The reference.
        reference: String,
        /// The locked digest.
        locked: Digest,
        /// The registry's answer now.
        now: Digest,
    },
    /// The registry did not answer in time.
    #[error("the registry did not answer within {seconds} s while {what}")]
    Deadline {
        /// What was awaited.
        what: String,
        /// The deadline.
        seconds: u64,
    },
    /// The registry answered with an error, or could not be reached.
    #[error("registry error while {what}: {message}")]
    Registry {
        /// What was being done.
        what: String,
        /// The client's message (never a credential).
        message: String,
    },
    /// The registry redirected a read to a host other than itself that is
    /// not allowed: nothing was sent there.
    #[error(
        "the registry redirected {what}: refused, {reason} (a host serving the registry's blobs may be allowed in [plugins] redirect_hosts)"
    )]
    Redirect {
        /// What was being read.
        what: String,
        /// Where it was sent, or why it was not followed.
        reason: String,
    },
    /// The reference names nothing in the registry.
    #[error("{0} was not found in the registry")]
    NotFound(String),
    /// The plugin is not locked.
    #[error("no plugin named `{0}` in the lock file")]
    NotLocked(String),
    /// A lock entry's name is not the tool its component declares (see
    /// [`declared`]).
    #[error(
        "plugin `{locked}` ({reference}) declares the tool `{declared}`: a lock entry's name must be the tool its \
         component declares, since trust rules (plugins.trust.plugins.NAME) are looked up by that name; {fix}"
    )]
    NotTheDeclaredTool {
        /// The name it is (or would be) locked under.
        locked: String,
        /// The tool its descriptor declares.
        declared: String,
        /// The reference it was pulled by.
        reference: String,
        /// What to do.
        fix: String,
    },
    /// The component does not say which tool it is.
    #[error("{reference}: its component declares no tool: {reason}")]
    Undescribed {
        /// The reference.
        reference: String,
        /// Why (the host's load error).
        reason: String,
    },
}

impl RegistryError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_owned(), source }
    }
}
