//! Guarded sessions on the stateless revision (2026-07-28), which has no
//! MCP session to keep a guard in.
//!
//! A skill route's call that carries no handle opens a guarded session
//! (the skill activated, the call judged and run, as on the handshake
//! revisions); its result's `_meta` carries the session's handle under
//! [`handle::META_KEY`]. The client sends that handle back in the next
//! call's `_meta`, and gets the next handle with its result. Any replica
//! sharing the key and the ledger serves any call: no affinity.
//!
//! Every call re-checks everything: the credential authenticates as for
//! any request, the handle opens only for that credential (and the
//! workspace it names) on that skill within its TTL ([`handle`]), and the ledger lets the call hold the
//! session only at the step the handle names and while no other call
//! holds it ([`ledger`]). The guard is then rebuilt from the session's
//! trace ([`Liaison::resume`]) and judges the call exactly as an
//! uninterrupted session would. So a replayed handle (an earlier step,
//! say the one before a failed call) is stale and licenses nothing, a
//! handle moved to another credential or skill does not open, and a
//! changed or truncated one is not the server's.
//!
//! The trace lives in the ledger, one row per entry written once; `resources/read` of the trace resource
//! with a handle in `_meta` answers it signed with the host key.
//!
//! The same ledger counts the MCP sessions (handshake revisions) open on
//! every replica: each holds a place ([`GuardedSessions::reserve_place`]),
//! a lease this process renews ([`GuardedSessions::renew_places`]) until
//! the session ends, so both kinds draw on one share over every replica.
//!
//! Parts: [`handle`] (the sealed handle), [`ledger`] (the trait, and its
//! SQLite and PostgreSQL implementations).

pub mod handle;
pub mod ledger;

use crate::auth::Principal;
use crate::config::{Limits, SessionsConfig};
use crate::database::{Database, DatabaseConfigError, DatabaseSettings};
use handle::{Handle, HandleCodec, HandleError};
use harmonia_contract::liaison::trace::{Trace, TraceDocument};
use harmonia_host::CallContext;
use harmonia_host::liaison::session::{Liaison, ResumeError, Session, SessionLimits};
use harmonia_host::liaison::skills::Skill;
use ledger::{Claim, CurrentClaim, Ledger, LedgerError, NewSession, Place, Readiness, SessionBounds, Step};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long an MCP session's place lasts unless its replica renews it:
/// a replica that died gives its places back within this.
pub const PLACE_LEASE: Duration = Duration::from_secs(60);

/// How a call on a skill route names the guarded session it continues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continue {
    /// No handle: its holder's current session on the skill (a new one,
    /// which becomes the current one, when it has none live). So a client
    /// that drops the handle never gets a fresh guard.
    Current,
    /// An explicit new session (the handle's value `new`), which becomes
    /// the current one; the one it replaces goes on only by its handle.
    New,
    /// The session a handle names, at the step it names.
    Handle(String),
}

impl Continue {
    /// What a request's handle (an argument or `_meta`) says.
    pub fn from_handle(handle: Option<&str>) -> Self {
        match handle {
            None => Self::Current,
            Some(NEW_SESSION) => Self::New,
            Some(handle) => Self::Handle(handle.to_owned()),
        }
    }
}

/// The handle's value that starts a new session explicitly.
pub const NEW_SESSION: &str = "new";

/// Why a stateless guarded session could not go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The handle did not open.
    #[error(transparent)]
    Handle(#[from] HandleError),
    /// The ledger refused the step.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The stored trace cannot be carried on.
    #[error("the session cannot go on: {0}")]
    Resume(#[from] ResumeError),
    /// The session started, but its skill did not activate.
    #[error("the skill did not activate: {0}")]
    Activation(String),
}

impl Refused {
    /// A stable reason, for the answer's `data` and the log.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Handle(HandleError::Invalid) => "invalid_handle",
            Self::Handle(HandleError::Expired) => "expired_handle",
            Self::Ledger(LedgerError::Unknown) => "unknown_session",
            Self::Ledger(LedgerError::Stale) => "stale_handle",
            Self::Ledger(LedgerError::Busy) => "session_busy",
            Self::Ledger(LedgerError::ServerFull) => "too_many_sessions",
            Self::Ledger(LedgerError::CredentialFull) => "credential_sessions",
            Self::Ledger(LedgerError::Store(_)) => "store_failed",
            Self::Ledger(LedgerError::Unavailable(_)) => "ledger_unavailable",
            Self::Resume(_) | Self::Activation(_) => "session_unusable",
        }
    }

    /// Whether the same request may succeed later unchanged.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Ledger(error) if error.retryable())
    }
}

