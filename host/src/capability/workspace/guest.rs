//! The `workspace` import as guests see it: each read is counted against
//! the call's limits, answered by the bound source for the caller's
//! workspace only (`unauthorized` when the call has none), recorded as a
//! receipt, and its failure mapped to the WIT `read-error`. Blocking and
//! async calls share all of it but the wait.

use super::{ReadFailure, SourceDocument, WorkspaceRead, WorkspaceSource, guest_read, guest_read_async};
use crate::bindings::{asynchronous, workspace};
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/workspace";

/// Link the blocking import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    workspace::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// Link the async import to [`CallState`].
pub(crate) fn add_to_async_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    asynchronous::workspace::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// A read's document and the workspace's update time, or why not.
type GuestRead = Result<(String, Option<String>), ReadFailure>;

/// A read's failure as the bindings module `$wit` names it.
macro_rules! read_error {
    ($wit:path) => {{
        use $wit as wit;
        |failure| match failure {
            ReadFailure::Unauthorized => wit::ReadError::Unauthorized,
            ReadFailure::NotFound => wit::ReadError::NotFound,
            ReadFailure::Rejected => wit::ReadError::Rejected,
            ReadFailure::Unavailable => wit::ReadError::Unavailable,
            ReadFailure::TimedOut => wit::ReadError::TimedOut,
        }
    }};
}

/// A feed read as the bindings module `$wit` names it.
macro_rules! feed_read {
    ($wit:path, $read_at:expr) => {{
        use $wit as wit;
        |(document, updated_at)| wit::FeedRead { document, updated_at, read_at: $read_at }
    }};
}

impl CallState {
    /// The bound source and workspace, or the guest's answer when the call
    /// has none.
    fn workspace_bound(
        &mut self,
        read: WorkspaceRead<'_>,
    ) -> Result<(Arc<dyn WorkspaceSource>, String), ReadFailure> {
        match (self.binding.workspace_source.clone(), self.binding.workspace_id.clone()) {
            (Some(source), Some(workspace_id)) => Ok((source, workspace_id)),
            _ => {
                let target = format!("unbound:{}", read.name());
                self.record(Receipt::new("workspace", target, "unauthorized", Instant::now()), false, false);
                Err(ReadFailure::Unauthorized)
            }
        }
    }

    /// Record the source's answer; what the guest gets of it.
    fn workspace_answered(
        &mut self,
        source: &dyn WorkspaceSource,
        (result, receipt): (Result<SourceDocument, ReadFailure>, Receipt),
    ) -> GuestRead {
        let timed_out = matches!(result, Err(ReadFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(receipt, source.is_mock(), timed_out);
        self.successful_reads += usize::from(result.is_ok());
        result.map(|document| (document.body, document.updated_at))
    }

    fn workspace_read(&mut self, read: WorkspaceRead<'_>) -> GuestRead {
        let (source, workspace_id) = self.workspace_bound(read)?;
        let answer = guest_read(&*source, &workspace_id, read, self.deadline);
        self.workspace_answered(&*source, answer)
    }

    async fn workspace_read_async(&mut self, read: WorkspaceRead<'_>) -> GuestRead {
        let (source, workspace_id) = self.workspace_bound(read)?;
        let answer = guest_read_async(Arc::clone(&source), &workspace_id, read, self.deadline).await;
        self.workspace_answered(&*source, answer)
    }

    /// The time a feed read is stamped with, taken as the read starts; a
    /// scripted source fixes it.
    fn feed_read_at(&self) -> String {
        self.binding
            .workspace_source
            .as_ref()
            .map_or_else(crate::time::now_rfc3339, |source| source.read_at())
    }
}

impl workspace::Host for CallState {
    fn engagement(&mut self) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(0)?;
        let read = self.workspace_read(WorkspaceRead::Engagement);
        Ok(read.map(|(body, ..)| body).map_err(read_error!(workspace)))
    }

    fn feed(&mut self) -> wasmtime::Result<Result<workspace::FeedRead, workspace::ReadError>> {
        self.admit_use(0)?;
        let read_at = self.feed_read_at();
        let read = self.workspace_read(WorkspaceRead::Feed);
        Ok(read.map(feed_read!(workspace, read_at)).map_err(read_error!(workspace)))
    }

    fn job(&mut self, id: String) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(id.len())?;
        let read = self.workspace_read(WorkspaceRead::Job(&id));
        Ok(read.map(|(body, ..)| body).map_err(read_error!(workspace)))
    }
}

use asynchronous::workspace as async_workspace;

impl async_workspace::Host for CallState {
    async fn engagement(&mut self) -> wasmtime::Result<Result<String, async_workspace::ReadError>> {
        self.admit_use(0)?;
        let read = self.workspace_read_async(WorkspaceRead::Engagement).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error!(async_workspace)))
    }

    async fn feed(
        &mut self,
    ) -> wasmtime::Result<Result<async_workspace::FeedRead, async_workspace::ReadError>> {
        self.admit_use(0)?;
        let read_at = self.feed_read_at();
        let read = self.workspace_read_async(WorkspaceRead::Feed).await;
        Ok(read.map(feed_read!(async_workspace, read_at)).map_err(read_error!(async_workspace)))
    }

    async fn job(&mut self, id: String) -> wasmtime::Result<Result<String, async_workspace::ReadError>> {
        self.admit_use(id.len())?;
        let read = self.workspace_read_async(WorkspaceRead::Job(&id)).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error!(async_workspace)))
    }
}
