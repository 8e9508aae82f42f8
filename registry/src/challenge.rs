//! Where a registry's authentication challenge would send the credentials.
//!
//! A registry asking for a token answers `GET /v2/` with
//! `WWW-Authenticate: Bearer realm="…"`, and the client's token exchange
//! then sends the Docker config's credentials (basic) to that realm, on
//! whatever host and scheme it names. A realm over plain HTTP would carry
//! them in the clear, so before any exchange the challenge is read here
//! (with the `http-auth` crate's parser) and a realm that is plain HTTP to
//! anything but a loopback address
//! ([`crate::reference::is_loopback_host`]) refuses the exchange: the
//! credentials are never sent. A realm over HTTPS, on any host, is the
//! usual case (a registry's token service) and is left to the client.

use crate::reference::is_loopback_host;

/// The realm of `challenge` (a `WWW-Authenticate` value) that would carry
/// credentials over plain HTTP to a host that is not loopback, if any.
pub fn plain_http_realm(challenge: &str) -> Option<String> {
    let challenges = http_auth::parse_challenges(challenge).ok()?;
    challenges
        .iter()
        .filter(|challenge| challenge.scheme.eq_ignore_ascii_case("bearer"))
        .flat_map(|challenge| &challenge.params)
        .filter(|(name, _)| name.eq_ignore_ascii_case("realm"))
        .map(|(_, value)| value.to_unescaped())
        .find(|realm| match reqwest::Url::parse(realm) {
            Ok(url) => {
                let host = match (url.host_str(), url.port()) {
                    (Some(host), Some(port)) => format!("{host}:{port}"),
                    (Some(host), None) => host.to_owned(),
                    (None, _) => String::new(),
                };
                url.scheme() != "https" && !(url.scheme() == "http" && is_loopback_host(&host))
            }
            // Not a URL: the client's exchange fails on it, sending nothing.
            Err(_) => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hostile: realms that would carry credentials in the clear.
    #[test]
    fn a_realm_over_plain_http_to_another_host_is_found() {
        for plain in [
            r#"Bearer realm="http://token.evil.example/token",service="r""#,
            r#"Bearer realm="http://127.evil.example:5000/token""#,
            r#"Basic realm="x", Bearer service="r", realm="http://auth.example/t""#,
            r#"bearer REALM="ftp://auth.example/t""#,
        ] {
            assert!(plain_http_realm(plain).is_some(), "{plain}");
        }
        for fine in [
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io""#,
            r#"Bearer realm="http://127.0.0.1:5001/token""#,
            r#"Bearer realm="http://localhost/token""#,
            r#"Bearer realm="http://[::1]:8080/token""#,
            r#"Basic realm="http://anything.example""#,
            "not a challenge at all ,,, \"",
            "",
        ] {
            assert_eq!(plain_http_realm(fine), None, "{fine}");
        }
    }
}