/// Why the sessions could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The key file is unreadable, too short or readable by others.
    #[error("sessions.key_file {0}: {1}")]
    Key(std::path::PathBuf, String),
    /// The ledger could not be opened.
    #[error("sessions.ledger: {0}")]
    Ledger(LedgerError),
    /// The database settings are unusable.
    #[error(transparent)]
    Database(#[from] DatabaseConfigError),
}

/// The stateless guarded sessions of one server, and the places of its
/// MCP sessions.
pub struct GuardedSessions {
    codec: HandleCodec,
    ledger: Arc<dyn Ledger>,
    /// The shared database, when the ledger is one.
    database: Option<Arc<Database>>,
    bounds: SessionBounds,
    ttl: Duration,
    /// The sessions this process recorded last, each at the step it
    /// moved to: the next call at that step (when it comes here) takes
    /// the guard as it is instead of rebuilding it from the trace. Only a
    /// hold the ledger granted at that very step uses one, so a session
    /// moved on by another replica is rebuilt. At most `bounds.total`.
    warm: Mutex<HashMap<String, (u64, Session)>>,
    /// The places this process holds for its MCP sessions: id → credential.
    places: Mutex<HashMap<String, String>>,
}

/// A session held for one call: run [`Held::session`], then
/// [`GuardedSessions::record`]. Dropped unrecorded, it lets go of the
/// session having recorded nothing.
pub struct Held {
    id: String,
    step: u64,
    /// How many trace entries the ledger has: the call's are the rest.
    stored: usize,
    skill: String,
    /// What the handle is bound to: the credential and its workspace.
    holder: String,
    session: Option<Session>,
    ledger: Option<Arc<dyn Ledger>>,
}

impl Held {
    /// The guarded session, at the step held.
    pub fn session(&mut self) -> &mut Session {
        // Present from the hold until `record` takes it.
        self.session.as_mut().expect("a held session")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(ledger) = self.ledger.take() else { return };
        let (id, step) = (std::mem::take(&mut self.id), self.step);
        // Without a runtime the hold ends with its lease.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(async move {
                if let Err(error) = ledger.release(id, step).await {
                    tracing::warn!(%error, "a session's hold could not be ended; it ends with its lease");
                }
            }));
        }
    }
}

/// What a handle is bound to besides the skill: the credential's id and
/// the workspace it names, so a token moved to another workspace holds
/// none of its earlier sessions (as an MCP session belongs to the whole
/// principal).
fn holder(principal: &Principal) -> String {
    serde_json::json!([principal.id, principal.workspace]).to_string()
}

/// The JSON text of each of `trace`'s entries from position `from`.
fn entry_texts(trace: &Trace, from: usize) -> Vec<String> {
    trace.entries[from.min(trace.entries.len())..]
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap_or_default())
        .collect()
}

/// Why the file at `path` may not hold a secret, if it may not
/// ([`harmonia_host::secret_file`]).
pub(crate) fn check_secret_mode(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        let metadata = std::fs::metadata(path).map_err(|error| error.to_string())?;
        if let Some(problem) = harmonia_host::secret_file::metadata_problem(&metadata) {
            return Err(problem);
        }
    }
    Ok(())
}

fn read_key(path: &Path) -> Result<Vec<u8>, SetupError> {
    let failed = |why: String| SetupError::Key(path.to_owned(), why);
    check_secret_mode(path).map_err(failed)?;
    let bytes = std::fs::read(path).map_err(|error| failed(error.to_string()))?;
    let key = bytes.trim_ascii().to_vec();
    if key.len() < handle::MIN_KEY_BYTES {
        return Err(failed(format!(
            "needs at least {} bytes of secret, has {}",
            handle::MIN_KEY_BYTES,
            key.len()
        )));
    }
    Ok(key)
}

/// A ledger, and the shared database behind it when there is one.
type Opened = (Arc<dyn Ledger>, Option<Arc<Database>>);

/// The ledger `config` names (none: SQLite in memory; a path: a SQLite
/// file; a `postgres://` URL: that database), and the database when it
/// is one; `replica` names this process in the database's heartbeats.
fn open_ledger(config: &SessionsConfig, replica: &str) -> Result<Opened, SetupError> {
    match config.ledger.as_deref() {
        Some(url) if crate::database::is_url(url) => {
            let settings = DatabaseSettings::new(
                url,
                config.password_file.as_deref(),
                config.ca_file.as_deref(),
                config.pool_size,
                Duration::from_millis(config.timeout_ms),
            )?;
            let database = Database::new(settings, replica.to_owned()).map_err(SetupError::Ledger)?;
            Ok((Arc::new(ledger::postgres::PostgresLedger::new(Arc::clone(&database))), Some(database)))
        }
        path => {
            let sqlite =
                ledger::sqlite::SqliteLedger::open(path.map(Path::new)).map_err(SetupError::Ledger)?;
            Ok((Arc::new(sqlite), None))
        }
    }
}

