//! The public web source: [`PublicWebSource`], where requests are
//! answered, and [`PublicWeb`], the HTTP one built from the config (or
//! serving fixtures in mock mode).

use super::config::PublicWebConfig;
use super::mock;
use crate::capability::http_client::{HttpAgent, HttpFailure, HttpResponse};
use crate::capability::kind::CapabilityKind;
use crate::capability::receipt::Receipt;
use harmonia_contract::url::{Origin, Url, parse_http_url, rebase};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 5;

/// A response handed to the guest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebResponse {
    /// Status code.
    pub status: u16,
    /// `content-type`, when present.
    pub content_type: Option<String>,
    /// The whole body.
    pub body: Vec<u8>,
}

/// Why no response was handed to the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebFailure {
    /// Not allow-listed (no traffic was made), or a redirect left the list.
    Denied,
    /// Not an http(s) URL, or it carries credentials.
    InvalidUrl,
    /// The deadline passed.
    TimedOut,
    /// The body exceeded the cap.
    TooLarge,
    /// Connection or protocol failure.
    Unavailable,
}

impl From<HttpFailure> for WebFailure {
    fn from(failure: HttpFailure) -> Self {
        match failure {
            HttpFailure::TimedOut => Self::TimedOut,
            HttpFailure::TooLarge => Self::TooLarge,
            HttpFailure::Unavailable => Self::Unavailable,
            HttpFailure::Refused => Self::Denied,
        }
    }
}

/// One use of the capability: the answer, its receipt, and whether it was
/// served from fixtures.
#[derive(Debug)]
pub struct WebAnswer {
    /// What the guest gets.
    pub result: Result<WebResponse, WebFailure>,
    /// The record of the use.
    pub receipt: Receipt,
    /// Served from fixtures.
    pub mock: bool,
}

/// A boxed future of a source's answer.
pub type WebAnswering = std::pin::Pin<Box<dyn std::future::Future<Output = WebAnswer> + Send>>;

/// Where public web requests are answered: the real HTTP client
/// ([`PublicWeb`]), or a scripted source (the conformance suite's).
///
/// A source answers with a future, polled on the call's task: one that
/// waits on the network waits there without holding a thread, one that
/// never waits answers with [`answered`], and one that must block (a file,
/// a database) blocks on tokio's blocking pool, never on the call's task.
pub trait PublicWebSource: Send + Sync + std::fmt::Debug + 'static {
    /// GET `url` for a call that must finish before `deadline`.
    fn get(self: Arc<Self>, url: String, deadline: Instant) -> WebAnswering;
}

/// A source's answer that needed no wait, as the future
/// [`PublicWebSource::get`] returns.
pub fn answered(answer: WebAnswer) -> WebAnswering {
    Box::pin(std::future::ready(answer))
}

/// Characters of a guest's URL kept in its receipt.
const MAX_TARGET_CHARS: usize = 2000;

/// The capability, built once from the config.
#[derive(Debug)]
pub struct PublicWeb {
    allow: Vec<Origin>,
    routes: BTreeMap<Origin, Url>,
    max_body: u64,
    mock: bool,
    /// For explicit routes: the operator named the address.
    routed_agent: HttpAgent,
    /// For allow-listed names: public addresses only.
    public_agent: HttpAgent,
}

const CAPABILITY: CapabilityKind = CapabilityKind::PublicWeb;

/// What to do with a guest's URL before any traffic.
enum Plan {
    /// Answered without traffic: refused, or served from fixtures.
    Answered(Result<WebResponse, WebFailure>),
    /// Fetch it, starting at this hop.
    Fetch(Hop),
}

/// One request of a fetch: the URL as the guest sees it, and its origin.
struct Hop {
    url: Url,
    origin: Origin,
}

/// What a response means for the fetch.
enum Step {
    /// The guest's answer.
    Done(WebResponse),
    /// A redirect within the allow-list: fetch this next.
    Follow(Hop),
}

