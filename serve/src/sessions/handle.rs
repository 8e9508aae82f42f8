//! The handle a client carries between the calls of a stateless guarded
//! session: the session's id and the step it is at, sealed.
//!
//! Sealed with rmcp's [`RequestStateCodec`] (HMAC-SHA256 under a key the
//! replicas share), with a TTL, and bound (as associated data, never
//! stored in the handle) to the credential and the skill: a handle
//! opened by another credential, on another skill's route, after its TTL,
//! or changed in any byte fails to open. Opening only proves the server
//! issued it; whether it is the session's current step is the ledger's
//! check ([`super::ledger`]), which makes an earlier handle worthless once
//! a call has moved the session on.

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The `_meta` key that carries a handle, on a request and on its result.
pub const META_KEY: &str = "dev.harmonia/session";

/// What a handle says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handle {
    /// The session's id in the ledger.
    #[serde(rename = "s")]
    pub session: String,
    /// The step the session is at: the calls it has recorded.
    #[serde(rename = "n")]
    pub step: u64,
}

/// Why a handle was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    /// Not one this server sealed for this credential and skill, or
    /// changed since (the detail stays in the log, never in the answer).
    #[error("the session handle is not valid for this credential and skill")]
    Invalid,
    /// Its TTL passed.
    #[error("the session handle has expired")]
    Expired,
}

/// Seals and opens handles.
pub struct HandleCodec {
    codec: RequestStateCodec,
    ttl: Duration,
}

/// At least this many bytes of key.
pub const MIN_KEY_BYTES: usize = RequestStateCodec::MIN_KEY_LENGTH;

fn binding(credential: &str, skill: &str) -> Vec<u8> {
    // Lengths first, so no two (credential, skill) pairs bind the same bytes.
    let mut bound = Vec::with_capacity(credential.len() + skill.len() + 32);
    bound.extend_from_slice(b"harmonia-session-v1\0");
    bound.extend_from_slice(&(credential.len() as u64).to_be_bytes());
    bound.extend_from_slice(credential.as_bytes());
    bound.extend_from_slice(skill.as_bytes());
    bound
}

impl HandleCodec {
    /// A codec under `key` (at least [`MIN_KEY_BYTES`]), its handles
    /// valid for `ttl`.
    pub fn new(key: &[u8], ttl: Duration) -> Result<Self, RequestStateError> {
        Ok(Self { codec: RequestStateCodec::try_new(key.to_vec())?, ttl })
    }

    /// The sealed text of `handle` for `credential` on `skill`.
    pub fn seal(&self, handle: &Handle, credential: &str, skill: &str) -> String {
        let bound = binding(credential, skill);
        let options = SealOptions::new().associated_data(&bound).ttl(self.ttl);
        // A two-field struct always serialises.
        self.codec.seal_json_with(handle, &options).unwrap_or_default()
    }

    /// The handle sealed in `text`, when this server sealed it for
    /// `credential` on `skill` and its TTL has not passed.
    pub fn open(&self, text: &str, credential: &str, skill: &str) -> Result<Handle, HandleError> {
        match self.codec.open_json_with(text, &binding(credential, skill)) {
            Ok(handle) => Ok(handle),
            Err(RequestStateError::Expired) => Err(HandleError::Expired),
            Err(error) => {
                tracing::debug!(%error, "session handle refused");
                Err(HandleError::Invalid)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(ttl: Duration) -> HandleCodec {
        HandleCodec::new(&[7u8; 32], ttl).unwrap()
    }

    #[test]
    fn a_handle_opens_only_for_its_credential_and_skill_and_unchanged() {
        let codec = codec(Duration::from_secs(60));
        let handle = Handle { session: "abc".into(), step: 2 };
        let sealed = codec.seal(&handle, "token:a", "triage");
        assert_eq!(codec.open(&sealed, "token:a", "triage"), Ok(handle));
        assert_eq!(codec.open(&sealed, "token:b", "triage"), Err(HandleError::Invalid));
        assert_eq!(codec.open(&sealed, "token:a", "other"), Err(HandleError::Invalid));
        // The length prefix keeps ("ab", "c") and ("a", "bc") apart.
        let split = codec.seal(&Handle { session: "x".into(), step: 0 }, "ab", "c");
        assert_eq!(codec.open(&split, "a", "bc"), Err(HandleError::Invalid));
        assert_eq!(codec.open(&sealed[..sealed.len() - 1], "token:a", "triage"), Err(HandleError::Invalid));
        let mut edited = sealed.clone().into_bytes();
        let middle = edited.len() / 2;
        edited[middle] = if edited[middle] == b'A' { b'B' } else { b'A' };
        let edited = String::from_utf8(edited).unwrap();
        assert_eq!(codec.open(&edited, "token:a", "triage"), Err(HandleError::Invalid));
        let other_key = HandleCodec::new(&[8u8; 32], Duration::from_secs(60)).unwrap();
        assert_eq!(other_key.open(&sealed, "token:a", "triage"), Err(HandleError::Invalid));
        assert_eq!(codec.open("", "token:a", "triage"), Err(HandleError::Invalid));
    }

    #[test]
    fn a_handle_past_its_ttl_is_expired() {
        let codec = codec(Duration::from_millis(1));
        let sealed = codec.seal(&Handle { session: "abc".into(), step: 0 }, "c", "s");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(codec.open(&sealed, "c", "s"), Err(HandleError::Expired));
    }

    #[test]
    fn a_short_key_is_refused() {
        assert!(HandleCodec::new(&[1u8; 16], Duration::from_secs(1)).is_err());
    }
}
