//! Push, pull and sign against an OCI registry, through `oci-client`.
//!
//! - Credentials come from the Docker config file (`$DOCKER_CONFIG` or
//!   `~/.docker/config.json`, credential helpers included) for the
//!   reference's registry; they are handed to the client for its token
//!   exchange, sent (as its token, or as basic credentials) to the
//!   registry alone, and never formatted into a message or a log record.
//! - Every registry wait has a deadline ([`Options::deadline`]); a stalled
//!   registry ends the command with [`RegistryError::Deadline`].
//! - A manifest is refused past [`MAX_MANIFEST_BYTES`] as it arrives (at
//!   its `Content-Length`, else at the first chunk past it), a component
//!   past [`Options::max_component_bytes`] as its manifest declares it
//!   and as it arrives (a download is cut at the declared size), a
//!   signature payload past [`cosign::MAX_PAYLOAD_BYTES`]. The reads go
//!   through [`crate::download`], which also refuses a redirect to any
//!   host but the registry's and [`Options::redirect_hosts`].
//! - Every byte is checked against the digest it was asked for, here and
//!   not only by the client; layers with external `urls` are refused.
//! - Plain HTTP is used only for a loopback registry: an IP literal in
//!   127.0.0.0/8, `[::1]`, or `localhost`
//!   ([`crate::reference::is_loopback_host`]; `127.evil.example` is not
//!   one); every other host is reached over HTTPS, by the client and by
//!   the reader, which refuses plain HTTP to anything else, so the
//!   credentials a read or a push carries never travel in the clear; nor
//!   does the token exchange send them to a plain-HTTP realm on another
//!   host ([`crate::challenge`]).

use crate::RegistryError;
use crate::challenge;
use crate::cosign::{self, StoredSignature};
use crate::declared::{self, Describe, NameCheck};
use crate::digest::Digest;
use crate::download::{Body, Reader};
use crate::keys::PrivateKey;
use crate::manifest::{self, Descriptor, MAX_MANIFEST_BYTES, Manifest, OCI_MANIFEST_MEDIA_TYPE};
use crate::reference::OciReference;
use crate::signature_layers;
use crate::store::{LockEntry, LockFile, Store, check_signatures};
use crate::trust::TrustPolicy;
use base64::Engine as _;
use http::HeaderValue;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Reference, RegistryOperation};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

/// Bounds on a registry conversation.
#[derive(Clone, Debug)]
pub struct Options {
    /// Deadline of each registry wait (a request, a download).
    pub deadline: Duration,
    /// Largest component accepted.
    pub max_component_bytes: u64,
    /// Hosts (`host` or `host:port`) besides the registry's own that a
    /// registry may redirect a read to, e.g. the object storage its blobs
    /// are served from; over HTTPS only (default: none).
    pub redirect_hosts: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(30),
            max_component_bytes: crate::store::MAX_COMPONENT_BYTES,
            redirect_hosts: Vec::new(),
        }
    }
}

/// A client for one registry.
pub struct Client {
    client: oci_client::Client,
    /// A pull's reads: bounded, redirects checked.
    reader: Reader,
    auth: RegistryAuth,
    /// The `Authorization` each repository's reads carry (none: anonymous),
    /// from the client's token exchange, asked once per repository.
    authorizations: tokio::sync::Mutex<HashMap<String, Option<HeaderValue>>>,
    options: Options,
}

/// The Docker config's credentials for `registry`, anonymous when there
/// are none (a config that cannot be read is treated as none: the error
/// could quote it).
fn credentials(registry: &str) -> RegistryAuth {
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(docker_credential::DockerCredential::IdentityToken(token)) => RegistryAuth::Bearer(token),
        Err(_) => RegistryAuth::Anonymous,
    }
}

/// The message of `error` and its sources, one line.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

fn not_found(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|error| {
            matches!(
                error.code,
                OciErrorCode::ManifestUnknown
                    | OciErrorCode::NameUnknown
                    | OciErrorCode::NotFound
                    | OciErrorCode::BlobUnknown
            )
        }),
        _ => false,
    }
}

