//! The read-only capabilities as plain traits.
//!
//! Tool logic takes `&impl PublicWeb` or `&impl Workspace`. In the sandbox
//! the host-backed implementations ([`crate::HostPublicWeb`],
//! [`crate::HostWorkspace`]) are used; natively, tests and benchmarks pass
//! their own.

/// A complete HTTP response from an allow-listed origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// The `content-type` header, when present.
    pub content_type: Option<String>,
    /// The whole body (never truncated).
    pub body: Vec<u8>,
}

/// Why `public-web` returned no response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// The origin is not allow-listed, or a redirect left the allow-list.
    Denied,
    /// The URL could not be parsed or is not http(s).
    InvalidUrl,
    /// The call's deadline passed while waiting.
    TimedOut,
    /// The body exceeded the host's cap.
    TooLarge,
    /// The connection failed or the response was malformed.
    Unavailable,
}

/// Read-only access to allow-listed public origins.
pub trait PublicWeb {
    /// GET one URL.
    fn get(&self, url: &str) -> Result<Response, FetchError>;
}

/// Why a workspace read returned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The source refused the caller.
    Unauthorized,
    /// The record does not exist.
    NotFound,
    /// The source rejected the read.
    Rejected,
    /// The source is down, rate-limited, failing or unreachable.
    Unavailable,
    /// The call's deadline passed while waiting.
    TimedOut,
}

/// The operator feed with the times needed to judge freshness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedRead {
    /// JSON object text.
    pub document: String,
    /// RFC 3339 time of the workspace's last update, when known.
    pub updated_at: Option<String>,
    /// RFC 3339 UTC time of this read.
    pub read_at: String,
}

/// Typed, read-only reads of the caller's own workspace.
pub trait Workspace {
    /// Every measured post and the takeaways, as a JSON object text.
    fn engagement(&self) -> Result<String, ReadError>;
    /// The operator feed.
    fn feed(&self) -> Result<FeedRead, ReadError>;
    /// The redacted summary of one stored job (never the stored document),
    /// as JSON text.
    fn job(&self, id: &str) -> Result<String, ReadError>;
}

/// Scripted capabilities for native unit tests and benchmarks of tool logic.
pub mod fake {
    use super::*;
    use std::cell::RefCell;

    /// A public web that answers every request with one scripted result and
    /// remembers the URLs asked for.
    #[derive(Debug)]
    pub struct FakeWeb {
        answer: Result<Response, FetchError>,
        /// Every URL requested, in order.
        pub requested: RefCell<Vec<String>>,
    }

    impl FakeWeb {
        /// Answer with status 200 and this JSON body.
        pub fn json(body: &str) -> Self {
            Self::status(200, body)
        }

        /// Answer with this status and body.
        pub fn status(status: u16, body: &str) -> Self {
            let response = Response {
                status,
                content_type: Some("application/json".into()),
                body: body.as_bytes().to_vec(),
            };
            Self { answer: Ok(response), requested: RefCell::default() }
        }

        /// Answer with this failure.
        pub fn failing(error: FetchError) -> Self {
            Self { answer: Err(error), requested: RefCell::default() }
        }
    }

    impl PublicWeb for FakeWeb {
        fn get(&self, url: &str) -> Result<Response, FetchError> {
            self.requested.borrow_mut().push(url.to_owned());
            self.answer.clone()
        }
    }

    /// A workspace with scripted documents; a missing one reads as the
    /// given failure.
    #[derive(Debug, Default)]
    pub struct FakeWorkspace {
        /// Engagement document, or the failure.
        pub engagement: Option<Result<String, ReadError>>,
        /// Feed, or the failure.
        pub feed: Option<Result<FeedRead, ReadError>>,
        /// Jobs by id; ids not listed are `NotFound`.
        pub jobs: Vec<(String, String)>,
        /// When set, every read fails this way.
        pub failure: Option<ReadError>,
        /// Every job id requested, in order.
        pub requested_jobs: RefCell<Vec<String>>,
    }

    impl Workspace for FakeWorkspace {
        fn engagement(&self) -> Result<String, ReadError> {
            match self.failure {
                Some(failure) => Err(failure),
                None => self.engagement.clone().unwrap_or(Err(ReadError::Unavailable)),
            }
        }

        fn feed(&self) -> Result<FeedRead, ReadError> {
            match self.failure {
                Some(failure) => Err(failure),
                None => self.feed.clone().unwrap_or(Err(ReadError::Unavailable)),
            }
        }

        fn job(&self, id: &str) -> Result<String, ReadError> {
            self.requested_jobs.borrow_mut().push(id.to_owned());
            if let Some(failure) = self.failure {
                return Err(failure);
            }
            self.jobs
                .iter()
                .find(|(job, _)| job == id)
                .map(|(_, body)| body.clone())
                .ok_or(ReadError::NotFound)
        }
    }
}
