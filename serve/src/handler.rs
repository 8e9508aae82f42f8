//! The MCP server handler: tools, prompts and the trace resource for one
//! connection (a stdio process or one MCP session over HTTP).
//!
//! Who calls comes from the credential: over HTTP the authentication
//! layer puts a [`Principal`] in the request's extensions; over stdio the
//! principal is fixed from the command line. An MCP session is pinned to
//! the first principal it sees; a request of that session carrying another
//! credential is refused. A connection bound to a skill runs every call
//! through one guarded liaison [`Session`] (one tool, a retry only after a
//! retryable error, the ceiling), whose signed trace is the resource
//! [`TRACE_URI`]. Unbound connections call the host directly.
//!
//! Calls run through `Host::call_async` where their result is awaited: in
//! the task the MCP SDK spawns for each request, which it never aborts (so
//! a call finishes, within its deadline, even when its client goes away):
//! a call waiting on an upstream holds no thread, and a spinning guest
//! yields every millisecond. The tool is looked up once, for its deadline; an
//! unknown tool is answered as one not allowed. At most
//! `limits.max_in_flight_calls` run at once, bounded by the host's call
//! slots (one gate, sized by the server): a call past the bound waits for
//! a slot up to its deadline; if none frees by then it is answered with
//! the retryable `dependency_unavailable` envelope, having never run.
//! Waits, refusals and outcomes are counted in the metrics.
//!
//! Over HTTP every credential has its share: at most
//! `limits.max_in_flight_calls_per_credential` of its calls run at once
//! (the rest wait in the same way, holding none of the server's permits),
//! and each call draws from its rate buckets first: past them it gets the
//! retryable `rate_limited` envelope saying when to retry, having never
//! run (counted by tool, never by tenant). The stdio server has one
//! client and neither.

use crate::auth::Principal;
use crate::catalog;
use crate::metrics::ServeMetrics;
use crate::sessions::handle::META_KEY;
use crate::sessions::{Continue, Refused};
use crate::state::ServeState;
use crate::telemetry::TraceParent;
use crate::tenants::Tenants;
use futures_util::FutureExt as _;
use harmonia_contract::liaison::trace::EntryKind;
use harmonia_contract::liaison::validator::RuleCode;
use harmonia_host::liaison::session::{Liaison, Session};
use harmonia_host::liaison::skills::Skill;
use harmonia_host::{CallContext, CallError};
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, Prompt, PromptMessage, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role,
    ServerCapabilities, ServerConfig, SkillFrontmatter, SkillResource, SkillResources,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use tokio::sync::OwnedSemaphorePermit;

/// How long a client may treat a list as fresh (SEP-2549): a minute. A
/// list is private (it depends on the credential's allow-list and
/// scopes); a call is checked again whatever a cached list said.
pub const LIST_TTL_MS: u64 = 60_000;

/// The URI of a skill-bound session's signed trace.
pub const TRACE_URI: &str = "harmonia://session/trace";

/// One connection's handler.
pub struct McpServer {
    state: Arc<ServeState>,
    skill: Option<Skill>,
    fixed: Option<Principal>,
    pinned: OnceLock<Principal>,
    session: OnceLock<Arc<Mutex<Session>>>,
    /// Whether this handler serves an MCP session (it saw `initialize`);
    /// otherwise each request stands alone (the stateless revision).
    in_session: AtomicBool,
    id: u64,
    /// Reloads since this handler was made (taken by the first to tell
    /// the client of them: a session, or a stateless subscription).
    changes: std::sync::Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
    /// Dropped with the handler: ends the task telling the client of
    /// reloads.
    ended: OnceLock<tokio::sync::oneshot::Sender<()>>,
}

/// Which guard a call passes.
enum Guard {
    /// None: an unbound connection.
    Unbound,
    /// The MCP session's.
    Session(Skill),
    /// A stateless session's: the one a handle names, the credential's
    /// current one on the skill, or an explicit new one.
    Stateless(Skill, Continue),
}

