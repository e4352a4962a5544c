//! The SSRF guard: which addresses a model-chosen URL may reach.
//!
//! A URL's host is resolved **once** per hop ([`crate::fetch`]); every address is checked
//! here, the ones refused are dropped, and the request connects to exactly the addresses that
//! passed. Redirects are followed by hand, and each target goes through the same check.
//!
//! Refused unless `[web] allow_private_addresses = true` (or the exact address and port were
//! exempted by the embedder, as tests do for their own server):
//!
//! | range                | what it is                                   |
//! |----------------------|----------------------------------------------|
//! | `0.0.0.0/8`          | "this network", `0.0.0.0` (unspecified)      |
//! | `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` | private           |
//! | `100.64.0.0/10`      | shared address space (carrier-grade NAT; Alibaba's metadata at 100.100.100.200) |
//! | `127.0.0.0/8`        | loopback                                     |
//! | `169.254.0.0/16`     | link-local (cloud metadata at 169.254.169.254) |
//! | `192.0.0.0/24`       | IETF protocol assignments                    |
//! | `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24` | documentation  |
//! | `198.18.0.0/15`      | benchmarking                                 |
//! | `224.0.0.0/4`        | multicast                                    |
//! | `240.0.0.0/4`        | reserved, and `255.255.255.255` broadcast    |
//! | `::`, `::1`          | unspecified, loopback                        |
//! | `::ffff:0:0/96`      | IPv4-mapped (`[::ffff:127.0.0.1]`)           |
//! | `::/96`              | IPv4-compatible (deprecated)                 |
//! | `64:ff9b::/96`, `64:ff9b:1::/48` | NAT64 (reaches IPv4 through a translator) |
//! | `100::/64`           | discard                                      |
//! | `2001:db8::/32`      | documentation                                |
//! | `2002::/16`          | 6to4 (embeds an IPv4 address)                |
//! | `fc00::/7`           | unique local (`fd00::/8`; AWS metadata at `fd00:ec2::254`) |
//! | `fe80::/10`          | link-local                                   |
//! | `fec0::/10`          | site-local (deprecated)                      |
//! | `ff00::/8`           | multicast                                    |
//!
//! Host names never reach a resolver in a form the guard did not see: `localhost` and
//! `*.localhost` (with or without the trailing dot, any case) are loopback by definition
//! (RFC 6761) and resolve to `127.0.0.1` and `::1` without asking DNS. Numeric hosts in any
//! spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`) are parsed as IPv4 by the URL parser before
//! the check. Only `http` and `https` are fetched.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use url::Url;

