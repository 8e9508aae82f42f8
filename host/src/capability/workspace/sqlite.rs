//! The embedded SQLite store: the default workspace source.
//!
//! Reads open the database read-only (`SQLITE_OPEN_READ_ONLY` and
//! `PRAGMA query_only`), keep a few connections for reuse, and abort a
//! query once the call's deadline passes. An unknown workspace id reads as
//! unauthorized. [`import`] is the only writer: it loads a whole workspace
//! document in one transaction, replacing that workspace's rows, so a
//! failed import leaves the store as it was.

use super::document::{Post, WorkspaceDocument, engagement_json};
use super::{ReadFailure, SourceDocument, WorkspaceRead, WorkspaceSource, read_receipt};
use crate::capability::{Receipt, remaining};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY,
    updated_at TEXT,
    takeaways TEXT NOT NULL,
    feed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS posts (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    position INTEGER NOT NULL,
    post_id TEXT NOT NULL,
    text TEXT NOT NULL,
    likes INTEGER,
    published_at TEXT,
    PRIMARY KEY (workspace_id, post_id)
);
CREATE TABLE IF NOT EXISTS jobs (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    job_id TEXT NOT NULL,
    document TEXT NOT NULL,
    PRIMARY KEY (workspace_id, job_id)
);
";

/// Most idle connections kept for reuse.
const POOL_SIZE: usize = 8;

/// The SQLite source.
#[derive(Debug)]
pub struct SqliteSource {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteSource {
    /// A source reading `path` (opened lazily, read-only).
    pub fn new(path: PathBuf) -> Self {
        Self { path, idle: Mutex::new(Vec::new()) }
    }

    fn connection(&self) -> rusqlite::Result<Connection> {
        if let Some(connection) = self.idle.lock().ok().and_then(|mut idle| idle.pop()) {
            return Ok(connection);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(&self.path, flags)?;
        connection.pragma_update(None, "query_only", true)?;
        Ok(connection)
    }

    fn give_back(&self, mut connection: Connection) {
        let _ = connection.progress_handler(0, None::<fn() -> bool>);
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < POOL_SIZE
        {
            idle.push(connection);
        }
    }

    fn query(
        connection: &Connection,
        workspace: &str,
        read: WorkspaceRead<'_>,
    ) -> rusqlite::Result<Result<SourceDocument, ReadFailure>> {
        let row = connection
            .query_row(
                "SELECT updated_at, takeaways, feed FROM workspaces WHERE id = ?1",
                params![workspace],
                |row| {
                    Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
                },
            )
            .optional()?;
        let Some((updated_at, takeaways, feed)) = row else {
            return Ok(Err(ReadFailure::Unauthorized));
        };
        let body = match read {
            WorkspaceRead::Engagement => {
                let mut statement = connection.prepare_cached(
                    "SELECT post_id, text, likes, published_at FROM posts
                     WHERE workspace_id = ?1 AND likes IS NOT NULL ORDER BY position",
                )?;
                let posts = statement
                    .query_map(params![workspace], |row| {
                        Ok(Post {
                            post_id: row.get(0)?,
                            text: row.get(1)?,
                            likes: row.get::<_, Option<i64>>(2)?.and_then(|likes| u64::try_from(likes).ok()),
                            published_at: row.get(3)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                let takeaways: Value = serde_json::from_str(&takeaways).unwrap_or(Value::Null);
                engagement_json(posts.iter(), &takeaways)
            }
            WorkspaceRead::Feed => {
                return Ok(Ok(SourceDocument { body: feed, updated_at }));
            }
            WorkspaceRead::Job(id) => {
                let document = connection
                    .query_row(
                        "SELECT document FROM jobs WHERE workspace_id = ?1 AND job_id = ?2",
                        params![workspace, id],
                        |row| row.get::<_, String>(0),
                    )
                    .optional()?;
                match document {
                    Some(document) => document,
                    None => return Ok(Err(ReadFailure::NotFound)),
                }
            }
        };
        Ok(Ok(SourceDocument { body, updated_at: None }))
    }
}

impl WorkspaceSource for SqliteSource {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn read(
        &self,
        workspace: &str,
        read: WorkspaceRead<'_>,
        deadline: Instant,
    ) -> (Result<SourceDocument, ReadFailure>, Receipt) {
        let started = Instant::now();
        let target = format!("sqlite:{}", read.name());
        let receipt = |status: &str| Receipt::new("workspace", target.clone(), status, started);
        let Some(left) = remaining(deadline) else {
            return (Err(ReadFailure::TimedOut), receipt("timed_out"));
        };
        let mut connection = match self.connection() {
            Ok(connection) => connection,
            Err(_) => return (Err(ReadFailure::Unavailable), receipt("unavailable")),
        };
        let _ = connection.busy_timeout(left);
        let _ = connection.progress_handler(1000, Some(move || Instant::now() >= deadline));
        let outcome = Self::query(&connection, workspace, read);
        self.give_back(connection);
        let result = match outcome {
            Ok(result) => result,
            Err(error) if error.sqlite_error_code() == Some(ErrorCode::OperationInterrupted) => {
                Err(ReadFailure::TimedOut)
            }
            Err(_) => Err(ReadFailure::Unavailable),
        };
        let receipt = read_receipt(target, &result, started);
        (result, receipt)
    }
}

/// Why an import failed; the store is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The document is malformed.
    #[error("{0}")]
    Document(#[from] super::document::DocumentError),
    /// The database could not be opened or written.
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
}

/// What an import loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportSummary {
    /// The workspace id.
    pub workspace_id: String,
    /// Posts stored.
    pub posts: usize,
    /// Of which measured.
    pub measured_posts: usize,
    /// Jobs stored.
    pub jobs: usize,
}

/// Load a workspace document into the database at `db`, creating it if
/// needed, replacing that workspace's rows in one transaction.
pub fn import(db: &Path, document: &WorkspaceDocument) -> Result<ImportSummary, ImportError> {
    let mut connection = Connection::open(db)?;
    connection.execute_batch(SCHEMA)?;
    let transaction = connection.transaction()?;
    let workspace = document.workspace_id.as_str();
    transaction.execute("DELETE FROM posts WHERE workspace_id = ?1", params![workspace])?;
    transaction.execute("DELETE FROM jobs WHERE workspace_id = ?1", params![workspace])?;
    transaction.execute(
        "INSERT OR REPLACE INTO workspaces (id, updated_at, takeaways, feed) VALUES (?1, ?2, ?3, ?4)",
        params![
            workspace,
            document.updated_at,
            document.takeaways.to_string(),
            Value::Object(document.feed.clone()).to_string()
        ],
    )?;
    {
        let mut insert = transaction.prepare(
            "INSERT INTO posts (workspace_id, position, post_id, text, likes, published_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (position, post) in document.posts.iter().enumerate() {
            let likes = post.likes.map(|likes| i64::try_from(likes).unwrap_or(i64::MAX));
            insert.execute(params![
                workspace,
                position as i64,
                post.post_id,
                post.text,
                likes,
                post.published_at
            ])?;
        }
        let mut insert =
            transaction.prepare("INSERT INTO jobs (workspace_id, job_id, document) VALUES (?1, ?2, ?3)")?;
        for job in &document.jobs {
            let id = job.get("id").and_then(Value::as_str).unwrap_or_default();
            insert.execute(params![workspace, id, Value::Object(job.clone()).to_string()])?;
        }
    }
    transaction.commit()?;
    Ok(ImportSummary {
        workspace_id: document.workspace_id.clone(),
        posts: document.posts.len(),
        measured_posts: document.measured_posts().count(),
        jobs: document.jobs.len(),
    })
}
