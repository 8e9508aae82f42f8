//! Sealed traces: a hash chain over the entries and an ed25519 signature
//! by a host key (the key file itself is the host's business), so `harmonia validate` can tell a trace the host emitted
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

use super::trace::{Trace, TraceEntry};
use crate::digest::{from_hex, hex};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Write;

/// The only algorithm a seal may name.
pub const ALGORITHM: &str = "ed25519";
const CHAIN_DOMAIN: &[u8] = b"harmonia-trace-chain-v1";
const SEAL_DOMAIN: &[u8] = b"harmonia-trace-seal-v1\0";

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
    /// The public half of `key`.
    pub fn of(key: &SigningKey) -> Self {
        Self(key.verifying_key())
    }

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

/// The seal of `trace`'s entries by `key`.
pub fn seal(key: &SigningKey, trace: &Trace) -> Seal {
    let chain = chain(trace);
    let signature = key.sign(&signed_message(chain.len(), &head(&chain)));
    Seal {
        algorithm: ALGORITHM.to_owned(),
        public_key: PublicKey::of(key).to_hex(),
        chain: chain.iter().map(|hash| hex(hash)).collect(),
        signature: hex(&signature.to_bytes()),
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

    struct Signer(SigningKey);

    impl Signer {
        fn seal(&self, trace: &Trace) -> Seal {
            seal(&self.0, trace)
        }

        fn public_key(&self) -> PublicKey {
            PublicKey::of(&self.0)
        }
    }

    fn signer(byte: u8) -> Signer {
        Signer(SigningKey::from_bytes(&[byte; 32]))
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
    }
}
