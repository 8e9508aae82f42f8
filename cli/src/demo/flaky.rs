//! A workspace source that fails on cue, so the demo can show retries
//! offline.

use harmonia_host::capability::workspace::{ReadFailure, Reading, WorkspaceRead, WorkspaceSource, answered};
use harmonia_host::capability::{CapabilityKind, Receipt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Wraps a source; the next `fail_next` reads answer `unavailable`.
#[derive(Debug)]
pub struct FlakySource {
    inner: Arc<dyn WorkspaceSource>,
    fail_next: AtomicU32,
}

impl FlakySource {
    pub fn new(inner: Arc<dyn WorkspaceSource>) -> Self {
        Self { inner, fail_next: AtomicU32::new(0) }
    }

    /// Make the next `reads` reads fail.
    pub fn fail_next(&self, reads: u32) {
        self.fail_next.store(reads, Ordering::SeqCst);
    }
}

impl WorkspaceSource for FlakySource {
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
            let receipt = Receipt::new(
                CapabilityKind::Workspace,
                format!("{}:{} (injected outage)", self.kind(), read.name()),
                "unavailable",
                Instant::now(),
            );
            return answered((Err(ReadFailure::Unavailable), receipt));
        }
        Arc::clone(&self.inner).read(workspace, read, deadline)
    }
}
