//! The `workspace` import as guests see it: each read is counted against
//! the call's limits, answered by the bound source for the caller's
//! workspace only (`unauthorized` when the call has none), recorded as a
//! receipt, and its failure mapped to the WIT `read-error`.

use super::{ReadFailure, WorkspaceRead, guest_read};
use crate::bindings::workspace;
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/workspace";

/// Link the import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    workspace::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

impl CallState {
    /// Read from the bound source: the document and the workspace's
    /// update time.
    fn workspace_read(
        &mut self,
        read: WorkspaceRead<'_>,
    ) -> Result<(String, Option<String>), workspace::ReadError> {
        let started = Instant::now();
        let (Some(source), Some(workspace_id)) =
            (self.binding.workspace_source.clone(), self.binding.workspace_id.clone())
        else {
            let receipt =
                Receipt::new("workspace", format!("unbound:{}", read.name()), "unauthorized", started);
            self.record(receipt, false, false);
            return Err(workspace::ReadError::Unauthorized);
        };
        let (result, receipt) = guest_read(&*source, &workspace_id, read, self.deadline);
        let timed_out = matches!(result, Err(ReadFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(receipt, source.is_mock(), timed_out);
        self.successful_reads += usize::from(result.is_ok());
        result.map(|document| (document.body, document.updated_at)).map_err(|failure| match failure {
            ReadFailure::Unauthorized => workspace::ReadError::Unauthorized,
            ReadFailure::NotFound => workspace::ReadError::NotFound,
            ReadFailure::Rejected => workspace::ReadError::Rejected,
            ReadFailure::Unavailable => workspace::ReadError::Unavailable,
            ReadFailure::TimedOut => workspace::ReadError::TimedOut,
        })
    }
}

impl workspace::Host for CallState {
    fn engagement(&mut self) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(0)?;
        Ok(self.workspace_read(WorkspaceRead::Engagement).map(|(body, ..)| body))
    }

    fn feed(&mut self) -> wasmtime::Result<Result<workspace::FeedRead, workspace::ReadError>> {
        self.admit_use(0)?;
        // Stamped as the read starts; a scripted source fixes the time.
        let read_at = self
            .binding
            .workspace_source
            .as_ref()
            .map_or_else(crate::time::now_rfc3339, |source| source.read_at());
        Ok(self.workspace_read(WorkspaceRead::Feed).map(|(document, updated_at)| workspace::FeedRead {
            document,
            updated_at,
            read_at,
        }))
    }

    fn job(&mut self, id: String) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.admit_use(id.len())?;
        Ok(self.workspace_read(WorkspaceRead::Job(&id)).map(|(body, ..)| body))
    }
}
