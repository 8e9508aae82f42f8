//! The shared database's schema, as numbered migrations applied in order,
//! each once, each in its own transaction, recorded in
//! `harmonia_migrations`.
//!
//! Replicas starting together migrate one at a time: the run holds a
//! session-level advisory lock, so the second finds the work done. A
//! database already migrated past what this build knows is refused
//! (a newer release wrote a schema this one cannot promise to read): roll
//! the replicas forward, never back across a migration.
//!
//! A migration is never edited once released; a change is a new one.

/// The migrations this build knows: (version, name, SQL).
pub const MIGRATIONS: &[(u32, &str, &str)] = &[(
    1,
    "shared state: sessions, places, rate buckets, replicas",
    include_str!("migrations/0001_shared_state.sql"),
)];

/// The advisory lock key migrations hold ("harmonia" in ASCII, as an int8).
const LOCK: i64 = 0x6861_726d_6f6e_6961;

/// Why migrating failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A statement failed, or the database went away.
    #[error("{0}")]
    Database(#[from] tokio_postgres::Error),
    /// The database is ahead of this build.
    #[error(
        "the database's schema is at version {found}, newer than this build knows ({known}): run a harmonia as new as the one that migrated it"
    )]
    Newer {
        /// The highest version applied.
        found: u32,
        /// The highest this build knows.
        known: u32,
    },
}

/// The highest version this build knows.
pub fn latest() -> u32 {
    MIGRATIONS.iter().map(|(version, ..)| *version).max().unwrap_or(0)
}

/// Apply every migration `client`'s database lacks, under the lock; the
/// versions applied now (empty: it was current).
pub async fn run(client: &mut tokio_postgres::Client) -> Result<Vec<u32>, MigrateError> {
    client.execute("SELECT pg_advisory_lock($1)", &[&LOCK]).await?;
    let applied = apply(client).await;
    // Released whatever happened (and with the connection, if it dies).
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&LOCK]).await;
    let applied = applied?;
    unlocked?;
    Ok(applied)
}

async fn apply(client: &mut tokio_postgres::Client) -> Result<Vec<u32>, MigrateError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS harmonia_migrations (
                 version integer PRIMARY KEY,
                 name text NOT NULL,
                 applied timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await?;
    let found: Option<i32> =
        client.query_one("SELECT max(version) FROM harmonia_migrations", &[]).await?.get(0);
    let found = found.map_or(0, |version| version.max(0) as u32);
    if found > latest() {
        return Err(MigrateError::Newer { found, known: latest() });
    }
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS.iter().filter(|(version, ..)| *version > found) {
        // Durable: a schema change must survive a crash.
        let transaction = client.transaction().await?;
        transaction.batch_execute("SET LOCAL synchronous_commit = on").await?;
        transaction.batch_execute(sql).await?;
        transaction
            .execute(
                "INSERT INTO harmonia_migrations (version, name) VALUES ($1, $2)",
                &[&(*version as i32), name],
            )
            .await?;
        transaction.commit().await?;
        applied.push(*version);
    }
    Ok(applied)
}
