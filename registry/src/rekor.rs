//! The Rekor bundle cosign stores beside a keyless signature (annotation
//! [`BUNDLE_ANNOTATION`]), checked offline:
//!
//! ```json
//! {"SignedEntryTimestamp": "<base64>",
//!  "Payload": {"body": "<base64 of the log entry>", "integratedTime": 1700000000,
//!              "logIndex": 42, "logID": "<hex SHA-256 of the log's key>"}}
//! ```
//!
//! - The signed entry timestamp (SET) is the log's signature (ECDSA P-256
//!   over SHA-256, DER; or Ed25519) over the canonical JSON (keys sorted,
//!   no spaces: OLPC canonical JSON, byte-identical to Rekor's RFC 8785
//!   form here since every string is base64 or hex) of the four `Payload`
//!   fields. It must verify with the trusted root's log named by `logID`,
//!   and `integratedTime` must be inside that log key's `validFor`.
//! - The entry `body` must be a `hashedrekord` entry for *this* signature:
//!   `spec.signature.content` is the signature, `spec.signature.publicKey.content`
//!   is the signing certificate (base64 of its PEM), and `spec.data.hash`
//!   is the SHA-256 of the payload. Otherwise a bundle could be replayed
//!   onto another signature.

use crate::trusted_root::TrustedRoot;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The layer annotation holding the Rekor bundle (JSON).
pub const BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";

/// A bundle as cosign writes it.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Bundle {
    /// The log's signature over the canonical payload, base64.
    #[serde(rename = "SignedEntryTimestamp")]
    pub signed_entry_timestamp: String,
    /// What the log signed.
    #[serde(rename = "Payload")]
    pub payload: BundlePayload,
}

/// The logged entry the SET covers.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct BundlePayload {
    /// The log entry, base64 of its JSON.
    pub body: String,
    /// When the log recorded it (seconds since the Unix epoch).
    #[serde(rename = "integratedTime")]
    pub integrated_time: i64,
    /// Its index in the log.
    #[serde(rename = "logIndex")]
    pub log_index: i64,
    /// The log's ID (hex SHA-256 of its key).
    #[serde(rename = "logID")]
    pub log_id: String,
}

/// Why a bundle does not vouch for a signature.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BundleRefusal {
    /// Not a bundle.
    #[error("its Rekor bundle is malformed: {0}")]
    Malformed(String),
    /// The log is not in the trust root.
    #[error("its Rekor bundle is from log {log_id}, which the trusted root does not name")]
    UnknownLog {
        /// The bundle's log ID.
        log_id: String,
    },
    /// The SET does not verify with the log's key.
    #[error("its Rekor bundle's signed entry timestamp does not verify with the key of log {log_id}")]
    BadTimestamp {
        /// The log.
        log_id: String,
    },
    /// The log's key was not valid then.
    #[error(
        "its Rekor bundle's integrated time {integrated_time} is outside the validity of log {log_id}'s key"
    )]
    LogNotValidThen {
        /// The log.
        log_id: String,
        /// The time.
        integrated_time: i64,
    },
    /// The entry is not for this signature.
    #[error("its Rekor bundle is for another signature: {0}")]
    OtherSignature(String),
}

impl Bundle {
    /// Parse the annotation's JSON.
    pub fn parse(text: &str) -> Result<Self, BundleRefusal> {
        serde_json::from_str(text).map_err(|error| BundleRefusal::Malformed(error.to_string()))
    }

    /// The canonical JSON the SET signs.
    fn canonical_payload(&self) -> Result<Vec<u8>, BundleRefusal> {
        let value = serde_json::json!({
            "body": self.payload.body,
            "integratedTime": self.payload.integrated_time,
            "logIndex": self.payload.log_index,
            "logID": self.payload.log_id,
        });
        let mut bytes = Vec::new();
        let mut serializer =
            serde_json::Serializer::with_formatter(&mut bytes, olpc_cjson::CanonicalFormatter::new());
        value.serialize(&mut serializer).map_err(|error| BundleRefusal::Malformed(error.to_string()))?;
        Ok(bytes)
    }