/// How a call that did not answer with an envelope ended.
enum Unanswered {
    /// The session has ended (a bound passed) or the call did not run.
    Session(String),
    /// The guarded session could not start.
    Error(ErrorData),
    /// The stateless session's handle or ledger refused it.
    Refused(Refused),
}

/// The W3C trace context in a request's `_meta`, if any (SEP-414).
fn trace_parent(meta: &MetaObject) -> Option<TraceParent> {
    Some(TraceParent {
        traceparent: meta.get_traceparent()?.to_owned(),
        tracestate: meta.get_tracestate().map(str::to_owned),
    })
}

/// The URI of a skill's file, as the skills extension (SEP-2640) names it.
fn skill_uri(skill: &Skill) -> String {
    format!("skill://{}/SKILL.md", skill.name)
}

/// A skill as the skills extension lists it: its front matter and its one
/// file, with the digest of the bytes `resources/read` serves.
fn skill_entry(skill: &Skill) -> rmcp::model::Skill {
    let uri = skill_uri(skill);
    let frontmatter = SkillFrontmatter::new(skill.name.clone(), skill.description.clone())
        .with_field("allowed-tools", skill.allowed_tools.join(", "));
    let file = SkillResource::from_bytes(uri.clone(), skill.text.as_bytes());
    rmcp::model::Skill::new(uri, frontmatter, SkillResources::Files(vec![file]))
}

/// The handle in a request's `_meta`, if any.
fn handle_in(meta: &MetaObject) -> Option<String> {
    meta.0.get(META_KEY).and_then(Value::as_str).map(str::to_owned)
}

/// The argument a skill route's tools take for the guarded session's
/// handle on the stateless revision: the revision's pattern for state
/// across calls (SEP-2567), a server-minted handle passed back as an
/// ordinary argument, which the model carries. Declared in each tool's
/// input schema there, given in each result, and taken out of the
/// arguments before the tool sees them.
pub const HANDLE_ARGUMENT: &str = "harmonia_session";

/// The handle argument's schema.
fn handle_property() -> Value {
    serde_json::json!({
        "type": "string",
        "description": "This skill's guarded session: the harmonia_session value the previous result of this skill gave. Leave it out to continue your current session; \"new\" starts a new one.",
    })
}

/// `tool` as a skill route lists it on the stateless revision: its input
/// schema also takes [`HANDLE_ARGUMENT`].
fn with_handle_argument(mut tool: rmcp::model::Tool) -> rmcp::model::Tool {
    let mut schema = (*tool.input_schema).clone();
    let properties = schema.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(properties) = properties {
        properties.insert(HANDLE_ARGUMENT.to_owned(), handle_property());
    }
    schema.entry("type").or_insert_with(|| Value::String("object".into()));
    tool.input_schema = Arc::new(schema);
    tool
}

/// The text a stateless skill route's result adds after the envelope, so
/// a model reading the result sees the handle to carry.
fn handle_text(handle: &str) -> String {
    format!(
        "{HANDLE_ARGUMENT}: {handle}\n(pass it as the {HANDLE_ARGUMENT} argument of this skill's next call)"
    )
}

/// -32602 for a tool the caller is not offered here (not loaded, not in
/// its allow-list): as the specification answers an unknown tool, the same
/// whether or not it exists.
fn unknown_tool(tool: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {tool}"), None)
}

/// A JSON-RPC error for a stateless session that cannot go on.
fn refused(refusal: &Refused) -> ErrorData {
    let data = serde_json::json!({"reason": refusal.reason(), "retryable": refusal.retryable()});
    match refusal {
        Refused::Ledger(
            crate::sessions::ledger::LedgerError::Store(_)
            | crate::sessions::ledger::LedgerError::Unavailable(_),
        ) => ErrorData::internal_error(refusal.to_string(), Some(data)),
        _ => ErrorData::invalid_params(refusal.to_string(), Some(data)),
    }
}

