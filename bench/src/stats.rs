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

/// User plus system clock ticks from the text of a `/proc/.../stat` file.
fn cpu_ticks(stat: &str) -> Option<f64> {
    // The command's name (field 2) may hold spaces and parentheses: the
    // fields counted from 3 start after the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3).and_then(|value| value.parse::<f64>().ok());
    Some(ticks(14)? + ticks(15)?)
}

/// The CPU time a process has used, user and system, in seconds, its
/// exited threads included (`/proc/PID/stat`, fields 14 and 15, in clock
/// ticks); NaN when it cannot be read.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    cpu_ticks(&stat).map_or(f64::NAN, |ticks| ticks / rustix::param::clock_ticks_per_second() as f64)
}

/// CPU seconds, user and system, that this process's live threads named
/// `prefix`... have used (`/proc/self/task/*/stat`; Linux, 0 elsewhere).
pub fn threads_cpu_seconds(prefix: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let ticks: f64 = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("stat")).ok())
        .filter(|stat| {
            stat.split_once('(')
                .and_then(|(_, rest)| rest.rsplit_once(')'))
                .is_some_and(|(name, _)| name.starts_with(prefix))
        })
        .filter_map(|stat| cpu_ticks(&stat))
        .sum();
    ticks / rustix::param::clock_ticks_per_second() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_read_after_the_commands_name_whatever_it_holds() {
        // Fields 14 and 15 (utime 250, stime 31); the name holds spaces
        // and a ')'.
        let stat = "4242 (a) b c) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 31 0 0 20 0 3 0 100";
        assert_eq!(cpu_ticks(stat), Some(281.0));
        assert_eq!(cpu_ticks(""), None);
        assert_eq!(cpu_ticks("4242 (x) S 1"), None, "too few fields");
    }

    #[test]
    fn the_threads_cpu_is_counted_by_name() {
        // This test's own thread spins: its name is the test's.
        let name = std::thread::current().name().unwrap_or_default().chars().take(15).collect::<String>();
        let before = threads_cpu_seconds(&name);
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(100) {
            std::hint::black_box(0u64.wrapping_add(1));
        }
        assert!(threads_cpu_seconds(&name) > before, "a spinning thread's CPU grew");
        assert_eq!(threads_cpu_seconds("no-such-thread-"), 0.0);
    }

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
