//! Host-side bindings of `wit/`, and the per-call store data that
//! implements the capability imports.
//!
//! One host world includes both tool worlds, so one linker serves every
//! plugin; the loader's policy decides which capability each may import.

#![allow(missing_docs)]

use crate::capability::public_web::{PublicWebSource, WebFailure};
use crate::capability::workspace::{ReadFailure, WorkspaceRead, WorkspaceSource, guest_read};
use crate::capability::{Receipt, remaining};
use crate::limits::CallLimiter;
use crate::wasi::CapturedStdio;
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
}

/// Most resources (streams, pollables) a guest may hold at once.
const MAX_RESOURCES: usize = 1_000;

impl CallState {
    pub(crate) fn new(memory_bytes: usize, deadline: Instant, binding: CallBinding) -> Self {
        let stdio = CapturedStdio::default();
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self {
            wasi: crate::wasi::context(&stdio),
            table,
            limiter: CallLimiter::new(memory_bytes),
            deadline,
            binding,
            stdio,
            receipts: Vec::new(),
            timed_out: false,
            served_mock: false,
        }
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
        result.map(|document| (document.body, document.updated_at)).map_err(|failure| match failure {
            ReadFailure::Unauthorized => workspace::ReadError::Unauthorized,
            ReadFailure::NotFound => workspace::ReadError::NotFound,
            ReadFailure::Rejected => workspace::ReadError::Rejected,
            ReadFailure::Unavailable => workspace::ReadError::Unavailable,
            ReadFailure::TimedOut => workspace::ReadError::TimedOut,
        })
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl types::Host for CallState {}

impl public_web::Host for CallState {
    fn get(&mut self, url: String) -> Result<public_web::Response, public_web::FetchError> {
        let Some(web) = self.binding.public_web.clone() else {
            let receipt = Receipt::new("public-web", "unbound".into(), "denied", Instant::now());
            self.record(receipt, false, false);
            return Err(public_web::FetchError::Denied);
        };
        let answer = web.get(&url, self.deadline);
        let timed_out =
            matches!(answer.result, Err(WebFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(answer.receipt, answer.mock, timed_out);
        answer
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
            })
    }
}

impl workspace::Host for CallState {
    fn engagement(&mut self) -> Result<String, workspace::ReadError> {
        self.workspace_read(WorkspaceRead::Engagement).map(|(body, ..)| body)
    }

    fn feed(&mut self) -> Result<workspace::FeedRead, workspace::ReadError> {
        // Stamped as the read starts; a scripted source fixes the time.
        let read_at = self
            .binding
            .workspace_source
            .as_ref()
            .map_or_else(crate::time::now_rfc3339, |source| source.read_at());
        let (document, updated_at) = self.workspace_read(WorkspaceRead::Feed)?;
        Ok(workspace::FeedRead { document, updated_at, read_at })
    }

    fn job(&mut self, id: String) -> Result<String, workspace::ReadError> {
        self.workspace_read(WorkspaceRead::Job(&id)).map(|(body, ..)| body)
    }
}