impl Client {
    /// A client for `reference`'s registry.
    pub fn new(reference: &OciReference, options: Options) -> Result<Self, RegistryError> {
        // reqwest is built without a default TLS provider in this workspace.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let protocol = if reference.is_loopback() {
            ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            platform_resolver: None,
            // A backstop only: the deadline around every wait ends it first.
            read_timeout: Some(options.deadline + Duration::from_secs(2)),
            connect_timeout: Some(options.deadline.min(Duration::from_secs(10))),
            user_agent: concat!("harmonia/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        };
        let client = oci_client::Client::try_from(config).map_err(|error| RegistryError::Registry {
            what: "starting the registry client".into(),
            message: chain(&error),
        })?;
        for host in &options.redirect_hosts {
            crate::reference::check_host(host).map_err(|reason| RegistryError::BadReference {
                reference: host.clone(),
                reason: format!("not a redirect host: {reason}"),
            })?;
        }
        let registry = Self::oci_reference(reference).resolve_registry().to_owned();
        let scheme = if reference.is_loopback() { "http" } else { "https" };
        let reader = Reader::new(&registry, scheme, &options.redirect_hosts, options.deadline)?;
        Ok(Self {
            client,
            reader,
            auth: credentials(&reference.registry),
            authorizations: tokio::sync::Mutex::default(),
            options,
        })
    }

    /// The `Authorization` header `target`'s repository is read with: the
    /// token the client's exchange got, else the Docker config's basic
    /// credentials, else none. Marked sensitive, so it is never printed.
    async fn authorization(&self, target: &Reference) -> Result<Option<HeaderValue>, RegistryError> {
        let mut known = self.authorizations.lock().await;
        if let Some(header) = known.get(target.repository()) {
            return Ok(header.clone());
        }
        self.check_challenge(target.registry()).await?;
        let token = self
            .within(|| format!("authenticating to {}", target.registry()), async {
                self.client.auth(target, &self.auth, RegistryOperation::Pull).await
            })
            .await?;
        let text = match (token, &self.auth) {
            (Some(token), _) => Some(format!("Bearer {token}")),
            (None, RegistryAuth::Basic(user, password)) => {
                let pair = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                Some(format!("Basic {pair}"))
            }
            (None, _) => None,
        };
        let header = text
            .map(|text| {
                let mut header = HeaderValue::from_str(&text).map_err(|_| RegistryError::Registry {
                    what: format!("authenticating to {}", target.registry()),
                    message: "the credential is not a valid HTTP header value".into(),
                })?;
                header.set_sensitive(true);
                Ok::<_, RegistryError>(header)
            })
            .transpose()?;
        known.insert(target.repository().to_owned(), header.clone());
        Ok(header)
    }

    /// `GET /v2/{path}` of `target`'s registry within the deadline, its
    /// body refused past `limit` bytes as it arrives.
    async fn read(
        &self,
        target: &Reference,
        what: &str,
        path: &str,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Body, RegistryError> {
        let authorization = self.authorization(target).await?;
        let read = self.reader.get(what, path, accept, authorization.as_ref(), limit);
        match tokio::time::timeout(self.options.deadline, read).await {
            Ok(body) => body,
            Err(_) => Err(RegistryError::Deadline {
                what: what.to_owned(),
                seconds: self.options.deadline.as_secs(),
            }),
        }
    }

    async fn within<T>(
        &self,
        what: impl Fn() -> String,
        work: impl Future<Output = Result<T, OciDistributionError>>,
    ) -> Result<T, RegistryError> {
        match tokio::time::timeout(self.options.deadline, work).await {
            Err(_) => Err(RegistryError::Deadline { what: what(), seconds: self.options.deadline.as_secs() }),
            Ok(Err(error)) if not_found(&error) => Err(RegistryError::NotFound(what())),
            Ok(Err(error)) => Err(RegistryError::Registry { what: what(), message: chain(&error) }),
            Ok(Ok(value)) => Ok(value),
        }
    }

    fn oci_reference(reference: &OciReference) -> Reference {
        match (&reference.digest, &reference.tag) {
            (Some(digest), _) => Reference::with_digest(
                reference.registry.clone(),
                reference.repository.clone(),
                digest.to_string(),
            ),
            (None, tag) => Reference::with_tag(
                reference.registry.clone(),
                reference.repository.clone(),
                tag.clone().unwrap_or_default(),
            ),
        }
    }

    /// Refuse the client's token exchange when the registry's challenge
    /// would send the credentials over plain HTTP to a host that is not
    /// loopback ([`challenge`]); without credentials nothing is at stake.
    async fn check_challenge(&self, registry: &str) -> Result<(), RegistryError> {
        if !matches!(self.auth, RegistryAuth::Basic(..)) {
            return Ok(());
        }
        let what = format!("authenticating to {registry}");
        let answered = match tokio::time::timeout(self.options.deadline, self.reader.challenge(&what)).await {
            Ok(answered) => answered?,
            Err(_) => return Err(RegistryError::Deadline { what, seconds: self.options.deadline.as_secs() }),
        };
        match answered.as_deref().and_then(challenge::plain_http_realm) {
            Some(realm) => Err(RegistryError::Registry {
                what,
                message: format!(
                    "its token service {realm} is plain HTTP: the Docker config's credentials go only over HTTPS, \
                     or to a loopback address; nothing was sent"
                ),
            }),
            None => Ok(()),
        }
    }

    async fn authenticate(
        &self,
        reference: &Reference,
        operation: RegistryOperation,
    ) -> Result<(), RegistryError> {
        self.check_challenge(reference.registry()).await?;
        self.within(|| format!("authenticating to {}", reference.registry()), async {
            self.client.auth(reference, &self.auth, operation).await.map(|_| ())
        })
        .await
    }

    /// Push `component` as `reference` (which names a tag): its config and
    /// layer blobs, then its manifest. Returns the manifest digest.
    pub async fn push(&self, reference: &OciReference, component: &[u8]) -> Result<Digest, RegistryError> {
        if reference.tag.is_none() || reference.digest.is_some() {
            return Err(RegistryError::BadReference {
                reference: reference.to_string(),
                reason: "push to a tag (oci://host/repo:tag); the digest is the registry's answer".into(),
            });
        }
        let target = Self::oci_reference(reference);
        self.authenticate(&target, RegistryOperation::Push).await?;
        let config = manifest::wasm_config(component);
        let manifest = Manifest::for_component(&config, component);
        self.push_manifest(&target, &manifest, &[&config, component]).await
    }

    async fn push_manifest(
        &self,
        target: &Reference,
        manifest: &Manifest,
        blobs: &[&[u8]],
    ) -> Result<Digest, RegistryError> {
        for blob in blobs {
            let digest = Digest::of(blob);
            self.within(
                || format!("pushing blob {digest}"),
                self.client.push_blob(target, blob.to_vec(), digest.as_str()),
            )
            .await?;
        }
        let bytes = manifest.to_bytes();
        let content_type = http_header(OCI_MANIFEST_MEDIA_TYPE);
        self.within(
            || format!("pushing the manifest of {target}"),
            self.client.push_manifest_raw(target, bytes.clone(), content_type),
        )
        .await?;
        Ok(Digest::of(&bytes))
    }

    /// The manifest `reference` names now, bounded and checked: its digest
    /// (the tag resolved once) and bytes.
    pub async fn resolve(&self, reference: &OciReference) -> Result<(Digest, Vec<u8>), RegistryError> {
        let target = Self::oci_reference(reference);
        let named = match (&reference.digest, &reference.tag) {
            (Some(digest), _) => digest.to_string(),
            (None, tag) => tag.clone().unwrap_or_default(),
        };
        let path = format!("{}/manifests/{named}", target.repository());
        let what = format!("the manifest of {reference}");
        let body =
            self.read(&target, &what, &path, Some(OCI_MANIFEST_MEDIA_TYPE), MAX_MANIFEST_BYTES).await?;
        let bytes = body.bytes;
        let digest = Digest::of(&bytes);
        // The registry's word for a tag's digest, when it gives one: it
        // must be the bytes'.
        let answered = body.headers.get("docker-content-digest").and_then(|value| value.to_str().ok());
        let claimed = match (&reference.digest, answered) {
            (Some(named), _) => named.clone(),
            (None, Some(answered)) => Digest::parse(answered)?,
            (None, None) => digest.clone(),
        };
        if claimed != digest {
            return Err(RegistryError::LayerMismatch {
                what: format!("the manifest of {reference}"),
                expected: claimed,
                actual: digest,
            });
        }
        Ok((digest, bytes))
    }

    /// Download blob `digest` of `reference`'s repository, refusing it when
    /// its declared `size` passes `limit` or more bytes than declared
    /// arrive, and checking the bytes against `digest`.
    async fn blob(
        &self,
        reference: &OciReference,
        digest: &Digest,
        size: u64,
        limit: u64,
    ) -> Result<Vec<u8>, RegistryError> {
        let what = || format!("blob {digest} of {reference}");
        if size > limit {
            return Err(RegistryError::TooLarge {
                what: format!("{} ({size} bytes declared)", what()),
                limit,
            });
        }
        let target = Self::oci_reference(&reference.at_digest(digest));
        let path = format!("{}/blobs/{digest}", target.repository());
        let bytes = match self.read(&target, &format!("downloading {}", what()), &path, None, size).await {
            Err(RegistryError::TooLarge { .. }) => {
                return Err(RegistryError::TooLarge {
                    what: format!("{} (more bytes than its declared {size})", what()),
                    limit: size,
                });
            }
            other => other?.bytes,
        };
        let actual = Digest::of(&bytes);
        if &actual != digest {
            return Err(RegistryError::LayerMismatch { what: what(), expected: digest.clone(), actual });
        }
        Ok(bytes)
    }

    /// The cosign signatures attached to manifest `digest` (none when
    /// there is no signature manifest). A layer that is malformed, or
    /// whose payload cannot be read, is skipped with a warning naming it;
    /// at most [`signature_layers::MAX_SIGNATURE_LAYERS`] are read, all
    /// within one deadline (see [`signature_layers`]).
    pub async fn signatures(
        &self,
        reference: &OciReference,
        digest: &Digest,
    ) -> Result<Vec<StoredSignature>, RegistryError> {
        let tag = cosign::signature_tag(digest);
        let signature_reference = OciReference { tag: Some(tag.clone()), digest: None, ..reference.clone() };
        let (_, bytes) = match self.resolve(&signature_reference).await {
            Ok(found) => found,
            Err(RegistryError::NotFound(_)) => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        let examined = signature_layers::examined(&bytes)?;
        for skipped in &examined.skipped {
            tracing::warn!("signature manifest {tag} of {reference}: {skipped}: skipped");
        }
        if examined.more_skipped > 0 {
            tracing::warn!(
                "signature manifest {tag} of {reference}: {} more layers skipped",
                examined.more_skipped
            );
        }
        if examined.left_out > 0 {
            tracing::warn!(
                "signature manifest {tag} of {reference}: {} signature layers past the first {} not examined",
                examined.left_out,
                signature_layers::MAX_SIGNATURE_LAYERS
            );
        }
        let until = tokio::time::Instant::now() + self.options.deadline;
        let mut signatures = Vec::new();
        for layer in &examined.layers {
            let read = self.blob(reference, &layer.payload, layer.size, cosign::MAX_PAYLOAD_BYTES);
            match tokio::time::timeout_at(until, read).await {
                Ok(Ok(payload)) => {
                    signatures.extend(StoredSignature::from_annotations(&payload, &layer.annotations))
                }
                Ok(Err(error)) => {
                    tracing::warn!(
                        "signature manifest {tag} of {reference}: layer {}: {error}: skipped",
                        layer.position
                    );
                }
                Err(_) => {
                    tracing::warn!(
                        "signature manifest {tag} of {reference}: its payloads were not all read within {} s: \
                         layers from {} on not examined",
                        self.options.deadline.as_secs(),
                        layer.position
                    );
                    break;
                }
            }
        }
        Ok(signatures)
    }

    /// Sign the manifest `reference` resolves to with `key`, as `cosign
    /// sign --key` does: a simple-signing payload layer added to the
    /// `sha256-<hex>.sig` manifest. Returns the signed digest.
    pub async fn sign(&self, reference: &OciReference, key: &PrivateKey) -> Result<Digest, RegistryError> {
        let (digest, _) = self.resolve(reference).await?;
        let payload = cosign::payload(&reference.repository_path(), &digest);
        let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&payload));
        self.attach(reference, &digest, &payload, &signature).await?;
        Ok(digest)
    }

    /// Attach a signature made elsewhere (`payload` and the base64
    /// `signature`) to manifest `digest`, as `cosign attach signature`
    /// does. Nothing is checked here: verification is the reader's.
    pub async fn attach(
        &self,
        reference: &OciReference,
        digest: &Digest,
        payload: &[u8],
        signature: &str,
    ) -> Result<(), RegistryError> {
        self.attach_signature(reference, digest, &StoredSignature::new(payload, signature)).await
    }

    /// Attach `signature` (a key signature, or a keyless one with its
    /// certificate, chain and Rekor bundle) to manifest `digest` as cosign
    /// does: one more simple-signing layer of the `sha256-<hex>.sig`
    /// manifest, the parts in the layer's annotations. Nothing is checked
    /// here: verification is the reader's.
    pub async fn attach_signature(
        &self,
        reference: &OciReference,
        digest: &Digest,
        signature: &StoredSignature,
    ) -> Result<(), RegistryError> {
        let payload =
            base64::engine::general_purpose::STANDARD.decode(&signature.payload).map_err(|error| {
                RegistryError::BadManifest(format!("a signature payload that is not base64: {error}"))
            })?;
        let payload = payload.as_slice();
        let signature_reference =
            OciReference { tag: Some(cosign::signature_tag(digest)), digest: None, ..reference.clone() };
        let mut layers = match self.resolve(&signature_reference).await {
            Ok((_, bytes)) => Manifest::parse(&bytes)?.layers,
            Err(RegistryError::NotFound(_)) => Vec::new(),
            Err(error) => return Err(error),
        };
        let mut layer = Descriptor::of(cosign::SIMPLE_SIGNING_MEDIA_TYPE, payload);
        layer.annotations = Some(signature.annotations());
        if layers.contains(&layer) {
            return Ok(());
        }
        layers.push(layer);
        let diff_ids: Vec<&str> = layers.iter().map(|layer| layer.digest.as_str()).collect();
        let config = serde_json::to_vec(&serde_json::json!({
            "architecture": "", "config": {}, "created": "0001-01-01T00:00:00Z",
            "history": [{"created": "0001-01-01T00:00:00Z"}], "os": "",
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }))
        .unwrap_or_default();
        let manifest = Manifest {
            schema_version: 2,
            media_type: Some(OCI_MANIFEST_MEDIA_TYPE.into()),
            artifact_type: None,
            config: Descriptor::of(manifest::OCI_CONFIG_MEDIA_TYPE, &config),
            layers,
        };
        let target = Self::oci_reference(&signature_reference);
        self.authenticate(&target, RegistryOperation::Push).await?;
        self.push_manifest(&target, &manifest, &[&config, payload]).await?;
        Ok(())
    }

    /// Pull `reference` into `store` as plugin `name` and lock it.
    ///
    /// A tag is resolved once; when the lock already holds this reference
    /// at another digest the pull is refused ([`RegistryError::TagMoved`])
    /// unless `update`. Signatures are checked against `policy` for `name`
    /// before the component is downloaded; once it is, `describe` says
    /// which tool it declares, and unless that is `name` the pull is
    /// refused ([`RegistryError::NotTheDeclaredTool`], see
    /// [`crate::declared`]), nothing stored or locked. A digest reference
    /// already in the store is verified there, without the network.
    pub async fn pull(
        &self,
        reference: &OciReference,
        name: &str,
        store: &Store,
        policy: &TrustPolicy,
        update: bool,
        describe: Describe<'_>,
    ) -> Result<LockEntry, RegistryError> {
        check_name(name)?;
        let lock_path = store.lock_path();
        let mut lock = LockFile::read(&lock_path)?;
        let text = reference.to_string();
        if let Some(digest) = &reference.digest
            && let Some(entry) = cached_entry(store, reference, digest, name)
            && let Ok(verified) = store.verify(&entry, policy, self.options.max_component_bytes)
        {
            let declared = declared::declared_by(describe, &text, &verified.bytes)?;
            declared::check(name, &text, &declared, NameCheck::Pull)?;
            lock.upsert(verified.entry.clone());
            lock.write(&lock_path)?;
            return Ok(verified.entry);
        }
        let (digest, manifest_bytes) = self.resolve(reference).await?;
        if let Some(old) = lock.get(name)
            && old.reference == reference.to_string()
            && old.manifest_digest != digest
            && !update
        {
            return Err(RegistryError::TagMoved {
                reference: reference.to_string(),
                locked: old.manifest_digest.clone(),
                now: digest,
            });
        }
        let (layer, size) = Manifest::parse(&manifest_bytes)?.component_layer()?;
        if size > self.options.max_component_bytes {
            return Err(RegistryError::TooLarge {
                what: format!("component {layer} of {reference} ({size} bytes declared)"),
                limit: self.options.max_component_bytes,
            });
        }
        let signatures = self.signatures(reference, &digest).await?;
        let signer = check_signatures(name, &reference.repository_path(), &signatures, &digest, policy)?;
        let component = self.blob(reference, &layer, size, self.options.max_component_bytes).await?;
        let declared = declared::declared_by(describe, &text, &component)?;
        declared::check(name, &text, &declared, NameCheck::Pull)?;
        store.write(&manifest_bytes)?;
        store.write(&component)?;
        store.write_signatures(&digest, &signatures)?;
        let entry = LockEntry {
            name: name.to_owned(),
            reference: reference.to_string(),
            manifest_digest: digest,
            layer_digest: layer,
            signer,
        };
        lock.upsert(entry.clone());
        lock.write(&lock_path)?;
        Ok(entry)
    }
}

/// The lock entry a digest reference would have when its manifest is
/// already stored.
fn cached_entry(store: &Store, reference: &OciReference, digest: &Digest, name: &str) -> Option<LockEntry> {
    let bytes = store.read(digest, MAX_MANIFEST_BYTES).ok()?;
    let (layer, _) = Manifest::parse(&bytes).ok()?.component_layer().ok()?;
    store.has(&layer).then(|| LockEntry {
        name: name.to_owned(),
        reference: reference.to_string(),
        manifest_digest: digest.clone(),
        layer_digest: layer,
        signer: None,
    })
}

/// A plugin name: lowercase letters, digits, `_` and `-`.
pub fn check_name(name: &str) -> Result<(), RegistryError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_-".contains(&byte));
    if ok {
        Ok(())
    } else {
        Err(RegistryError::BadReference {
            reference: name.to_owned(),
            reason: "a plugin name is 1 to 64 lowercase letters, digits, `_` or `-`".into(),
        })
    }
}

fn http_header(value: &'static str) -> http::HeaderValue {
    http::HeaderValue::from_static(value)
}
