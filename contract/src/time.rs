//! RFC 3339 date-times (docs/contract.md): strict parsing to UTC and
//! formatting as `YYYY-MM-DDTHH:MM:SSZ`, without a date library. The one
//! implementation the host, the validator and the tools share.

use std::time::{SystemTime, UNIX_EPOCH};

/// A parsed RFC 3339 time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UtcTime {
    /// Seconds since 1970-01-01T00:00:00Z (the fraction dropped).
    pub unix_seconds: i64,
}

impl UtcTime {
    /// The UTC hour of day, 0 to 23.
    pub fn hour(self) -> u8 {
        (self.unix_seconds.rem_euclid(86_400) / 3600) as u8
    }
}

fn digits(text: &[u8], from: usize, len: usize) -> Option<i64> {
    let slice = text.get(from..from + len)?;
    slice.iter().try_fold(0i64, |acc, byte| byte.is_ascii_digit().then(|| acc * 10 + i64::from(byte - b'0')))
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parse `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`.
pub fn parse_rfc3339(text: &str) -> Option<UtcTime> {
    let b = text.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (hour, minute, second) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset_seconds = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (digits(b, at + 1, 2)?, digits(b, at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let magnitude = oh * 3600 + om * 60;
            if *sign == b'+' { magnitude } else { -magnitude }
        }
        _ => return None,
    };
    // A leap second reads as the last second of its minute.
    let second = second.min(59);
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Some(UtcTime { unix_seconds: local - offset_seconds })
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `time` as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_utc(time: SystemTime) -> String {
    let seconds = match time.duration_since(UNIX_EPOCH) {
        Ok(since) => since.as_secs() as i64,
        Err(before) => -(before.duration().as_secs() as i64),
    };
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// The current time as RFC 3339 UTC.
pub fn now_rfc3339() -> String {
    rfc3339_utc(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn parses_utc_and_offsets() {
        let utc = parse_rfc3339("2026-11-30T09:00:00Z").unwrap();
        assert_eq!(utc.unix_seconds, 1_796_029_200);
        assert_eq!(utc.hour(), 9);
        assert_eq!(parse_rfc3339("2026-11-30T10:30:00+01:30").unwrap(), utc);
        assert_eq!(parse_rfc3339("2026-11-30T04:00:00-05:00").unwrap(), utc);
        assert_eq!(parse_rfc3339("2026-11-30T09:00:00.123456Z").unwrap(), utc);
        assert_eq!(parse_rfc3339("2026-11-29T23:30:00-02:00").unwrap().hour(), 1);
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z").unwrap().hour(), 0);
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z").unwrap().unix_seconds, 0);
    }

    #[test]
    fn rejects_malformed_times() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T09:00:00",
            "2026-11-30 09:00:00Z",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-11-31T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T09:60:00Z",
            "2026-11-30T09:00:00+2400",
            "2026-11-30T09:00:00+24:00",
            "2026-11-30T09:00:00.Z",
            "2026-11-30T09:00:00Zjunk",
            "２０２６-11-30T09:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(1_796_029_200)), "2026-11-30T09:00:00Z");
    }

    #[test]
    fn formatting_and_parsing_agree() {
        for seconds in [0i64, 951_782_400, 1_796_029_200, 4_102_444_799] {
            let text = rfc3339_utc(UNIX_EPOCH + Duration::from_secs(seconds as u64));
            assert_eq!(parse_rfc3339(&text), Some(UtcTime { unix_seconds: seconds }), "{text}");
        }
    }
}
