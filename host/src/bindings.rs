//! Host-side bindings of `wit/`, and the per-call store data that
//! implements the capability imports.
//!
//! One host world includes both tool worlds, so one linker serves every
//! plugin; the loader's policy decides which capability each may import.
//!
//! Every capability use is counted: past [`MAX_CAPABILITY_USES`] uses or
//! [`MAX_RECEIPT_BYTES`] of receipt targets in one call, the use traps and
//! the call ends as `tool_execution_failed`, so a guest looping on a refused
//! URL cannot grow the host's memory.

#![allow(missing_docs)]

use crate::capability::public_web::{PublicWebSource, WebFailure};
use crate::capability::workspace::{ReadFailure, WorkspaceRead, WorkspaceSource, guest_read};
use crate::capability::{Receipt, remaining};
use crate::limits::{CallLimiter, ComponentLimits, MAX_CAPABILITY_USES, MAX_RECEIPT_BYTES, MAX_RESOURCES};
use crate::wasi::{BoundedIo, BoundedWaits, CapturedStdio};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

wasmtime::component::bindgen!({
    path: "../wit",
    inline: "
        package harmonia:host;
        world tool-host {
            include harmonia:tools/public-tool@0.1.0;
            include harmonia:tools/workspace-tool@0.1.0;
        }
    ",
    world: "harmonia:host/tool-host",
    imports: { default: trappable },
});

use harmonia::tools::{public_web, types, workspace};

/// The capabilities bound to one call.
#[derive(Clone, Debug, Default)]
pub struct CallBinding {
    /// The public web, when granted.
    pub public_web: Option<Arc<dyn PublicWebSource>>,
    /// The workspace source, when granted.
    pub workspace_source: Option<Arc<dyn WorkspaceSource>>,
    /// The caller's workspace id; reads without one are unauthorized.
    pub workspace_id: Option<String>,
    /// The host runs in mock mode: every item of evidence is `mock`,
    /// whatever the sources say.
    pub mock_mode: bool,
}

/// Store data of one call: WASI, limits, the binding and what happened.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) deadline: Instant,
    binding: CallBinding,
    pub(crate) stdio: CapturedStdio,
    pub(crate) receipts: Vec<Receipt>,
    /// A capability passed the deadline while waiting.
    pub(crate) timed_out: bool,
    /// Some data was served from fixtures.
    pub(crate) served_mock: bool,
    /// Capability uses that returned data.
    pub(crate) successful_reads: usize,
    /// Bytes of receipt targets recorded so far.
    receipt_bytes: usize,
    /// A use past the per-call capability limits was refused.
    pub(crate) capability_limit: bool,
}

impl CallState {
    pub(crate) fn new(
        memory_bytes: usize,
        component: ComponentLimits,
        deadline: Instant,
        binding: CallBinding,
    ) -> Self {
        let stdio = CapturedStdio::default();
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self {
            wasi: crate::wasi::context(&stdio),
            table,
            limiter: CallLimiter::new(memory_bytes, component),
            deadline,
            binding,
            stdio,
            receipts: Vec::new(),
            timed_out: false,
            served_mock: false,
            successful_reads: 0,
            receipt_bytes: 0,
            capability_limit: false,
        }
    }

    /// True when the call ran in mock mode or read any fixture.
    pub(crate) fn mock_provenance(&self) -> bool {
        self.served_mock || self.binding.mock_mode
    }

    /// Count one more use of a capability naming `target`; an error (a trap
    /// for the guest) once the call's limits are reached.
    fn admit_use(&mut self, target_len: usize) -> wasmtime::Result<()> {
        self.receipt_bytes = self.receipt_bytes.saturating_add(target_len);
        if self.receipts.len() >= MAX_CAPABILITY_USES || self.receipt_bytes > MAX_RECEIPT_BYTES {
            self.capability_limit = true;
            return Err(wasmtime::Error::msg("capability use limit reached"));
        }
        Ok(())
    }

    fn record(&mut self, receipt: Receipt, mock: bool, timed_out: bool) {
        self.receipts.push(receipt);
        self.served_mock |= mock;
        self.timed_out |= timed_out;
    }

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

impl BoundedWaits for CallState {
    fn bounded_io(&mut self) -> BoundedIo<'_> {
        BoundedIo { table: &mut self.table, deadline: self.deadline, timed_out: &mut self.timed_out }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl types::Host for CallState {}

impl public_web::Host for CallState {
    fn get(&mut self, url: String) -> wasmtime::Result<Result<public_web::Response, public_web::FetchError>> {
        self.admit_use(url.len())?;
        let Some(web) = self.binding.public_web.clone() else {
            let receipt = Receipt::new("public-web", "unbound".into(), "denied", Instant::now());
            self.record(receipt, false, false);
            return Ok(Err(public_web::FetchError::Denied));
        };
        let answer = web.get(&url, self.deadline);
        let timed_out =
            matches!(answer.result, Err(WebFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(answer.receipt, answer.mock, timed_out);
        self.successful_reads += usize::from(answer.result.is_ok());
        Ok(answer
            .result
            .map(|response| public_web::Response {
                status: response.status,
                content_type: response.content_type,
                body: response.body,
            })
            .map_err(|failure| match failure {
                WebFailure::Denied => public_web::FetchError::Denied,
                WebFailure::InvalidUrl => public_web::FetchError::InvalidUrl,
                WebFailure::TimedOut => public_web::FetchError::TimedOut,
                WebFailure::TooLarge => public_web::FetchError::TooLarge,
                WebFailure::Unavailable => public_web::FetchError::Unavailable,
            }))
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
