//! The SQLite ledger: in memory for one process, or a file the replicas
//! of one machine share (SQLite's locks do not cross a network file
//! system: replicas on several machines share a PostgreSQL ledger).
//!
//! Three tables. `guarded_sessions` has a small row per session: its
//! credential, holder and skill, whether it is its holder's current one
//! on the skill (a unique index keeps one), the step it is at, how many
//! trace entries it has, when it expires, and until when a call holds it. Holding a
//! session rewrites only that row. `guarded_entries` has the sessions'
//! trace entries, each written once. `mcp_places` has the places of the
//! MCP sessions open on every replica. Every change is one statement or
//! one `BEGIN IMMEDIATE` transaction (SQLite serialises writers, across
//! processes too). Times are this machine's clock, in milliseconds.
//!
//! A ledger in memory answers inline (a few microseconds); a file's
//! operations run on a blocking thread, as they may wait on another
//! replica's lock (up to 5 s).

use super::{
    Claim, Current, CurrentClaim, Ledger, LedgerError, NewSession, Pending, Place, Readiness, SessionBounds,
    Step,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

impl From<rusqlite::Error> for LedgerError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Store(error.to_string())
    }
}

/// The sessions, their entries and the places, in SQLite.
pub struct SqliteLedger {
    connection: Arc<Mutex<Connection>>,
    /// A file shared with other processes (its operations may wait).
    shared: bool,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_millis() as i64).unwrap_or(0)
}

fn after(now: i64, duration: Duration) -> i64 {
    now.saturating_add(duration.as_millis().min(i64::MAX as u128) as i64)
}

fn count(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The sessions live at `now` (stateless ones not expired or held by a
/// call, and places within their lease): over the ledger, and of
/// `credential`.
fn live_sessions(connection: &Connection, credential: &str, now: i64) -> rusqlite::Result<SessionBounds> {
    let (total, mine): (i64, i64) = connection.query_row(
        "SELECT count(*), count(CASE WHEN credential = ?2 THEN 1 END) FROM (
             SELECT credential FROM guarded_sessions WHERE expires >= ?1 OR held_until >= ?1
             UNION ALL
             SELECT credential FROM mcp_places WHERE expires >= ?1)",
        params![now, credential],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok(SessionBounds { total: count(total), per_credential: count(mine) })
}

/// Forget expired sessions (with their entries) and places.
fn forget_expired(connection: &Connection, now: i64) -> rusqlite::Result<()> {
    connection.execute(
        "DELETE FROM guarded_entries WHERE session IN
             (SELECT id FROM guarded_sessions WHERE expires < ?1 AND held_until < ?1)",
        params![now],
    )?;
    connection
        .execute("DELETE FROM guarded_sessions WHERE expires < ?1 AND held_until < ?1", params![now])?;
    connection.execute("DELETE FROM mcp_places WHERE expires < ?1", params![now])?;
    Ok(())
}

/// Refused past `bounds` of the sessions live at `now`.
fn within(
    connection: &Connection,
    credential: &str,
    bounds: SessionBounds,
    now: i64,
) -> Result<(), LedgerError> {
    let live = live_sessions(connection, credential, now)?;
    if live.total >= bounds.total {
        return Err(LedgerError::ServerFull);
    }
    if live.per_credential >= bounds.per_credential {
        return Err(LedgerError::CredentialFull);
    }
    Ok(())
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

impl SqliteLedger {
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
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS mcp_places (
                 id TEXT PRIMARY KEY,
                 credential TEXT NOT NULL,
                 expires INTEGER NOT NULL
             );",
        )?;
        // A file an earlier release made has no holder or current session.
        let columns: Vec<String> = connection
            .prepare("SELECT name FROM pragma_table_info('guarded_sessions')")?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        if !columns.iter().any(|column| column == "holder") {
            connection.execute_batch(
                "ALTER TABLE guarded_sessions ADD COLUMN holder TEXT NOT NULL DEFAULT '';
                 ALTER TABLE guarded_sessions ADD COLUMN current INTEGER NOT NULL DEFAULT 0;",
            )?;
        }
        connection.execute_batch(
            "CREATE UNIQUE INDEX IF NOT EXISTS guarded_sessions_current
                 ON guarded_sessions (holder, skill) WHERE current",
        )?;
        Ok(Self { connection: Arc::new(Mutex::new(connection)), shared: path.is_some() })
    }

    /// Run `operation` on the connection: inline in memory, on a blocking
    /// thread for a shared file.
    fn run<T: Send + 'static>(
        &self,
        operation: impl FnOnce(&mut Connection) -> Result<T, LedgerError> + Send + 'static,
    ) -> Pending<'_, T> {
        let connection = Arc::clone(&self.connection);
        let locked = move || {
            let mut connection = connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            operation(&mut connection)
        };
        if !self.shared {
            let done = locked();
            return Box::pin(async move { done });
        }
        Box::pin(async move {
            tokio::task::spawn_blocking(locked)
                .await
                .unwrap_or_else(|error| Err(LedgerError::Store(error.to_string())))
        })
    }
}

