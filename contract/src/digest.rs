//! Hashes as the contract spells them: lowercase hex (skill hashes,
//! receipts' body hashes, component pins, trace chains).

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex, written into one buffer of the right size
/// (a `String` per byte, collected, was some 37 allocations per SHA-256:
/// a fifth of a served call's, which hashes its bearer token and each
/// response body it records).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Exactly `N` bytes from lowercase or uppercase hex.
pub fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.as_bytes();
    if text.len() != 2 * N {
        return None;
    }
    let digit = |byte: u8| (byte as char).to_digit(16).map(|value| value as u8);
    let mut out = [0u8; N];
    for (slot, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *slot = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_wrong_lengths_and_digits() {
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        assert_eq!(from_hex::<3>("00ABff"), Some([0, 0xab, 0xff]));
        for bad in ["", "00ab", "00abff00", "zzabff", "é0abf"] {
            assert_eq!(from_hex::<3>(bad), None, "{bad}");
        }
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
