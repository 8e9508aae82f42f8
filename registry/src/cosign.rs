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
//! signature verified with a trusted key, and then its digest must be the
//! manifest digest being verified.
//!
//! A signature check is a pure function of the key, the payload and the
//! signature, so a process remembers the triples it saw verify (by their
//! SHA-256, at most [`REMEMBERED`]): a reload or a second host verifying
//! the same bytes pays a hash instead of an ECDSA verification. The bytes
//! themselves are read and hashed on every load; any changed byte of the
//! key, payload or signature is a new triple, checked afresh.

use crate::digest::Digest;
use crate::keys::PublicKey;
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
/// base64.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredSignature {
    /// The payload bytes, base64.
    pub payload: String,
    /// The signature bytes, base64 (the annotation's value).
    pub signature: String,
}

impl StoredSignature {
    /// From the payload bytes and the annotation's base64 text.
    pub fn new(payload: &[u8], signature_base64: &str) -> Self {
        Self {
            payload: base64::engine::general_purpose::STANDARD.encode(payload),
            signature: signature_base64.to_owned(),
        }
    }
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
    /// No key is trusted for it, so no signature could be accepted.
    #[error("no key is trusted for it (plugins.trust)")]
    NoTrustedKey,
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
    if signatures.is_empty() {
        return Err(Refusal::Unsigned);
    }
    if trusted.is_empty() {
        return Err(Refusal::NoTrustedKey);
    }
    let decode = |text: &str| base64::engine::general_purpose::STANDARD.decode(text.trim()).ok();
    let mut other_digest = None;
    for stored in signatures {
        let (Some(payload), Some(signature)) = (decode(&stored.payload), decode(&stored.signature)) else {
            continue;
        };
        for key in trusted {
            if !verifies(key, &payload, &signature) {
                continue;
            }
            // Read only now: the payload is what a trusted key signed.
            let signed = serde_json::from_slice::<Payload>(&payload)
                .ok()
                .filter(|payload| payload.critical.kind == PAYLOAD_TYPE)
                .map(|payload| payload.critical.image.digest);
            match signed {
                Some(signed) if signed == digest.as_str() => return Ok(key.fingerprint().to_owned()),
                signed => {
                    other_digest.get_or_insert(Refusal::OtherDigest {
                        signer: key.fingerprint().to_owned(),
                        signed: signed.unwrap_or_else(|| "a payload that is not a cosign payload".into()),
                        expected: digest.to_string(),
                    });
                }
            }
        }
    }
    Err(other_digest.unwrap_or(Refusal::UntrustedKey { count: signatures.len() }))
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
}
