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
//! Parts: [`handle`] (the sealed handle), [`ledger`] (the SQLite table).

pub mod handle;
pub mod ledger;

use crate::auth::Principal;
use crate::config::{Limits, SessionsConfig};
use handle::{Handle, HandleCodec, HandleError};
use harmonia_contract::liaison::trace::{Trace, TraceDocument};
use harmonia_host::CallContext;
use harmonia_host::liaison::session::{Liaison, ResumeError, Session, SessionLimits};
use harmonia_host::liaison::skills::Skill;
use ledger::{Ledger, LedgerError, SessionBounds};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
            Self::Resume(_) | Self::Activation(_) => "session_unusable",
        }
    }

    /// Whether the same request may succeed later unchanged.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Self::Ledger(
                LedgerError::Busy
                    | LedgerError::ServerFull
                    | LedgerError::CredentialFull
                    | LedgerError::Store(_)
            )
        )
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
}

/// The stateless guarded sessions of one server.
pub struct GuardedSessions {
    codec: HandleCodec,
    ledger: Arc<Ledger>,
    shared: bool,
    bounds: SessionBounds,
    ttl: Duration,
    /// The sessions this process recorded last, each at the step it
    /// moved to: the next call at that step (when it comes here) takes
    /// the guard as it is instead of rebuilding it from the trace. Only a
    /// hold the ledger granted at that very step uses one, so a session
    /// moved on by another replica is rebuilt. At most `bounds.total`.
    warm: Mutex<HashMap<String, (u64, Session)>>,
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
    ledger: Option<Arc<Ledger>>,
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
        // A shared file may wait on another replica's lock: off the
        // runtime's workers when there is one.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(move || ledger.release(&id, step))),
            Err(_) => ledger.release(&id, step),
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

fn read_key(path: &Path) -> Result<Vec<u8>, SetupError> {
    let failed = |why: String| SetupError::Key(path.to_owned(), why);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = std::fs::metadata(path).map_err(|error| failed(error.to_string()))?.mode();
        if mode & 0o077 != 0 {
            return Err(failed(format!("is readable by others (mode {:o}); chmod 600 it", mode & 0o777)));
        }
    }
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

impl GuardedSessions {
    /// Sessions as `config` says (without a key file, a key made for this
    /// process; without a ledger file, a ledger in memory), bounded and
    /// expiring as `limits` say.
    pub fn new(config: &SessionsConfig, limits: &Limits) -> Result<Self, SetupError> {
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
        let ledger = Ledger::open(config.ledger.as_deref()).map_err(SetupError::Ledger)?;
        Ok(Self {
            codec,
            ledger: Arc::new(ledger),
            shared: config.ledger.is_some(),
            bounds: SessionBounds {
                total: limits.max_sessions,
                per_credential: limits.max_sessions_per_credential,
            },
            ttl,
            warm: Mutex::new(HashMap::new()),
        })
    }

