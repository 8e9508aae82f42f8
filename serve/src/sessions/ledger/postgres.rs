//! The PostgreSQL ledger, for replicas on several machines: the tables of
//! `database/migrations/0001_shared_state.sql`, reached through the
//! shared [`Database`] (its pool, its timeout, its health).
//!
//! What each operation costs, and why it is safe:
//! - [`Ledger::claim`] is one statement (`UPDATE … RETURNING` with the
//!   trace in the same round trip), committed asynchronously: a hold is a
//!   lease, and one lost in a crash frees a session, never moves it.
//! - [`Ledger::commit`] is the one durable commit of a step: the step
//!   moves, its entries are added and the hold ends in one statement
//!   (all or nothing), flushed before it is acknowledged. Because the
//!   write-ahead log is written in order, that flush also makes durable
//!   everything committed asynchronously before it (the session's
//!   creation, say).
//! - [`Ledger::create`] and [`Ledger::reserve`] count the live sessions
//!   of both kinds and add theirs under one transaction-level advisory
//!   lock, so openings on every replica are checked one at a time.
//! - Every time is the database's clock.

use super::{
    Claim, Current, CurrentClaim, Ledger, LedgerError, NewSession, Pending, Place, Readiness, SessionBounds,
    Step,
};
use crate::database::{DURABLE, Database};
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::error::SqlState;

/// The advisory lock openings take ("sessions" in ASCII, as an int8).
const OPENING: i64 = 0x7365_7373_696f_6e73;

/// The sessions, their entries and the places, in PostgreSQL.
pub struct PostgresLedger {
    database: Arc<Database>,
}

fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

/// Live sessions of both kinds: over the ledger, and of `$1`.
const LIVE: &str = "SELECT count(*), count(*) FILTER (WHERE credential = $1) FROM (
         SELECT credential FROM guarded_sessions WHERE expires >= now() OR held_until >= now()
         UNION ALL
         SELECT credential FROM mcp_places WHERE expires >= now()) live";

/// Under the opening lock: forget what expired, then check `bounds`.
async fn open_within(
    client: &tokio_postgres::Client,
    credential: &str,
    bounds: SessionBounds,
) -> Result<Result<(), LedgerError>, tokio_postgres::Error> {
    client.execute("SELECT pg_advisory_xact_lock($1)", &[&OPENING]).await?;
    client
        .batch_execute(
            "DELETE FROM guarded_sessions WHERE expires < now() AND held_until < now();
             DELETE FROM mcp_places WHERE expires < now();",
        )
        .await?;
    let row = client.query_one(LIVE, &[&credential]).await?;
    let live = SessionBounds { total: count(row.get(0)), per_credential: count(row.get(1)) };
    Ok(if live.total >= bounds.total {
        Err(LedgerError::ServerFull)
    } else if live.per_credential >= bounds.per_credential {
        Err(LedgerError::CredentialFull)
    } else {
        Ok(())
    })
}

impl PostgresLedger {
    /// A ledger in `database`.
    pub fn new(database: Arc<Database>) -> Self {
        Self { database }
    }
}

