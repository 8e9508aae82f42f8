//! Percentiles of measured durations.

use std::time::Duration;

/// Sorted samples.
pub struct Samples(Vec<Duration>);

impl Samples {
    /// From unsorted measurements.
    pub fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        Self(samples)
    }

    /// The `p`-th percentile (nearest rank), or zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    /// Median in microseconds.
    pub fn p50_us(&self) -> f64 {
        self.percentile(50.0).as_secs_f64() * 1e6
    }

    /// 99th percentile in microseconds.
    pub fn p99_us(&self) -> f64 {
        self.percentile(99.0).as_secs_f64() * 1e6
    }

    /// The largest sample.
    pub fn max(&self) -> Duration {
        self.0.last().copied().unwrap_or_default()
    }
}

/// Resident memory of this process, KiB (Linux), or 0 when unknown.
pub fn resident_kib() -> u64 {
    status_kib("VmRSS:")
}

/// Reset this process's peak resident memory (`VmHWM`) to its current
/// resident memory (Linux; a no-op elsewhere).
pub fn reset_peak_resident() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process since start or the last reset,
/// KiB (Linux), or 0 when unknown.
pub fn peak_resident_kib() -> u64 {
    status_kib("VmHWM:")
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find(|line| line.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples = Samples::new((1..=100).rev().map(Duration::from_micros).collect());
        assert_eq!(samples.percentile(50.0), Duration::from_micros(50));
        assert_eq!(samples.percentile(99.0), Duration::from_micros(99));
        assert_eq!(samples.percentile(100.0), Duration::from_micros(100));
        assert_eq!(samples.max(), Duration::from_micros(100));
        assert_eq!(Samples::new(Vec::new()).percentile(50.0), Duration::ZERO);
    }
}
