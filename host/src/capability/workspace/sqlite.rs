//! The embedded SQLite store: the default workspace source.
//!
//! Reads open the database read-only (`SQLITE_OPEN_READ_ONLY` and
//! `PRAGMA query_only`), keep a few connections for reuse, and abort a
//! query once the call's deadline passes. Every statement of one read runs
//! in one read transaction, so a read sees one import, never two; the
//! database is in WAL mode, so readers never wait for an import. An unknown
//! workspace id reads as unauthorized.
//!
//! [`import`] and [`import_reader`] are the only writers. They stream the
//! document's posts and jobs into temporary tables (repeated ids caught by
//! a unique index, so time grows linearly and memory does not grow with the
//! document), then replace that workspace's rows in one transaction, so a
//! failed import leaves the store as it was. The database holds tokens: a
//! new one is created readable by its owner only (0600), and an existing
//! one is written only when it is the user's own regular file (not a
//! symbolic link), its mode narrowed to 0600.

use super::source::{
    Answer, ReadFailure, Reading, SourceDocument, WorkspaceRead, WorkspaceSource, on_blocking_pool,
    read_receipt,
};
use crate::capability::kind::CapabilityKind;
use crate::capability::receipt::{Receipt, remaining};
use harmonia_contract::workspace_document::{
    DocumentError, DocumentHead, DocumentSink, Post, WorkspaceDocument, engagement_json, parse_stream,
};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Statement, Transaction, params};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Where an import stages a document's records before replacing the
/// workspace's rows; the unique indexes find repeated ids.
const STAGING: &str = "
CREATE TEMP TABLE import_posts (
    position INTEGER PRIMARY KEY,
    post_id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    likes INTEGER,
    published_at TEXT
);
CREATE TEMP TABLE import_jobs (
    position INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL UNIQUE,
    document TEXT NOT NULL
);
";

/// How long an import waits for another writer.
const WRITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Page cache of an importing connection, in KiB (SQLite's negative
/// `cache_size`); the staging tables spill to a temporary file beyond it.
const IMPORT_CACHE_KIB: i64 = 32 * 1024;

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
        // A read interrupted at its deadline may have left its transaction
        // open; such a connection is closed rather than reused.
        if !connection.is_autocommit() {
            let _ = connection.execute_batch("ROLLBACK");
            if !connection.is_autocommit() {
                return;
            }
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < POOL_SIZE
        {
            idle.push(connection);
        }
    }

    /// One read, every statement in one read transaction (one snapshot).
    fn query(
        connection: &Connection,
        workspace: &str,
        read: WorkspaceRead<'_>,
    ) -> rusqlite::Result<Result<SourceDocument, ReadFailure>> {
        // Dropped without commit: a read-only transaction's rollback ends it.
        let snapshot = connection.unchecked_transaction()?;
        Self::query_snapshot(&snapshot, workspace, read)
    }

    fn query_snapshot(
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

    /// SQLite blocks: the read runs on tokio's blocking pool.
    fn read<'a>(
        self: Arc<Self>,
        workspace: &'a str,
        read: WorkspaceRead<'a>,
        deadline: Instant,
    ) -> Reading<'a> {
        on_blocking_pool(self, workspace, read, deadline, Self::read_now)
    }
}

