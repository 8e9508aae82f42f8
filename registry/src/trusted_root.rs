//! Sigstore's trust root, read offline from a `trusted_root.json` file.
//!
//! The file is the `TrustedRoot` JSON that cosign and the sigstore clients
//! keep from Sigstore's TUF repository (`media type
//! application/vnd.dev.sigstore.trustedroot+json`), or one an operator
//! writes for a private Fulcio and Rekor. Two parts of it are used:
//!
//! - `certificateAuthorities[]`: each a Fulcio CA, its
//!   `certChain.certificates[].rawBytes` (base64 DER, the issuing
//!   intermediate first, the root last) and `validFor.start`/`end`
//!   (RFC 3339; `end` absent: still valid). The last certificate of a chain
//!   is a trust anchor, the others are intermediates offered for path
//!   building.
//! - `tlogs[]`: each a Rekor log, `logId.keyId` (base64 of the SHA-256 of
//!   its key, the log ID a bundle names), `publicKey.rawBytes` (base64 SPKI
//!   DER, ECDSA P-256 or Ed25519) and `publicKey.validFor`.
//!
//! Everything else in the file (`ctlogs`, `timestampAuthorities`, URLs) is
//! ignored: the file is Sigstore's, so unknown fields are allowed. A file
//! that names no CA or no log, a certificate or key that does not decode,
//! or a time that is not RFC 3339 makes the whole file an error naming
//! the part.

use crate::RegistryError;
use crate::keys::PublicKey;
use base64::Engine as _;
use serde::Deserialize;
use std::path::Path;

/// Largest trust root file read (Sigstore's public one is about 7 KiB).
pub const MAX_TRUSTED_ROOT_BYTES: u64 = 1024 * 1024;

/// A time range, in seconds since the Unix epoch; `end` none: open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validity {
    /// First second of validity.
    pub start: i64,
    /// Last second of validity, when bounded.
    pub end: Option<i64>,
}

impl Validity {
    /// True when `time` is inside the range (both ends included).
    pub fn contains(&self, time: i64) -> bool {
        self.start <= time && self.end.is_none_or(|end| time <= end)
    }
}

/// A Fulcio certificate authority.
#[derive(Clone, Debug)]
pub struct CertificateAuthority {
    /// Its chain, DER, the root last.
    pub chain: Vec<Vec<u8>>,
    /// When it may have issued certificates.
    pub valid: Validity,
}

impl CertificateAuthority {
    /// The root certificate (the trust anchor), DER.
    pub fn root(&self) -> &[u8] {
        self.chain.last().map_or(&[], Vec::as_slice)
    }

    /// The intermediates the trust root itself ships, DER.
    pub fn intermediates(&self) -> &[Vec<u8>] {
        &self.chain[..self.chain.len().saturating_sub(1)]
    }
}

/// A Rekor transparency log.
#[derive(Clone, Debug)]
pub struct TransparencyLog {
    /// The SHA-256 of its key, as bundles name it (`logID`, hex).
    pub log_id: String,
    /// Its key, which signs the signed entry timestamps.
    pub key: PublicKey,
    /// When its key may have signed.
    pub valid: Validity,
}

