//! Hot reload: the plugin set a server offers changes without a restart,
//! and only ever to a whole, verified set.
//!
//! Parts:
//! - [`Plugins`]: the set being served, behind one atomic pointer. A call
//!   loads it once and holds its `Arc` to the end, so a call started on
//!   the old set finishes on it while new calls see the new one.
//! - [`Source`]: what to watch (the lock file, the plugin directory, the
//!   plugin files) and how to build a new set from them.
//! - [`Reloader`]: the task that watches, builds, swaps and tells clients.
//!
//! How a change is noticed: the watched paths are polled every
//! `[reload] poll_interval_ms` (a stat of each, the entries of a
//! directory, and the bytes of a small file such as the lock), and on
//! `SIGHUP`. Polling rather than inotify (`notify`): the work is bounded
//! by the interval whatever the rate of changes, it sees changes that
//! inotify misses (network file systems, a Kubernetes volume swapping a
//! symlink), and it needs no thread or descriptor per watched directory.
//! A change is acted on only once the paths stayed the same for one whole
//! interval, so a file still being written is not read.
//!
//! The new host is built on the server's call slots (the first set's):
//! calls still running on a replaced set and the new set's calls count
//! against one `max_in_flight_calls`, and a drain waits for all of them.
//!
//! A build is the host's own load: every locked component is checked
//! against its digests and signatures, every plain file against its pin,
//! before anything is compiled; any refusal refuses the whole new set.
//! The old set then keeps serving, and the refusal is logged (the
//! loader's reason: a path, a digest, a key fingerprint, never a secret)
//! and counted in `harmonia_plugin_reloads_total{outcome="refused"}`.
//!
//! A build that the files changed under (they look different after it
//! than before it) may have read half of one state and half of another:
//! it is thrown away unswapped and tried again once they settle.
//!
//! Bounded work: one build at a time, on a blocking thread; a trigger
//! arriving while one runs is kept as one pending reload, however many
//! arrive (a storm of changes or signals costs at most one more build).

use crate::metrics::Reload;
use crate::state::ServeState;
use arc_swap::ArcSwap;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::{CallSlots, Host};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};
use tokio::sync::{Notify, watch};

/// Files at most this large are fingerprinted by their bytes too (a lock
/// file rewritten within one mtime tick, at the same length, is seen).
const HASHED_BYTES: u64 = 256 * 1024;

/// The plugin set being served.
pub struct Plugins {
    current: ArcSwap<Liaison>,
    changed: watch::Sender<u64>,
}

impl Plugins {
    /// Serve `liaison`.
    pub fn new(liaison: Liaison) -> Self {
        Self { current: ArcSwap::from_pointee(liaison), changed: watch::channel(0).0 }
    }

    /// The set serving now; hold it for the whole of a call.
    pub fn current(&self) -> Arc<Liaison> {
        self.current.load_full()
    }

    /// Serve `next` from now on; when its tools differ, tell whoever
    /// watches [`Plugins::changes`].
    pub fn swap(&self, next: Liaison, tools_changed: bool) {
        self.current.store(Arc::new(next));
        if tools_changed {
            self.changed.send_modify(|generation| *generation += 1);
        }
    }

    /// A receiver that wakes whenever the tools offered change.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// The tools a host offers, by name and component hash.
fn offered(host: &Host) -> BTreeSet<(String, String)> {
    host.tools().map(|info| (info.descriptor.name.clone(), info.sha256.clone())).collect()
}

/// Builds a new host the way the server's was built (the config read
/// again), on the server's call slots (given: the new host must run its
/// calls on them, [`harmonia_host::HostBuilder::call_slots`], or it is
/// refused); runs on a blocking thread.
pub type Build = Arc<dyn Fn(&CallSlots) -> anyhow::Result<Host> + Send + Sync>;

/// What a reload watches and how it builds.
#[derive(Clone)]
pub struct Source {
    /// The lock file, the plugin directory and the plugin files.
    pub watch: Vec<PathBuf>,
    /// A new host from them.
    pub build: Build,
}

/// Start reloading `state`'s plugins from `source` as `config` says:
/// watching (when enabled) and on every `SIGHUP`. Call within a tokio
/// runtime; the reloader stops when the returned handle is dropped.
pub fn start(state: Arc<ServeState>, source: Source, config: &crate::config::ReloadConfig) -> Arc<Reloader> {
    let reloader = Arc::new(Reloader::spawn(state, source, config.interval(), config.enabled));
    let weak = Arc::downgrade(&reloader);
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else { return };
        while hangups.recv().await.is_some() {
            let Some(reloader) = weak.upgrade() else { return };
            tracing::info!("SIGHUP: reloading the plugins");
            reloader.trigger();
        }
    });
    reloader
}

