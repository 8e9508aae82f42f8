//! One bounded GET over real HTTP, shared by the public web capability and
//! the workspace HTTP source.
//!
//! No redirects are followed here (callers decide), no cookies are kept, no
//! proxy from the environment is used, the whole exchange is bounded by the
//! call's deadline, and a body over the cap is an error, never truncated.

use std::time::Instant;
use ureq::Agent;

/// A complete response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// `content-type`, when present.
    pub content_type: Option<String>,
    /// `location`, when present.
    pub location: Option<String>,
    /// The whole body.
    pub body: Vec<u8>,
}

/// Why no complete response was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpFailure {
    /// The deadline passed while connecting or reading.
    TimedOut,
    /// The body is larger than the cap.
    TooLarge,
    /// Connection refused, reset, DNS failure, malformed response.
    Unavailable,
    /// The name resolved only to addresses the agent may not reach.
    Refused,
}

impl HttpFailure {
    /// The receipt status for this failure.
    pub fn as_status(self) -> &'static str {
        match self {
            Self::TimedOut => "timed_out",
            Self::TooLarge => "too_large",
            Self::Unavailable => "unavailable",
            Self::Refused => "refused_address",
        }
    }
}

/// The `user-agent` every capability request carries.
pub const USER_AGENT: &str = "harmonia/0.1 (read-only tool host)";

fn config() -> ureq::config::Config {
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(USER_AGENT)
        .max_idle_connections_per_host(8)
        .build()
}

/// An agent configured for capability use, reaching any address (for
/// operator-configured endpoints: routes, the workspace API).
pub fn agent() -> Agent {
    config().new_agent()
}

/// An agent that connects only to public addresses: a name resolving to
/// loopback, private or link-local addresses is refused.
pub fn public_agent() -> Agent {
    Agent::with_parts(
        config(),
        ureq::unversioned::transport::DefaultConnector::new(),
        super::public_address::PublicAddressesOnly::default(),
    )
}

/// GET `url` with `headers`, finishing before `deadline`, reading at most
/// `max_body` bytes of body.
pub fn get(
    agent: &Agent,
    url: &str,
    headers: &[(&str, &str)],
    deadline: Instant,
    max_body: u64,
) -> Result<HttpResponse, HttpFailure> {
    let Some(left) = super::remaining(deadline) else {
        return Err(HttpFailure::TimedOut);
    };
    let mut request = agent.get(url).header("accept", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.config().timeout_global(Some(left)).build().call().map_err(classify)?;
    let header =
        |name: &str| response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let (content_type, location) = (header("content-type"), header("location"));
    let status = response.status().as_u16();
    let body = response.body_mut().with_config().limit(max_body).read_to_vec().map_err(classify)?;
    Ok(HttpResponse { status, content_type, location, body })
}

fn classify(error: ureq::Error) -> HttpFailure {
    match error {
        ureq::Error::Timeout(_) => HttpFailure::TimedOut,
        ureq::Error::BodyExceedsLimit(_) => HttpFailure::TooLarge,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => HttpFailure::TimedOut,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => HttpFailure::Refused,
        _ => HttpFailure::Unavailable,
    }
}
