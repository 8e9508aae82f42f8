//! Loopback's ephemeral ports between figures.
//!
//! Every connection a figure closes waits in `TIME_WAIT` for a minute, and
//! holds its local port meanwhile. A run started soon after another (or a
//! figure after one that closed thousands of connections) could find too
//! few of the machine's ephemeral ports free, and count calls failing with
//! `dependency_unavailable` for want of a socket, which is no figure of
//! ours. So before a figure the bench waits, for at most
//! [`WAIT_LIMIT`], until the ports free outnumber those the figure will
//! hold, and says so when it waited or when the wait ran out.
//!
//! Parts: [`time_wait_sockets`] and [`ephemeral_ports`] read the kernel's
//! tables (pure parsers of their text, tested); [`wait_for`] is the wait.

use std::time::{Duration, Instant};

/// The longest wait for ports: `TIME_WAIT` lasts 60 s on Linux.
const WAIT_LIMIT: Duration = Duration::from_secs(75);

/// Ports kept free beyond a figure's own: connections the figure reopens
/// in its window, and the rest of the machine.
const SPARE_PORTS: usize = 4_000;

/// Sockets in `TIME_WAIT` in the text of `/proc/net/tcp` or `tcp6`: the
/// fourth column (`st`) of each entry is `06`.
pub fn time_wait_sockets(table: &str) -> usize {
    table.lines().skip(1).filter(|entry| entry.split_whitespace().nth(3) == Some("06")).count()
}

/// How many ports `ip_local_port_range`'s text ("32768\t60999") spans.
pub fn ephemeral_ports(range: &str) -> Option<usize> {
    let mut bounds = range.split_whitespace().map(str::parse::<usize>);
    let (Some(Ok(low)), Some(Ok(high))) = (bounds.next(), bounds.next()) else { return None };
    (high >= low).then(|| high - low + 1)
}

/// The ports free now, if this machine says (Linux).
fn free_ports() -> Option<usize> {
    let range = ephemeral_ports(&std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?)?;
    let waiting: usize = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .map(|table| time_wait_sockets(&table))
        .sum();
    Some(range.saturating_sub(waiting))
}

/// Wait until `needed` ports (and [`SPARE_PORTS`]) are free, for at most
/// [`WAIT_LIMIT`]; what happened, when anything did, as a line to print.
pub fn wait_for(needed: usize) -> Option<String> {
    let started = Instant::now();
    loop {
        let free = free_ports()?;
        if free >= needed + SPARE_PORTS {
            let waited = started.elapsed();
            return (waited >= Duration::from_secs(1)).then(|| {
                format!(
                    "  (waited {:.0} s for closed connections in TIME_WAIT to free loopback's ports)",
                    waited.as_secs_f64()
                )
            });
        }
        if started.elapsed() >= WAIT_LIMIT {
            return Some(format!(
                "  only {free} ephemeral ports free after {:.0} s (the figure holds {needed}): calls may fail with dependency_unavailable",
                WAIT_LIMIT.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_in_time_wait_are_counted_by_their_state_column() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n\
   1: 0100007F:8A3C 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0\n\
   2: 0100007F:8A3E 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1\n\
   3: 0100007F:8A40 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0\n";
        assert_eq!(time_wait_sockets(table), 2);
        assert_eq!(time_wait_sockets("  sl  local_address rem_address   st\n"), 0);
        assert_eq!(time_wait_sockets(""), 0);
    }

    #[test]
    fn the_ephemeral_range_is_read_inclusive_and_refused_when_malformed() {
        assert_eq!(ephemeral_ports("32768\t60999\n"), Some(28_232));
        assert_eq!(ephemeral_ports("1024 1024"), Some(1));
        assert_eq!(ephemeral_ports("60999 32768"), None);
        assert_eq!(ephemeral_ports("32768"), None);
        assert_eq!(ephemeral_ports("a b"), None);
    }
}
