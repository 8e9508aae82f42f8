//! The `workspace` import as guests see it: each read is counted against
//! the call's limits, answered by the bound source for the caller's
//! workspace only (`unauthorized` when the call has none), recorded as a
//! receipt, and its failure mapped to the WIT `read-error`.

use super::{Answer, ReadFailure, WorkspaceRead, WorkspaceSource, guest_read};
use crate::bindings::workspace;
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/workspace";

/// Link the import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    workspace::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// A read's document and the workspace's update time, or why not.
type GuestRead = Result<(String, Option<String>), ReadFailure>;

/// A read's failure as the guest sees it.
fn read_error(failure: ReadFailure) -> workspace::ReadError {
    match failure {
        ReadFailure::Unauthorized => workspace::ReadError::Unauthorized,
        ReadFailure::NotFound => workspace::ReadError::NotFound,
        ReadFailure::Rejected => workspace::ReadError::Rejected,
        ReadFailure::Unavailable => workspace::ReadError::Unavailable,
        ReadFailure::TimedOut => workspace::ReadError::TimedOut,
    }
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
    fn workspace_answered(&mut self, source: &dyn WorkspaceSource, (result, receipt): Answer) -> GuestRead {
        let timed_out = matches!(result, Err(ReadFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(receipt, source.is_mock(), timed_out);
        self.successful_reads += usize::from(result.is_ok());
        result.map(|document| (document.body, document.updated_at))
    }

    async fn workspace_read(&mut self, read: WorkspaceRead<'_>) -> GuestRead {
        let (source, workspace_id) = self.workspace_bound(read)?;
        let answer = guest_read(Arc::clone(&source), &workspace_id, read, self.deadline).await;
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
    async fn engagement(&mut self) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(0)?;
        let read = self.workspace_read(WorkspaceRead::Engagement).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error))
    }

    async fn feed(&mut self) -> wasmtime::Result<Result<workspace::FeedRead, workspace::ReadError>> {
        self.admit_use(0)?;
        let read_at = self.feed_read_at();
        let read = self.workspace_read(WorkspaceRead::Feed).await;
        let feed = |(document, updated_at)| workspace::FeedRead { document, updated_at, read_at };
        Ok(read.map(feed).map_err(read_error))
    }

    async fn job(&mut self, id: String) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(id.len())?;
        let read = self.workspace_read(WorkspaceRead::Job(&id)).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error))
    }
}