/// This process's id, asked of the kernel once.
fn process_id() -> u32 {
    static ID: OnceLock<u32> = OnceLock::new();
    *ID.get_or_init(std::process::id)
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl McpServer {
    /// A handler; `fixed` is the principal of a stdio connection (HTTP
    /// connections take it from each request).
    pub fn new(state: Arc<ServeState>, skill: Option<Skill>, fixed: Option<Principal>) -> Self {
        Self {
            skill,
            fixed,
            pinned: OnceLock::new(),
            session: OnceLock::new(),
            in_session: AtomicBool::new(false),
            id: next_id(),
            changes: std::sync::Mutex::new(Some(state.plugins.changes())),
            ended: OnceLock::new(),
            state,
        }
    }

    /// The trace id of this connection's calls.
    fn trace_id(&self) -> String {
        format!("mcp-{}-{}", process_id(), self.id)
    }

    /// This handler's receiver of reloads, the first time it is asked.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.changes.lock().ok()?.take()
    }

    fn principal(&self, context: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        let principal = match &self.fixed {
            Some(principal) => principal.clone(),
            None => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Principal>())
                .cloned()
                .ok_or_else(|| ErrorData::invalid_request("not authenticated", None))?,
        };
        let pinned = self.pinned.get_or_init(|| principal.clone());
        if *pinned != principal {
            tracing::warn!(
                connection = self.id,
                "request with another credential than the session's refused"
            );
            return Err(ErrorData::invalid_request("this MCP session belongs to another credential", None));
        }
        let mut principal = principal;
        if self.fixed.is_some() && principal.allow.is_empty() {
            // A stdio server without an allow-list offers every tool
            // loaded now, a reload's new ones too.
            principal.allow =
                self.state.liaison().host().tools().map(|info| info.descriptor.name.clone()).collect();
        }
        Ok(principal)
    }

    /// Whether `tool` is listed for `principal` on this connection.
    fn visible(&self, principal: &Principal, tool: &str) -> bool {
        principal.allows(tool) && self.skill.as_ref().is_none_or(|skill| skill.allows(tool))
    }

    /// The skills `principal` may see on this connection.
    fn visible_skills<'a>(
        &'a self,
        liaison: &'a Liaison,
        principal: &'a Principal,
    ) -> impl Iterator<Item = &'a Skill> {
        liaison.skills().iter().filter(move |skill| self.skill_visible(principal, skill))
    }

    /// The skill whose file `uri` names, when `principal` may see it here.
    fn visible_skill_file<'a>(
        &self,
        liaison: &'a Liaison,
        principal: &Principal,
        uri: &str,
    ) -> Option<&'a Skill> {
        let name = rmcp::model::skill_name_from_uri(uri)?;
        let skill = liaison.skills().get(name)?;
        (uri == skill_uri(skill) && self.skill_visible(principal, skill)).then_some(skill)
    }

    fn skill_visible(&self, principal: &Principal, skill: &Skill) -> bool {
        self.skill.as_ref().is_none_or(|bound| bound.name == skill.name)
            && skill.allowed_tools.iter().any(|tool| principal.allows(tool))
    }

    /// The connection's guarded session, started (and the skill
    /// activated) on first use.
    fn session(&self, principal: &Principal, skill: &Skill) -> Result<Arc<Mutex<Session>>, ErrorData> {
        if let Some(session) = self.session.get() {
            return Ok(Arc::clone(session));
        }
        let mut session = self
            .state
            .liaison()
            .session(CallContext { workspace: principal.workspace.clone(), trace_id: Some(self.trace_id()) });
        session.activate(&skill.name).map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(Arc::clone(self.session.get_or_init(|| Arc::new(Mutex::new(session)))))
    }

    /// Whether requests here are guarded by a handle (a skill route on the
    /// stateless revision), not by an MCP session.
    fn stateless_skill(&self) -> bool {
        self.skill.is_some() && !self.in_session.load(Ordering::Acquire) && self.fixed.is_none()
    }

    /// The guard a call on this connection passes, given the handle the
    /// request carries (its argument, else its `_meta`).
    fn guard(&self, handle: Option<&str>) -> Guard {
        match &self.skill {
            None => Guard::Unbound,
            Some(skill) if !self.stateless_skill() => Guard::Session(skill.clone()),
            Some(skill) => Guard::Stateless(skill.clone(), Continue::from_handle(handle)),
        }
    }

    async fn call(
        &self,
        (liaison, deadline): (Arc<Liaison>, Duration),
        principal: Principal,
        tool: String,
        args: Value,
        guard: Guard,
        parent: Option<TraceParent>,
    ) -> Result<CallToolResponse, ErrorData> {
        // `liaison`: the plugin set the call runs on, held to its end;
        // `deadline`: the tool's, looked up once with it.
        if self.fixed.is_none()
            && let Err(wait) = self.state.tenants.admit_call(&principal, &tool).await
        {
            tracing::info!(tool = %tool, retry_after_ms = wait.as_millis() as u64, "call refused: the credential is past its rate");
            if let Some(metrics) = self.state.metrics() {
                metrics.call_rate_limited(&tool);
            }
            return Ok(catalog::result(catalog::rate_limited(wait)).into());
        }
        let wait = deadline.min(self.state.limits.request_timeout());
        let Some(permit) = self.credential_permit(&principal, &tool, wait).await else {
            return Ok(catalog::result(catalog::busy()).into());
        };
        // The call runs here, in the task the MCP SDK gave this request
        // (its own, which the SDK never aborts: a call whose client goes
        // away still finishes within its deadline); a panic is answered,
        // not spread.
        let call = Call { liaison, deadline, principal, tool, args, parent };
        let ran = AssertUnwindSafe(self.run(call, guard, permit)).catch_unwind().await;
        match ran {
            Ok(Ok((envelope, handle))) => {
                let mut result = catalog::result(envelope);
                if let Some(handle) = handle {
                    result.content.push(rmcp::model::ContentBlock::text(handle_text(&handle)));
                    let mut meta = MetaObject::new();
                    meta.0.insert(META_KEY.to_owned(), Value::String(handle));
                    result.meta = Some(meta);
                }
                Ok(result.into())
            }
            Ok(Err(Unanswered::Session(message))) => Err(ErrorData::invalid_request(message, None)),
            Ok(Err(Unanswered::Error(error))) => Err(error),
            Ok(Err(Unanswered::Refused(refusal))) => {
                tracing::info!(reason = refusal.reason(), "stateless session call refused");
                Err(refused(&refusal))
            }
            Err(_) => Err(ErrorData::internal_error("the call did not finish", None)),
        }
    }

    /// Run `call` past `guard`, holding the credential's `permit` to its
    /// end: its envelope, and on the stateless revision the handle of the
    /// session's next step.
    async fn run(
        &self,
        call: Call,
        guard: Guard,
        permit: CredentialPermit,
    ) -> Result<(harmonia_host::Envelope, Option<String>), Unanswered> {
        let _permit = permit;
        let Call { liaison, deadline, principal, tool, args, parent } = call;
        let state = &self.state;
        match guard {
            Guard::Unbound => {
                let context = CallContext { workspace: principal.workspace, trace_id: Some(self.trace_id()) };
                let record =
                    match liaison.host().call_recorded_async(&tool, &args.to_string(), &context).await {
                        Ok(record) => record,
                        // Looked up before, gone now: the plugins changed
                        // between; answered as any tool not offered.
                        Err(CallError::UnknownTool(_)) => return Ok((catalog::not_allowed(), None)),
                        Err(error) => return Err(Unanswered::Session(error.to_string())),
                    };
                state.record_spans(&tool, &record, parent.as_ref());
                Ok((record.envelope, None))
            }
            Guard::Session(skill) => {
                let session = self.session(&principal, &skill).map_err(Unanswered::Error)?;
                let mut session = session.lock().await;
                let (envelope, record) = session
                    .call_recorded_async(&tool, &args)
                    .await
                    .map_err(|error| Unanswered::Session(format!("{}: {error}", error.code())))?;
                // A session that ended records nothing: only an answered
                // call has a new entry to count.
                if let Some(metrics) = state.metrics() {
                    count_refusal(metrics, &session, &tool);
                }
                if let Some(record) = record {
                    state.record_spans(&tool, &record, parent.as_ref());
                }
                Ok((envelope, None))
            }
            Guard::Stateless(skill, handle) => {
                // The session is held for the call: its deadline, and a
                // margin for recording it.
                let lease = (deadline + Duration::from_secs(5)).min(state.limits.request_timeout());
                let sessions = &state.sessions;
                let mut held = sessions
                    .hold(&liaison, &principal, &skill, &handle, lease)
                    .await
                    .map_err(Unanswered::Refused)?;
                let (envelope, record) = held
                    .session()
                    .call_recorded_async(&tool, &args)
                    .await
                    .map_err(|error| Unanswered::Session(format!("{}: {error}", error.code())))?;
                if let Some(metrics) = state.metrics() {
                    count_refusal(metrics, held.session(), &tool);
                }
                if let Some(record) = record {
                    state.record_spans(&tool, &record, parent.as_ref());
                }
                let next = sessions.record(held).await.map_err(Unanswered::Refused)?;
                Ok((envelope, Some(next)))
            }
        }
    }
}

