//! `sha256:<64 lowercase hex>`: the only digest this crate accepts.

use crate::RegistryError;
use sha2::{Digest as _, Sha256};
use std::fmt;

/// A content digest, `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest(String);

impl Digest {
    /// Parse `text`, refusing any other algorithm or form.
    pub fn parse(text: &str) -> Result<Self, RegistryError> {
        let hex = text.strip_prefix("sha256:").ok_or_else(|| RegistryError::BadDigest(text.to_owned()))?;
        let lower_hex = hex.len() == 64 && hex.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
        if !lower_hex {
            return Err(RegistryError::BadDigest(text.to_owned()));
        }
        Ok(Self(text.to_owned()))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let hash = Sha256::digest(bytes);
        Self(format!("sha256:{}", hex(&hash)))
    }

    /// The 64 hex digits.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }

    /// The whole text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Digest {
    type Error = RegistryError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<Digest> for String {
    fn from(digest: Digest) -> Self {
        digest.0
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lowercase_sha256_is_a_digest() {
        let good = Digest::of(b"x");
        assert_eq!(Digest::parse(good.as_str()).unwrap(), good);
        for bad in
            ["sha512:00", "sha256:ABC", "", "sha256:", &good.as_str().to_uppercase(), &good.as_str()[1..]]
        {
            assert!(Digest::parse(bad).is_err(), "{bad}");
        }
    }
}
