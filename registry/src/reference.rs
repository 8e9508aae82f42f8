//! `oci://host[:port]/repository(:tag|@sha256:hex)`.

use crate::RegistryError;
use crate::digest::Digest;
use std::fmt;

/// A parsed plugin reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciReference {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path, lowercase, `/`-separated.
    pub repository: String,
    /// The tag, when given.
    pub tag: Option<String>,
    /// The manifest digest, when given.
    pub digest: Option<Digest>,
}

fn bad(text: &str, why: &str) -> RegistryError {
    RegistryError::BadReference { reference: text.to_owned(), reason: why.to_owned() }
}

impl OciReference {
    /// Parse `oci://host[:port]/repo[:tag][@sha256:…]`. A reference with
    /// neither tag nor digest is refused rather than read as `latest`.
    pub fn parse(text: &str) -> Result<Self, RegistryError> {
        let rest = text.strip_prefix("oci://").ok_or_else(|| bad(text, "it must start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => (rest, Some(Digest::parse(digest)?)),
            None => (rest, None),
        };
        let (registry, path) =
            rest.split_once('/').ok_or_else(|| bad(text, "no repository after the host"))?;
        let host_ok = !registry.is_empty()
            && registry.bytes().all(|byte| byte.is_ascii_alphanumeric() || b".-:[]".contains(&byte));
        if !host_ok {
            return Err(bad(text, "the host is not host[:port]"));
        }
        // A tag follows the last `:` after the last `/`.
        let last_slash = path.rfind('/').map_or(0, |at| at + 1);
        let (repository, tag) = match path[last_slash..].rfind(':') {
            Some(at) => (&path[..last_slash + at], Some(&path[last_slash + at + 1..])),
            None => (path, None),
        };
        let component_ok = |part: &str| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"._-".contains(&byte))
        };
        if !repository.split('/').all(component_ok) {
            return Err(bad(text, "the repository must be lowercase letters, digits, `.`, `_`, `-` and `/`"));
        }
        if let Some(tag) = tag {
            let tag_ok = !tag.is_empty()
                && tag.len() <= 128
                && tag.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"._-".contains(&byte));
            if !tag_ok {
                return Err(bad(text, "the tag must be 1 to 128 letters, digits, `.`, `_` or `-`"));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad(text, "name a tag (:v1) or a digest (@sha256:…)"));
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }

    /// `host[:port]/repository`, as a trust policy and a cosign payload
    /// name it.
    pub fn repository_path(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The last path segment: the default plugin name.
    pub fn short_name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or(&self.repository)
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &Digest) -> Self {
        Self { tag: None, digest: Some(digest.clone()), ..self.clone() }
    }

    /// True when the registry is a loopback address (see
    /// [`is_loopback_host`]): plain HTTP is allowed there only.
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.registry)
    }
}

/// True when `authority` (`host` or `host:port`, an IPv6 address in
/// brackets) names a loopback address: an IP literal in 127.0.0.0/8 or
/// `[::1]`, parsed as an address by std's parser, or `localhost`. A name
/// that merely starts like one (`127.evil.example`) is not. Plain HTTP,
/// and with it the registry's credentials in the clear, goes nowhere else.
pub fn is_loopback_host(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((inner, rest)) if rest.is_empty() || rest.starts_with(':') => {
                return inner.parse::<std::net::Ipv6Addr>().is_ok_and(|address| address.is_loopback());
            }
            _ => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) if !port.is_empty() && port.bytes().all(|byte| byte.is_ascii_digit()) => host,
            Some(_) => return false,
            None => authority,
        },
    };
    host == "localhost" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|address| address.is_loopback())
}

/// Checks that `entry` names a host as a reference's registry does:
/// `host` or `host:port`, lowercase, no scheme, path or credentials (a
/// `[plugins] redirect_hosts` entry).
pub fn check_host(entry: &str) -> Result<(), String> {
    let (host, port) = match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => (host, Some(port)),
        _ => (entry, None),
    };
    let host_ok = match host.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')) {
        Some(inner) => inner.parse::<std::net::Ipv6Addr>().is_ok(),
        None => {
            !host.is_empty()
                && host.len() <= 253
                && host
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b".-".contains(&byte))
        }
    };
    let port_ok = port.is_none_or(|port| port.parse::<u16>().is_ok_and(|port| port > 0));
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(format!("`{entry}` is not a lowercase host or host:port (no scheme, path or credentials)"))
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_print_back() {
        let digest = Digest::of(b"m");
        for text in [
            "oci://127.0.0.1:5000/tools/get_job_status:v1".to_owned(),
            format!("oci://registry.example/a/b@{digest}"),
            format!("oci://localhost:5000/t:v1@{digest}"),
        ] {
            let parsed = OciReference::parse(&text).unwrap();
            assert_eq!(parsed.to_string(), text);
        }
        let parsed = OciReference::parse("oci://127.0.0.1:5000/tools/get_job_status:v1").unwrap();
        assert_eq!(parsed.repository_path(), "127.0.0.1:5000/tools/get_job_status");
        assert_eq!(parsed.short_name(), "get_job_status");
        assert!(parsed.is_loopback());
        assert!(!OciReference::parse("oci://ghcr.io/a/b:v1").unwrap().is_loopback());
    }

    /// Hostile: names that only look loopback. Plain HTTP (and with it the
    /// Docker config's credentials in the clear) is for an IP literal in
    /// 127.0.0.0/8, `[::1]` or `localhost`, with or without a port.
    #[test]
    fn only_a_loopback_address_or_localhost_is_loopback() {
        let loopback = |registry: &str| {
            OciReference::parse(&format!("oci://{registry}/tools/t:v1")).unwrap().is_loopback()
        };
        for near in [
            "127.evil.example",
            "127.evil.example:5000",
            "127.0.0.1.evil.example",
            "127.0.0.1.nip.io:5000",
            "127.1",
            "127.0.0.1.",
            "localhost.evil.example",
            "evil-localhost",
            "[::ffff:127.0.0.1]:5000",
            "[::2]",
            "::1",
            "0.0.0.0:5000",
            "128.0.0.1",
        ] {
            assert!(!loopback(near), "{near} is not loopback");
        }
        for good in [
            "127.0.0.1",
            "127.0.0.1:5000",
            "127.255.0.9:80",
            "localhost",
            "localhost:5000",
            "[::1]",
            "[::1]:5000",
        ] {
            assert!(loopback(good), "{good} is loopback");
        }
    }

    #[test]
    fn a_host_is_a_host_or_host_and_port() {
        for good in ["storage.example", "127.0.0.1:9000", "s3.eu-west-1.amazonaws.com", "[::1]:5000"] {
            assert!(check_host(good).is_ok(), "{good}");
        }
        for bad in
            ["", "https://s.example", "s.example/path", "user@s.example", "s.example:port", "S.example"]
        {
            assert!(check_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_references_say_why() {
        for text in [
            "127.0.0.1:5000/t:v1",
            "oci://127.0.0.1:5000/t",
            "oci://127.0.0.1:5000",
            "oci://h/Upper:v1",
            "oci://h/t:bad tag",
            "oci://h/t@sha256:00",
            "oci://user:pw@h/t:v1",
        ] {
            assert!(
                matches!(
                    OciReference::parse(text),
                    Err(RegistryError::BadReference { .. } | RegistryError::BadDigest(_))
                ),
                "{text}"
            );
        }
    }
}
