//! The public web capability's URL and origin rules (docs/contract.md):
//! which URLs a tool may name and which origin each belongs to. Resolving
//! and connecting stay in the host.

pub use url::Url;

/// `scheme://host[:port]` of an http(s) URL, the port written only when it
/// is not the scheme's default. Two URLs share an origin exactly when their
/// `Origin`s are equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin(String);

impl Origin {
    /// The origin of an http(s) URL with a host and no credentials.
    pub fn of(url: &Url) -> Option<Self> {
        if !matches!(url.scheme(), "http" | "https") || !url.username().is_empty() || url.password().is_some()
        {
            return None;
        }
        let host = url.host_str()?;
        Some(Self(match url.port() {
            Some(port) => format!("{}://{host}:{port}", url.scheme()),
            None => format!("{}://{host}", url.scheme()),
        }))
    }

    /// Parse an allow-list entry: an origin and nothing more (an optional
    /// trailing `/` aside).
    pub fn parse_origin(text: &str) -> Option<Self> {
        let url = parse_http_url(text)?;
        let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
        if bare { Self::of(&url) } else { None }
    }

    /// The origin text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Parse an absolute http(s) URL.
pub fn parse_http_url(text: &str) -> Option<Url> {
    let url = Url::parse(text).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host_str().is_some()).then_some(url)
}

/// `url` sent to `base` instead of its own origin: `base`'s scheme, host,
/// port and path prefix, then `url`'s path and query.
pub fn rebase(url: &Url, base: &Url) -> Url {
    let mut routed = base.clone();
    let prefix = base.path().trim_end_matches('/');
    routed.set_path(&format!("{prefix}{}", url.path()));
    routed.set_query(url.query());
    routed.set_fragment(None);
    routed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_normalise_default_ports() {
        let origin = |text: &str| Origin::of(&Url::parse(text).unwrap()).map(|o| o.0);
        assert_eq!(origin("https://hn.algolia.com/api/v1/search?q=1"), Some("https://hn.algolia.com".into()));
        assert_eq!(origin("https://hn.algolia.com:443/x"), Some("https://hn.algolia.com".into()));
        assert_eq!(origin("http://127.0.0.1:8123/x"), Some("http://127.0.0.1:8123".into()));
        assert_eq!(origin("https://user:pw@hn.algolia.com/"), None);
        assert_eq!(origin("ftp://hn.algolia.com/"), None);
    }

    #[test]
    fn allow_entries_are_bare_origins() {
        assert!(Origin::parse_origin("https://hn.algolia.com").is_some());
        assert!(Origin::parse_origin("https://hn.algolia.com/").is_some());
        assert!(Origin::parse_origin("https://hn.algolia.com/api").is_none());
        assert!(Origin::parse_origin("hn.algolia.com").is_none());
        assert!(Origin::parse_origin("https://hn.algolia.com/?q=1").is_none());
    }

    #[test]
    fn rebase_keeps_path_and_query() {
        let url = Url::parse("https://hn.algolia.com/api/v1/search?query=rust&x=1").unwrap();
        let base = Url::parse("http://127.0.0.1:8123/mirror/").unwrap();
        assert_eq!(rebase(&url, &base).as_str(), "http://127.0.0.1:8123/mirror/api/v1/search?query=rust&x=1");
        let base = Url::parse("http://127.0.0.1:8123").unwrap();
        assert_eq!(rebase(&url, &base).as_str(), "http://127.0.0.1:8123/api/v1/search?query=rust&x=1");
    }
}
