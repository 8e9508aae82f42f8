//! Signing keys: ECDSA P-256 (cosign's default) and Ed25519, in the PEM
//! forms other tools read: a public key is SPKI (`-----BEGIN PUBLIC
//! KEY-----`, what `cosign verify --key` takes), a private key unencrypted
//! PKCS#8 (`-----BEGIN PRIVATE KEY-----`, which `cosign import-key-pair`
//! imports). A key is named by its fingerprint, `key:sha256:<hex>` of its
//! SPKI DER: that is the signer recorded in the lock file and the trace.
//!
//! Signatures are as cosign makes them: ECDSA P-256 over SHA-256 of the
//! payload, ASN.1 DER; Ed25519 over the payload itself.

use crate::RegistryError;
use crate::digest::hex;
use ed25519_dalek::Signer as _;
use ed25519_dalek::Verifier as _;
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use sha2::{Digest as _, Sha256};
use std::fmt;
use std::path::Path;

/// The algorithm of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// ECDSA on P-256 with SHA-256.
    EcdsaP256,
    /// Ed25519.
    Ed25519,
}

/// A public key that may verify signatures.
#[derive(Clone)]
pub struct PublicKey {
    key: PublicKind,
    fingerprint: String,
}

#[derive(Clone)]
enum PublicKind {
    EcdsaP256(p256::ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint)
    }
}

/// A private key that signs. Its `Debug` shows only the fingerprint.
pub struct PrivateKey {
    key: PrivateKind,
    public: PublicKey,
}

enum PrivateKind {
    EcdsaP256(p256::ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateKey({})", self.public.fingerprint)
    }
}

fn fingerprint(spki_der: &[u8]) -> String {
    format!("key:sha256:{}", hex(&Sha256::digest(spki_der)))
}

fn key_error(path: &str, what: impl fmt::Display) -> RegistryError {
    RegistryError::Key { path: path.to_owned(), message: what.to_string() }
}

impl PublicKey {
    /// Read an SPKI PEM public key (P-256 or Ed25519); `origin` names it in
    /// errors.
    pub fn from_pem(pem: &str, origin: &str) -> Result<Self, RegistryError> {
        if let Ok(key) = p256::ecdsa::VerifyingKey::from_public_key_pem(pem) {
            let der = key.to_public_key_der().map_err(|error| key_error(origin, error))?;
            return Ok(Self { fingerprint: fingerprint(der.as_bytes()), key: PublicKind::EcdsaP256(key) });
        }
        if let Ok(key) = ed25519_dalek::VerifyingKey::from_public_key_pem(pem) {
            let der = key.to_public_key_der().map_err(|error| key_error(origin, error))?;
            return Ok(Self { fingerprint: fingerprint(der.as_bytes()), key: PublicKind::Ed25519(key) });
        }
        Err(key_error(
            origin,
            "not an ECDSA P-256 or Ed25519 public key in SPKI PEM (-----BEGIN PUBLIC KEY-----)",
        ))
    }

    /// Read an SPKI DER public key (P-256 or Ed25519), as a Sigstore
    /// trusted root ships a log's key; `origin` names it in errors.
    pub fn from_spki_der(der: &[u8], origin: &str) -> Result<Self, RegistryError> {
        if let Ok(key) = p256::ecdsa::VerifyingKey::from_public_key_der(der) {
            return Ok(Self { fingerprint: fingerprint(der), key: PublicKind::EcdsaP256(key) });
        }
        if let Ok(key) = ed25519_dalek::VerifyingKey::from_public_key_der(der) {
            return Ok(Self { fingerprint: fingerprint(der), key: PublicKind::Ed25519(key) });
        }
        Err(key_error(origin, "not an ECDSA P-256 or Ed25519 public key in SPKI DER"))
    }

    /// Read a public key file.
    pub fn from_file(path: &Path) -> Result<Self, RegistryError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| key_error(&origin, error))?;
        Self::from_pem(&text, &origin)
    }

    /// `key:sha256:<hex of the SPKI DER>`.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self.key {
            PublicKind::EcdsaP256(_) => Algorithm::EcdsaP256,
            PublicKind::Ed25519(_) => Algorithm::Ed25519,
        }
    }

    /// The SPKI PEM text.
    pub fn to_pem(&self) -> String {
        let pem = match &self.key {
            PublicKind::EcdsaP256(key) => key.to_public_key_pem(LineEnding::LF),
            PublicKind::Ed25519(key) => key.to_public_key_pem(LineEnding::LF),
        };
        pem.unwrap_or_default()
    }

    /// True when `signature` is this key's signature of `payload`.
    pub fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        match &self.key {
            PublicKind::EcdsaP256(key) => p256::ecdsa::Signature::from_der(signature)
                .is_ok_and(|signature| key.verify(payload, &signature).is_ok()),
            PublicKind::Ed25519(key) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|signature| key.verify(payload, &signature).is_ok()),
        }
    }
}

