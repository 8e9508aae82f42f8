//! How a pool slot's memory is reset between calls (`limits.slot_reset`),
//! and whether the cheaper way is safe on this machine.
//!
//! - `window`: the low [`KEEP_RESIDENT`] bytes of each memory and table are
//!   rewritten (zeroes, or the memory image) and the rest is returned to
//!   the kernel. Safe everywhere; every call rewrites the whole window and
//!   keeps it resident, whether it wrote there or not.
//! - `written`: only the pages the call wrote are rewritten, up to
//!   [`KEEP_RESIDENT`], and the rest is returned (wasmtime's reset with
//!   Linux's `PAGEMAP_SCAN`). Under a thousand calls in flight it holds
//!   about 30% less memory at the same calls per second; two threads of
//!   nothing but trivial calls lose about 20% to its scan
//!   (docs/performance.md, "Stop 58"). But the
//!   scan sees only pages in RAM: a page the call wrote that the kernel
//!   swapped out is neither rewritten nor returned, and the next call on
//!   the slot (perhaps another tenant's) would read it. So `written` is
//!   used only where this process's memory cannot be swapped out: no swap
//!   device is active ([`SWAPS`]), or the process's cgroup or one of its
//!   ancestors allows it no swap (`memory.swap.max` is 0).
//! - `auto` (the default): `written` where that holds when the host
//!   starts, `window` otherwise. `written` asked for where it does not
//!   hold refuses the start, naming why.
//!
//! Swap can be turned on while the host runs (`swapon`, a cgroup's limit
//! raised). While `written` is in use, the epoch ticker asks again every
//! [`WATCH_EVERY`]; from the moment swap is possible, every call is
//! refused before it takes a slot (`dependency_unavailable`, with the
//! reason in the call's diagnostic) and [`Watch::refusing`] says why, so a
//! server reports itself not ready: the slots' reset can no longer be
//! trusted, and a restart picks `window`. It asks through files opened
//! when the host started ([`SwapProbe`]), so a process short of file
//! descriptors for a moment is not taken for one whose swap turned on.

#[cfg(doc)]
use crate::limits::KEEP_RESIDENT;
use crate::limits::SlotReset;
use crate::log::{Level, Logger};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Where the kernel lists the active swap devices.
pub const SWAPS: &str = "/proc/swaps";

/// How often a host resetting only written pages asks again whether swap
/// is possible.
pub const WATCH_EVERY: Duration = Duration::from_millis(250);

/// The reset a host runs with, once `limits.slot_reset` is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Rewrite the whole window.
    Window,
    /// Rewrite only the pages written.
    Written,
}

/// `mode` for a machine where `swap` says whether (and why) this
/// process's memory could be swapped out; `Err` names why `written` was
/// asked for and cannot be given.
pub fn resolve(mode: SlotReset, pooling: bool, swap: Option<String>) -> Result<Resolved, String> {
    let scan_exists = cfg!(target_os = "linux");
    match (mode, swap) {
        // Without the pool there are no slots to reuse.
        _ if !pooling => Ok(Resolved::Window),
        (SlotReset::Window, _) => Ok(Resolved::Window),
        (SlotReset::Auto, None) if scan_exists => Ok(Resolved::Written),
        (SlotReset::Auto, _) => Ok(Resolved::Window),
        (SlotReset::Written, _) if !scan_exists => {
            Err("limits.slot_reset = \"written\" needs Linux's PAGEMAP_SCAN".to_owned())
        }
        (SlotReset::Written, Some(reason)) => Err(format!(
            "limits.slot_reset = \"written\" needs memory that cannot be swapped out, and {reason}: \
             turn swap off, set memory.swap.max to 0 for this process's cgroup, or use \"window\""
        )),
        (SlotReset::Written, None) => Ok(Resolved::Written),
    }
}

/// Reads whether this process's memory could be swapped out, through
/// files opened once, when the host starts (`/proc/swaps`,
/// `/proc/self/cgroup`, and the cgroup's and its ancestors'
/// `memory.swap.max`), each read again from its start.
///
/// Opened once because a probe that opened them at every check would, in
/// a process out of file descriptors for a moment (thousands of calls in
/// flight, each holding sockets), find `/proc/swaps` unreadable, count
/// that as swap on, and so refuse every call until a restart. A read that
/// fails through a file already open still counts as swap on. Only a move
/// to another cgroup opens files again.
#[derive(Debug)]
pub struct SwapProbe {
    swaps: Result<File, String>,
    cgroup: Option<File>,
    /// Where the cgroup files are (`/sys/fs/cgroup`).
    root: PathBuf,
    /// The cgroup path the limit files were opened for, and each of them
    /// (deepest first; `None` where a level has none).
    limits: Option<(String, Vec<Option<File>>)>,
}

