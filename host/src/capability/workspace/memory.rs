//! A workspace held in memory: the mock fixtures, or any document an
//! embedder (or a benchmark) supplies.

use super::source::{
    Answer, ReadFailure, Reading, SourceDocument, WorkspaceRead, WorkspaceSource, answered, read_receipt,
};
use harmonia_contract::workspace_document::WorkspaceDocument;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Serves one workspace document for any workspace id.
///
/// In mock mode every read is stamped `provenance: mock`, and the feed
/// always reads as updated two minutes before the read (so it is
/// `current`); otherwise the document's own `updatedAt` is used.
#[derive(Debug)]
pub struct MemorySource {
    document: WorkspaceDocument,
    engagement: String,
    mock: bool,
}

impl MemorySource {
    /// Serve `document`; `mock` marks it as fixtures.
    pub fn new(document: WorkspaceDocument, mock: bool) -> Self {
        Self { engagement: document.engagement_json(), document, mock }
    }
}

impl WorkspaceSource for MemorySource {
    fn kind(&self) -> &'static str {
        if self.mock { "mock" } else { "memory" }
    }

    fn is_mock(&self) -> bool {
        self.mock
    }

    /// Answered at once on the caller's task: a read from memory never
    /// waits, so it needs no hop to the blocking pool and back.
    fn read<'a>(
        self: Arc<Self>,
        _workspace: &'a str,
        read: WorkspaceRead<'a>,
        _deadline: Instant,
    ) -> Reading<'a> {
        answered(self.answer(read))
    }
}

impl MemorySource {
    fn answer(&self, read: WorkspaceRead<'_>) -> Answer {
        let started = Instant::now();
        let result = match read {
            WorkspaceRead::Engagement => {
                Ok(SourceDocument { body: self.engagement.clone(), updated_at: None })
            }
            WorkspaceRead::Feed => {
                let updated_at = if self.mock {
                    Some(crate::time::rfc3339_utc(SystemTime::now() - Duration::from_secs(120)))
                } else {
                    self.document.updated_at.clone()
                };
                Ok(SourceDocument { body: Value::Object(self.document.feed.clone()).to_string(), updated_at })
            }
            WorkspaceRead::Job(id) => self
                .document
                .job(id)
                .map(|job| SourceDocument { body: Value::Object(job.clone()).to_string(), updated_at: None })
                .ok_or(ReadFailure::NotFound),
        };
        let receipt = read_receipt(format!("{}:{}", self.kind(), read.name()), &result, started);
        (result, receipt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll, Waker};

    /// Polled once with no tokio runtime at all: a hop to the blocking
    /// pool would need a runtime (and a second poll).
    #[test]
    fn a_memory_read_answers_at_its_first_poll_without_a_runtime() {
        let source = Arc::new(super::super::mock::source());
        let deadline = Instant::now() + Duration::from_secs(1);
        for (read, status) in [
            (WorkspaceRead::Job("job-7"), "ok"),
            (WorkspaceRead::Engagement, "ok"),
            (WorkspaceRead::Job("job-none"), "not_found"),
        ] {
            let mut reading = Arc::clone(&source).read("ws_demo", read, deadline);
            let Poll::Ready((answer, receipt)) =
                reading.as_mut().poll(&mut Context::from_waker(Waker::noop()))
            else {
                panic!("the {} read waited", read.name());
            };
            assert_eq!(answer.is_ok(), status == "ok");
            assert_eq!(
                (receipt.target.as_str(), receipt.status.as_str()),
                (format!("mock:{}", read.name()).as_str(), status)
            );
        }
    }
}