    /// Check the SET against `root`: the integrated time it vouches for.
    pub fn verify_timestamp(&self, root: &TrustedRoot) -> Result<i64, BundleRefusal> {
        let log_id = self.payload.log_id.clone();
        let log = root.log(&log_id).ok_or_else(|| BundleRefusal::UnknownLog { log_id: log_id.clone() })?;
        let signature = base64::engine::general_purpose::STANDARD
            .decode(self.signed_entry_timestamp.trim())
            .map_err(|error| BundleRefusal::Malformed(format!("SignedEntryTimestamp: {error}")))?;
        if !log.key.verifies(&self.canonical_payload()?, &signature) {
            return Err(BundleRefusal::BadTimestamp { log_id });
        }
        let integrated_time = self.payload.integrated_time;
        if !log.valid.contains(integrated_time) {
            return Err(BundleRefusal::LogNotValidThen { log_id, integrated_time });
        }
        Ok(integrated_time)
    }

    /// Check that the logged entry is a `hashedrekord` of `signature` by
    /// `certificate_der` over `payload`.
    pub fn verify_entry(
        &self,
        payload: &[u8],
        signature: &[u8],
        certificate_der: &[u8],
    ) -> Result<(), BundleRefusal> {
        use sha2::Digest as _;
        let engine = &base64::engine::general_purpose::STANDARD;
        let body = engine
            .decode(self.payload.body.trim())
            .map_err(|error| BundleRefusal::Malformed(format!("body: {error}")))?;
        let entry: Entry = serde_json::from_slice(&body)
            .map_err(|error| BundleRefusal::Malformed(format!("body is not a Rekor entry: {error}")))?;
        if entry.kind != "hashedrekord" {
            return Err(BundleRefusal::Malformed(format!(
                "a `{}` entry; only `hashedrekord` entries are read",
                entry.kind
            )));
        }
        let logged_signature = engine
            .decode(entry.spec.signature.content.trim())
            .map_err(|error| BundleRefusal::Malformed(format!("spec.signature.content: {error}")))?;
        if logged_signature != signature {
            return Err(BundleRefusal::OtherSignature("the logged signature is not this signature".into()));
        }
        let logged_certificate =
            engine.decode(entry.spec.signature.public_key.content.trim()).map_err(|error| {
                BundleRefusal::Malformed(format!("spec.signature.publicKey.content: {error}"))
            })?;
        let logged_der = x509_parser::pem::parse_x509_pem(&logged_certificate)
            .map(|(_, pem)| pem.contents)
            .map_err(|_| {
            BundleRefusal::Malformed("spec.signature.publicKey.content is not a PEM certificate".into())
        })?;
        if logged_der != certificate_der {
            return Err(BundleRefusal::OtherSignature(
                "the logged certificate is not this certificate".into(),
            ));
        }
        let hash = &entry.spec.data.hash;
        let expected = crate::digest::hex(&sha2::Sha256::digest(payload));
        if hash.algorithm != "sha256" || !hash.value.eq_ignore_ascii_case(&expected) {
            return Err(BundleRefusal::OtherSignature(format!(
                "the logged payload hash is {}:{}, not sha256:{expected}",
                hash.algorithm, hash.value
            )));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct Entry {
    kind: String,
    spec: Spec,
}

#[derive(Deserialize)]
struct Spec {
    signature: EntrySignature,
    data: EntryData,
}

#[derive(Deserialize)]
struct EntrySignature {
    content: String,
    #[serde(rename = "publicKey")]
    public_key: Content,
}

#[derive(Deserialize)]
struct Content {
    content: String,
}

#[derive(Deserialize)]
struct EntryData {
    hash: Hash,
}

#[derive(Deserialize)]
struct Hash {
    algorithm: String,
    value: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical form is keys sorted, no spaces: what Rekor signs.
    #[test]
    fn the_signed_entry_timestamp_covers_the_canonical_payload() {
        let bundle = Bundle {
            signed_entry_timestamp: String::new(),
            payload: BundlePayload {
                body: "eyJh+/=".into(),
                integrated_time: 1_700_000_000,
                log_index: 42,
                log_id: "c0d23d6ad406973f".into(),
            },
        };
        assert_eq!(
            String::from_utf8(bundle.canonical_payload().unwrap()).unwrap(),
            r#"{"body":"eyJh+/=","integratedTime":1700000000,"logID":"c0d23d6ad406973f","logIndex":42}"#
        );
    }
}
