//! What a pull reads from a registry (manifests and blobs), read through a
//! client of our own so two rules hold while the bytes arrive, not after:
//!
//! - **Bounded**: a body is refused as soon as it passes its bound: at
//!   once when its `Content-Length` says so, else at the first chunk past
//!   it. A registry can neither fill the memory with a manifest nor make
//!   a pull read a layer past its declared size.
//! - **No redirect off the registry**: a redirect is followed only to the
//!   registry's own host and port (same scheme), or to a host the caller
//!   allows (`[plugins] redirect_hosts`, for registries whose blobs live
//!   in object storage), over HTTPS (plain HTTP only to a loopback
//!   address), at most [`MAX_REDIRECTS`] times. Any other redirect ends
//!   the pull with [`RegistryError::Redirect`] naming the host, before a
//!   request reaches it. Credentials are never sent past the registry
//!   (reqwest drops `Authorization` on a redirect to another host).
//!
//! Why not the `oci-client` crate's own reads: it reads a manifest whole
//! before anyone can look at its size, and its HTTP client follows every
//! redirect, with no hook for either. It still does the token exchange
//! (whose header this module sends to the registry alone) and the pushes.
//! What is written here is two GETs of the distribution spec
//! (`/v2/<name>/manifests/<reference>`, `/v2/<name>/blobs/<digest>`).

use crate::RegistryError;
use crate::reference::is_loopback_host;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use std::time::Duration;

/// Most redirects followed for one read.
pub const MAX_REDIRECTS: usize = 5;

/// Why a redirect was not followed (carried through reqwest's error).
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("a redirect to {0}, another host than the registry's")]
    Host(String),
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooMany,
}

/// `host[:port]` of `url`, as a registry reference names it.
fn authority(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Where a redirect may go: the registry itself, or an allowed host.
#[derive(Clone, Debug)]
struct RedirectRule {
    registry: String,
    scheme: &'static str,
    allowed: Vec<String>,
}

impl RedirectRule {
    fn allows(&self, url: &reqwest::Url) -> bool {
        let to = authority(url);
        if to == self.registry {
            return url.scheme() == self.scheme;
        }
        let host = url.host_str().unwrap_or_default();
        let listed = self.allowed.iter().any(|allowed| *allowed == to || allowed == host);
        let secure = url.scheme() == "https" || (url.scheme() == "http" && is_loopback_host(host));
        listed && secure
    }
}

/// A reader of one registry.
pub(crate) struct Reader {
    http: reqwest::Client,
    /// `scheme://host[:port]` of the registry.
    base: String,
}

/// A body read within its bound, and the response's headers.
pub(crate) struct Body {
    pub bytes: Vec<u8>,
    pub headers: HeaderMap,
}

impl Reader {
    /// A reader of `registry` (`host[:port]`, over `scheme`), following
    /// redirects only there or to `allowed`. Plain HTTP is refused unless
    /// the registry is a loopback address: a read carries the registry's
    /// credentials, which never travel in the clear to anything else.
    pub(crate) fn new(
        registry: &str,
        scheme: &'static str,
        allowed: &[String],
        deadline: Duration,
    ) -> Result<Self, RegistryError> {
        if scheme != "https" && !is_loopback_host(registry) {
            return Err(RegistryError::BadReference {
                reference: registry.to_owned(),
                reason: "plain HTTP is used only for a loopback registry (127.0.0.0/8, [::1] or localhost)"
                    .into(),
            });
        }
        // reqwest is built without a default TLS provider in this workspace.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // The registry as a URL names it (a default port dropped), so a
        // redirect back to it compares equal.
        let named = reqwest::Url::parse(&format!("{scheme}://{registry}/")).map_err(|_| {
            RegistryError::BadReference { reference: registry.to_owned(), reason: "not a host".into() }
        })?;
        let rule = RedirectRule { registry: authority(&named), scheme, allowed: allowed.to_vec() };
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(Refused::TooMany);
            }
            if rule.allows(attempt.url()) {
                attempt.follow()
            } else {
                let to = authority(attempt.url());
                attempt.error(Refused::Host(to))
            }
        });
        let http = reqwest::Client::builder()
            .redirect(policy)
            .user_agent(concat!("harmonia/", env!("CARGO_PKG_VERSION")))
            // Backstops only: the deadline around every read ends it first.
            .connect_timeout(deadline.min(Duration::from_secs(10)))
            .read_timeout(deadline + Duration::from_secs(2))
            .build()
            .map_err(|error| RegistryError::Registry {
                what: "starting the registry reader".into(),
                message: error.to_string(),
            })?;
        Ok(Self { http, base: format!("{scheme}://{registry}") })
    }

    /// The `WWW-Authenticate` challenge the registry answers `GET /v2/`
    /// with, if any; sent without credentials, its body unread.
    pub(crate) async fn challenge(&self, what: &str) -> Result<Option<String>, RegistryError> {
        let response =
            self.http.get(format!("{}/v2/", self.base)).send().await.map_err(|error| failed(what, &error))?;
        Ok(response.headers().get(WWW_AUTHENTICATE).and_then(|value| value.to_str().ok()).map(str::to_owned))
    }

    /// `GET /v2/{repository}/{kind}/{reference}` with `accept` and
    /// `authorization`, its body refused past `limit` bytes.
    pub(crate) async fn get(
        &self,
        what: &str,
        path: &str,
        accept: Option<&str>,
        authorization: Option<&HeaderValue>,
        limit: u64,
    ) -> Result<Body, RegistryError> {
        let mut request = self.http.get(format!("{}/v2/{path}", self.base));
        if let Some(accept) = accept {
            request = request.header(ACCEPT, accept);
        }
        if let Some(authorization) = authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        let mut response = request.send().await.map_err(|error| failed(what, &error))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(RegistryError::NotFound(what.to_owned()));
        }
        if !status.is_success() {
            return Err(RegistryError::Registry { what: what.to_owned(), message: format!("HTTP {status}") });
        }
        let too_large = || RegistryError::TooLarge { what: what.to_owned(), limit };
        if response.content_length().is_some_and(|length| length > limit) {
            return Err(too_large());
        }
        let headers = response.headers().clone();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| failed(what, &error))? {
            if (bytes.len() + chunk.len()) as u64 > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Body { bytes, headers })
    }
}

