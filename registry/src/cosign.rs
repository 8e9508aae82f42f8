//! The cosign signature format, as `cosign sign` writes it and
//! `cosign verify` reads it:
//!
//! - the payload is the "simple signing" JSON
//!   `{"critical":{"identity":{"docker-reference":REPO},"image":{"docker-manifest-digest":DIGEST},"type":"cosign container image signature"},"optional":null}`;
//! - it is a layer (media type [`SIMPLE_SIGNING_MEDIA_TYPE`]) of an OCI
//!   image manifest tagged `sha256-<hex>.sig` in the same repository, with
//!   the base64 signature in the layer's annotation [`SIGNATURE_ANNOTATION`];
//!   each further signature of the same digest is one more layer.
//!
//! Only what the signature covers is trusted: the payload is read after its
//! signature verified with a trusted key, or as a keyless signature by a
//! trusted identity ([`crate::keyless`]), and then its digest must be the
//! manifest digest being verified.
//!
//! A signature check is a pure function of the key, the payload and the
//! signature, so a process remembers the triples it saw verify (by their
//! SHA-256, at most [`REMEMBERED`]): a reload or a second host verifying
//! the same bytes pays a hash instead of an ECDSA verification. The bytes
//! themselves are read and hashed on every load; any changed byte of the
//! key, payload or signature is a new triple, checked afresh.

use crate::digest::Digest;
use crate::identity::Identity;
use crate::keyless::{self, KeylessRefusal, KeylessSignature};
use crate::keys::PublicKey;
use crate::trusted_root::TrustedRoot;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The media type of a simple-signing payload layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The `critical.type` of a cosign payload.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";
/// Largest payload read (a real one is a few hundred bytes).
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024;

/// The tag cosign attaches the signatures of `digest` under.
pub fn signature_tag(digest: &Digest) -> String {
    format!("sha256-{}.sig", digest.hex())
}

/// The payload that signs `digest` in `repository` (`host[:port]/path`).
pub fn payload(repository: &str, digest: &Digest) -> Vec<u8> {
    // Field order as cosign writes it; serde_json keeps it.
    let value = serde_json::json!({
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": digest.as_str()},
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    });
    serde_json::to_vec(&value).unwrap_or_default()
}

/// One signature as stored beside a pulled component (and as read from a
/// signature manifest's layer): the payload and the raw signature, both
/// base64, and for a keyless signature its certificate, chain and Rekor
/// bundle, as their annotations hold them (absent for a key signature, so
/// stores written before keyless signatures read unchanged).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredSignature {
    /// The payload bytes, base64.
    pub payload: String,
    /// The signature bytes, base64 (the annotation's value).
    pub signature: String,
    /// The Fulcio leaf certificate, PEM ([`keyless::CERTIFICATE_ANNOTATION`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// Its chain, PEM ([`keyless::CHAIN_ANNOTATION`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// The Rekor bundle, JSON ([`crate::rekor::BUNDLE_ANNOTATION`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
}

impl StoredSignature {
    /// From the payload bytes and the annotation's base64 text.
    pub fn new(payload: &[u8], signature_base64: &str) -> Self {
        Self {
            payload: base64::engine::general_purpose::STANDARD.encode(payload),
            signature: signature_base64.to_owned(),
            ..Self::default()
        }
    }

    /// From a signature layer's payload and annotations (a key or a
    /// keyless signature); `None` without a signature annotation.
    pub fn from_annotations(
        payload: &[u8],
        annotations: &std::collections::BTreeMap<String, String>,
    ) -> Option<Self> {
        let signature = annotations.get(SIGNATURE_ANNOTATION)?;
        Some(Self {
            certificate: annotations.get(keyless::CERTIFICATE_ANNOTATION).cloned(),
            chain: annotations.get(keyless::CHAIN_ANNOTATION).cloned(),
            bundle: annotations.get(crate::rekor::BUNDLE_ANNOTATION).cloned(),
            ..Self::new(payload, signature)
        })
    }

    /// The layer annotations that carry this signature, as cosign writes
    /// them.
    pub fn annotations(&self) -> std::collections::BTreeMap<String, String> {
        let mut annotations = std::collections::BTreeMap::new();
        annotations.insert(SIGNATURE_ANNOTATION.to_owned(), self.signature.clone());
        for (name, value) in [
            (keyless::CERTIFICATE_ANNOTATION, &self.certificate),
            (keyless::CHAIN_ANNOTATION, &self.chain),
            (crate::rekor::BUNDLE_ANNOTATION, &self.bundle),
        ] {
            if let Some(value) = value {
                annotations.insert(name.to_owned(), value.clone());
            }
        }
        annotations
    }
}