impl SwapProbe {
    /// The probe of this process, on this machine's files.
    pub fn open() -> Self {
        Self::at(Path::new(SWAPS), Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup"))
    }

    /// A probe on these files (tests point it elsewhere).
    pub(crate) fn at(swaps: &Path, cgroup: &Path, root: &Path) -> Self {
        let mut probe = Self {
            swaps: File::open(swaps).map_err(|error| error.to_string()),
            cgroup: File::open(cgroup).ok(),
            root: root.to_owned(),
            limits: None,
        };
        // The limit files too, now, so that a check needs no new file.
        if let Some(path) = probe.cgroup_path() {
            probe.limit_files(&path);
        }
        probe
    }

    /// Why this process's memory could be swapped out now, or `None` when
    /// it cannot be.
    pub fn swap_possible(&mut self) -> Option<String> {
        let swaps = match &self.swaps {
            Ok(file) => read_from_start(file).map_err(|error| error.to_string()),
            Err(error) => Err(error.clone()),
        };
        let reason = swap_reason(swaps)?;
        let limited = self.cgroup_path().is_some_and(|path| {
            self.limit_files(&path)
                .iter()
                .flatten()
                .any(|file| read_from_start(file).is_ok_and(|max| max.trim() == "0"))
        });
        (!limited).then_some(reason)
    }

    /// This process's cgroup v2 path, as `/proc/self/cgroup` says now.
    fn cgroup_path(&self) -> Option<String> {
        let text = read_from_start(self.cgroup.as_ref()?).ok()?;
        cgroup_path(&text)
    }

    /// The `memory.swap.max` files of `path` and its ancestors, opened
    /// again only when the process moved to another cgroup.
    fn limit_files(&mut self, path: &str) -> &[Option<File>] {
        if self.limits.as_ref().is_none_or(|(opened_for, _)| opened_for != path) {
            let files = ancestors(path)
                .iter()
                .map(|dir| File::open(self.root.join(format!(".{dir}/memory.swap.max"))).ok())
                .collect();
            self.limits = Some((path.to_owned(), files));
        }
        self.limits.as_ref().map_or(&[], |(_, files)| files)
    }
}

/// The whole text of `file`, read from its start (`pread`, so the same
/// descriptor serves every check; procfs and cgroupfs files are written
/// anew for each read from offset 0). At most 64 KiB.
fn read_from_start(file: &File) -> std::io::Result<String> {
    const MOST: usize = 64 * 1024;
    let mut text = Vec::new();
    let mut buffer = [0u8; 4096];
    while text.len() < MOST {
        let read = file.read_at(&mut buffer, text.len() as u64)?;
        if read == 0 {
            break;
        }
        text.extend_from_slice(&buffer[..read]);
    }
    String::from_utf8(text).map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}

/// Why swap may be possible, from `/proc/swaps` as read: a device is
/// active, or the file cannot be read (then nothing says it is not).
pub(crate) fn swap_reason(swaps: Result<String, String>) -> Option<String> {
    match swaps {
        Ok(swaps) => active_swap(&swaps).map(|device| format!("swap device {device} is active")),
        Err(error) => Some(format!("{SWAPS} cannot be read ({error}), so swap may be on")),
    }
}

/// The first active swap device of `/proc/swaps`' text, when any is.
pub(crate) fn active_swap(swaps: &str) -> Option<String> {
    // A header line, then one line a device; a header alone lists none.
    swaps.lines().skip(1).find_map(|line| line.split_whitespace().next().map(str::to_owned))
}

/// The cgroup v2 path of `/proc/self/cgroup`'s text (its `0::` line).
pub(crate) fn cgroup_path(cgroup: &str) -> Option<String> {
    cgroup.lines().find_map(|line| line.strip_prefix("0::")).map(|path| path.trim().to_owned())
}

/// `path` and each of its ancestors below the root, deepest first; the
/// root cgroup has no `memory.swap.max` (in a cgroup namespace the root
/// seen is the container's own cgroup, and its file is read as `""`).
pub(crate) fn ancestors(path: &str) -> Vec<String> {
    let mut dirs = Vec::new();
    let mut current = path.trim_end_matches('/').to_owned();
    while !current.is_empty() {
        dirs.push(current.clone());
        current.truncate(current.rfind('/').unwrap_or(0));
    }
    dirs.push(String::new());
    dirs
}

impl Resolved {
    /// Its name in `limits.slot_reset` (and the `slots.reset` log record).
    pub fn name(self) -> &'static str {
        match self {
            Self::Window => "window",
            Self::Written => "written",
        }
    }