impl GuardedSessions {
    /// Sessions as `config` says (without a key file, a key made for this
    /// process; without a ledger, a ledger in memory), bounded and
    /// expiring as `limits` say; `replica` names this process to a shared
    /// database.
    pub fn new(config: &SessionsConfig, limits: &Limits, replica: &str) -> Result<Self, SetupError> {
        let key = match &config.key_file {
            Some(path) => read_key(path)?,
            None => {
                let mut key = vec![0u8; 32];
                getrandom::fill(&mut key)
                    .map_err(|error| SetupError::Key("(generated)".into(), error.to_string()))?;
                key
            }
        };
        let ttl = Duration::from_secs(limits.idle_session_s);
        let codec = HandleCodec::new(&key, ttl)
            .map_err(|error| SetupError::Key("(key)".into(), error.to_string()))?;
        let (ledger, database) = open_ledger(config, replica)?;
        Ok(Self {
            codec,
            ledger,
            database,
            bounds: SessionBounds {
                total: limits.max_sessions,
                per_credential: limits.max_sessions_per_credential,
            },
            ttl,
            warm: Mutex::new(HashMap::new()),
            places: Mutex::new(HashMap::new()),
        })
    }

    fn warm(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Session)>> {
        self.warm.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn places(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.places.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The shared database, when the ledger is one.
    pub fn database(&self) -> Option<&Arc<Database>> {
        self.database.as_ref()
    }

    /// Whether the ledger can serve now.
    pub fn readiness(&self) -> Readiness {
        self.ledger.readiness()
    }

    fn context(id: &str, principal: &Principal) -> CallContext {
        CallContext { workspace: principal.workspace.clone(), trace_id: Some(format!("mcp-session-{id}")) }
    }

    /// Live sessions of both kinds, over the ledger and of `credential`.
    pub async fn live(&self, credential: &str) -> Result<SessionBounds, LedgerError> {
        self.ledger.live(credential.to_owned()).await
    }

    /// Reserve a place for an MCP session of `principal` within the
    /// bounds (both kinds of session counted over the ledger); its id, to
    /// give back with [`GuardedSessions::give_back_place`].
    pub async fn reserve_place(&self, principal: &Principal) -> Result<String, LedgerError> {
        let id = ledger::new_id()?;
        let place = Place {
            id: id.clone(),
            credential: principal.id.clone(),
            bounds: self.bounds,
            lease: PLACE_LEASE,
        };
        self.ledger.reserve(place).await?;
        self.places().insert(id.clone(), principal.id.clone());
        Ok(id)
    }

    /// Give back the place `id` (its session ended, or never opened).
    pub async fn give_back_place(&self, id: &str) {
        self.places().remove(id);
        if let Err(error) = self.ledger.give_back(id.to_owned()).await {
            tracing::warn!(%error, "an MCP session's place could not be given back; it ends with its lease");
        }
    }

    /// Renew the lease of every place this process holds (every
    /// [`PLACE_LEASE`] / 3 while serving).
    pub async fn renew_places(&self) -> Result<(), LedgerError> {
        let places: Vec<(String, String)> =
            self.places().iter().map(|(id, credential)| (id.clone(), credential.clone())).collect();
        if places.is_empty() {
            return Ok(());
        }
        self.ledger.renew(places, PLACE_LEASE).await
    }

    /// Hold, for one call which may last `lease`, the session of
    /// `principal` on `skill` that `how` names: the one a handle names, the
    /// current one, or a new one. A new one is opened within the bounds,
    /// both kinds of session counted over the ledger.
    pub async fn hold(
        &self,
        liaison: &Liaison,
        principal: &Principal,
        skill: &Skill,
        how: &Continue,
        lease: Duration,
    ) -> Result<Held, Refused> {
        let bound = holder(principal);
        let name = skill.name.clone();
        let (id, step, warm, stored) = match how {
            Continue::New => return self.open(liaison, principal, skill, lease, true).await,
            Continue::Current => {
                let claim = CurrentClaim {
                    holder: bound.clone(),
                    credential: principal.id.clone(),
                    skill: name.clone(),
                    lease,
                };
                match self.ledger.claim_current(claim).await? {
                    None => return self.open(liaison, principal, skill, lease, false).await,
                    Some(current) => {
                        let warm = self.warm().remove(&current.id).filter(|(at, _)| *at == current.step);
                        (current.id, current.step, warm.map(|(_, session)| session), Some(current.trace))
                    }
                }
            }
            Continue::Handle(handle) => {
                let Handle { session: id, step } = self.codec.open(handle, &bound, &name)?;
                let warm = self.warm().remove(&id).filter(|(at, _)| *at == step).map(|(_, session)| session);
                let claim = Claim {
                    id: id.clone(),
                    credential: principal.id.clone(),
                    skill: name.clone(),
                    step,
                    lease,
                    with_trace: warm.is_none(),
                };
                let stored = self.ledger.claim(claim).await?;
                (id, step, warm, stored)
            }
        };
        let mut held = Held {
            id: id.clone(),
            step,
            stored: warm.as_ref().map_or(0, |session| session.trace().entries.len()),
            skill: name,
            holder: bound,
            session: warm,
            ledger: Some(Arc::clone(&self.ledger)),
        };
        if held.session.is_none()
            && let Some(stored) = stored
        {
            let trace = Trace::parse_str(&stored)
                .map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))?;
            held.stored = trace.entries.len();
            held.session =
                Some(liaison.resume(Self::context(&id, principal), trace, SessionLimits::default())?);
        }
        Ok(held)
    }