/// Who may sign, for one plugin: the keys and the keyless identities its
/// trust rule names, and the trust root keyless signatures are checked
/// against.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trusted<'a> {
    /// Trusted public keys.
    pub keys: &'a [PublicKey],
    /// Trusted keyless identities.
    pub identities: &'a [Identity],
    /// The Sigstore trust root (needed for any identity).
    pub root: Option<&'a TrustedRoot>,
}

/// Why no signature made a component trusted, most telling first.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A trusted key signed, but another digest.
    #[error("it is signed by trusted key {signer}, but over {signed}, not over {expected}")]
    OtherDigest {
        /// The trusted key.
        signer: String,
        /// What the payload names.
        signed: String,
        /// The manifest digest.
        expected: String,
    },
    /// Signatures exist, but none verifies with a trusted key.
    #[error("its {count} signature(s) verify with no key trusted for it")]
    UntrustedKey {
        /// How many signatures were tried.
        count: usize,
    },
    /// No signature at all.
    #[error("it is not signed")]
    Unsigned,
    /// No key and no identity is trusted for it, so no signature could be
    /// accepted.
    #[error("no key or identity is trusted for it (plugins.trust)")]
    NoTrustedKey,
    /// Its keyless signature does not count (the first one's reason, when
    /// no signature counted and none signed another digest).
    #[error("{0}")]
    Keyless(KeylessRefusal),
}

#[derive(Deserialize)]
struct Payload {
    critical: Critical,
}

#[derive(Deserialize)]
struct Critical {
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    digest: String,
}

/// The most verified triples a process remembers (then it forgets them all
/// and starts again).
pub const REMEMBERED: usize = 4096;

fn remembered() -> &'static std::sync::Mutex<std::collections::HashSet<[u8; 32]>> {
    static VERIFIED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<[u8; 32]>>> =
        std::sync::OnceLock::new();
    VERIFIED.get_or_init(Default::default)
}

/// Whether `signature` by `key` verifies over `payload`, remembered.
fn verifies(key: &PublicKey, payload: &[u8], signature: &[u8]) -> bool {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    for part in [key.fingerprint().as_bytes(), payload, signature] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    let triple: [u8; 32] = hasher.finalize().into();
    if remembered().lock().is_ok_and(|seen| seen.contains(&triple)) {
        return true;
    }
    let verified = key.verifies(payload, signature);
    if verified && let Ok(mut seen) = remembered().lock() {
        if seen.len() >= REMEMBERED {
            seen.clear();
        }
        seen.insert(triple);
    }
    verified
}

/// The fingerprint of the first trusted key whose signature covers
/// `digest`, or why there is none.
pub fn verify(
    signatures: &[StoredSignature],
    digest: &Digest,
    trusted: &[PublicKey],
) -> Result<String, Refusal> {
    verify_trusted(signatures, digest, &Trusted { keys: trusted, ..Trusted::default() })
}

/// The digest a verified payload names, when it is a cosign payload.
fn signed_digest(payload: &[u8]) -> Option<String> {
    serde_json::from_slice::<Payload>(payload)
        .ok()
        .filter(|payload| payload.critical.kind == PAYLOAD_TYPE)
        .map(|payload| payload.critical.image.digest)
}