    /// What it rewrites, in words (the bench's line).
    pub fn describe(self) -> &'static str {
        match self {
            Self::Window => "the low 256 KiB window",
            Self::Written => "the pages a call wrote (nothing can be swapped out)",
        }
    }
}

/// What a host resetting only written pages watches: whether swap has
/// become possible since it started.
#[derive(Debug)]
pub struct Watch {
    resolved: Resolved,
    refusing: OnceLock<String>,
    /// Where the moment it starts refusing is said (`slots.reset_unsafe`).
    logger: OnceLock<Logger>,
}

impl Watch {
    /// A watch for a host running with `resolved`.
    pub fn new(resolved: Resolved) -> Self {
        Self { resolved, refusing: OnceLock::new(), logger: OnceLock::new() }
    }

    /// Say to `logger` when this watch starts refusing.
    pub fn tell(&self, logger: Logger) {
        let _ = self.logger.set(logger);
    }

    /// The reset in use.
    pub fn resolved(&self) -> Resolved {
        self.resolved
    }

    /// Why calls are refused, once swap became possible under `written`.
    pub fn refusing(&self) -> Option<&str> {
        self.refusing.get().map(String::as_str)
    }

    /// Ask again (the ticker's job, every [`WATCH_EVERY`]); `probe` says
    /// why swap is possible, if it is. Once refusing, always refusing.
    pub fn check(&self, probe: impl FnOnce() -> Option<String>) {
        if self.resolved == Resolved::Written
            && self.refusing.get().is_none()
            && let Some(reason) = probe()
        {
            let refusing = format!(
                "{reason} since this host started resetting only the pages a call wrote; \
                 its slots' reset can no longer be trusted: restart it"
            );
            if let Some(logger) = self.logger.get() {
                logger.emit(Level::Warn, "slots.reset_unsafe", vec![("reason", refusing.clone())]);
            }
            let _ = self.refusing.set(refusing);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_ONLY: &str = "Filename\tType\tSize\tUsed\tPriority\n";
    const TWO_DEVICES: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
        /var/tmp/harmonia-ci.swap               file\t\t524284\t\t0\t\t-2\n\
        /dev/zram0                              partition\t4194300\t\t0\t\t100\n";

    #[test]
    fn the_swap_devices_are_read_from_proc_swaps() {
        assert_eq!(active_swap(TWO_DEVICES).as_deref(), Some("/var/tmp/harmonia-ci.swap"));
        assert_eq!(active_swap(HEADER_ONLY), None);
        assert_eq!(active_swap(""), None);
    }

    #[test]
    fn an_unreadable_proc_swaps_counts_as_swap_possible() {
        let missing = "No such file or directory (os error 2)".to_owned();
        assert!(swap_reason(Err(missing)).is_some_and(|why| why.contains("cannot be read")));
        assert_eq!(swap_reason(Ok(HEADER_ONLY.into())), None);
        assert!(swap_reason(Ok(TWO_DEVICES.into())).is_some_and(|why| why.contains("harmonia-ci.swap")));
    }

    /// A directory of stand-ins for `/proc/swaps`, `/proc/self/cgroup`
    /// and the cgroup tree.
    fn stand_ins(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("harmonia-swap-probe-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cgroup/app.slice/harmonia.service")).unwrap();
        std::fs::create_dir_all(dir.join("cgroup/moved")).unwrap();
        std::fs::write(dir.join("swaps"), HEADER_ONLY).unwrap();
        std::fs::write(dir.join("self-cgroup"), "0::/app.slice/harmonia.service\n").unwrap();
        std::fs::write(dir.join("cgroup/app.slice/harmonia.service/memory.swap.max"), "max\n").unwrap();
        std::fs::write(dir.join("cgroup/app.slice/memory.swap.max"), "max\n").unwrap();
        std::fs::write(dir.join("cgroup/moved/memory.swap.max"), "0\n").unwrap();
        dir
    }

    fn probe(dir: &Path) -> SwapProbe {
        SwapProbe::at(&dir.join("swaps"), &dir.join("self-cgroup"), &dir.join("cgroup"))
    }

    #[test]
    fn a_probe_reads_swap_and_the_cgroups_limits_again_at_every_check() {
        let dir = stand_ins("again");
        let mut probe = probe(&dir);
        assert_eq!(probe.swap_possible(), None);
        // Written in place, as the kernel's files change under a reader.
        std::fs::write(dir.join("swaps"), TWO_DEVICES).unwrap();
        assert!(probe.swap_possible().is_some_and(|why| why.contains("harmonia-ci.swap")));
        std::fs::write(dir.join("cgroup/app.slice/memory.swap.max"), "0\n").unwrap();
        assert_eq!(probe.swap_possible(), None, "an ancestor allows no swap");
        std::fs::write(dir.join("cgroup/app.slice/memory.swap.max"), "max\n").unwrap();
        assert!(probe.swap_possible().is_some(), "the ancestor's limit raised");
        // Moved to a cgroup that allows no swap: its files are opened then.
        std::fs::write(dir.join("self-cgroup"), "0::/moved\n").unwrap();
        assert_eq!(probe.swap_possible(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_probe_needs_no_new_file_after_it_is_opened() {
        // A process out of file descriptors cannot open a file; neither can
        // anyone open one that is gone. A probe that opened its files at
        // each check would find /proc/swaps unreadable here and take it for
        // swap turned on, refusing every call for good.
        let dir = stand_ins("opened");
        let mut probe = probe(&dir);
        std::fs::remove_file(dir.join("swaps")).unwrap();
        std::fs::remove_file(dir.join("self-cgroup")).unwrap();
        assert_eq!(probe.swap_possible(), None);
        assert_eq!(probe.swap_possible(), None, "read again from the start");
        // What could not be opened at the start still counts as swap on.
        let mut missing = SwapProbe::at(&dir.join("swaps"), &dir.join("self-cgroup"), &dir.join("cgroup"));
        assert!(missing.swap_possible().is_some_and(|why| why.contains("cannot be read")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cgroup_and_its_ancestors_are_read_from_proc_self_cgroup() {
        assert_eq!(
            cgroup_path("0::/system.slice/harmonia.service\n").as_deref(),
            Some("/system.slice/harmonia.service")
        );
        // cgroup v1 lines only: no v2 path, so no cgroup limit is relied on.
        assert_eq!(cgroup_path("12:memory:/docker/abc\n"), None);
        assert_eq!(
            ancestors("/system.slice/harmonia.service"),
            ["/system.slice/harmonia.service", "/system.slice", ""]
        );
        assert_eq!(ancestors("/"), [""]);
    }

    #[test]
    fn written_is_given_only_where_nothing_can_be_swapped_out() {
        let swap = || Some("swap device /dev/zram0 is active".to_owned());
        let linux = cfg!(target_os = "linux");
        assert_eq!(
            resolve(SlotReset::Auto, true, None),
            Ok(if linux { Resolved::Written } else { Resolved::Window })
        );
        assert_eq!(resolve(SlotReset::Auto, true, swap()), Ok(Resolved::Window));
        assert_eq!(resolve(SlotReset::Window, true, None), Ok(Resolved::Window));
        assert_eq!(resolve(SlotReset::Written, false, swap()), Ok(Resolved::Window), "no pool, no slots");
        let refused = resolve(SlotReset::Written, true, swap()).unwrap_err();
        if linux {
            assert!(refused.contains("/dev/zram0") && refused.contains("window"), "{refused}");
            assert_eq!(resolve(SlotReset::Written, true, None), Ok(Resolved::Written));
        }
    }

    #[test]
    fn a_watch_refuses_from_the_first_time_swap_is_possible_and_for_good() {
        let watch = Watch::new(Resolved::Written);
        let log = std::sync::Arc::new(crate::log::MemoryLog::default());
        watch.tell(Logger::new(log.clone()));
        watch.check(|| None);
        assert_eq!(watch.refusing(), None);
        watch.check(|| Some("swap device /dev/zram0 is active".into()));
        let refusing = watch.refusing().unwrap().to_owned();
        assert!(refusing.contains("/dev/zram0"), "{refusing}");
        watch.check(|| None);
        assert_eq!(watch.refusing(), Some(refusing.as_str()), "swap turned off again does not undo it");
        let said: Vec<_> = log.records().into_iter().map(|record| (record.event, record.level)).collect();
        assert_eq!(said, [("slots.reset_unsafe", Level::Warn)], "said once, when it began");
        let window = Watch::new(Resolved::Window);
        window.check(|| Some("swap device /dev/zram0 is active".into()));
        assert_eq!(window.refusing(), None, "the window's reset needs no watch");
    }
}