impl PrivateKey {
    /// A new key from the operating system's random source.
    pub fn generate(algorithm: Algorithm) -> Result<Self, RegistryError> {
        let mut seed = [0u8; 32];
        loop {
            getrandom::fill(&mut seed).map_err(|error| key_error("random source", error))?;
            let key = match algorithm {
                Algorithm::EcdsaP256 => match p256::ecdsa::SigningKey::from_slice(&seed) {
                    Ok(key) => PrivateKind::EcdsaP256(key),
                    // Out of the scalar range (about 2^-32 of seeds): draw again.
                    Err(_) => continue,
                },
                Algorithm::Ed25519 => PrivateKind::Ed25519(ed25519_dalek::SigningKey::from_bytes(&seed)),
            };
            return Self::from_kind(key, "generated key");
        }
    }

    fn from_kind(key: PrivateKind, origin: &str) -> Result<Self, RegistryError> {
        let public = match &key {
            PrivateKind::EcdsaP256(key) => PublicKind::EcdsaP256(*key.verifying_key()),
            PrivateKind::Ed25519(key) => PublicKind::Ed25519(key.verifying_key()),
        };
        let der = match &public {
            PublicKind::EcdsaP256(key) => key.to_public_key_der(),
            PublicKind::Ed25519(key) => key.to_public_key_der(),
        }
        .map_err(|error| key_error(origin, error))?;
        Ok(Self { key, public: PublicKey { fingerprint: fingerprint(der.as_bytes()), key: public } })
    }

    /// Read an unencrypted PKCS#8 PEM private key (P-256 or Ed25519).
    pub fn from_pem(pem: &str, origin: &str) -> Result<Self, RegistryError> {
        if let Ok(key) = p256::ecdsa::SigningKey::from_pkcs8_pem(pem) {
            return Self::from_kind(PrivateKind::EcdsaP256(key), origin);
        }
        if let Ok(key) = ed25519_dalek::SigningKey::from_pkcs8_pem(pem) {
            return Self::from_kind(PrivateKind::Ed25519(key), origin);
        }
        Err(key_error(
            origin,
            "not an unencrypted ECDSA P-256 or Ed25519 private key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)",
        ))
    }

    /// Read a private key file.
    pub fn from_file(path: &Path) -> Result<Self, RegistryError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| key_error(&origin, error))?;
        Self::from_pem(&text, &origin)
    }

    /// The PKCS#8 PEM text (secret: write it with mode 0600).
    pub fn to_pem(&self) -> Result<String, RegistryError> {
        let pem = match &self.key {
            PrivateKind::EcdsaP256(key) => key.to_pkcs8_pem(LineEnding::LF),
            PrivateKind::Ed25519(key) => key.to_pkcs8_pem(LineEnding::LF),
        };
        pem.map(|pem| pem.to_string()).map_err(|error| key_error("private key", error))
    }

    /// The public half.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// Sign `payload` as cosign does for this algorithm.
    pub fn sign(&self, payload: &[u8]) -> Vec<u8> {
        match &self.key {
            PrivateKind::EcdsaP256(key) => {
                let signature: p256::ecdsa::Signature = key.sign(payload);
                signature.to_der().as_bytes().to_vec()
            }
            PrivateKind::Ed25519(key) => key.sign(payload).to_bytes().to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_pem_and_verify_only_their_own_signatures() {
        for algorithm in [Algorithm::EcdsaP256, Algorithm::Ed25519] {
            let key = PrivateKey::generate(algorithm).unwrap();
            let again = PrivateKey::from_pem(&key.to_pem().unwrap(), "test").unwrap();
            let public = PublicKey::from_pem(&key.public().to_pem(), "test").unwrap();
            assert_eq!(again.public().fingerprint(), key.public().fingerprint());
            assert_eq!(public.fingerprint(), key.public().fingerprint());
            assert_eq!(public.algorithm(), algorithm);
            let signature = key.sign(b"payload");
            assert!(public.verifies(b"payload", &signature));
            assert!(!public.verifies(b"payloae", &signature));
            let other = PrivateKey::generate(algorithm).unwrap();
            assert!(!other.public().verifies(b"payload", &signature));
            assert!(!format!("{key:?}").contains("BEGIN"));
        }
    }

    #[test]
    fn garbage_is_a_typed_error() {
        assert!(matches!(PublicKey::from_pem("nonsense", "f"), Err(RegistryError::Key { .. })));
        assert!(matches!(PrivateKey::from_pem("nonsense", "f"), Err(RegistryError::Key { .. })));
    }
}
