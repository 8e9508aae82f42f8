//! The public web capability: GET-only HTTP to allow-listed origins.
//!
//! - The origin (scheme, host, port) must be on the allow-list; anything
//!   else is `denied` before any network traffic.
//! - URLs with credentials, or not http(s), are refused.
//! - Redirects are followed (up to [`MAX_REDIRECTS`]) only while they stay
//!   on the allow-list; a redirect off it is `denied`.
//! - Routes send an allowed origin to another base URL (a mirror, a local
//!   test server) without the guest knowing; the allow-list is checked on
//!   the guest's URL, before routing.
//! - The body is capped; a larger body is `too-large`, not truncated.
//! - The wait is bounded by the call's remaining deadline; passing it is
//!   `timed-out` and ends the call as `tool_timeout`.
//! - In mock mode, requests to allowed origins are answered from fixtures
//!   ([`mock`]).
//!
//! Parts: this module is the source ([`PublicWebSource`] and the HTTP one);
//! [`mock`] its fixture; `guest` the WIT `public-web` import as guests see
//! it, with its error mapping and receipts; its config is
//! [`PublicWebConfig`] (the `[public_web]` table).

pub(crate) mod guest;
pub use guest::INTERFACE;
pub mod mock;

use super::Receipt;
use super::http_client::{self, HttpFailure};
use super::url::{Origin, Url, parse_http_url, rebase};
pub use crate::config::PublicWebConfig;
use std::collections::BTreeMap;
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

/// Where public web requests are answered: the real HTTP client
/// ([`PublicWeb`]), or a scripted source (the conformance suite's).
pub trait PublicWebSource: Send + Sync + std::fmt::Debug {
    /// GET `url` for a call that must finish before `deadline`.
    fn get(&self, url: &str, deadline: Instant) -> WebAnswer;
}

/// The capability, built once from the config.
#[derive(Debug)]
pub struct PublicWeb {
    allow: Vec<Origin>,
    routes: BTreeMap<Origin, Url>,
    max_body: u64,
    mock: bool,
    /// For explicit routes: the operator named the address.
    routed_agent: ureq::Agent,
    /// For allow-listed names: public addresses only.
    public_agent: ureq::Agent,
}

const CAPABILITY: &str = "public-web";

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
            routed_agent: http_client::agent(),
            public_agent: http_client::public_agent(),
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

    fn answer(&self, url: &str, deadline: Instant) -> WebAnswer {
        let started = Instant::now();
        let target: String = url.chars().take(2000).collect();
        let result = match parse_http_url(url) {
            None => Err(WebFailure::InvalidUrl),
            Some(parsed) => match self.allowed(&parsed) {
                Err(failure) => Err(failure),
                Ok(_) if self.mock => {
                    let (status, body) = mock::public_web_response(&parsed);
                    Ok(WebResponse { status, content_type: Some("application/json".into()), body })
                }
                Ok(origin) => self.fetch(parsed, origin, deadline),
            },
        };
        let receipt = match &result {
            Ok(response) => Receipt::new(CAPABILITY, target, response.status.to_string(), started)
                .with_body(&response.body),
            Err(failure) => Receipt::new(CAPABILITY, target, failure_status(*failure), started),
        };
        WebAnswer { result, receipt, mock: self.mock }
    }

    fn fetch(&self, mut url: Url, mut origin: Origin, deadline: Instant) -> Result<WebResponse, WebFailure> {
        for _ in 0..=MAX_REDIRECTS {
            let (agent, wire) = match self.routes.get(&origin) {
                Some(base) => (&self.routed_agent, rebase(&url, base)),
                None => (&self.public_agent, url.clone()),
            };
            let response = http_client::get(agent, wire.as_str(), &[], deadline, self.max_body)?;
            let redirect = matches!(response.status, 301 | 302 | 303 | 307 | 308);
            match response.location.as_deref().filter(|_| redirect) {
                Some(location) => {
                    // Resolve against the guest's view of the URL, so a
                    // routed origin redirects within itself.
                    let Ok(next) = url.join(location) else {
                        return Err(WebFailure::Unavailable);
                    };
                    match self.allowed(&next) {
                        Ok(next_origin) => (url, origin) = (next, next_origin),
                        Err(_) => return Err(WebFailure::Denied),
                    }
                }
                None => {
                    return Ok(WebResponse {
                        status: response.status,
                        content_type: response.content_type,
                        body: response.body,
                    });
                }
            }
        }
        Err(WebFailure::Unavailable)
    }
}

impl PublicWebSource for PublicWeb {
    fn get(&self, url: &str, deadline: Instant) -> WebAnswer {
        self.answer(url, deadline)
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