impl PublicWeb {
    /// Build from a checked config.
    pub fn new(config: &PublicWebConfig, mock: bool) -> Self {
        Self {
            allow: config.allow.iter().filter_map(|entry| Origin::parse_origin(entry)).collect(),
            routes: config
                .routes
                .iter()
                .filter_map(|(origin, base)| Some((Origin::parse_origin(origin)?, parse_http_url(base)?)))
                .collect(),
            max_body: u64::from(config.max_body_kib) * 1024,
            mock,
            routed_agent: HttpAgent::any_address(),
            public_agent: HttpAgent::public_only(),
        }
    }

    /// Whether requests are served from fixtures.
    pub fn is_mock(&self) -> bool {
        self.mock
    }

    fn allowed(&self, url: &Url) -> Result<Origin, WebFailure> {
        let origin = Origin::of(url).ok_or(WebFailure::InvalidUrl)?;
        if self.allow.contains(&origin) { Ok(origin) } else { Err(WebFailure::Denied) }
    }

    fn plan(&self, url: &str) -> Plan {
        let Some(parsed) = parse_http_url(url) else {
            return Plan::Answered(Err(WebFailure::InvalidUrl));
        };
        match self.allowed(&parsed) {
            Err(failure) => Plan::Answered(Err(failure)),
            Ok(_) if self.mock => {
                let (status, body) = mock::public_web_response(&parsed);
                Plan::Answered(Ok(WebResponse {
                    status,
                    content_type: Some("application/json".into()),
                    body,
                }))
            }
            Ok(origin) => Plan::Fetch(Hop { url: parsed, origin }),
        }
    }

    fn answer(&self, url: &str, started: Instant, result: Result<WebResponse, WebFailure>) -> WebAnswer {
        let target: String = url.chars().take(MAX_TARGET_CHARS).collect();
        let receipt = match &result {
            Ok(response) => Receipt::new(CAPABILITY, target, response.status.to_string(), started)
                .with_body(&response.body),
            Err(failure) => Receipt::new(CAPABILITY, target, failure_status(*failure), started),
        };
        WebAnswer { result, receipt, mock: self.mock }
    }

    /// The URL on the wire for `hop`, and whether it is routed.
    fn wire(&self, hop: &Hop) -> (Url, bool) {
        match self.routes.get(&hop.origin) {
            Some(base) => (rebase(&hop.url, base), true),
            None => (hop.url.clone(), false),
        }
    }

    fn step(&self, hop: Hop, response: HttpResponse) -> Result<Step, WebFailure> {
        let redirect = matches!(response.status, 301 | 302 | 303 | 307 | 308);
        match response.location.as_deref().filter(|_| redirect) {
            Some(location) => {
                // Resolve against the guest's view of the URL, so a routed
                // origin redirects within itself.
                let next = hop.url.join(location).map_err(|_| WebFailure::Unavailable)?;
                let origin = self.allowed(&next).map_err(|_| WebFailure::Denied)?;
                Ok(Step::Follow(Hop { url: next, origin }))
            }
            None => Ok(Step::Done(WebResponse {
                status: response.status,
                content_type: response.content_type,
                body: response.body,
            })),
        }
    }

    async fn fetch(&self, mut hop: Hop, deadline: Instant) -> Result<WebResponse, WebFailure> {
        for _ in 0..=MAX_REDIRECTS {
            let (wire, routed) = self.wire(&hop);
            let agent = if routed { &self.routed_agent } else { &self.public_agent };
            let response = agent.get(wire, &[], deadline, self.max_body).await?;
            match self.step(hop, response)? {
                Step::Done(response) => return Ok(response),
                Step::Follow(next) => hop = next,
            }
        }
        Err(WebFailure::Unavailable)
    }
}

impl PublicWebSource for PublicWeb {
    fn get(self: Arc<Self>, url: String, deadline: Instant) -> WebAnswering {
        Box::pin(async move {
            let started = Instant::now();
            let result = match self.plan(&url) {
                Plan::Answered(result) => result,
                Plan::Fetch(hop) => self.fetch(hop, deadline).await,
            };
            self.answer(&url, started, result)
        })
    }
}

/// The receipt status of a failure.
pub fn failure_status(failure: WebFailure) -> &'static str {
    match failure {
        WebFailure::Denied => "denied",
        WebFailure::InvalidUrl => "invalid_url",
        WebFailure::TimedOut => "timed_out",
        WebFailure::TooLarge => "too_large",
        WebFailure::Unavailable => "unavailable",
    }
}
