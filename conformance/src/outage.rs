//! An outage on cue: a workspace source that answers `unavailable` for
//! the next reads it is told to, then reads from the source it wraps.
//!
//! The one "fail, then recover" wrapper the project uses: the demo shows
//! retries with it offline, and the session tests drive the guard's retry
//! rules through it. Each failed read has a receipt naming the read and
//! saying the outage was injected, so a trace shows it for what it is.

use harmonia_host::capability::workspace::{ReadFailure, Reading, WorkspaceRead, WorkspaceSource, answered};
use harmonia_host::capability::{CapabilityKind, Receipt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Wraps a source; the next [`Outage::fail_next`] reads answer
/// `unavailable` without reaching it.
#[derive(Debug)]
pub struct Outage {
    inner: Arc<dyn WorkspaceSource>,
    fail_next: AtomicU32,
}

impl Outage {
    /// `inner`, healthy until told otherwise.
    pub fn new(inner: Arc<dyn WorkspaceSource>) -> Self {
        Self { inner, fail_next: AtomicU32::new(0) }
    }

    /// `inner`, whose next `reads` reads fail.
    pub fn failing(inner: Arc<dyn WorkspaceSource>, reads: u32) -> Self {
        Self { inner, fail_next: AtomicU32::new(reads) }
    }

    /// Make the next `reads` reads fail (0: none).
    pub fn fail_next(&self, reads: u32) {
        self.fail_next.store(reads, Ordering::SeqCst);
    }
}

impl WorkspaceSource for Outage {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn read<'a>(
        self: Arc<Self>,
        workspace: &'a str,
        read: WorkspaceRead<'a>,
        deadline: Instant,
    ) -> Reading<'a> {
        let failing = self
            .fail_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1))
            .is_ok();
        if failing {
            let target = format!("{}:{} (injected outage)", self.kind(), read.name());
            return answered((
                Err(ReadFailure::Unavailable),
                Receipt::new(CapabilityKind::Workspace, target, "unavailable", Instant::now()),
            ));
        }
        Arc::clone(&self.inner).read(workspace, read, deadline)
    }
}
