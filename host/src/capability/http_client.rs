//! One bounded GET over real HTTP, shared by the public web capability and
//! the workspace HTTP source, on reqwest.
//!
//! No redirects are followed here (callers decide), no cookies are kept, no
//! proxy from the environment is used, HTTP/1.1 only, TLS through rustls
//! with the webpki roots, the whole exchange is bounded by the call's
//! deadline, a body over the cap is an error, never truncated, and the
//! public client connects only to public addresses
//! ([`super::public_address`]). Connections are pooled per client, so many
//! calls to one upstream reuse their connections instead of each opening
//! one; idle ones never outnumber the calls that opened them (at most
//! `limits.max_calls`) and close after reqwest's 90 s idle timeout.

use super::public_address::{PublicAddressesOnly, is_refusal};
use harmonia_contract::url::Url;
use std::sync::Arc;
use std::time::Instant;

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

/// A pooled async HTTP client configured for capability use.
#[derive(Clone, Debug)]
pub struct HttpAgent {
    /// `None` when the client could not be built: every request is then
    /// `unavailable`, never a panic.
    client: Option<reqwest::Client>,
}

fn tls() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map(|builder| builder.with_root_certificates(roots).with_no_client_auth())
}

fn builder() -> Option<reqwest::ClientBuilder> {
    Some(
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .user_agent(USER_AGENT)
            .tls_backend_preconfigured(tls().ok()?),
    )
}

impl HttpAgent {
    /// A client reaching any address (for operator-configured endpoints:
    /// routes, the workspace API).
    pub fn any_address() -> Self {
        Self { client: builder().and_then(|builder| builder.build().ok()) }
    }

    /// A client that connects only to public addresses: a name resolving to
    /// loopback, private or link-local addresses is refused.
    pub fn public_only() -> Self {
        let builder = builder().map(|builder| builder.dns_resolver(Arc::new(PublicAddressesOnly)));
        Self { client: builder.and_then(|builder| builder.build().ok()) }
    }

    /// GET `url` with `headers`, finishing before `deadline`, reading at
    /// most `max_body` bytes of body. The URL is the one already parsed and
    /// checked: handed over as text, reqwest parsed it once more.
    pub async fn get(
        &self,
        url: Url,
        headers: &[(&str, &str)],
        deadline: Instant,
        max_body: u64,
    ) -> Result<HttpResponse, HttpFailure> {
        if super::receipt::remaining(deadline).is_none() {
            return Err(HttpFailure::TimedOut);
        }
        let client = self.client.as_ref().ok_or(HttpFailure::Unavailable)?;
        let exchange = async {
            let mut request = client.get(url).header("accept", "application/json");
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let mut response = request.send().await.map_err(classify)?;
            let header = |name: &str| {
                response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned)
            };
            let (content_type, location) = (header("content-type"), header("location"));
            let status = response.status().as_u16();
            if response.content_length().is_some_and(|length| length > max_body) {
                return Err(HttpFailure::TooLarge);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(classify)? {
                if body.len() as u64 + chunk.len() as u64 > max_body {
                    return Err(HttpFailure::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(HttpResponse { status, content_type, location, body })
        };
        tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), exchange)
            .await
            .unwrap_or(Err(HttpFailure::TimedOut))
    }
}

fn classify(error: reqwest::Error) -> HttpFailure {
    if error.is_timeout() {
        return HttpFailure::TimedOut;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(cause) = source {
        if is_refusal(cause) {
            return HttpFailure::Refused;
        }
        source = cause.source();
    }
    HttpFailure::Unavailable
}
