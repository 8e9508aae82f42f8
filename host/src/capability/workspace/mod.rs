//! Typed, read-only reads of the caller's own workspace.
//!
//! The host binds the workspace id for each call; a guest cannot name one.
//! Three sources sit behind [`WorkspaceSource`]:
//! - [`sqlite`]: the embedded store, opened read-only (the default);
//! - [`http`]: the Harmonia web internal API, with a bearer token from the
//!   environment;
//! - [`mock`]: built-in fixtures, stamped `provenance: mock`.
//! - [`memory`]: any document held in memory (the mock source is one).
//!
//! [`document`] is the workspace JSON document that `harmonia workspace
//! import` loads and the mock source serves; `guest` is the WIT
//! `workspace` import as guests see it, with its error mapping and
//! receipts; the config is [`WorkspaceConfig`] (the `[workspace]` table).
//!
//! Guests read through [`guest_read`], never a source directly: whatever the
//! source, a job read hands the guest only the job's redacted summary
//! ([`harmonia_contract::job`]), so drafts, transcripts, prompts and
//! tokens never reach any plugin; and the job ids `.` and `..`, which no
//! path segment can carry, are refused before any source is asked.

pub(crate) use harmonia_contract::workspace_document as document;
pub(crate) mod guest;
pub use guest::INTERFACE;
pub mod http;
pub mod memory;
pub mod mock;
pub mod sqlite;

use super::Receipt;
pub use crate::config::WorkspaceConfig;
use crate::config::{ConfigError, WorkspaceSourceKind};
use std::sync::Arc;
use std::time::Instant;

/// One read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceRead<'a> {
    /// Every measured post and the takeaways.
    Engagement,
    /// The operator feed.
    Feed,
    /// One stored job.
    Job(&'a str),
}

impl<'a> WorkspaceRead<'a> {
    /// The job id, for a job read.
    pub fn job_id(self) -> Option<&'a str> {
        match self {
            Self::Job(id) => Some(id),
            Self::Engagement | Self::Feed => None,
        }
    }

    /// A short name for receipts and logs (never the job id's value).
    pub fn name(self) -> &'static str {
        match self {
            Self::Engagement => "engagement",
            Self::Feed => "feed",
            Self::Job(_) => "job",
        }
    }
}

/// A read owning its job id, to cross onto another thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedRead {
    /// [`WorkspaceRead::Engagement`].
    Engagement,
    /// [`WorkspaceRead::Feed`].
    Feed,
    /// [`WorkspaceRead::Job`].
    Job(String),
}

impl OwnedRead {
    /// The borrowed read.
    pub fn as_read(&self) -> WorkspaceRead<'_> {
        match self {
            Self::Engagement => WorkspaceRead::Engagement,
            Self::Feed => WorkspaceRead::Feed,
            Self::Job(id) => WorkspaceRead::Job(id),
        }
    }
}

impl From<WorkspaceRead<'_>> for OwnedRead {
    fn from(read: WorkspaceRead<'_>) -> Self {
        match read {
            WorkspaceRead::Engagement => Self::Engagement,
            WorkspaceRead::Feed => Self::Feed,
            WorkspaceRead::Job(id) => Self::Job(id.to_owned()),
        }
    }
}

/// What a source returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceDocument {
    /// JSON text of the document.
    pub body: String,
    /// RFC 3339 time the workspace was last updated, when the source knows.
    pub updated_at: Option<String>,
}

/// Why a read returned nothing. Bodies of failed reads are never kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFailure {
    /// The caller may not read this workspace (401/403, unknown workspace,
    /// no workspace bound, no token).
    Unauthorized,
    /// No such record (404 on a job, unknown job id).
    NotFound,
    /// The source rejected the read (other 4xx except 429).
    Rejected,
    /// Down, rate-limited, failing, unreachable or malformed.
    Unavailable,
    /// The call's deadline passed while waiting.
    TimedOut,
}

impl ReadFailure {
    /// The receipt status.
    pub fn as_status(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::NotFound => "not_found",
            Self::Rejected => "rejected",
            Self::Unavailable => "unavailable",
            Self::TimedOut => "timed_out",
        }
    }
}

/// The receipt of a read that started at `started`: `ok` with the body's
/// size and hash, or the failure's status.
pub fn read_receipt(
    target: String,
    result: &Result<SourceDocument, ReadFailure>,
    started: Instant,
) -> Receipt {
    match result {
        Ok(document) => Receipt::new("workspace", target, "ok", started).with_body(document.body.as_bytes()),
        Err(failure) => Receipt::new("workspace", target, failure.as_status(), started),
    }
}

/// A read's document, or why not, and its receipt.
pub type Answer = (Result<SourceDocument, ReadFailure>, Receipt);