/// The signer of the first signature that `trusted` accepts and that
/// covers `digest`: a key's fingerprint (`key:sha256:…`) or a keyless
/// identity (`identity:<issuer>#<subject>`); or why there is none.
pub fn verify_trusted(
    signatures: &[StoredSignature],
    digest: &Digest,
    trusted: &Trusted<'_>,
) -> Result<String, Refusal> {
    if signatures.is_empty() {
        return Err(Refusal::Unsigned);
    }
    if trusted.keys.is_empty() && trusted.identities.is_empty() {
        return Err(Refusal::NoTrustedKey);
    }
    let decode = |text: &str| base64::engine::general_purpose::STANDARD.decode(text.trim()).ok();
    let mut other_digest = None;
    let mut keyless_refusal = None;
    // Read only once a trusted signer vouched for the payload.
    let mut covers = |signer: String, payload: &[u8]| match signed_digest(payload) {
        Some(signed) if signed == digest.as_str() => Some(signer),
        signed => {
            other_digest.get_or_insert(Refusal::OtherDigest {
                signer,
                signed: signed.unwrap_or_else(|| "a payload that is not a cosign payload".into()),
                expected: digest.to_string(),
            });
            None
        }
    };
    for stored in signatures {
        let (Some(payload), Some(signature)) = (decode(&stored.payload), decode(&stored.signature)) else {
            continue;
        };
        for key in trusted.keys {
            if verifies(key, &payload, &signature)
                && let Some(signer) = covers(key.fingerprint().to_owned(), &payload)
            {
                return Ok(signer);
            }
        }
        let Some(certificate) = &stored.certificate else {
            continue;
        };
        if trusted.identities.is_empty() {
            continue;
        }
        let keyless = KeylessSignature {
            payload: &payload,
            signature: &signature,
            certificate,
            chain: stored.chain.as_deref().unwrap_or_default(),
            bundle: stored.bundle.as_deref(),
        };
        match keyless::verify(&keyless, trusted.root, trusted.identities) {
            Ok(identity) => {
                if let Some(signer) = covers(identity.signer(), &payload) {
                    return Ok(signer);
                }
            }
            Err(reason) => {
                keyless_refusal.get_or_insert(reason);
            }
        }
    }
    Err(other_digest
        .or(keyless_refusal.map(Refusal::Keyless))
        .unwrap_or(Refusal::UntrustedKey { count: signatures.len() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Algorithm, PrivateKey};

    fn signed(key: &PrivateKey, digest: &Digest) -> StoredSignature {
        let payload = payload("127.0.0.1:5000/tools/t", digest);
        let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&payload));
        StoredSignature::new(&payload, &signature)
    }

    #[test]
    fn a_trusted_signature_over_the_digest_names_its_key() {
        let key = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
        let digest = Digest::of(b"manifest");
        let verified = verify(&[signed(&key, &digest)], &digest, &[key.public().clone()]);
        assert_eq!(verified.as_deref(), Ok(key.public().fingerprint()));
    }

    /// Hostile: once a signature verified (and is remembered), the same
    /// payload with another signature, or the same signature checked
    /// against another key, is checked afresh and refused.
    #[test]
    fn a_remembered_signature_vouches_for_nothing_else() {
        let key = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
        let stranger = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
        let digest = Digest::of(b"a manifest remembered");
        let good = signed(&key, &digest);
        for _ in 0..2 {
            let verified = verify(std::slice::from_ref(&good), &digest, &[key.public().clone()]);
            assert_eq!(verified.as_deref(), Ok(key.public().fingerprint()));
        }
        let mut forged = good.clone();
        forged.signature = signed(&stranger, &digest).signature;
        assert_eq!(
            verify(&[forged], &digest, &[key.public().clone()]),
            Err(Refusal::UntrustedKey { count: 1 })
        );
        assert_eq!(
            verify(std::slice::from_ref(&good), &digest, &[stranger.public().clone()]),
            Err(Refusal::UntrustedKey { count: 1 })
        );
    }

    #[test]
    fn each_refusal_is_named() {
        let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
        let stranger = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
        let digest = Digest::of(b"manifest");
        let other = Digest::of(b"other manifest");
        let trusted = [key.public().clone()];
        assert_eq!(verify(&[], &digest, &trusted), Err(Refusal::Unsigned));
        assert_eq!(verify(&[signed(&key, &digest)], &digest, &[]), Err(Refusal::NoTrustedKey));
        assert_eq!(
            verify(&[signed(&stranger, &digest)], &digest, &trusted),
            Err(Refusal::UntrustedKey { count: 1 })
        );
        assert!(matches!(
            verify(&[signed(&key, &other)], &digest, &trusted),
            Err(Refusal::OtherDigest { .. })
        ));
        // A payload altered after signing verifies with nobody.
        let mut altered = signed(&key, &other);
        altered.payload = StoredSignature::new(&payload("127.0.0.1:5000/tools/t", &digest), "").payload;
        assert_eq!(verify(&[altered], &digest, &trusted), Err(Refusal::UntrustedKey { count: 1 }));
    }

    /// Signatures stored before keyless signatures existed read as they
    /// were and are written back byte for byte; a keyless one keeps its
    /// parts; an unknown field is refused.
    #[test]
    fn stored_key_signatures_read_and_write_as_before() {
        let old = r#"[{"payload":"cA==","signature":"c2ln"}]"#;
        let read: Vec<StoredSignature> = serde_json::from_str(old).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), old);
        let keyless = StoredSignature {
            certificate: Some("C".into()),
            chain: Some("H".into()),
            bundle: Some("B".into()),
            ..read[0].clone()
        };
        let text = serde_json::to_string(&keyless).unwrap();
        assert_eq!(serde_json::from_str::<StoredSignature>(&text).unwrap(), keyless);
        assert_eq!(
            StoredSignature::from_annotations(b"p", &keyless.annotations()).unwrap().bundle.as_deref(),
            Some("B")
        );
        assert!(
            serde_json::from_str::<StoredSignature>(r#"{"payload":"","signature":"","rekor":""}"#).is_err()
        );
    }
}
