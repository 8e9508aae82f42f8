//! The workspace as a unit ([`WorkspaceCapability`]): its per-call state
//! ([`WorkspaceCtx`]: the source and the caller's workspace), the
//! `workspace` import as guests see it (each read counted against the
//! call's limits, answered by the bound source for the caller's workspace
//! only, `unauthorized` when the call has none, recorded as a receipt, its
//! failure mapped to the WIT `read-error`), and its linker wiring.

use super::source::{Answer, ReadFailure, WorkspaceRead, WorkspaceSource, guest_read};
use super::sources::from_config;
use crate::bindings::workspace;
use crate::capability::kind::CapabilityKind;
use crate::capability::receipt::Receipt;
use crate::capability::unit::{Caller, Capability, Project};
use crate::capability::uses::CallUses;
use crate::config::{ConfigError, HostConfig};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasData, Linker};

/// The workspace capability.
#[derive(Debug)]
pub struct WorkspaceCapability;

/// The workspace's state in one call.
#[derive(Debug, Default)]
pub struct WorkspaceCtx {
    /// The source, when the call is granted the workspace.
    pub source: Option<Arc<dyn WorkspaceSource>>,
    /// The caller's workspace id; reads without one are unauthorized.
    pub workspace_id: Option<String>,
}

/// What the `workspace` import runs on.
pub struct WorkspaceView<'a> {
    ctx: &'a mut WorkspaceCtx,
    uses: &'a mut CallUses,
}

/// The view as wasmtime's bindings name it.
struct HasWorkspace;

impl HasData for HasWorkspace {
    type Data<'a> = WorkspaceView<'a>;
}

impl Capability for WorkspaceCapability {
    const KIND: CapabilityKind = CapabilityKind::Workspace;
    type Source = Arc<dyn WorkspaceSource>;
    type Ctx = WorkspaceCtx;
    type View<'a> = WorkspaceView<'a>;

    fn from_config(config: &HostConfig) -> Result<Self::Source, ConfigError> {
        from_config(&config.workspace, config.mock)
    }

    fn bind(source: &Self::Source, caller: Caller<'_>) -> WorkspaceCtx {
        WorkspaceCtx { source: Some(Arc::clone(source)), workspace_id: caller.workspace.map(str::to_owned) }
    }

    fn view<'a>(ctx: &'a mut WorkspaceCtx, uses: &'a mut CallUses) -> WorkspaceView<'a> {
        WorkspaceView { ctx, uses }
    }

    fn add_to_linker<T: Project<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        workspace::add_to_linker::<T, HasWorkspace>(linker, |state| {
            let (ctx, uses) = state.project();
            Self::view(ctx, uses)
        })
    }
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

impl WorkspaceView<'_> {
    /// The bound source and workspace, or the guest's answer when the call
    /// has none.
    fn bound(&mut self, read: WorkspaceRead<'_>) -> Result<(Arc<dyn WorkspaceSource>, String), ReadFailure> {
        match (self.ctx.source.clone(), self.ctx.workspace_id.clone()) {
            (Some(source), Some(workspace_id)) => Ok((source, workspace_id)),
            _ => {
                let target = format!("unbound:{}", read.name());
                let receipt = Receipt::new(CapabilityKind::Workspace, target, "unauthorized", Instant::now());
                self.uses.record(receipt, false, false);
                Err(ReadFailure::Unauthorized)
            }
        }
    }

    /// Record the source's answer; what the guest gets of it.
    fn answered(&mut self, source: &dyn WorkspaceSource, (result, receipt): Answer) -> GuestRead {
        let timed_out = matches!(result, Err(ReadFailure::TimedOut));
        self.uses.answered(receipt, source.is_mock(), result.is_ok(), timed_out);
        result.map(|document| (document.body, document.updated_at))
    }

    async fn read(&mut self, read: WorkspaceRead<'_>) -> GuestRead {
        let (source, workspace_id) = self.bound(read)?;
        let answer = guest_read(Arc::clone(&source), &workspace_id, read, self.uses.deadline).await;
        self.answered(&*source, answer)
    }

    /// The time a feed read is stamped with, taken as the read starts; a
    /// scripted source fixes it.
    fn feed_read_at(&self) -> String {
        self.ctx.source.as_ref().map_or_else(harmonia_contract::time::now_rfc3339, |source| source.read_at())
    }
}

