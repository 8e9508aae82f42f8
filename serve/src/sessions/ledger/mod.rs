//! Where guarded sessions live between calls, and what every replica
//! sharing it counts: one trait, [`Ledger`], with two implementations
//! chosen by `[sessions] ledger` in the serve config:
//! - [`sqlite::SqliteLedger`]: in memory for one process, or a SQLite
//!   file that the replicas of one machine share (the default);
//! - [`postgres::PostgresLedger`]: a PostgreSQL database that replicas on
//!   several machines share.
//!
//! A ledger holds, for each stateless guarded session (MCP 2026-07-28), its
//! credential and skill, the step it is at, its trace entries (each
//! written once, when the call that made it is recorded) and when it
//! expires; and the places of the MCP sessions (handshake revisions) open
//! on every replica, each a lease its replica renews. Both kinds draw on
//! one share, counted over the ledger: `max_sessions` over every replica,
//! `max_sessions_per_credential` per credential.
//!
//! Every operation that moves a session is atomic in the store, so two
//! replicas can never both move a session on:
//! - [`Ledger::create`] opens a session within the bounds, already held
//!   for its first call;
//! - [`Ledger::claim`] holds a session for one call, only at the step the
//!   caller's handle names (an earlier handle is stale) and only when no
//!   call holds it (busy); [`Ledger::claim_current`] holds the session a
//!   call without a handle continues: its holder's current one on the
//!   skill (at most one each, a unique index says), at its step;
//! - [`Ledger::commit`] records the call: the step moves on, its entries
//!   are added and the hold ends, or nothing happens (a step is recorded
//!   exactly once or not at all); [`Ledger::release`] ends a hold having
//!   recorded nothing.
//!
//! A hold lasts at most the lease given and a place at most its lease, so
//! a replica that died holding either does not keep it; an expired session
//! is forgotten. Parts: this trait and its types, [`sqlite`], [`postgres`].

pub mod postgres;
pub mod sqlite;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// Why the ledger refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// No such live session for this credential and skill.
    #[error("no such session: it expired, or it is not this credential's")]
    Unknown,
    /// The handle names an earlier step than the session's: replayed.
    #[error("the session handle is stale: the session has moved on since it was issued")]
    Stale,
    /// Another call of the session is running.
    #[error("another call of this session is running")]
    Busy,
    /// Every replica together holds `max_sessions` live sessions.
    #[error("too many sessions")]
    ServerFull,
    /// The credential holds its share of live sessions.
    #[error("this credential holds its share of sessions")]
    CredentialFull,
    /// The store failed (the detail is for the log).
    #[error("the session store failed: {0}")]
    Store(String),
    /// The store cannot be reached now (a database down, restarting or cut
    /// off): nothing was read or changed; the same request may succeed
    /// later.
    #[error("the session store cannot be reached: {0}")]
    Unavailable(String),
}

impl LedgerError {
    /// Whether the same request may succeed later unchanged.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Self::Busy | Self::ServerFull | Self::CredentialFull | Self::Store(_) | Self::Unavailable(_)
        )
    }
}

/// A new session id (or place id): 128 random bits in hex.
pub fn new_id() -> Result<String, LedgerError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|error| LedgerError::Store(error.to_string()))?;
    Ok(harmonia_contract::digest::hex(&bytes))
}

/// Bounds of live sessions (or counts of them, from [`Ledger::live`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionBounds {
    /// Over the ledger (every replica sharing it).
    pub total: u32,
    /// Per credential.
    pub per_credential: u32,
}

impl SessionBounds {
    /// No sessions.
    pub const NONE: Self = Self { total: 0, per_credential: 0 };
}

/// A stateless session to open, held for its first call. It becomes its
/// holder's current session on its skill: the one a call without a handle
/// continues.
#[derive(Clone, Debug)]
pub struct NewSession {
    /// From [`new_id`].
    pub id: String,
    /// The credential owning it.
    pub credential: String,
    /// What its handles are bound to (the credential and its workspace).
    pub holder: String,
    /// Whether it replaces the holder's current session on the skill (an
    /// explicit new session); when not, another live current session is
    /// [`LedgerError::Busy`] (two calls without a handle raced to open one).
    pub replace: bool,
    /// The skill it is bound to.
    pub skill: String,
    /// Its first trace entries (the skill's activation), JSON texts.
    pub entries: Vec<String>,
    /// Refused past these live sessions (both kinds).
    pub bounds: SessionBounds,
    /// It expires this long after its last recorded call.
    pub ttl: Duration,
    /// Its first call holds it this long at most.
    pub lease: Duration,
}