impl Ledger for SqliteLedger {
    fn live(&self, credential: String) -> Pending<'_, SessionBounds> {
        self.run(move |connection| Ok(live_sessions(connection, &credential, now_ms())?))
    }

    fn create(&self, session: NewSession) -> Pending<'_, ()> {
        self.run(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = now_ms();
            forget_expired(&transaction, now)?;
            within(&transaction, &session.credential, session.bounds, now)?;
            if session.replace {
                transaction.execute(
                    "UPDATE guarded_sessions SET current = 0 WHERE holder = ?1 AND skill = ?2 AND current",
                    params![session.holder, session.skill],
                )?;
            }
            let inserted = transaction.execute(
                "INSERT INTO guarded_sessions
                     (id, credential, holder, skill, current, step, entries, expires, held_until)
                 VALUES (?1, ?2, ?3, ?4, 1, 0, ?5, ?6, ?7)",
                params![
                    session.id,
                    session.credential,
                    session.holder,
                    session.skill,
                    session.entries.len() as i64,
                    after(now, session.ttl),
                    after(now, session.lease)
                ],
            );
            match inserted {
                // Another call opened the holder's current session first.
                Err(rusqlite::Error::SqliteFailure(error, _))
                    if error.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    return Err(LedgerError::Busy);
                }
                inserted => inserted?,
            };
            add_entries(&transaction, &session.id, 0, &session.entries)?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn claim(&self, claim: Claim) -> Pending<'_, Option<String>> {
        self.run(move |connection| {
            let now = now_ms();
            // One statement holds the session when everything is in order,
            // so two replicas cannot both hold it; only a refusal looks
            // further.
            let held = connection
                .prepare_cached(
                    "UPDATE guarded_sessions SET held_until = ?6
                     WHERE id = ?1 AND credential = ?2 AND skill = ?3 AND step = ?4
                       AND held_until < ?5 AND expires >= ?5
                     RETURNING step",
                )?
                .query_row(
                    params![
                        claim.id,
                        claim.credential,
                        claim.skill,
                        claim.step as i64,
                        now,
                        after(now, claim.lease)
                    ],
                    |row| row.get::<_, i64>(0),
                )
                .optional()?;
            if held.is_some() {
                // The hold keeps every other writer off this session's entries.
                return Ok(if claim.with_trace { Some(entries_of(connection, &claim.id)?) } else { None });
            }
            let row: Option<(i64, i64)> = connection
                .prepare_cached(
                    "SELECT expires, held_until FROM guarded_sessions
                     WHERE id = ?1 AND credential = ?2 AND skill = ?3",
                )?
                .query_row(params![claim.id, claim.credential, claim.skill], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()?;
            Err(match row {
                None => LedgerError::Unknown,
                Some((_, held_until)) if held_until >= now => LedgerError::Busy,
                Some((expires, _)) if expires < now => LedgerError::Unknown,
                Some(_) => LedgerError::Stale,
            })
        })
    }

    fn claim_current(&self, claim: CurrentClaim) -> Pending<'_, Option<Current>> {
        self.run(move |connection| {
            let now = now_ms();
            let held = connection
                .prepare_cached(
                    "UPDATE guarded_sessions SET held_until = ?5
                     WHERE holder = ?1 AND skill = ?2 AND credential = ?3 AND current
                       AND held_until < ?4 AND expires >= ?4
                     RETURNING id, step",
                )?
                .query_row(
                    params![claim.holder, claim.skill, claim.credential, now, after(now, claim.lease)],
                    |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)),
                )
                .optional()?;
            if let Some((id, step)) = held {
                let trace = entries_of(connection, &id)?;
                return Ok(Some(Current { id, step: step as u64, trace }));
            }
            let busy: Option<i64> = connection
                .prepare_cached(
                    "SELECT 1 FROM guarded_sessions
                     WHERE holder = ?1 AND skill = ?2 AND current AND held_until >= ?3",
                )?
                .query_row(params![claim.holder, claim.skill, now], |row| row.get(0))
                .optional()?;
            match busy {
                Some(_) => Err(LedgerError::Busy),
                None => Ok(None),
            }
        })
    }

    fn commit(&self, step: Step) -> Pending<'_, ()> {
        self.run(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let changed = transaction
                .prepare_cached(
                    "UPDATE guarded_sessions SET step = step + 1, entries = entries + ?4, expires = ?5, held_until = 0
                     WHERE id = ?1 AND step = ?2 AND entries = ?3",
                )?
                .execute(params![
                    step.id,
                    step.step as i64,
                    step.first as i64,
                    step.entries.len() as i64,
                    after(now_ms(), step.ttl)
                ])?;
            if changed != 1 {
                return Err(LedgerError::Stale);
            }
            add_entries(&transaction, &step.id, step.first, &step.entries)?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn release(&self, id: String, step: u64) -> Pending<'_, ()> {
        self.run(move |connection| {
            connection.execute(
                "UPDATE guarded_sessions SET held_until = 0 WHERE id = ?1 AND step = ?2",
                params![id, step as i64],
            )?;
            Ok(())
        })
    }

    fn trace(&self, id: String, credential: String, skill: String) -> Pending<'_, String> {
        self.run(move |connection| {
            let live: Option<i64> = connection
                .query_row(
                    "SELECT step FROM guarded_sessions
                     WHERE id = ?1 AND credential = ?2 AND skill = ?3 AND (expires >= ?4 OR held_until >= ?4)",
                    params![id, credential, skill, now_ms()],
                    |row| row.get(0),
                )
                .optional()?;
            live.ok_or(LedgerError::Unknown)?;
            Ok(entries_of(connection, &id)?)
        })
    }

    fn current_trace(
        &self,
        holder: String,
        credential: String,
        skill: String,
    ) -> Pending<'_, Option<(String, String)>> {
        self.run(move |connection| {
            let id: Option<String> = connection
                .query_row(
                    "SELECT id FROM guarded_sessions
                     WHERE holder = ?1 AND skill = ?2 AND credential = ?3 AND current
                       AND (expires >= ?4 OR held_until >= ?4)",
                    params![holder, skill, credential, now_ms()],
                    |row| row.get(0),
                )
                .optional()?;
            match id {
                None => Ok(None),
                Some(id) => {
                    let trace = entries_of(connection, &id)?;
                    Ok(Some((id, trace)))
                }
            }
        })
    }

    fn reserve(&self, place: Place) -> Pending<'_, ()> {
        self.run(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = now_ms();
            forget_expired(&transaction, now)?;
            within(&transaction, &place.credential, place.bounds, now)?;
            transaction.execute(
                "INSERT INTO mcp_places (id, credential, expires) VALUES (?1, ?2, ?3)",
                params![place.id, place.credential, after(now, place.lease)],
            )?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn renew(&self, places: Vec<(String, String)>, lease: Duration) -> Pending<'_, ()> {
        self.run(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let expires = after(now_ms(), lease);
            {
                let mut renew = transaction.prepare_cached(
                    "INSERT INTO mcp_places (id, credential, expires) VALUES (?1, ?2, ?3)
                     ON CONFLICT (id) DO UPDATE SET expires = excluded.expires",
                )?;
                for (place, credential) in &places {
                    renew.execute(params![place, credential, expires])?;
                }
            }
            transaction.commit()?;
            Ok(())
        })
    }

    fn give_back(&self, place: String) -> Pending<'_, ()> {
        self.run(move |connection| {
            connection.execute("DELETE FROM mcp_places WHERE id = ?1", params![place])?;
            Ok(())
        })
    }

    fn readiness(&self) -> Readiness {
        Readiness::Ready
    }
}