    /// Open a new session of `principal` on `skill`, held for its first
    /// call, as its current one (`replace`: even when it has one live).
    async fn open(
        &self,
        liaison: &Liaison,
        principal: &Principal,
        skill: &Skill,
        lease: Duration,
        replace: bool,
    ) -> Result<Held, Refused> {
        let id = ledger::new_id()?;
        let mut session = liaison.session(Self::context(&id, principal));
        session.activate(&skill.name).map_err(|error| Refused::Activation(error.to_string()))?;
        let entries = entry_texts(session.trace(), 0);
        let stored = entries.len();
        let new = NewSession {
            id: id.clone(),
            credential: principal.id.clone(),
            holder: holder(principal),
            replace,
            skill: skill.name.clone(),
            entries,
            bounds: self.bounds,
            ttl: self.ttl,
            lease,
        };
        self.ledger.create(new).await?;
        Ok(Held {
            id,
            step: 0,
            stored,
            skill: skill.name.clone(),
            holder: holder(principal),
            session: Some(session),
            ledger: Some(Arc::clone(&self.ledger)),
        })
    }

    /// Record the call `held` ran: the session moves on a step; the handle
    /// for the next call.
    pub async fn record(&self, mut held: Held) -> Result<String, Refused> {
        let session = held.session.take().ok_or(Refused::Ledger(LedgerError::Stale))?;
        let step = Step {
            id: held.id.clone(),
            step: held.step,
            first: held.stored as u64,
            entries: entry_texts(session.trace(), held.stored),
            ttl: self.ttl,
        };
        // Recorded or not, the hold is settled here, not on drop.
        held.ledger = None;
        if let Err(error) = self.ledger.commit(step).await {
            // Not recorded (or, when the store went away as it answered,
            // recorded and the step moved: then this releases nothing).
            if let Err(release) = self.ledger.release(held.id.clone(), held.step).await {
                tracing::warn!(error = %release, "a session's hold could not be ended; it ends with its lease");
            }
            return Err(error.into());
        }
        {
            let mut warm = self.warm();
            if warm.len() >= self.bounds.total as usize
                && let Some(evicted) = warm.keys().next().cloned()
            {
                warm.remove(&evicted);
            }
            warm.insert(held.id.clone(), (held.step + 1, session));
        }
        let next = Handle { session: held.id.clone(), step: held.step + 1 };
        Ok(self.codec.seal(&next, &held.holder, &held.skill))
    }

    /// The signed trace of the session `handle` names, or without a
    /// handle, of the holder's current session on `skill` (an empty trace
    /// when it has none live).
    pub async fn trace(
        &self,
        liaison: &Liaison,
        principal: &Principal,
        skill: &Skill,
        handle: Option<&str>,
    ) -> Result<TraceDocument, Refused> {
        let bound = holder(principal);
        let found = match handle {
            Some(handle) => {
                let Handle { session: id, .. } = self.codec.open(handle, &bound, &skill.name)?;
                let stored = self.ledger.trace(id.clone(), principal.id.clone(), skill.name.clone()).await?;
                Some((id, stored))
            }
            None => self.ledger.current_trace(bound, principal.id.clone(), skill.name.clone()).await?,
        };
        let session = match found {
            Some((id, stored)) => {
                let trace = Trace::parse_str(&stored)
                    .map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))?;
                liaison.resume(Self::context(&id, principal), trace, SessionLimits::default())?
            }
            None => liaison.session(Self::context("none", principal)),
        };
        session.signed_trace().map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))
    }
}