/// What a watched path looked like.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    path: PathBuf,
    len: Option<u64>,
    modified: Option<SystemTime>,
    inode: Option<u64>,
    bytes: Option<[u8; 32]>,
}

fn seen(path: PathBuf) -> Seen {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(&path).ok();
    let bytes = metadata
        .as_ref()
        .filter(|metadata| metadata.is_file() && metadata.len() <= HASHED_BYTES)
        .and_then(|_| std::fs::read(&path).ok())
        .map(|bytes| Sha256::digest(bytes).into());
    Seen {
        len: metadata.as_ref().map(|metadata| metadata.len()),
        modified: metadata.as_ref().and_then(|metadata| metadata.modified().ok()),
        inode: metadata.as_ref().map(MetadataExt::ino),
        bytes,
        path,
    }
}

/// The state of every watched path (a directory's entries one level down).
fn fingerprint(paths: &[PathBuf]) -> Vec<Seen> {
    let mut out = Vec::new();
    for path in paths {
        match std::fs::read_dir(path) {
            Ok(entries) => {
                let mut entries: Vec<PathBuf> =
                    entries.filter_map(|entry| Some(entry.ok()?.path())).collect();
                entries.sort();
                out.push(seen(path.clone()));
                out.extend(entries.into_iter().map(seen));
            }
            Err(_) => out.push(seen(path.clone())),
        }
    }
    out
}

/// Counts of what the reloader did, for whoever waits on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Builds started.
    pub builds: u64,
    /// New sets swapped in (tools changed or not).
    pub swapped: u64,
    /// New sets refused (the old one kept serving).
    pub refused: u64,
    /// Builds thrown away unswapped: the files changed while they ran.
    pub discarded: u64,
    /// Why the last refused set was refused (as logged).
    pub last_refusal: Option<String>,
    /// Whether a build runs now.
    pub building: bool,
}

/// The reload task; stopped when dropped.
pub struct Reloader {
    trigger: Arc<Trigger>,
    status: watch::Receiver<Status>,
    task: tokio::task::JoinHandle<()>,
}

/// How often to look.
#[derive(Clone, Copy)]
struct Every {
    /// Between two looks, and before a discarded build is tried again.
    interval: Duration,
    /// Whether to look when not triggered.
    watching: bool,
}

/// A reload asked for out of turn (SIGHUP): at most one is kept pending.
#[derive(Default)]
struct Trigger {
    pending: AtomicBool,
    notify: Notify,
}

impl Reloader {
    /// Keep `state`'s plugins up to date with `source`: looked at every
    /// `interval` when `watching`, and on [`Reloader::trigger`]. Call
    /// within a tokio runtime.
    pub fn spawn(state: Arc<ServeState>, source: Source, interval: Duration, watching: bool) -> Self {
        let trigger = Arc::new(Trigger::default());
        let (report, status) = watch::channel(Status::default());
        let every = Every { interval, watching };
        // What the set serving now was built from (or a later state,
        // which a change then shows).
        let loaded = fingerprint(&source.watch);
        let task = tokio::spawn(watch_loop(state, source, every, loaded, Arc::clone(&trigger), report));
        Self { trigger, status, task }
    }

    /// Reload now, whatever the files look like (as on `SIGHUP`). While a
    /// build runs, any number of these make one more.
    pub fn trigger(&self) {
        self.trigger.pending.store(true, Ordering::Release);
        self.trigger.notify.notify_one();
    }

    /// What the reloader did so far.
    pub fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    /// Wait until no build runs and none is pending; the status then (a
    /// discarded build's retry, due an interval later, is not waited for).
    pub async fn settled(&self) -> Status {
        let mut status = self.status.clone();
        loop {
            // Pending first: the loop reports a build before it clears
            // the trigger, so a trigger seen cleared is a build seen.
            let pending = self.trigger.pending.load(Ordering::Acquire);
            let now = status.borrow_and_update().clone();
            if !pending && !now.building {
                return now;
            }
            if status.changed().await.is_err() {
                return now;
            }
        }
    }