impl SqliteSource {
    /// One read on this thread, finishing before `deadline` (a busy
    /// database waits at most until then; a long query is interrupted).
    fn read_now(&self, workspace: &str, read: WorkspaceRead<'_>, deadline: Instant) -> Answer {
        let started = Instant::now();
        let target = format!("sqlite:{}", read.name());
        let receipt = |status: &str| Receipt::new(CapabilityKind::Workspace, target.clone(), status, started);
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
    Document(#[from] DocumentError),
    /// The database file may not be written: a symbolic link, not a
    /// regular file, or another user's.
    #[error("refusing to write {path}: {reason}")]
    Unsafe {
        /// The database path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The database file could not be created or checked.
    #[error("cannot open {path}: {source}")]
    Io {
        /// The database path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
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

/// Load a parsed workspace document into the database at `db`, creating
/// it if needed, replacing that workspace's rows in one transaction.
pub fn import(db: &Path, document: &WorkspaceDocument) -> Result<ImportSummary, ImportError> {
    write(db, |staging| {
        for (index, post) in document.posts.iter().enumerate() {
            staging.post(index, post.clone())?;
        }
        for (index, job) in document.jobs.iter().enumerate() {
            let id = job.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            staging.job(index, id, job.clone())?;
        }
        Ok(document.head())
    })
}

/// Load the workspace document `reader` holds (JSON, read as a stream: buffer
/// it) into the database at `db`, creating it if needed, replacing that
/// workspace's rows in one transaction. Time grows linearly with the
/// document; memory holds one record at a time, the feed and the takeaways.
pub fn import_reader(db: &Path, reader: impl Read) -> Result<ImportSummary, ImportError> {
    write(db, |staging| parse_stream(serde_json::de::IoRead::new(reader), staging))
}

/// Stage a document's records with `load`, then replace the workspace's
/// rows with them, all in one transaction.
fn write(
    db: &Path,
    load: impl FnOnce(&mut Staging<'_>) -> Result<DocumentHead, ImportError>,
) -> Result<ImportSummary, ImportError> {
    let mut connection = open_for_write(db)?;
    let transaction = connection.transaction()?;
    transaction.execute_batch(STAGING)?;
    let (head, counts) = {
        let mut staging = Staging::new(&transaction)?;
        let head = load(&mut staging)?;
        (head, staging.counts)
    };
    replace_rows(&transaction, &head)?;
    transaction.commit()?;
    Ok(ImportSummary {
        workspace_id: head.workspace_id,
        posts: counts.posts,
        measured_posts: counts.measured_posts,
        jobs: counts.jobs,
    })
}

fn replace_rows(transaction: &Transaction<'_>, head: &DocumentHead) -> rusqlite::Result<()> {
    let workspace = head.workspace_id.as_str();
    transaction.execute("DELETE FROM posts WHERE workspace_id = ?1", params![workspace])?;
    transaction.execute("DELETE FROM jobs WHERE workspace_id = ?1", params![workspace])?;
    transaction.execute(
        "INSERT OR REPLACE INTO workspaces (id, updated_at, takeaways, feed) VALUES (?1, ?2, ?3, ?4)",
        params![
            workspace,
            head.updated_at,
            head.takeaways.to_string(),
            Value::Object(head.feed.clone()).to_string()
        ],
    )?;
    transaction.execute(
        "INSERT INTO posts (workspace_id, position, post_id, text, likes, published_at)
         SELECT ?1, position, post_id, text, likes, published_at FROM temp.import_posts ORDER BY position",
        params![workspace],
    )?;
    transaction.execute(
        "INSERT INTO jobs (workspace_id, job_id, document)
         SELECT ?1, job_id, document FROM temp.import_jobs ORDER BY position",
        params![workspace],
    )?;
    transaction.execute_batch("DROP TABLE temp.import_posts; DROP TABLE temp.import_jobs;")
}

#[derive(Clone, Copy, Default)]
struct Counts {
    posts: usize,
    measured_posts: usize,
    jobs: usize,
}

/// The sink of an import: each record goes into a temporary table.
struct Staging<'t> {
    insert_post: Statement<'t>,
    insert_job: Statement<'t>,
    counts: Counts,
}

impl<'t> Staging<'t> {
    fn new(transaction: &'t Transaction<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            insert_post: transaction.prepare(
                "INSERT INTO temp.import_posts (position, post_id, text, likes, published_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
            insert_job: transaction
                .prepare("INSERT INTO temp.import_jobs (position, job_id, document) VALUES (?1, ?2, ?3)")?,
            counts: Counts::default(),
        })
    }
}

fn is_constraint_violation(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(ErrorCode::ConstraintViolation)
}

fn position(index: usize) -> i64 {
    i64::try_from(index).unwrap_or(i64::MAX)
}

impl DocumentSink for Staging<'_> {
    type Error = ImportError;

    fn post(&mut self, index: usize, post: Post) -> Result<(), ImportError> {
        // The document allows at most i64::MAX likes; nothing is clamped here.
        let likes = post.likes.map(i64::try_from).transpose().map_err(|_| DocumentError {
            path: format!("$.posts[{index}].likes"),
            rule: "is above the largest count the store holds".into(),
        })?;
        let inserted = self.insert_post.execute(params![
            position(index),
            post.post_id,
            post.text,
            likes,
            post.published_at
        ]);
        match inserted {
            Ok(_) => {}
            Err(error) if is_constraint_violation(&error) => {
                return Err(DocumentError::repeated_post_id(index).into());
            }
            Err(error) => return Err(error.into()),
        }
        self.counts.posts += 1;
        self.counts.measured_posts += usize::from(likes.is_some());
        Ok(())
    }

    fn job(&mut self, index: usize, id: String, job: Map<String, Value>) -> Result<(), ImportError> {
        let document = Value::Object(job).to_string();
        match self.insert_job.execute(params![position(index), id, document]) {
            Ok(_) => {}
            Err(error) if is_constraint_violation(&error) => {
                return Err(DocumentError::repeated_job_id(index).into());
            }
            Err(error) => return Err(error.into()),
        }
        self.counts.jobs += 1;
        Ok(())
    }
}

/// The database at `db` opened for writing, in WAL mode, with the schema.
fn open_for_write(db: &Path) -> Result<Connection, ImportError> {
    let file = private_file(db)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let connection = Connection::open_with_flags(db, flags)?;
    // What SQLite opened must be the file checked (not one swapped in since).
    let checked = file.metadata().map_err(|source| ImportError::Io { path: db.to_owned(), source })?;
    let opened =
        std::fs::symlink_metadata(db).map_err(|source| ImportError::Io { path: db.to_owned(), source })?;
    if (checked.dev(), checked.ino()) != (opened.dev(), opened.ino()) {
        return Err(unsafe_file(db, "it was replaced while being opened"));
    }
    connection.busy_timeout(WRITE_BUSY_TIMEOUT)?;
    connection.pragma_update(None, "cache_size", -IMPORT_CACHE_KIB)?;
    let mode: String = connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(unsafe_file(db, &format!("it cannot use WAL mode (journal mode {mode})")));
    }
    connection.execute_batch(SCHEMA)?;
    Ok(connection)
}

fn unsafe_file(db: &Path, reason: &str) -> ImportError {
    ImportError::Unsafe { path: db.to_owned(), reason: reason.to_owned() }
}

/// The database file, created 0600 if absent; an existing one must be the
/// user's own regular file, reached without a symbolic link, and its mode
/// is narrowed to 0600.
fn private_file(db: &Path) -> Result<File, ImportError> {
    let io = |source| ImportError::Io { path: db.to_owned(), source };
    let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(db);
    match created {
        Ok(file) => return Ok(file),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io(error)),
    }
    if std::fs::symlink_metadata(db).map_err(io)?.file_type().is_symlink() {
        return Err(unsafe_file(db, "it is a symbolic link"));
    }
    // No link followed, and no wait on a FIFO planted in its place.
    let flags = rustix::fs::OFlags::RDONLY
        | rustix::fs::OFlags::NOFOLLOW
        | rustix::fs::OFlags::NONBLOCK
        | rustix::fs::OFlags::CLOEXEC;
    let file = match rustix::fs::open(db, flags, rustix::fs::Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::LOOP) => return Err(unsafe_file(db, "it is a symbolic link")),
        Err(errno) => return Err(io(errno.into())),
    };
    let metadata = file.metadata().map_err(io)?;
    if !metadata.file_type().is_file() {
        return Err(unsafe_file(db, "it is not a regular file"));
    }
    if metadata.uid() != rustix::process::getuid().as_raw() {
        return Err(unsafe_file(db, "it belongs to another user"));
    }
    if metadata.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Self {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let unique = NEXT.fetch_add(1, Ordering::SeqCst);
            let path = std::env::temp_dir().join(format!("harmonia-sqlite-{}-{unique}", std::process::id()));
            std::fs::create_dir_all(&path).unwrap();
            Self(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read(db: &Path, read: WorkspaceRead<'_>) -> Result<SourceDocument, ReadFailure> {
        SqliteSource::new(db.to_owned()).read_now("w", read, Instant::now() + Duration::from_secs(10)).0
    }

    const DOCUMENT: &str = r#"{"workspaceId": "w", "updatedAt": "2026-11-30T09:00:00Z",
        "posts": [{"postId": "p1", "text": "a", "likes": 3}, {"postId": "p2", "text": "b"}],
        "takeaways": {"topPostId": "p1"}, "jobs": [{"id": "j1", "secret": "s"}, {"id": "j2"}]}"#;

    #[test]
    fn streamed_and_parsed_imports_store_the_same() {
        let scratch = Scratch::new();
        let (streamed, parsed) = (scratch.0.join("streamed.db"), scratch.0.join("parsed.db"));
        let summary = import_reader(&streamed, DOCUMENT.as_bytes()).unwrap();
        assert_eq!(summary, ImportSummary { workspace_id: "w".into(), posts: 2, measured_posts: 1, jobs: 2 });
        assert_eq!(import(&parsed, &WorkspaceDocument::parse(DOCUMENT).unwrap()).unwrap(), summary);
        for view in [WorkspaceRead::Engagement, WorkspaceRead::Feed, WorkspaceRead::Job("j1")] {
            assert_eq!(read(&streamed, view), read(&parsed, view), "{view:?}");
        }
        assert!(read(&streamed, WorkspaceRead::Job("j1")).unwrap().body.contains("secret"));
    }

    #[test]
    fn repeated_ids_are_refused_and_leave_the_store_unchanged() {
        let scratch = Scratch::new();
        let db = scratch.0.join("harmonia.db");
        import_reader(&db, DOCUMENT.as_bytes()).unwrap();
        let before = read(&db, WorkspaceRead::Engagement);
        for (text, path) in [
            (
                r#"{"workspaceId": "w", "posts": [{"postId": "x"}, {"postId": "y"}, {"postId": "x"}]}"#,
                "$.posts[2].postId",
            ),
            (r#"{"workspaceId": "w", "jobs": [{"id": "j"}, {"id": "j"}]}"#, "$.jobs[1].id"),
            (
                r#"{"workspaceId": "w", "posts": [{"postId": "z", "likes": 9223372036854775808}]}"#,
                "$.posts[0].likes",
            ),
        ] {
            match import_reader(&db, text.as_bytes()) {
                Err(ImportError::Document(error)) => assert_eq!(error.path, path, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
            assert_eq!(read(&db, WorkspaceRead::Engagement), before);
        }
    }

    #[test]
    fn reads_share_the_database_with_an_import_in_wal_mode() {
        let scratch = Scratch::new();
        let db = scratch.0.join("harmonia.db");
        import_reader(&db, DOCUMENT.as_bytes()).unwrap();
        let connection = Connection::open(&db).unwrap();
        let mode: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }
}