/// One refused IPv4 range.
struct V4Range(Ipv4Addr, u8, &'static str);
/// One refused IPv6 range.
struct V6Range(Ipv6Addr, u8, &'static str);

/// Refused IPv4 ranges (the module table).
const V4_BLOCKED: &[V4Range] = &[
    V4Range(Ipv4Addr::new(0, 0, 0, 0), 8, "unspecified (this network)"),
    V4Range(Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    V4Range(Ipv4Addr::new(100, 64, 0, 0), 10, "shared address space"),
    V4Range(Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    V4Range(
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local (cloud metadata)",
    ),
    V4Range(Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    V4Range(Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    V4Range(Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    V4Range(Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    V4Range(Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    V4Range(Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    V4Range(Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    V4Range(Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    V4Range(Ipv4Addr::new(240, 0, 0, 0), 4, "reserved or broadcast"),
];

/// Refused IPv6 ranges (the module table).
const V6_BLOCKED: &[V6Range] = &[
    V6Range(Ipv6Addr::UNSPECIFIED, 128, "unspecified"),
    V6Range(Ipv6Addr::LOCALHOST, 128, "loopback"),
    V6Range(
        Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0),
        96,
        "IPv4-mapped",
    ),
    V6Range(Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, "IPv4-compatible"),
    V6Range(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, "NAT64"),
    V6Range(
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        "NAT64 (local use)",
    ),
    V6Range(Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "discard"),
    V6Range(
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation",
    ),
    V6Range(Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "6to4"),
    V6Range(
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique local",
    ),
    V6Range(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    V6Range(Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local"),
    V6Range(Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

fn v4_in(ip: Ipv4Addr, net: Ipv4Addr, prefix: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn v6_in(ip: Ipv6Addr, net: Ipv6Addr, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

/// The refused range `ip` falls in, or `None` for a public address.
///
/// ```
/// use kun_web::classify;
/// assert_eq!(classify("169.254.169.254".parse().unwrap()), Some("link-local (cloud metadata)"));
/// assert_eq!(classify("::ffff:127.0.0.1".parse().unwrap()), Some("IPv4-mapped"));
/// assert_eq!(classify("93.184.215.14".parse().unwrap()), None);
/// ```
#[must_use]
pub fn classify(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => V4_BLOCKED.iter().find(|r| v4_in(v4, r.0, r.1)).map(|r| r.2),
        IpAddr::V6(v6) => V6_BLOCKED.iter().find(|r| v6_in(v6, r.0, r.1)).map(|r| r.2),
    }
}

/// Whether private addresses may be fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrivateAddresses {
    /// Refuse every range of the module table (the default).
    #[default]
    Blocked,
    /// Fetch anything (`[web] allow_private_addresses = true`, honoured only from the user's
    /// own configuration).
    Allowed,
}

/// Why a URL or an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// Not `http` or `https`.
    #[error(
        "only http and https URLs can be fetched; `{scheme}:` is refused (file, ftp, data and \
         other schemes could read local or internal resources)"
    )]
    Scheme {
        /// The scheme given.
        scheme: String,
    },
    /// The host's address is in a refused range.
    #[error(
        "{host} resolves to {address}, a {range} address; private, loopback, link-local and \
         metadata addresses cannot be fetched (the user can allow them with [web] \
         allow_private_addresses = true in their own configuration)"
    )]
    Address {
        /// The host as written in the URL.
        host: String,
        /// The refused address.
        address: IpAddr,
        /// Its range's name.
        range: &'static str,
    },
    /// A URL without a host.
    #[error("the URL has no host to fetch from")]
    NoHost,
}

/// Checks schemes and addresses; cheap to clone.
///
/// ```
/// use kun_web::{AddressGuard, PrivateAddresses};
/// let guard = AddressGuard::new(PrivateAddresses::Blocked);
/// assert!(guard.check_url(&"file:///etc/passwd".parse().unwrap()).is_err());
/// assert!(guard.check_address("evil.example", "127.0.0.1:80".parse().unwrap()).is_err());
/// assert!(guard.check_address("good.example", "93.184.215.14:443".parse().unwrap()).is_ok());
/// ```
#[derive(Debug, Clone, Default)]
pub struct AddressGuard {
    private: PrivateAddresses,
    exempt: Arc<[SocketAddr]>,
}

impl AddressGuard {
    /// A guard with this rule for private addresses and no exemptions.
    #[must_use]
    pub fn new(private: PrivateAddresses) -> Self {
        Self {
            private,
            exempt: Arc::from(Vec::new()),
        }
    }

    /// Also lets through exactly this address and port (a known local service of the
    /// embedder, or a test's own server); every other private address stays refused.
    #[must_use]
    pub fn exempting(self, addr: SocketAddr) -> Self {
        let mut exempt = self.exempt.to_vec();
        exempt.push(addr);
        Self {
            private: self.private,
            exempt: Arc::from(exempt),
        }
    }

    /// The rule for private addresses.
    #[must_use]
    pub const fn private_addresses(&self) -> PrivateAddresses {
        self.private
    }

    /// Checks a URL's scheme.
    ///
    /// # Errors
    /// [`GuardError::Scheme`] for anything but `http` and `https`; [`GuardError::NoHost`].
    pub fn check_url(&self, url: &Url) -> Result<(), GuardError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(GuardError::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        if url.host().is_none() {
            return Err(GuardError::NoHost);
        }
        Ok(())
    }

    /// Checks one resolved address of `host`.
    ///
    /// # Errors
    /// [`GuardError::Address`] when it is in a refused range and neither allowed nor exempt.
    pub fn check_address(&self, host: &str, addr: SocketAddr) -> Result<(), GuardError> {
        if self.private == PrivateAddresses::Allowed || self.exempt.contains(&addr) {
            return Ok(());
        }
        match classify(addr.ip()) {
            None => Ok(()),
            Some(range) => Err(GuardError::Address {
                host: host.to_owned(),
                address: addr.ip(),
                range,
            }),
        }
    }
}

/// Whether `host` (as in a URL) is a `localhost` name: `localhost`, `x.localhost`, with or
/// without one trailing dot, any case.
#[must_use]
pub fn is_localhost_name(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn address_table() {
        let cases: &[(&str, Option<&str>)] = &[
            ("0.0.0.0", Some("unspecified (this network)")),
            ("10.1.2.3", Some("private")),
            ("100.64.0.1", Some("shared address space")),
            ("100.100.100.200", Some("shared address space")),
            ("100.128.0.1", None),
            ("127.0.0.1", Some("loopback")),
            ("127.255.255.254", Some("loopback")),
            ("169.254.169.254", Some("link-local (cloud metadata)")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("172.32.0.1", None),
            ("192.0.0.192", Some("IETF protocol assignments")),
            ("192.168.1.1", Some("private")),
            ("198.18.0.1", Some("benchmarking")),
            ("224.0.0.1", Some("multicast")),
            ("255.255.255.255", Some("reserved or broadcast")),
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("::", Some("unspecified")),
            ("::1", Some("loopback")),
            ("::ffff:127.0.0.1", Some("IPv4-mapped")),
            ("::ffff:8.8.8.8", Some("IPv4-mapped")),
            ("::127.0.0.1", Some("IPv4-compatible")),
            ("64:ff9b::7f00:1", Some("NAT64")),
            ("2002:7f00:1::", Some("6to4")),
            ("fc00::1", Some("unique local")),
            ("fd00:ec2::254", Some("unique local")),
            ("fe80::1", Some("link-local")),
            ("febf::1", Some("link-local")),
            ("fec0::1", Some("site-local")),
            ("ff02::1", Some("multicast")),
            ("2001:db8::1", Some("documentation")),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001:80b::200e", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(classify(ip.parse().unwrap()), *expected, "{ip}");
        }
    }

    /// Literal hosts in every spelling reach the check as the address they mean.
    #[test]
    fn url_spellings_of_loopback_are_parsed_to_it() {
        let guard = AddressGuard::new(PrivateAddresses::Blocked);
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://0x7f.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::1]/",
            "http://0.0.0.0/",
            "http://0/",
            "http://[::]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
        ] {
            let parsed: Url = url.parse().unwrap();
            guard.check_url(&parsed).unwrap();
            let ip: IpAddr = match parsed.host().unwrap() {
                url::Host::Ipv4(v4) => v4.into(),
                url::Host::Ipv6(v6) => v6.into(),
                url::Host::Domain(d) => panic!("{url} parsed as the name {d}"),
            };
            let addr = SocketAddr::new(ip, 80);
            assert!(
                matches!(
                    guard.check_address("h", addr),
                    Err(GuardError::Address { .. })
                ),
                "{url} must be refused"
            );
        }
    }

    #[test]
    fn schemes_other_than_http_are_refused() {
        let guard = AddressGuard::new(PrivateAddresses::Allowed);
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/x",
            "gopher://x/",
            "data:text/plain,hi",
            "javascript:alert(1)",
        ] {
            let err = guard.check_url(&url.parse().unwrap()).unwrap_err();
            assert!(matches!(err, GuardError::Scheme { .. }), "{url}: {err}");
        }
        for url in ["http://example.com/", "HTTPS://EXAMPLE.COM/"] {
            assert!(guard.check_url(&url.parse().unwrap()).is_ok(), "{url}");
        }
    }

    #[test]
    fn allowed_and_exempt_addresses() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert!(
            AddressGuard::new(PrivateAddresses::Allowed)
                .check_address("h", loopback)
                .is_ok()
        );
        let exempt = AddressGuard::new(PrivateAddresses::Blocked).exempting(loopback);
        assert!(exempt.check_address("h", loopback).is_ok());
        assert!(
            exempt
                .check_address("h", "127.0.0.1:8081".parse().unwrap())
                .is_err(),
            "only that port"
        );
        assert!(
            exempt
                .check_address("h", "10.0.0.1:8080".parse().unwrap())
                .is_err()
        );
    }

    #[test]
    fn localhost_names() {
        for host in [
            "localhost",
            "localhost.",
            "LOCALHOST",
            "api.localhost",
            "a.b.localhost.",
        ] {
            assert!(is_localhost_name(host), "{host}");
        }
        for host in ["localhost.example.com", "notlocalhost", "example.com"] {
            assert!(!is_localhost_name(host), "{host}");
        }
    }
}