/// A reqwest error as ours: a refused redirect by its own variant.
fn failed(what: &str, error: &reqwest::Error) -> RegistryError {
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return RegistryError::Redirect { what: what.to_owned(), reason: refused.to_string() };
        }
        source = cause.source();
    }
    RegistryError::Registry { what: what.to_owned(), message: crate::oci::chain(error) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> reqwest::Url {
        reqwest::Url::parse(text).unwrap()
    }

    /// Hostile: a reader over plain HTTP to a registry that is not a
    /// loopback address (it would carry the Docker config's credentials in
    /// the clear) cannot be made, whatever the caller asks; over HTTPS, or
    /// to a loopback address, it can.
    #[test]
    fn plain_http_is_refused_for_any_registry_but_a_loopback_one() {
        let reader = |registry: &str, scheme: &'static str| {
            Reader::new(registry, scheme, &[], Duration::from_secs(1)).map(|_| ())
        };
        for registry in ["127.evil.example:5000", "127.0.0.1.nip.io", "registry.example", "vm:5000"] {
            let refused = reader(registry, "http").unwrap_err().to_string();
            assert!(refused.contains("plain HTTP"), "{registry}: {refused}");
            assert!(reader(registry, "https").is_ok(), "{registry} over HTTPS");
        }
        for registry in ["127.0.0.1:5000", "localhost:5000", "[::1]:5000"] {
            assert!(reader(registry, "http").is_ok(), "{registry}");
        }
    }

    #[test]
    fn a_redirect_stays_on_the_registry_unless_a_host_is_allowed() {
        let rule = RedirectRule { registry: "reg.example:5000".into(), scheme: "https", allowed: Vec::new() };
        assert!(rule.allows(&url("https://reg.example:5000/v2/x/blobs/y")));
        assert!(!rule.allows(&url("http://reg.example:5000/v2/x")), "no downgrade");
        assert!(!rule.allows(&url("https://reg.example/v2/x")), "another port is another host");
        assert!(!rule.allows(&url("https://storage.example/blob")));
        let rule = RedirectRule { allowed: vec!["storage.example".into(), "127.0.0.1:9000".into()], ..rule };
        assert!(rule.allows(&url("https://storage.example/blob")));
        assert!(rule.allows(&url("https://storage.example:8443/blob")), "a bare host allows any port");
        assert!(!rule.allows(&url("http://storage.example/blob")), "plain HTTP only to loopback");
        assert!(rule.allows(&url("http://127.0.0.1:9000/blob")));
        assert!(!rule.allows(&url("http://127.0.0.1:9001/blob")));
    }
}