/// One call, looked up and admitted: the plugin set it runs on (held to
/// its end), the tool's deadline, who calls, and the request's trace
/// context.
struct Call {
    liaison: Arc<Liaison>,
    deadline: Duration,
    principal: Principal,
    tool: String,
    args: Value,
    parent: Option<TraceParent>,
}

/// A credential's share of the calls in flight, held while its call runs.
struct CredentialPermit(Option<(Arc<Tenants>, String, OwnedSemaphorePermit)>);

impl Drop for CredentialPermit {
    fn drop(&mut self) {
        if let Some((tenants, id, permit)) = self.0.take() {
            tenants.give_back(&id, permit);
        }
    }
}

impl McpServer {
    /// A handler for one stateless request that arrives already
    /// authenticated (the HTTP fast path, `crate::http::fast_path`): it
    /// listens for no reload, and pins no principal.
    pub fn for_stateless_call(state: Arc<ServeState>, skill: Option<Skill>) -> Self {
        Self {
            skill,
            fixed: None,
            pinned: OnceLock::new(),
            session: OnceLock::new(),
            in_session: AtomicBool::new(false),
            id: next_id(),
            changes: std::sync::Mutex::new(None),
            ended: OnceLock::new(),
            state,
        }
    }

    /// `tools/call` of `request` by `principal`, with the request's `_meta`
    /// (both paths, rmcp's and the fast one, answer through this).
    pub async fn call_tool_as(
        &self,
        principal: Principal,
        request: CallToolRequestParams,
        meta: &MetaObject,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        // The set the call runs on, from its check to its end: a reload
        // meanwhile does not change it. The tool's one lookup: whether it
        // is loaded, and its deadline (for the credential's wait and a
        // stateless session's lease).
        let liaison = self.state.liaison();
        let deadline = principal.allows(&tool).then(|| liaison.host().deadline(&tool)).flatten();
        let Some(deadline) = deadline else {
            tracing::info!(principal = %principal.id, "call refused: the tool is not offered to this credential");
            if let Some(metrics) = self.state.metrics() {
                metrics.call_refused(&tool, None);
            }
            return Err(unknown_tool(&tool));
        };
        let mut arguments = request.arguments.unwrap_or_default();
        // On a skill route the handle argument is the server's, never the
        // tool's: taken out before the tool sees its input.
        let carried = match self.skill.is_some().then(|| arguments.remove(HANDLE_ARGUMENT)).flatten() {
            None => None,
            Some(Value::String(handle)) => Some(handle),
            Some(_) => {
                return Err(ErrorData::invalid_params(format!("`{HANDLE_ARGUMENT}` must be a string"), None));
            }
        };
        let guard = self.guard(carried.or_else(|| handle_in(meta)).as_deref());
        let args = Value::Object(arguments);
        self.call((liaison, deadline), principal, tool, args, guard, trace_parent(meta)).await
    }

