//! Where stateless guarded sessions live between calls: SQLite (in
//! memory for one process; a file the replicas share otherwise).
//!
//! Two tables. `guarded_sessions` has a small row per session: its
//! credential and skill, the step it is at, how many trace entries it
//! has, when it expires, and until when a call holds it. Holding a
//! session rewrites only that row. `guarded_entries` has the session's
//! trace entries, each written once, when the call that made it is
//! recorded (a trace is never rewritten whole). Every change is one
//! statement or one `BEGIN IMMEDIATE` transaction (SQLite serialises
//! writers, across processes too), so two replicas sharing the file
//! cannot both move a session on:
//! - [`Ledger::create`] opens a session within the server's and the
//!   credential's bound of live sessions, already held for its first call;
//! - [`Ledger::claim`] holds a session for one call, only at the step the
//!   caller's handle names (an earlier handle is stale) and only when no
//!   call holds it (busy), in one `UPDATE … RETURNING`;
//! - [`Ledger::commit`] records the call (the step moves on, its entries
//!   are added, the hold ends); [`Ledger::release`] ends a hold having
//!   recorded nothing.
//!
//! A hold lasts at most the lease given, so a replica that died holding a
//! session does not lock it for good; an expired session is forgotten.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    /// The server holds `max_sessions` live sessions.
    #[error("too many sessions")]
    ServerFull,
    /// The credential holds its share of live sessions.
    #[error("this credential holds its share of sessions")]
    CredentialFull,
    /// The store failed.
    #[error("the session store failed: {0}")]
    Store(String),
}

impl From<rusqlite::Error> for LedgerError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Store(error.to_string())
    }
}

/// The sessions and their entries.
pub struct Ledger {
    connection: Mutex<Connection>,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_millis() as i64).unwrap_or(0)
}

fn after(duration: Duration) -> i64 {
    now_ms().saturating_add(duration.as_millis().min(i64::MAX as u128) as i64)
}