    /// Wait until the status is as `done` says; the status then.
    pub async fn wait_for(&self, done: impl Fn(&Status) -> bool) -> Status {
        let mut status = self.status.clone();
        loop {
            let now = status.borrow_and_update().clone();
            if done(&now) {
                return now;
            }
            if status.changed().await.is_err() {
                return now;
            }
        }
    }
}

impl Drop for Reloader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn watch_loop(
    state: Arc<ServeState>,
    source: Source,
    every: Every,
    mut loaded: Vec<Seen>,
    trigger: Arc<Trigger>,
    report: watch::Sender<Status>,
) {
    let paths = Arc::new(source.watch.clone());
    let look = || {
        let paths = Arc::clone(&paths);
        async move { tokio::task::spawn_blocking(move || fingerprint(&paths)).await.unwrap_or_default() }
    };
    let mut settling: Option<Vec<Seen>> = None;
    let mut retry = false;
    loop {
        let forced = tokio::select! {
            _ = tokio::time::sleep(every.interval) => std::mem::take(&mut retry),
            _ = trigger.notify.notified() => true,
        };
        if !forced && !every.watching {
            continue;
        }
        let now = look().await;
        let forced = forced | trigger.pending.load(Ordering::Acquire);
        if !forced {
            if now == loaded {
                settling = None;
                continue;
            }
            // Changed since the last look: wait one interval for the
            // writer to finish.
            if settling.as_ref() != Some(&now) {
                settling = Some(now);
                continue;
            }
        }
        report.send_modify(|status| {
            status.builds += 1;
            status.building = true;
        });
        // Taken before the build: a trigger arriving during it makes one
        // more.
        trigger.pending.store(false, Ordering::Release);
        (settling, retry) = (None, false);
        let built = build(&source.build, state.call_slots()).await;
        // The files changed while the build read them: what it read may
        // be half one state and half another. Not swapped; built again
        // once they settle.
        if look().await != now {
            tracing::info!("the plugin files changed during the reload: trying again once they settle");
            retry = true;
            report.send_modify(|status| {
                status.building = false;
                status.discarded += 1;
            });
            continue;
        }
        let refused = swap(&state, built).err();
        loaded = now;
        report.send_modify(|status| {
            status.building = false;
            match refused {
                None => status.swapped += 1,
                Some(reason) => {
                    status.refused += 1;
                    status.last_refusal = Some(reason);
                }
            }
        });
    }
}

/// A new host, built on a blocking thread.
async fn build(build: &Build, slots: &CallSlots) -> anyhow::Result<Host> {
    let (build, slots) = (Arc::clone(build), slots.clone());
    tokio::task::spawn_blocking(move || build(&slots))
        .await
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the build panicked")))
}

/// Swap `built` in, or say why it was refused.
fn swap(state: &ServeState, built: anyhow::Result<Host>) -> Result<(), String> {
    let old = state.liaison();
    let shares_the_bound = |host: Host| {
        // Its own slots would let the calls still running on the old set
        // and the new set's calls run past the server's bound together.
        anyhow::ensure!(
            host.call_slots().same_gate(state.call_slots()),
            "the new host was not built on the server's call slots"
        );
        Ok(host)
    };
    match built.and_then(shares_the_bound).and_then(|host| Ok(old.with_host(host)?)) {
        Ok(next) => {
            let changed = offered(old.host()) != offered(next.host());
            let tools = next.host().tools().count();
            state.plugins.swap(next, changed);
            if let Some(metrics) = state.metrics() {
                metrics.plugin_reload(if changed { Reload::Swapped } else { Reload::Unchanged });
            }
            tracing::info!(tools, changed, "plugins reloaded");
            Ok(())
        }
        Err(error) => {
            if let Some(metrics) = state.metrics() {
                metrics.plugin_reload(Reload::Refused);
            }
            let reason = format!("{error:#}");
            tracing::warn!(%reason, "plugin reload refused: the old set keeps serving");
            Err(reason)
        }
    }
}