    /// The credential's permit for a call (over HTTP; a stdio connection
    /// has one client and no share), waiting up to `wait` for one to
    /// free; `None` when the wait ended first. The server-wide bound is
    /// the host's call slots, waited for inside the call.
    async fn credential_permit(
        &self,
        principal: &Principal,
        tool: &str,
        wait: Duration,
    ) -> Option<CredentialPermit> {
        if self.fixed.is_some() {
            return Some(CredentialPermit(None));
        }
        let tenants = &self.state.tenants;
        let calls = tenants.calls(&principal.id);
        let permit = match Arc::clone(&calls).try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                let started = Instant::now();
                let permit =
                    tokio::time::timeout(wait, calls.acquire_owned()).await.ok().and_then(Result::ok);
                if let Some(metrics) = self.state.metrics() {
                    metrics.credential_wait(tool, started.elapsed(), permit.is_some());
                }
                permit
            }
        };
        let Some(permit) = permit else {
            tracing::warn!(tool = %tool, "call answered busy: the credential's calls held its share until the deadline");
            return None;
        };
        Some(CredentialPermit(Some((Arc::clone(tenants), principal.id.clone(), permit))))
    }
}

/// Count the session's last entry when the guard refused it, by rule.
fn count_refusal(metrics: &ServeMetrics, session: &Session, tool: &str) {
    let Some(entry) = session.trace().entries.last() else { return };
    if entry.kind != EntryKind::ToolRefused {
        return;
    }
    let rule = entry.reason.as_deref().and_then(|reason| reason.parse::<RuleCode>().ok());
    metrics.call_refused(tool, rule.map(RuleCode::as_str));
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        // Skills are served twice: as prompts (every client) and through the
        // skills extension, whose files are resources.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .enable_skills()
            .build();
        let instructions = match &self.skill {
            Some(skill) => format!(
                "Harmonia read-only tools, bound to the skill `{}`: one tool per session, a retry only after a retryable error. Every result is the contract envelope.",
                skill.name
            ),
            None => "Harmonia read-only tools. Every result is the contract envelope (status, data, error, evidence).".to_owned(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("harmonia", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // A guard lives in the MCP session on the handshake revisions and
        // in a sealed handle and the ledger on the stateless one.
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        // What a route offers is the same for every credential, but it is
        // only answered to one: no shared cache keeps it.
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info())
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // Pins the session to the credential that opened it.
        self.principal(&context)?;
        self.in_session.store(true, Ordering::Release);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session's client (stdio, or an MCP session over HTTP) is told
        // when a reload changes the tools, until the session ends.
        let Some(mut changes) = self.changes() else { return };
        let (ended, mut ends) = tokio::sync::oneshot::channel::<()>();
        if self.ended.set(ended).is_err() {
            return;
        }
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut ends => return,
                    changed = changes.changed() => if changed.is_err() { return },
                }
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // A stateless (2026-07-28) client holds `subscriptions/listen`
        // open to be told of reloads.
        let mut changes = self.changes().unwrap_or_else(|| self.state.plugins.changes());
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                changed = changes.changed() => if changed.is_err() { return Ok(()) },
            }
            if context.sink().notify_tool_list_changed().await.is_err() {
                return Ok(());
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let principal = self.principal(&context)?;
        let tools = self
            .state
            .liaison()
            .host()
            .tools()
            .filter(|info| self.visible(&principal, &info.descriptor.name))
            .map(|info| catalog::tool(&info.descriptor))
            .map(|tool| if self.stateless_skill() { with_handle_argument(tool) } else { tool })
            .collect();
        let mut listed = ListToolsResult::with_all_items(tools);
        (listed.ttl_ms, listed.cache_scope) = (Some(LIST_TTL_MS), Some(CacheScope::Private));
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let principal = self.principal(&context)?;
        self.call_tool_as(principal, request, &context.meta.0).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let principal = self.principal(&context)?;
        let prompts = self
            .visible_skills(&self.state.liaison(), &principal)
            .map(|skill| Prompt::new(skill.name.clone(), Some(skill.description.clone()), None))
            .collect();
        let mut listed = ListPromptsResult::with_all_items(prompts);
        (listed.ttl_ms, listed.cache_scope) = (Some(LIST_TTL_MS), Some(CacheScope::Private));
        Ok(listed)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let principal = self.principal(&context)?;
        let liaison = self.state.liaison();
        let skill = liaison
            .skills()
            .get(&request.name)
            .filter(|skill| self.skill_visible(&principal, skill))
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown prompt `{}`", request.name), None))?;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, skill.workflow.clone())])
            .with_description(skill.description.clone())
            .into())
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let principal = self.principal(&context)?;
        let skills = self.visible_skills(&self.state.liaison(), &principal).map(skill_entry).collect();
        let mut listed = ListSkillsResult::with_all_items(skills);
        (listed.ttl_ms, listed.cache_scope) = (Some(LIST_TTL_MS), Some(CacheScope::Private));
        Ok(listed)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let principal = self.principal(&context)?;
        let liaison = self.state.liaison();
        let skill = self
            .visible_skill_file(&liaison, &principal, &request.uri)
            .ok_or_else(|| ErrorData::invalid_params(format!("no skill at `{}`", request.uri), None))?;
        Ok(GetSkillResult::new(skill_entry(skill))
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let principal = self.principal(&context)?;
        let mut resources = match &self.skill {
            Some(_) => vec![
                Resource::new(TRACE_URI, "trace")
                    .with_description("This session's trace, signed with the host key")
                    .with_mime_type("application/json"),
            ],
            None => Vec::new(),
        };
        resources.extend(self.visible_skills(&self.state.liaison(), &principal).map(|skill| {
            Resource::new(skill_uri(skill), skill.name.clone())
                .with_description(skill.description.clone())
                .with_mime_type("text/markdown")
        }));
        let mut listed = ListResourcesResult::with_all_items(resources);
        (listed.ttl_ms, listed.cache_scope) = (Some(LIST_TTL_MS), Some(CacheScope::Private));
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let principal = self.principal(&context)?;
        let liaison = self.state.liaison();
        if let Some(skill) = self.visible_skill_file(&liaison, &principal, &request.uri) {
            let mut read = ReadResourceResult::new(vec![
                ResourceContents::text(skill.text.clone(), request.uri.clone())
                    .with_mime_type("text/markdown"),
            ]);
            (read.ttl_ms, read.cache_scope) = (Some(LIST_TTL_MS), Some(CacheScope::Private));
            return Ok(read.into());
        }
        let (Some(skill), TRACE_URI) = (&self.skill, request.uri.as_str()) else {
            // The URI in `data`, as SEP-2164 asks of a resource not found.
            let data = serde_json::json!({"uri": request.uri});
            return Err(ErrorData::resource_not_found(format!("no resource `{}`", request.uri), Some(data)));
        };
        let document = if self.stateless_skill() {
            // With a handle, its session's trace; without, the credential's
            // current session's (the one a call without a handle goes on).
            self.state
                .sessions
                .trace(&self.state.liaison(), &principal, skill, handle_in(&context.meta.0).as_deref())
                .await
                .map_err(|refusal| refused(&refusal))?
        } else {
            let session = self.session(&principal, skill)?;
            let session = session.lock().await;
            session.signed_trace().map_err(|error| ErrorData::internal_error(error.to_string(), None))?
        };
        let text = document.to_value().to_string();
        // A trace changes with every call: private, and never fresh.
        let mut read = ReadResourceResult::new(vec![
            ResourceContents::text(text, TRACE_URI).with_mime_type("application/json"),
        ]);
        (read.ttl_ms, read.cache_scope) = (Some(0), Some(CacheScope::Private));
        Ok(read.into())
    }
}