    fn warm(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Session)>> {
        self.warm.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Run a ledger operation: inline for the ledger in memory (a few
    /// microseconds), on a blocking thread for a shared file (which may
    /// wait on another replica's lock).
    async fn ledger<T: Send + 'static>(
        &self,
        operation: impl FnOnce(&Ledger) -> Result<T, LedgerError> + Send + 'static,
    ) -> Result<T, LedgerError> {
        if !self.shared {
            return operation(&self.ledger);
        }
        let ledger = Arc::clone(&self.ledger);
        tokio::task::spawn_blocking(move || operation(&ledger))
            .await
            .unwrap_or_else(|error| Err(LedgerError::Store(error.to_string())))
    }

    fn context(id: &str, principal: &Principal) -> CallContext {
        CallContext { workspace: principal.workspace.clone(), trace_id: Some(format!("mcp-session-{id}")) }
    }

    /// The live stateless sessions, over the ledger and of `credential`:
    /// an MCP session opening counts them against the same bounds.
    pub async fn live(&self, credential: &str) -> Result<SessionBounds, LedgerError> {
        let credential = credential.to_owned();
        self.ledger(move |ledger| ledger.live(&credential)).await
    }

    /// Hold the session `handle` names (or a new one, without a handle)
    /// of `principal` on `skill` for one call, which may last `lease`. A
    /// new one is opened within the bounds less `in_mcp`: the MCP sessions
    /// open in this process, over the server and of `principal` (the two
    /// kinds draw on one share).
    pub async fn hold(
        &self,
        liaison: &Liaison,
        principal: &Principal,
        skill: &Skill,
        handle: Option<&str>,
        lease: Duration,
        in_mcp: SessionBounds,
    ) -> Result<Held, Refused> {
        let credential = principal.id.clone();
        let bound = holder(principal);
        let name = skill.name.clone();
        let Some(handle) = handle else {
            let id = ledger::new_id()?;
            let mut session = liaison.session(Self::context(&id, principal));
            session.activate(&name).map_err(|error| Refused::Activation(error.to_string()))?;
            let entries = entry_texts(session.trace(), 0);
            let stored = entries.len();
            let bounds = SessionBounds {
                total: self.bounds.total.saturating_sub(in_mcp.total),
                per_credential: self.bounds.per_credential.saturating_sub(in_mcp.per_credential),
            };
            let ttl = self.ttl;
            let (key, owner, skill_name) = (id.clone(), credential.clone(), name.clone());
            self.ledger(move |ledger| ledger.create(&key, &owner, &skill_name, &entries, bounds, ttl, lease))
                .await?;
            return Ok(Held {
                id,
                step: 0,
                stored,
                skill: name,
                holder: bound,
                session: Some(session),
                ledger: Some(Arc::clone(&self.ledger)),
            });
        };
        let Handle { session: id, step } = self.codec.open(handle, &bound, &name)?;
        let warm = self.warm().remove(&id).filter(|(at, _)| *at == step).map(|(_, session)| session);
        let (key, owner, skill_name) = (id.clone(), credential.clone(), name.clone());
        let rebuild = warm.is_none();
        let stored =
            self.ledger(move |ledger| ledger.claim(&key, &owner, &skill_name, step, lease, rebuild)).await?;
        let mut held = Held {
            id: id.clone(),
            step,
            stored: warm.as_ref().map_or(0, |session| session.trace().entries.len()),
            skill: name,
            holder: bound,
            session: warm,
            ledger: Some(Arc::clone(&self.ledger)),
        };
        if let Some(stored) = stored {
            let trace = Trace::parse_str(&stored)
                .map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))?;
            held.stored = trace.entries.len();
            held.session =
                Some(liaison.resume(Self::context(&id, principal), trace, SessionLimits::default())?);
        }
        Ok(held)
    }

    /// Record the call `held` ran: the session moves on a step; the handle
    /// for the next call.
    pub async fn record(&self, mut held: Held) -> Result<String, Refused> {
        let session = held.session.take().ok_or(Refused::Ledger(LedgerError::Stale))?;
        let entries = entry_texts(session.trace(), held.stored);
        let (id, step, first, ttl) = (held.id.clone(), held.step, held.stored as u64, self.ttl);
        // Recorded or not, the hold is settled here, not on drop.
        held.ledger = None;
        let recorded = self.ledger(move |ledger| ledger.commit(&id, step, first, &entries, ttl)).await;
        if let Err(error) = recorded {
            let (id, step) = (held.id.clone(), held.step);
            let _ = self
                .ledger(move |ledger| {
                    ledger.release(&id, step);
                    Ok(())
                })
                .await;
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

    /// The signed trace of the session `handle` names.
    pub async fn trace(
        &self,
        liaison: &Liaison,
        principal: &Principal,
        skill: &Skill,
        handle: &str,
    ) -> Result<TraceDocument, Refused> {
        let Handle { session: id, .. } = self.codec.open(handle, &holder(principal), &skill.name)?;
        let (owner, skill_name) = (principal.id.clone(), skill.name.clone());
        let key = id.clone();
        let stored = self.ledger(move |ledger| ledger.trace(&key, &owner, &skill_name)).await?;
        let trace = Trace::parse_str(&stored)
            .map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))?;
        let session = liaison.resume(Self::context(&id, principal), trace, SessionLimits::default())?;
        session.signed_trace().map_err(|error| Refused::Ledger(LedgerError::Store(error.to_string())))
    }
}