impl workspace::Host for WorkspaceView<'_> {
    async fn engagement(&mut self) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.uses.admit(0)?;
        let read = self.read(WorkspaceRead::Engagement).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error))
    }

    async fn feed(&mut self) -> wasmtime::Result<Result<workspace::FeedRead, workspace::ReadError>> {
        self.uses.admit(0)?;
        let read_at = self.feed_read_at();
        let read = self.read(WorkspaceRead::Feed).await;
        let feed = |(document, updated_at)| workspace::FeedRead { document, updated_at, read_at };
        Ok(read.map(feed).map_err(read_error))
    }

    async fn job(&mut self, id: String) -> wasmtime::Result<Result<String, workspace::ReadError>> {
        self.uses.admit(id.len())?;
        let read = self.read(WorkspaceRead::Job(&id)).await;
        Ok(read.map(|(body, ..)| body).map_err(read_error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::workspace::Host as _;
    use crate::capability::testing::{Bench, run};
    use crate::capability::workspace::mock;
    use crate::limits::MAX_RECEIPT_BYTES;
    use std::time::Duration;

    /// The fixtures, bound to a call for workspace `w1`.
    fn bench() -> Bench<WorkspaceCapability> {
        let source: Arc<dyn WorkspaceSource> = Arc::new(mock::source());
        Bench::bound(&source, Caller { workspace: Some("w1") }, Duration::from_secs(5))
    }

    #[test]
    fn links_alone() {
        Bench::<WorkspaceCapability>::link().expect("the import links on a bare engine");
    }

    #[test]
    fn each_read_leaves_a_receipt_of_its_kind_target_and_status() {
        let mut bench = bench();
        let (engagement, reserved) = run(async {
            let mut view = bench.view();
            (view.engagement().await.unwrap(), view.job("..".into()).await.unwrap())
        });
        assert!(engagement.expect("the fixture answers").starts_with('{'));
        assert!(matches!(reserved, Err(workspace::ReadError::NotFound)));
        let seen: Vec<_> =
            bench.receipts().iter().map(|r| (r.capability, r.target.as_str(), r.status.as_str())).collect();
        assert_eq!(
            seen,
            [
                (CapabilityKind::Workspace, "mock:engagement", "ok"),
                (CapabilityKind::Workspace, "mock:job", "invalid_job_id")
            ]
        );
        assert_eq!(bench.uses().successful_reads, 1);
        assert!(bench.uses().mock_provenance());
    }

    #[test]
    fn a_call_without_a_workspace_is_unauthorized() {
        let source: Arc<dyn WorkspaceSource> = Arc::new(mock::source());
        let mut bench =
            Bench::<WorkspaceCapability>::bound(&source, Caller::default(), Duration::from_secs(5));
        let answer = run(async { bench.view().feed().await.unwrap() });
        assert!(matches!(answer, Err(workspace::ReadError::Unauthorized)));
        let receipt = &bench.receipts()[0];
        assert_eq!(
            (receipt.capability, receipt.target.as_str(), receipt.status.as_str()),
            (CapabilityKind::Workspace, "unbound:feed", "unauthorized")
        );
    }

    #[test]
    fn a_job_id_past_the_receipt_bytes_traps() {
        let mut bench = bench();
        run(async {
            let trap = bench.view().job("j".repeat(MAX_RECEIPT_BYTES + 1)).await.expect_err("past the limit");
            assert_eq!(trap.to_string(), "capability use limit reached");
        });
        assert!(bench.uses().capability_limit);
        assert!(bench.receipts().is_empty());
    }
}
