//! Strict RFC 3339 date-times, converted to UTC.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