impl Ledger for PostgresLedger {
    fn live(&self, credential: String) -> Pending<'_, SessionBounds> {
        Box::pin(self.database.run(move |client| {
            Box::pin(async move {
                let row = client.query_one(LIVE, &[&credential]).await?;
                Ok(SessionBounds { total: count(row.get(0)), per_credential: count(row.get(1)) })
            })
        }))
    }

    fn create(&self, session: NewSession) -> Pending<'_, ()> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        client.batch_execute("BEGIN").await?;
                        if let Err(refused) = open_within(client, &session.credential, session.bounds).await? {
                            client.batch_execute("ROLLBACK").await?;
                            return Ok(Err(refused));
                        }
                        if session.replace {
                            client
                                .execute(
                                    "UPDATE guarded_sessions SET current = false
                                     WHERE holder = $1 AND skill = $2 AND current",
                                    &[&session.holder, &session.skill],
                                )
                                .await?;
                        }
                        let inserted = client
                            .execute(
                                "INSERT INTO guarded_sessions
                                     (id, credential, holder, skill, current, step, entries, expires, held_until)
                                 VALUES ($1, $2, $3, $4, true, 0, $5,
                                         now() + make_interval(secs => $6), now() + make_interval(secs => $7))",
                                &[
                                    &session.id,
                                    &session.credential,
                                    &session.holder,
                                    &session.skill,
                                    &(session.entries.len() as i64),
                                    &seconds(session.ttl),
                                    &seconds(session.lease),
                                ],
                            )
                            .await;
                        match inserted {
                            // Another call opened the holder's current session first.
                            Err(error) if error.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                                client.batch_execute("ROLLBACK").await?;
                                return Ok(Err(LedgerError::Busy));
                            }
                            inserted => inserted?,
                        };
                        client
                            .execute(
                                "INSERT INTO guarded_entries (session, position, entry)
                                 SELECT $1, t.n - 1, t.entry FROM unnest($2::text[]) WITH ORDINALITY AS t(entry, n)",
                                &[&session.id, &session.entries],
                            )
                            .await?;
                        client.batch_execute("COMMIT").await?;
                        Ok(Ok(()))
                    })
                })
                .await?
        })
    }

    fn claim(&self, claim: Claim) -> Pending<'_, Option<String>> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        // One statement holds the session when everything is
                        // in order (two replicas cannot both hold it) and
                        // reads its trace; only a refusal looks further.
                        let hold = client
                            .prepare_cached(
                                "WITH held AS (
                                     UPDATE guarded_sessions SET held_until = now() + make_interval(secs => $5)
                                     WHERE id = $1 AND credential = $2 AND skill = $3 AND step = $4
                                       AND held_until < now() AND expires >= now()
                                     RETURNING id)
                                 SELECT (SELECT count(*) FROM held),
                                        CASE WHEN $6 THEN (SELECT string_agg(entry, ',' ORDER BY position)
                                                           FROM guarded_entries
                                                           WHERE session = $1 AND EXISTS (SELECT 1 FROM held)) END",
                            )
                            .await?;
                        let row = client
                            .query_one(
                                &hold,
                                &[
                                    &claim.id,
                                    &claim.credential,
                                    &claim.skill,
                                    &(claim.step as i64),
                                    &seconds(claim.lease),
                                    &claim.with_trace,
                                ],
                            )
                            .await?;
                        if row.get::<_, i64>(0) == 1 {
                            let entries: Option<String> = row.get(1);
                            return Ok(Ok(claim.with_trace.then(|| format!("[{}]", entries.unwrap_or_default()))));
                        }
                        let why = client
                            .prepare_cached(
                                "SELECT held_until >= now(), expires < now() FROM guarded_sessions
                                 WHERE id = $1 AND credential = $2 AND skill = $3",
                            )
                            .await?;
                        let found = client.query_opt(&why, &[&claim.id, &claim.credential, &claim.skill]).await?;
                        Ok(Err(match found.map(|row| (row.get::<_, bool>(0), row.get::<_, bool>(1))) {
                            None => LedgerError::Unknown,
                            Some((true, _)) => LedgerError::Busy,
                            Some((false, true)) => LedgerError::Unknown,
                            Some((false, false)) => LedgerError::Stale,
                        }))
                    })
                })
                .await?
        })
    }

    fn claim_current(&self, claim: CurrentClaim) -> Pending<'_, Option<Current>> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        let hold = client
                            .prepare_cached(
                                "WITH held AS (
                                     UPDATE guarded_sessions SET held_until = now() + make_interval(secs => $4)
                                     WHERE holder = $1 AND skill = $2 AND credential = $3 AND current
                                       AND held_until < now() AND expires >= now()
                                     RETURNING id, step)
                                 SELECT held.id, held.step,
                                        (SELECT string_agg(entry, ',' ORDER BY position)
                                         FROM guarded_entries WHERE session = held.id)
                                 FROM held",
                            )
                            .await?;
                        let row = client
                            .query_opt(&hold, &[&claim.holder, &claim.skill, &claim.credential, &seconds(claim.lease)])
                            .await?;
                        if let Some(row) = row {
                            let trace = format!("[{}]", row.get::<_, Option<String>>(2).unwrap_or_default());
                            let step = row.get::<_, i64>(1).max(0) as u64;
                            return Ok(Ok(Some(Current { id: row.get(0), step, trace })));
                        }
                        let busy = client
                            .query_opt(
                                "SELECT 1 FROM guarded_sessions
                                 WHERE holder = $1 AND skill = $2 AND current AND held_until >= now()",
                                &[&claim.holder, &claim.skill],
                            )
                            .await?;
                        Ok(if busy.is_some() { Err(LedgerError::Busy) } else { Ok(None) })
                    })
                })
                .await?
        })
    }

    fn commit(&self, step: Step) -> Pending<'_, ()> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        client.batch_execute(DURABLE).await?;
                        let record = client
                            .prepare_cached(
                                "WITH moved AS (
                                     UPDATE guarded_sessions SET step = step + 1, entries = entries + $4,
                                         expires = now() + make_interval(secs => $5), held_until = '-infinity'
                                     WHERE id = $1 AND step = $2 AND entries = $3
                                     RETURNING id),
                                 added AS (
                                     INSERT INTO guarded_entries (session, position, entry)
                                     SELECT moved.id, $3 + t.n - 1, t.entry
                                     FROM moved, unnest($6::text[]) WITH ORDINALITY AS t(entry, n)
                                     RETURNING 1)
                                 SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM added)",
                            )
                            .await?;
                        let row = client
                            .query_one(
                                &record,
                                &[
                                    &step.id,
                                    &(step.step as i64),
                                    &(step.first as i64),
                                    &(step.entries.len() as i64),
                                    &seconds(step.ttl),
                                    &step.entries,
                                ],
                            )
                            .await?;
                        if row.get::<_, i64>(0) != 1 {
                            client.batch_execute("ROLLBACK").await?;
                            return Ok(Err(LedgerError::Stale));
                        }
                        client.batch_execute("COMMIT").await?;
                        Ok(Ok(()))
                    })
                })
                .await?
        })
    }

    fn release(&self, id: String, step: u64) -> Pending<'_, ()> {
        Box::pin(self.database.run(move |client| {
            Box::pin(async move {
                let release = client
                    .prepare_cached(
                        "UPDATE guarded_sessions SET held_until = '-infinity' WHERE id = $1 AND step = $2",
                    )
                    .await?;
                client.execute(&release, &[&id, &(step as i64)]).await?;
                Ok(())
            })
        }))
    }

    fn trace(&self, id: String, credential: String, skill: String) -> Pending<'_, String> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        let row = client
                            .query_one(
                                "SELECT EXISTS (SELECT 1 FROM guarded_sessions
                                                WHERE id = $1 AND credential = $2 AND skill = $3
                                                  AND (expires >= now() OR held_until >= now())),
                                        (SELECT string_agg(entry, ',' ORDER BY position)
                                         FROM guarded_entries WHERE session = $1)",
                                &[&id, &credential, &skill],
                            )
                            .await?;
                        if !row.get::<_, bool>(0) {
                            return Ok(Err(LedgerError::Unknown));
                        }
                        Ok(Ok(format!("[{}]", row.get::<_, Option<String>>(1).unwrap_or_default())))
                    })
                })
                .await?
        })
    }

    fn current_trace(
        &self,
        holder: String,
        credential: String,
        skill: String,
    ) -> Pending<'_, Option<(String, String)>> {
        Box::pin(self.database.run(move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt(
                        "SELECT s.id, (SELECT string_agg(entry, ',' ORDER BY position)
                                       FROM guarded_entries WHERE session = s.id)
                         FROM guarded_sessions s
                         WHERE holder = $1 AND skill = $2 AND credential = $3 AND current
                           AND (expires >= now() OR held_until >= now())",
                        &[&holder, &skill, &credential],
                    )
                    .await?;
                Ok(row.map(|row| {
                    (row.get(0), format!("[{}]", row.get::<_, Option<String>>(1).unwrap_or_default()))
                }))
            })
        }))
    }

    fn reserve(&self, place: Place) -> Pending<'_, ()> {
        Box::pin(async move {
            self.database
                .run(move |client| {
                    Box::pin(async move {
                        client.batch_execute("BEGIN").await?;
                        if let Err(refused) = open_within(client, &place.credential, place.bounds).await? {
                            client.batch_execute("ROLLBACK").await?;
                            return Ok(Err(refused));
                        }
                        client
                            .execute(
                                "INSERT INTO mcp_places (id, credential, expires)
                                 VALUES ($1, $2, now() + make_interval(secs => $3))",
                                &[&place.id, &place.credential, &seconds(place.lease)],
                            )
                            .await?;
                        client.batch_execute("COMMIT").await?;
                        Ok(Ok(()))
                    })
                })
                .await?
        })
    }

    fn renew(&self, places: Vec<(String, String)>, lease: Duration) -> Pending<'_, ()> {
        Box::pin(self.database.run(move |client| {
            Box::pin(async move {
                let (ids, credentials): (Vec<String>, Vec<String>) = places.into_iter().unzip();
                // Written again if a crash emptied the (unlogged) table.
                client
                    .execute(
                        "INSERT INTO mcp_places (id, credential, expires)
                         SELECT t.id, t.credential, now() + make_interval(secs => $3)
                         FROM unnest($1::text[], $2::text[]) AS t(id, credential)
                         ON CONFLICT (id) DO UPDATE SET expires = EXCLUDED.expires",
                        &[&ids, &credentials, &seconds(lease)],
                    )
                    .await?;
                Ok(())
            })
        }))
    }

    fn give_back(&self, place: String) -> Pending<'_, ()> {
        Box::pin(self.database.run(move |client| {
            Box::pin(async move {
                client.execute("DELETE FROM mcp_places WHERE id = $1", &[&place]).await?;
                Ok(())
            })
        }))
    }

    fn readiness(&self) -> Readiness {
        self.database.readiness()
    }
}