/// A hold asked for one call of a session.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The session.
    pub id: String,
    /// Who asks: the session's credential, or it is unknown.
    pub credential: String,
    /// On which skill's route: the session's, or it is unknown.
    pub skill: String,
    /// The step the caller's handle names.
    pub step: u64,
    /// The call holds it this long at most.
    pub lease: Duration,
    /// Whether to answer the trace (a replica that kept the session at
    /// that step needs none).
    pub with_trace: bool,
}

/// A hold asked for one call of a holder's current session on a skill (a
/// call without a handle).
#[derive(Clone, Debug)]
pub struct CurrentClaim {
    /// What the session's handles are bound to.
    pub holder: String,
    /// Who asks: the session's credential.
    pub credential: String,
    /// On which skill's route.
    pub skill: String,
    /// The call holds it this long at most.
    pub lease: Duration,
}

/// The current session, held: its id, the step it is at, its trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Current {
    /// The session.
    pub id: String,
    /// The step it is at.
    pub step: u64,
    /// Its trace (a JSON array of its entries).
    pub trace: String,
}

/// A call to record: its entries added after the `first` the session had.
#[derive(Clone, Debug)]
pub struct Step {
    /// The session.
    pub id: String,
    /// The step held.
    pub step: u64,
    /// How many entries the session had when it was held.
    pub first: u64,
    /// The call's entries, JSON texts.
    pub entries: Vec<String>,
    /// The session expires this long after now.
    pub ttl: Duration,
}

/// An MCP session's place in the share, reserved before it opens.
#[derive(Clone, Debug)]
pub struct Place {
    /// From [`new_id`].
    pub id: String,
    /// The credential opening it.
    pub credential: String,
    /// Refused past these live sessions (both kinds).
    pub bounds: SessionBounds,
    /// It lasts this long unless renewed.
    pub lease: Duration,
}

/// Whether the ledger can serve now (what `/readyz` says).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Reachable, and its schema is current.
    Ready,
    /// Not now, and why (never a password or a URL).
    NotReady(String),
}

/// A ledger operation on its way.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, LedgerError>> + Send + 'a>>;

/// The operations every ledger offers (the module doc says what each
/// guarantees).
pub trait Ledger: Send + Sync {
    /// Live sessions of both kinds (not expired, or held by a call; places
    /// within their lease): over the ledger, and of `credential`.
    fn live(&self, credential: String) -> Pending<'_, SessionBounds>;

    /// Open `session`, held for its first call; refused past its bounds.
    fn create(&self, session: NewSession) -> Pending<'_, ()>;

    /// Hold a session for one call; its trace (a JSON array of its
    /// entries) when asked.
    fn claim(&self, claim: Claim) -> Pending<'_, Option<String>>;

    /// Hold the holder's current session on the skill for one call, at
    /// whatever step it is: `None` when it has none live (the caller opens
    /// one); [`LedgerError::Busy`] when a call holds it.
    fn claim_current(&self, claim: CurrentClaim) -> Pending<'_, Option<Current>>;

    /// Record the call that held a session: all of it, or nothing
    /// ([`LedgerError::Stale`] when the session is not where the call
    /// found it).
    fn commit(&self, step: Step) -> Pending<'_, ()>;

    /// End the hold on session `id` at `step`, recording nothing.
    fn release(&self, id: String, step: u64) -> Pending<'_, ()>;

    /// The trace of live session `id` of `credential` on `skill`.
    fn trace(&self, id: String, credential: String, skill: String) -> Pending<'_, String>;

    /// The id and trace of the holder's current live session on the skill,
    /// if it has one (not holding it).
    fn current_trace(
        &self,
        holder: String,
        credential: String,
        skill: String,
    ) -> Pending<'_, Option<(String, String)>>;

    /// Reserve an MCP session's place; refused past its bounds.
    fn reserve(&self, place: Place) -> Pending<'_, ()>;

    /// Extend the leases of `places` (each `(id, credential)`, those this
    /// replica still holds) to `lease` from now, writing again any the
    /// store lost.
    fn renew(&self, places: Vec<(String, String)>, lease: Duration) -> Pending<'_, ()>;

    /// Give a place back.
    fn give_back(&self, place: String) -> Pending<'_, ()>;

    /// Whether it can serve now.
    fn readiness(&self) -> Readiness;
}
