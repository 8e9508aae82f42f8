//! Who may address the server: the `Host` and `Origin` checks that keep
//! a web page from reaching a server on loopback through DNS rebinding,
//! on every route (`/metrics` and `/v1/validate` as much as `/mcp`).
//!
//! - `Host` must name one of `allowed_hosts` (loopback names when the
//!   list is empty); an entry without a port matches any port. Otherwise
//!   403.
//! - `Origin`, when present (a browser sent the request), must be one of
//!   `allowed_origins`, compared as scheme, host and port with the
//!   scheme's default port filled in; with no list, its host must be one
//!   of the allowed hosts. `Origin: null` and an unparsable origin are
//!   refused. Otherwise 403, as the streamable HTTP transport asks.

use axum::http::{HeaderMap, Uri, header};

/// The hosts accepted when `allowed_hosts` is empty.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A host and an optional port, normalised for comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

/// An origin: scheme, host and port (the default one when omitted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase()
}

fn authority(text: &str) -> Option<Authority> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let parsed = axum::http::uri::Authority::try_from(text).ok()?;
    if parsed.as_str().contains('@') {
        return None;
    }
    Some(Authority { host: normalize_host(parsed.host()), port: parsed.port_u16() })
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// `scheme://host[:port]`, or `None` when `text` is not an origin.
pub fn parse(text: &str) -> Option<Origin> {
    let uri = Uri::try_from(text.trim()).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = authority(uri.authority()?.as_str())?;
    if uri.path_and_query().is_some_and(|path| !matches!(path.as_str(), "" | "/")) {
        return None;
    }
    let port = authority.port.or_else(|| default_port(&scheme));
    Some(Origin { scheme, host: authority.host, port })
}

/// Why a request is not addressed to this server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No `Host`, or one not allowed.
    Host,
    /// An `Origin` not allowed.
    Origin,
}

impl Refused {
    /// The `reason` label and the body's message.
    pub fn label(self) -> &'static str {
        match self {
            Self::Host => "host_not_allowed",
            Self::Origin => "origin_not_allowed",
        }
    }
}

/// The Host and Origin rules of a server.
#[derive(Clone, Debug)]
pub struct Addressing {
    hosts: Vec<Authority>,
    origins: Option<Vec<Origin>>,
}

impl Addressing {
    /// From the config's lists (checked by `ServeConfig::check`).
    pub fn new(allowed_hosts: &[String], allowed_origins: &[String]) -> Self {
        // An entry that is no authority (`::1` unbracketed) is a bare host.
        let allowed = |text: &str| {
            authority(text).or_else(|| Some(Authority { host: normalize_host(text.trim()), port: None }))
        };
        let hosts = if allowed_hosts.is_empty() {
            LOOPBACK_HOSTS.iter().filter_map(|host| allowed(host)).collect()
        } else {
            allowed_hosts.iter().filter_map(|host| allowed(host)).collect()
        };
        let origins = (!allowed_origins.is_empty())
            .then(|| allowed_origins.iter().filter_map(|origin| parse(origin)).collect());
        Self { hosts, origins }
    }

    fn host_allowed(&self, host: &Authority) -> bool {
        self.hosts.iter().any(|allowed| {
            allowed.host == host.host && allowed.port.is_none_or(|port| host.port == Some(port))
        })
    }

    /// Whether a request with `uri` and `headers` may be served.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        let host = match headers.get(header::HOST) {
            Some(value) => value.to_str().ok().and_then(authority),
            None => uri.authority().and_then(|value| authority(value.as_str())),
        };
        if !host.is_some_and(|host| self.host_allowed(&host)) {
            return Err(Refused::Host);
        }
        let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
        let origin = origin.to_str().ok().and_then(parse).ok_or(Refused::Origin)?;
        let allowed = match &self.origins {
            Some(origins) => origins.contains(&origin),
            // A page on any port of an allowed host (a local inspector).
            None => self.hosts.iter().any(|allowed| allowed.host == origin.host),
        };
        if allowed { Ok(()) } else { Err(Refused::Origin) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn hosts_and_origins_are_checked_as_scheme_host_and_port() {
        let uri = Uri::from_static("/metrics");
        let loopback = Addressing::new(&[], &[]);
        for host in ["127.0.0.1:8080", "localhost", "[::1]:9", "LOCALHOST:1"] {
            assert_eq!(loopback.check(&uri, &headers(Some(host), None)), Ok(()), "{host}");
        }
        for host in [None, Some("evil.example"), Some("127.0.0.1.evil.example:80"), Some("user@127.0.0.1")] {
            assert_eq!(loopback.check(&uri, &headers(host, None)), Err(Refused::Host), "{host:?}");
        }
        let ok = Some("127.0.0.1:8080");
        assert_eq!(loopback.check(&uri, &headers(ok, Some("http://localhost:3000"))), Ok(()));
        for origin in ["http://evil.example", "null", "not an origin", "http://127.0.0.1.evil.example"] {
            assert_eq!(loopback.check(&uri, &headers(ok, Some(origin))), Err(Refused::Origin), "{origin}");
        }
        let listed = Addressing::new(&["mcp.example:443".into()], &["https://app.example".into()]);
        let host = Some("mcp.example:443");
        assert_eq!(listed.check(&uri, &headers(host, Some("https://app.example:443"))), Ok(()));
        assert_eq!(listed.check(&uri, &headers(host, None)), Ok(()), "no Origin: not a browser");
        for origin in ["http://app.example", "https://app.example:8443", "https://mcp.example"] {
            assert_eq!(listed.check(&uri, &headers(host, Some(origin))), Err(Refused::Origin), "{origin}");
        }
        assert_eq!(listed.check(&uri, &headers(Some("mcp.example:80"), None)), Err(Refused::Host));
        assert!(parse("https://app.example/path").is_none(), "an origin has no path");
    }
}
