//! A name resolver for the public web that refuses non-public addresses.
//!
//! An allow-listed host name is the operator's promise about a name, not
//! about where its DNS points: a name that resolves to loopback, a private
//! range or a link-local address (DNS rebinding, or a hostile zone) would
//! let a guest reach services on the host's own network. So every address
//! a name resolves to is checked, and a name with no public address is
//! refused before any connection. The check applies to the addresses the
//! client will connect to (this resolver hands them over to reqwest), so a
//! second lookup cannot swap them.
//!
//! Not filtered: an allow-listed IP literal (the operator named that exact
//! address) and explicit routes (`public_web.routes`), which use their own
//! agent.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The io error text of a refused name (the kind is `PermissionDenied`).
pub const REFUSED: &str = "the name resolves to no public address";

/// Whether `error` is this resolver's refusal.
pub fn is_refusal(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied && io.to_string() == REFUSED)
}

fn refusal() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, REFUSED)
}

/// Resolves with the system resolver, keeping public addresses only.
#[derive(Debug, Default)]
pub struct PublicAddressesOnly;

impl reqwest::dns::Resolve for PublicAddressesOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let resolved = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let public: Vec<std::net::SocketAddr> =
                resolved.filter(|address| is_public(address.ip())).collect();
            if public.is_empty() {
                return Err(Box::new(refusal()) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// True for an address reachable on the public internet: not loopback,
/// private, shared, link-local, multicast, documentation, benchmarking,
/// reserved or unspecified, including IPv4 addresses embedded in IPv6.
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(address: Ipv4Addr) -> bool {
    let [a, b, c, _] = address.octets();
    !(address.is_unspecified()
        || address.is_loopback()
        || address.is_private()
        || address.is_link_local()
        || address.is_multicast()
        || address.is_broadcast()
        || address.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(address: Ipv6Addr) -> bool {
    if let Some(v4) = address.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = address.segments();
    let embedded_v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match segments {
        // NAT64 (64:ff9b::/96) carries an IPv4 address in its low bits.
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => is_public_v4(embedded_v4(high, low)),
        // 6to4 (2002::/16) carries one in bits 16..48.
        [0x2002, high, low, ..] => is_public_v4(embedded_v4(high, low)),
        _ => {
            !(address.is_unspecified()
                || address.is_loopback()
                || address.is_multicast()
                || (segments[0] & 0xfe00) == 0xfc00
                || (segments[0] & 0xffc0) == 0xfe80
                || (segments[0] == 0x2001 && segments[1] == 0x0db8)
                || segments[..6] == [0, 0, 0, 0, 0, 0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_ranges_are_not_public() {
        for text in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "::127.0.0.1",
        ] {
            assert!(!is_public(text.parse().unwrap()), "{text} must not count as public");
        }
    }

    #[test]
    fn public_addresses_are_public() {
        for text in
            ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:1.1.1.1"]
        {
            assert!(is_public(text.parse().unwrap()), "{text} is public");
        }
    }
}