/// A new session id: 128 random bits in hex.
pub fn new_id() -> Result<String, LedgerError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|error| LedgerError::Store(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Live sessions bounds for [`Ledger::create`] (or counts of live
/// sessions, from [`Ledger::live`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionBounds {
    /// Over the server (every replica sharing the ledger).
    pub total: u32,
    /// Per credential.
    pub per_credential: u32,
}

impl SessionBounds {
    /// No sessions.
    pub const NONE: Self = Self { total: 0, per_credential: 0 };
}

/// The sessions live at `now` (not expired, or held by a call): over the
/// ledger, and of `credential`.
fn live_sessions(connection: &Connection, credential: &str, now: i64) -> rusqlite::Result<SessionBounds> {
    let (total, mine): (i64, i64) = connection.query_row(
        "SELECT count(*), count(CASE WHEN credential = ?2 THEN 1 END) FROM guarded_sessions
         WHERE expires >= ?1 OR held_until >= ?1",
        params![now, credential],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let count = |value: i64| u32::try_from(value).unwrap_or(u32::MAX);
    Ok(SessionBounds { total: count(total), per_credential: count(mine) })
}

/// Add `entries` (JSON texts) to session `id` from position `first`.
fn add_entries(connection: &Connection, id: &str, first: u64, entries: &[String]) -> rusqlite::Result<()> {
    let mut insert = connection
        .prepare_cached("INSERT INTO guarded_entries (session, position, entry) VALUES (?1, ?2, ?3)")?;
    for (offset, entry) in entries.iter().enumerate() {
        insert.execute(params![id, (first + offset as u64) as i64, entry])?;
    }
    Ok(())
}

/// The entries of session `id` as one JSON array.
fn entries_of(connection: &Connection, id: &str) -> rusqlite::Result<String> {
    let mut select = connection
        .prepare_cached("SELECT entry FROM guarded_entries WHERE session = ?1 ORDER BY position")?;
    let mut trace = String::from("[");
    let mut rows = select.query(params![id])?;
    while let Some(row) = rows.next()? {
        if trace.len() > 1 {
            trace.push(',');
        }
        trace.push_str(row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?);
    }
    trace.push(']');
    Ok(trace)
}

impl Ledger {
    /// A ledger in memory (one process), or in the SQLite file at `path`,
    /// created when missing and shared by every replica naming it.
    pub fn open(path: Option<&Path>) -> Result<Self, LedgerError> {
        let connection = match path {
            Some(path) => {
                let connection = Connection::open(path)?;
                connection.busy_timeout(Duration::from_secs(5))?;
                connection.pragma_update(None, "journal_mode", "WAL")?;
                connection.pragma_update(None, "synchronous", "NORMAL")?;
                connection
            }
            None => Connection::open_in_memory()?,
        };
        connection.execute_batch(
            "CREATE TABLE IF NOT EXISTS guarded_sessions (
                 id TEXT PRIMARY KEY,
                 credential TEXT NOT NULL,
                 skill TEXT NOT NULL,
                 step INTEGER NOT NULL,
                 entries INTEGER NOT NULL,
                 expires INTEGER NOT NULL,
                 held_until INTEGER NOT NULL
             );
             CREATE INDEX IF NOT EXISTS guarded_sessions_by_credential
                 ON guarded_sessions (credential, expires);
             CREATE TABLE IF NOT EXISTS guarded_entries (
                 session TEXT NOT NULL,
                 position INTEGER NOT NULL,
                 entry TEXT NOT NULL,
                 PRIMARY KEY (session, position)
             ) WITHOUT ROWID;",
        )?;
        Ok(Self { connection: Mutex::new(connection) })
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Live sessions (not expired, or held by a call): over the ledger, and of
    /// `credential`. An MCP session opening counts these against the same
    /// bounds.
    pub fn live(&self, credential: &str) -> Result<SessionBounds, LedgerError> {
        Ok(live_sessions(&self.connection(), credential, now_ms())?)
    }

    /// Open session `id` (from [`new_id`]) of `credential` on `skill` with
    /// `entries` (its activation), at step 0 and held for its first call
    /// for `lease`. Refused past `bounds` of live sessions.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &self,
        id: &str,
        credential: &str,
        skill: &str,
        entries: &[String],
        bounds: SessionBounds,
        ttl: Duration,
        lease: Duration,
    ) -> Result<(), LedgerError> {
        let mut connection = self.connection();
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_ms();
        transaction.execute(
            "DELETE FROM guarded_entries WHERE session IN
                 (SELECT id FROM guarded_sessions WHERE expires < ?1 AND held_until < ?1)",
            params![now],
        )?;
        transaction
            .execute("DELETE FROM guarded_sessions WHERE expires < ?1 AND held_until < ?1", params![now])?;
        let live = live_sessions(&transaction, credential, now)?;
        if live.total >= bounds.total {
            return Err(LedgerError::ServerFull);
        }
        if live.per_credential >= bounds.per_credential {
            return Err(LedgerError::CredentialFull);
        }
        transaction.execute(
            "INSERT INTO guarded_sessions (id, credential, skill, step, entries, expires, held_until)
             VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
            params![id, credential, skill, entries.len() as i64, after(ttl), after(lease)],
        )?;
        add_entries(&transaction, id, 0, entries)?;
        transaction.commit()?;
        Ok(())
    }

    /// Hold session `id` of `credential` on `skill` for one call for
    /// `lease`, when it is at `step` and no call holds it; its trace (a
    /// JSON array of its entries) when `with_trace` (a caller that kept
    /// the session at that step needs none).
    pub fn claim(
        &self,
        id: &str,
        credential: &str,
        skill: &str,
        step: u64,
        lease: Duration,
        with_trace: bool,
    ) -> Result<Option<String>, LedgerError> {
        let connection = self.connection();
        let now = now_ms();
        // One statement holds the session when everything is in order, so
        // two replicas cannot both hold it; only a refusal looks further.
        let held = connection
            .prepare_cached(
                "UPDATE guarded_sessions SET held_until = ?6
                 WHERE id = ?1 AND credential = ?2 AND skill = ?3 AND step = ?4
                   AND held_until < ?5 AND expires >= ?5
                 RETURNING step",
            )?
            .query_row(params![id, credential, skill, step as i64, now, after(lease)], |row| {
                row.get::<_, i64>(0)
            })
            .optional()?;
        if held.is_some() {
            // The hold keeps every other writer off this session's entries.
            return Ok(if with_trace { Some(entries_of(&connection, id)?) } else { None });
        }
        let row: Option<(i64, i64)> = connection
            .prepare_cached(
                "SELECT expires, held_until FROM guarded_sessions
                 WHERE id = ?1 AND credential = ?2 AND skill = ?3",
            )?
            .query_row(params![id, credential, skill], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        Err(match row {
            None => LedgerError::Unknown,
            Some((_, held_until)) if held_until >= now => LedgerError::Busy,
            Some((expires, _)) if expires < now => LedgerError::Unknown,
            Some(_) => LedgerError::Stale,
        })
    }

    /// Record the call that held session `id` at `step`: its `entries`
    /// are added after the `first` the session had, the session moves to
    /// the next step, its TTL starts again and the hold ends.
    pub fn commit(
        &self,
        id: &str,
        step: u64,
        first: u64,
        entries: &[String],
        ttl: Duration,
    ) -> Result<(), LedgerError> {
        let mut connection = self.connection();
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = transaction
            .prepare_cached(
                "UPDATE guarded_sessions SET step = step + 1, entries = entries + ?4, expires = ?5, held_until = 0
                 WHERE id = ?1 AND step = ?2 AND entries = ?3",
            )?
            .execute(params![id, step as i64, first as i64, entries.len() as i64, after(ttl)])?;
        if changed != 1 {
            return Err(LedgerError::Stale);
        }
        add_entries(&transaction, id, first, entries)?;
        transaction.commit()?;
        Ok(())
    }

    /// End the hold on session `id` at `step`, recording nothing.
    pub fn release(&self, id: &str, step: u64) {
        let released = self.connection().execute(
            "UPDATE guarded_sessions SET held_until = 0 WHERE id = ?1 AND step = ?2",
            params![id, step as i64],
        );
        if let Err(error) = released {
            tracing::warn!(%error, "a session's hold could not be ended; it ends with its lease");
        }
    }

    /// The trace (a JSON array of its entries) of live session `id` of
    /// `credential` on `skill`.
    pub fn trace(&self, id: &str, credential: &str, skill: &str) -> Result<String, LedgerError> {
        let connection = self.connection();
        let live: Option<i64> = connection
            .query_row(
                "SELECT step FROM guarded_sessions
                 WHERE id = ?1 AND credential = ?2 AND skill = ?3 AND (expires >= ?4 OR held_until >= ?4)",
                params![id, credential, skill, now_ms()],
                |row| row.get(0),
            )
            .optional()?;
        live.ok_or(LedgerError::Unknown)?;
        Ok(entries_of(&connection, id)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: SessionBounds = SessionBounds { total: 4, per_credential: 2 };
    const TTL: Duration = Duration::from_secs(60);
    const LEASE: Duration = Duration::from_secs(60);

    /// Open a new session as [`Ledger::create`] does; its id.
    fn open(
        ledger: &Ledger,
        credential: &str,
        entries: &[String],
        ttl: Duration,
        lease: Duration,
    ) -> Result<String, LedgerError> {
        let id = new_id()?;
        ledger.create(&id, credential, "s", entries, BOUNDS, ttl, lease).map(|()| id)
    }

    fn entries(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|text| (*text).to_owned()).collect()
    }

    #[test]
    fn a_session_moves_on_one_step_per_call_and_an_earlier_step_is_stale() {
        let ledger = Ledger::open(None).unwrap();
        let id = open(&ledger, "c", &entries(&["1"]), TTL, LEASE).unwrap();
        assert_eq!(ledger.claim(&id, "c", "s", 0, LEASE, true), Err(LedgerError::Busy));
        ledger.commit(&id, 0, 1, &entries(&["2"]), TTL).unwrap();
        assert_eq!(ledger.claim(&id, "c", "s", 0, LEASE, true), Err(LedgerError::Stale));
        assert_eq!(ledger.claim(&id, "c", "s", 1, LEASE, true), Ok(Some("[1,2]".to_owned())));
        assert_eq!(ledger.claim(&id, "c", "s", 1, LEASE, true), Err(LedgerError::Busy));
        ledger.release(&id, 1);
        assert_eq!(ledger.claim(&id, "c", "s", 1, LEASE, false), Ok(None));
        // Entries from the wrong place are refused, and add nothing.
        assert_eq!(ledger.commit(&id, 1, 1, &entries(&["9"]), TTL), Err(LedgerError::Stale));
        ledger.commit(&id, 1, 2, &entries(&["3", "4"]), TTL).unwrap();
        assert_eq!(ledger.commit(&id, 1, 4, &entries(&["5"]), TTL), Err(LedgerError::Stale));
        assert_eq!(ledger.trace(&id, "c", "s"), Ok("[1,2,3,4]".to_owned()));
    }

    #[test]
    fn a_session_is_only_its_credentials_and_skills() {
        let ledger = Ledger::open(None).unwrap();
        let id = open(&ledger, "c", &entries(&["1"]), TTL, LEASE).unwrap();
        ledger.release(&id, 0);
        assert_eq!(ledger.claim(&id, "other", "s", 0, LEASE, true), Err(LedgerError::Unknown));
        assert_eq!(ledger.claim(&id, "c", "other", 0, LEASE, true), Err(LedgerError::Unknown));
        assert_eq!(ledger.trace(&id, "other", "s"), Err(LedgerError::Unknown));
        assert_eq!(ledger.claim("nope", "c", "s", 0, LEASE, true), Err(LedgerError::Unknown));
    }

    #[test]
    fn live_sessions_are_bounded_per_credential_and_over_the_server_and_expired_ones_forgotten() {
        let ledger = Ledger::open(None).unwrap();
        let one = entries(&["1"]);
        for _ in 0..2 {
            open(&ledger, "a", &one, TTL, Duration::ZERO).unwrap();
        }
        assert_eq!(open(&ledger, "a", &one, TTL, LEASE), Err(LedgerError::CredentialFull));
        for _ in 0..2 {
            open(&ledger, "b", &one, TTL, Duration::ZERO).unwrap();
        }
        assert_eq!(open(&ledger, "c", &one, TTL, LEASE), Err(LedgerError::ServerFull));
        assert_eq!(ledger.live("a"), Ok(SessionBounds { total: 4, per_credential: 2 }));
        assert_eq!(ledger.live("c"), Ok(SessionBounds { total: 4, per_credential: 0 }));
        let short = Ledger::open(None).unwrap();
        let id = open(&short, "a", &one, Duration::ZERO, Duration::ZERO).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(short.live("a"), Ok(SessionBounds::NONE), "expired, not live");
        assert_eq!(short.claim(&id, "a", "s", 0, LEASE, true), Err(LedgerError::Unknown));
        for _ in 0..2 {
            open(&short, "a", &one, TTL, LEASE).unwrap();
        }
        let left: i64 = short
            .connection()
            .query_row("SELECT count(*) FROM guarded_entries WHERE session = ?1", params![id], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(left, 0, "an expired session's entries go with it");
    }

    #[test]
    fn two_processes_sharing_a_file_cannot_both_move_a_session_on() {
        let dir = std::env::temp_dir().join(format!("harmonia-ledger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sessions.db");
        let _ = std::fs::remove_file(&path);
        let a = Ledger::open(Some(&path)).unwrap();
        let b = Ledger::open(Some(&path)).unwrap();
        let id = open(&a, "c", &entries(&["1"]), TTL, LEASE).unwrap();
        assert_eq!(b.claim(&id, "c", "s", 0, LEASE, true), Err(LedgerError::Busy));
        a.commit(&id, 0, 1, &entries(&["2"]), TTL).unwrap();
        assert_eq!(b.claim(&id, "c", "s", 1, LEASE, true), Ok(Some("[1,2]".to_owned())));
        assert_eq!(a.claim(&id, "c", "s", 1, LEASE, true), Err(LedgerError::Busy));
        b.commit(&id, 1, 2, &entries(&["3"]), TTL).unwrap();
        assert_eq!(a.trace(&id, "c", "s"), Ok("[1,2,3]".to_owned()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
