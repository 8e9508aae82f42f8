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
//! ([`harmonia_tool_common::job`]), so drafts, transcripts, prompts and
//! tokens never reach any plugin; and the job ids `.` and `..`, which no
//! path segment can carry, are refused before any source is asked.

pub use harmonia_contract::workspace_document as document;
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

impl WorkspaceRead<'_> {
    /// A short name for receipts and logs (never the job id's value).
    pub fn name(self) -> &'static str {
        match self {
            Self::Engagement => "engagement",
            Self::Feed => "feed",
            Self::Job(_) => "job",
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

/// A source of workspace data.
pub trait WorkspaceSource: Send + Sync + std::fmt::Debug {
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
    fn read(
        &self,
        workspace: &str,
        read: WorkspaceRead<'_>,
        deadline: Instant,
    ) -> (Result<SourceDocument, ReadFailure>, Receipt);
}

pub use document::is_reserved_job_id;

/// One read for a guest: the source's answer, with a job replaced by its
/// redacted summary (a stored job that is not a JSON object reads as
/// unavailable), and a reserved job id (`.`, `..`) answered as not found
/// without asking the source.
pub fn guest_read(
    source: &dyn WorkspaceSource,
    workspace: &str,
    read: WorkspaceRead<'_>,
    deadline: Instant,
) -> (Result<SourceDocument, ReadFailure>, Receipt) {
    if let WorkspaceRead::Job(id) = read
        && is_reserved_job_id(id)
    {
        let target = format!("{}:{}", source.kind(), read.name());
        return (
            Err(ReadFailure::NotFound),
            Receipt::new("workspace", target, "invalid_job_id", Instant::now()),
        );
    }
    let (result, receipt) = source.read(workspace, read, deadline);
    let result = match read {
        WorkspaceRead::Job(_) => result.and_then(|document| {
            let body =
                harmonia_tool_common::job::summary_json(&document.body).ok_or(ReadFailure::Unavailable)?;
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