/// The trust root: the CAs and logs keyless signatures are checked against.
#[derive(Clone, Debug)]
pub struct TrustedRoot {
    /// Fulcio CAs.
    pub authorities: Vec<CertificateAuthority>,
    /// Rekor logs.
    pub logs: Vec<TransparencyLog>,
    /// `sha256:<hex>` of the file's bytes: what a remembered verification
    /// was checked against.
    pub fingerprint: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootFile {
    #[serde(default)]
    certificate_authorities: Vec<AuthorityFile>,
    #[serde(default)]
    tlogs: Vec<LogFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuthorityFile {
    cert_chain: ChainFile,
    valid_for: ValidityFile,
}

#[derive(Deserialize)]
struct ChainFile {
    certificates: Vec<RawBytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytes {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct ValidityFile {
    start: String,
    #[serde(default)]
    end: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogFile {
    public_key: LogKeyFile,
    log_id: LogIdFile,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogKeyFile {
    raw_bytes: String,
    valid_for: ValidityFile,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogIdFile {
    key_id: String,
}

fn seconds(text: &str) -> Result<i64, String> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|time| time.unix_timestamp())
        .map_err(|error| format!("`{text}` is not an RFC 3339 time: {error}"))
}

fn validity(file: &ValidityFile) -> Result<Validity, String> {
    Ok(Validity { start: seconds(&file.start)?, end: file.end.as_deref().map(seconds).transpose()? })
}

fn base64(text: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|error| format!("bad base64: {error}"))
}

impl TrustedRoot {
    /// Read a `trusted_root.json` file.
    pub fn from_file(path: &Path) -> Result<Self, RegistryError> {
        use std::io::Read as _;
        let error = |message: String| RegistryError::TrustedRoot { path: path.to_owned(), message };
        let file = std::fs::File::open(path).map_err(|source| error(source.to_string()))?;
        let mut bytes = Vec::new();
        file.take(MAX_TRUSTED_ROOT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| error(source.to_string()))?;
        if bytes.len() as u64 > MAX_TRUSTED_ROOT_BYTES {
            return Err(error(format!("larger than {MAX_TRUSTED_ROOT_BYTES} bytes")));
        }
        Self::from_json(&bytes).map_err(error)
    }

    /// Read the JSON text of a trust root.
    pub fn from_json(bytes: &[u8]) -> Result<Self, String> {
        let file: RootFile =
            serde_json::from_slice(bytes).map_err(|error| format!("not a Sigstore trusted root: {error}"))?;
        let mut authorities = Vec::new();
        for (index, authority) in file.certificate_authorities.iter().enumerate() {
            let at = |message: String| format!("certificateAuthorities[{index}]: {message}");
            let chain = authority
                .cert_chain
                .certificates
                .iter()
                .map(|certificate| base64(&certificate.raw_bytes))
                .collect::<Result<Vec<_>, _>>()
                .map_err(at)?;
            if chain.is_empty() {
                return Err(at("an empty certificate chain".into()));
            }
            for certificate in &chain {
                x509_parser::parse_x509_certificate(certificate)
                    .map_err(|error| at(format!("a certificate that does not parse: {error}")))?;
            }
            authorities
                .push(CertificateAuthority { chain, valid: validity(&authority.valid_for).map_err(at)? });
        }
        let mut logs = Vec::new();
        for (index, log) in file.tlogs.iter().enumerate() {
            let at = |message: String| format!("tlogs[{index}]: {message}");
            let der = base64(&log.public_key.raw_bytes).map_err(at)?;
            let key = PublicKey::from_spki_der(&der, "trusted root log key")
                .map_err(|error| at(error.to_string()))?;
            let log_id = crate::digest::hex(&base64(&log.log_id.key_id).map_err(at)?);
            logs.push(TransparencyLog {
                log_id,
                key,
                valid: validity(&log.public_key.valid_for).map_err(at)?,
            });
        }
        if authorities.is_empty() {
            return Err("no certificateAuthorities: keyless signatures need a Fulcio CA".into());
        }
        if logs.is_empty() {
            return Err("no tlogs: keyless signatures need a Rekor log key".into());
        }
        Ok(Self { authorities, logs, fingerprint: crate::Digest::of(bytes).to_string() })
    }

    /// The log whose ID (hex) is `log_id`.
    pub fn log(&self, log_id: &str) -> Option<&TransparencyLog> {
        self.logs.iter().find(|log| log.log_id.eq_ignore_ascii_case(log_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trust_root_missing_its_parts_is_an_error_naming_them() {
        assert!(TrustedRoot::from_json(b"{}").unwrap_err().contains("no certificateAuthorities"));
        assert!(TrustedRoot::from_json(b"3").unwrap_err().contains("not a Sigstore trusted root"));
        let bad = br#"{"certificateAuthorities":[{"certChain":{"certificates":[{"rawBytes":"AAAA"}]},"validFor":{"start":"2021-01-01T00:00:00Z"}}]}"#;
        assert!(TrustedRoot::from_json(bad).unwrap_err().contains("certificateAuthorities[0]"));
    }

    #[test]
    fn validity_includes_both_ends_and_may_be_open() {
        let closed = Validity { start: 10, end: Some(20) };
        assert!(!closed.contains(9) && closed.contains(10) && closed.contains(20) && !closed.contains(21));
        assert!(Validity { start: 10, end: None }.contains(i64::MAX));
    }
}
