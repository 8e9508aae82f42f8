//! The size of a value as compact JSON, counted as it is written and
//! never built: a bound checked on every call (an envelope's `data`, a
//! session's recorded bytes, a review page's input) costs no buffer.

use serde::Serialize;

/// The bytes `value` takes as compact JSON, if at most `limit`; `None` as
/// soon as the writing passes it (or if `value` cannot be written).
pub fn compact_bytes(value: &impl Serialize, limit: usize) -> Option<usize> {
    /// A sink that counts, and fails once past its limit.
    struct Counted {
        written: usize,
        limit: usize,
    }
    impl std::io::Write for Counted {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.written = self.written.saturating_add(bytes.len());
            if self.written > self.limit {
                return Err(std::io::Error::other("past the limit"));
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counted = Counted { written: 0, limit };
    serde_json::to_writer(&mut counted, value).ok()?;
    Some(counted.written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_compact_json_and_stops_past_the_limit() {
        let value = json!({"a": [1, 2], "b": "x"});
        let text = value.to_string();
        assert_eq!(compact_bytes(&value, usize::MAX), Some(text.len()));
        assert_eq!(compact_bytes(&value, text.len()), Some(text.len()));
        assert_eq!(compact_bytes(&value, text.len() - 1), None);
    }
}