/// A boxed future of one read's answer.
pub type Reading<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send + 'a>>;

/// A source of workspace data.
///
/// A source answers with a future, polled on the call's task: one that
/// waits on the network waits there without holding a thread
/// ([`http::HttpSource`]), one that never waits answers with [`answered`]
/// ([`memory::MemorySource`], the fixtures), and one that must block (a
/// file, a database: [`sqlite::SqliteSource`]) blocks on tokio's blocking
/// pool through [`on_blocking_pool`], never on the call's task.
pub trait WorkspaceSource: Send + Sync + std::fmt::Debug + 'static {
    /// `sqlite`, `http` or `mock`.
    fn kind(&self) -> &'static str;

    /// True when the data are fixtures.
    fn is_mock(&self) -> bool {
        false
    }

    /// The RFC 3339 UTC time a feed read is stamped with: now, unless the
    /// source is scripted.
    fn read_at(&self) -> String {
        crate::time::now_rfc3339()
    }

    /// Perform one read for `workspace`, finishing before `deadline`.
    fn read<'a>(
        self: Arc<Self>,
        workspace: &'a str,
        read: WorkspaceRead<'a>,
        deadline: Instant,
    ) -> Reading<'a>;
}

/// A read's answer that needed no wait, as the future
/// [`WorkspaceSource::read`] returns.
pub fn answered<'a>(answer: Answer) -> Reading<'a> {
    Box::pin(std::future::ready(answer))
}

/// A blocking read (`blocking(source, workspace, read, deadline)`) run on
/// tokio's blocking pool, as the future [`WorkspaceSource::read`]
/// returns; a pool that cannot run it answers `unavailable`.
pub fn on_blocking_pool<'a, S: WorkspaceSource>(
    source: Arc<S>,
    workspace: &str,
    read: WorkspaceRead<'_>,
    deadline: Instant,
    blocking: fn(&S, &str, WorkspaceRead<'_>, Instant) -> Answer,
) -> Reading<'a> {
    let (workspace, owned) = (workspace.to_owned(), OwnedRead::from(read));
    Box::pin(async move {
        let started = Instant::now();
        // The failure receipt's target is spelled only if the pool fails.
        let (kind, name) = (source.kind(), owned.as_read().name());
        let run = move || blocking(&source, &workspace, owned.as_read(), deadline);
        tokio::task::spawn_blocking(run).await.unwrap_or_else(|_| {
            let target = format!("{kind}:{name}");
            (Err(ReadFailure::Unavailable), Receipt::new("workspace", target, "unavailable", started))
        })
    })
}

pub use document::is_reserved_job_id;

/// One read for a guest: the source's answer, with a job replaced by its
/// redacted summary (a stored job that is not a JSON object reads as
/// unavailable), and a reserved job id (`.`, `..`) answered as not found
/// without asking the source.
pub async fn guest_read(
    source: Arc<dyn WorkspaceSource>,
    workspace: &str,
    read: WorkspaceRead<'_>,
    deadline: Instant,
) -> Answer {
    if let Some(refused) = refused_unasked(&*source, read) {
        return refused;
    }
    redacted(read, source.read(workspace, read, deadline).await)
}

fn refused_unasked(source: &dyn WorkspaceSource, read: WorkspaceRead<'_>) -> Option<Answer> {
    let reserved = read.job_id().is_some_and(is_reserved_job_id);
    reserved.then(|| {
        let target = format!("{}:{}", source.kind(), read.name());
        (Err(ReadFailure::NotFound), Receipt::new("workspace", target, "invalid_job_id", Instant::now()))
    })
}

fn redacted(read: WorkspaceRead<'_>, (result, receipt): Answer) -> Answer {
    let result = match read {
        WorkspaceRead::Job(_) => result.and_then(|document| {
            let body =
                harmonia_contract::job::summary_json(&document.body).ok_or(ReadFailure::Unavailable)?;
            Ok(SourceDocument { body, updated_at: document.updated_at })
        }),
        WorkspaceRead::Engagement | WorkspaceRead::Feed => result,
    };
    (result, receipt)
}

/// The source the config names.
pub fn from_config(config: &WorkspaceConfig, mock: bool) -> Result<Arc<dyn WorkspaceSource>, ConfigError> {
    if mock {
        return Ok(Arc::new(mock::source()));
    }
    Ok(match config.source {
        WorkspaceSourceKind::Sqlite => Arc::new(sqlite::SqliteSource::new(config.path.clone())),
        WorkspaceSourceKind::Http => Arc::new(http::HttpSource::new(config)?),
        WorkspaceSourceKind::Mock => Arc::new(mock::source()),
    })
}
