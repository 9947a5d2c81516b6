//! One `network.allow` entry: a host name, a domain wildcard, or an exact address, each with an
//! optional port (an address always has one).

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// The ports a name entry without a port allows: plain HTTP and HTTPS.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// A parsed `network.allow` entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// `HOST` or `HOST:PORT`: exactly that name (lowercase, no trailing dot).
    Host {
        /// The name.
        name: String,
        /// The one port allowed; `None`: [`DEFAULT_PORTS`].
        port: Option<u16>,
    },
    /// `*.DOMAIN` or `*.DOMAIN:PORT`: every name strictly below `DOMAIN` (not `DOMAIN` itself).
    Below {
        /// The domain, without the `*.`.
        domain: String,
        /// The one port allowed; `None`: [`DEFAULT_PORTS`].
        port: Option<u16>,
    },
    /// `IP:PORT` or `[IPv6]:PORT`: exactly that address and port, whatever its class.
    Addr(SocketAddr),
}

/// Why an entry is not a pattern. Each variant carries the entry as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// An empty entry.
    #[error("network.allow entry {0:?} is empty")]
    Empty(String),
    /// `*` alone would allow everything; `mode = "allow"` says that.
    #[error(
        "network.allow entry {0:?} allows every destination; name hosts or domains (`*.example.com`), or use network mode \"allow\""
    )]
    BareWildcard(String),
    /// `https://…`: the entry names a destination, not a URL.
    #[error("network.allow entry {0:?} has a scheme; write the host alone (`example.com`)")]
    Scheme(String),
    /// `host/path`, `host?x`, `host#x`: paths are not matched.
    #[error("network.allow entry {0:?} has a path; write the host alone (`example.com`)")]
    Path(String),
    /// `user@host`.
    #[error("network.allow entry {0:?} has user information; write the host alone")]
    UserInfo(String),
    /// A `*` anywhere but a leading `*.`.
    #[error(
        "network.allow entry {0:?} has a wildcard that is not a leading `*.`; only `*.DOMAIN` is a pattern"
    )]
    Wildcard(String),
    /// An address without a port: an address entry allows one port exactly.
    #[error(
        "network.allow entry {0:?} is an address without a port; write `IP:PORT` (`[IPv6]:PORT`)"
    )]
    AddrWithoutPort(String),
    /// `*.1.2.3.4`.
    #[error("network.allow entry {0:?} puts a wildcard on an address")]
    WildcardAddr(String),
    /// A port that is not 1-65535.
    #[error("network.allow entry {entry:?}: port {port:?} is not a number from 1 to 65535")]
    Port {
        /// The entry.
        entry: String,
        /// The port text.
        port: String,
    },
    /// A name that is not a DNS name.
    #[error("network.allow entry {entry:?} is not a host name: {why}")]
    Name {
        /// The entry.
        entry: String,
        /// The rule it breaks.
        why: &'static str,
    },
}

/// The longest name accepted (RFC 1035's 253 characters of text).
const MAX_NAME: usize = 253;

/// Lowercases `name`, drops one trailing dot, and checks it is a DNS name: labels of 1-63
/// letters, digits, `-` and `_`, not starting or ending with `-`, at most 253 characters. An
/// all-digit dotted name that is not an address (`1.2.3`) is refused: resolvers read it as one.
pub fn normalize_name(name: &str) -> Result<String, &'static str> {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.len() > MAX_NAME {
        return Err("it is longer than 253 characters");
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err("it has an empty label");
        }
        if label.len() > 63 {
            return Err("a label is longer than 63 characters");
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err("it holds a character other than letters, digits, '-', '_' and '.'");
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err("a label starts or ends with '-'");
        }
    }
    if name
        .split('.')
        .all(|l| l.bytes().all(|b| b.is_ascii_digit()))
        || name
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("its last label is numeric, which resolvers read as an address");
    }
    Ok(name)
}

/// Splits `text` into host and port at a final `:PORT` (a bracketed IPv6 address keeps its
/// colons). `Ok((host, None))` when there is no port.
fn split_port(entry: &str, text: &str) -> Result<(String, Option<u16>), PatternError> {
    let parse_port = |p: &str| -> Result<u16, PatternError> {
        match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(PatternError::Port {
                entry: entry.to_owned(),
                port: p.to_owned(),
            }),
        }
    };
    if let Some(rest) = text.strip_prefix('[') {
        let Some((inside, after)) = rest.split_once(']') else {
            return Err(PatternError::Name {
                entry: entry.to_owned(),
                why: "a '[' is not closed",
            });
        };
        return match after.strip_prefix(':') {
            Some(p) => Ok((format!("[{inside}]"), Some(parse_port(p)?))),
            None if after.is_empty() => Ok((format!("[{inside}]"), None)),
            None => Err(PatternError::Name {
                entry: entry.to_owned(),
                why: "text follows the ']'",
            }),
        };
    }
    match text.matches(':').count() {
        0 => Ok((text.to_owned(), None)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host.to_owned(), Some(parse_port(port)?)))
        }
        // Several colons and no brackets: an IPv6 address without a port.
        _ => Err(PatternError::AddrWithoutPort(entry.to_owned())),
    }
}

impl Pattern {
    /// Parses one entry (surrounding whitespace is an error too: entries are exact).
    pub fn parse(entry: &str) -> Result<Pattern, PatternError> {
        let e = || entry.to_owned();
        if entry.is_empty() {
            return Err(PatternError::Empty(e()));
        }
        if entry == "*" || entry == "*:*" || entry.starts_with("*:") || entry == "*." {
            return Err(PatternError::BareWildcard(e()));
        }
        if entry.contains("://") {
            return Err(PatternError::Scheme(e()));
        }
        if entry.contains(['/', '?', '#']) {
            return Err(PatternError::Path(e()));
        }
        if entry.contains('@') {
            return Err(PatternError::UserInfo(e()));
        }
        if entry
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(PatternError::Name {
                entry: e(),
                why: "it holds whitespace or a control character",
            });
        }
        let (host, port) = split_port(entry, entry)?;
        if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip: std::net::Ipv6Addr = inner.parse().map_err(|_| PatternError::Name {
                entry: e(),
                why: "the bracketed text is not an IPv6 address",
            })?;
            return match port {
                Some(p) => Ok(Pattern::Addr(SocketAddr::new(IpAddr::V6(ip), p))),
                None => Err(PatternError::AddrWithoutPort(e())),
            };
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return match port {
                Some(p) => Ok(Pattern::Addr(SocketAddr::new(ip, p))),
                None => Err(PatternError::AddrWithoutPort(e())),
            };
        }
        let (below, name) = match host.strip_prefix("*.") {
            Some(domain) => (true, domain),
            None => (false, host.as_str()),
        };
        if name.contains('*') {
            return Err(PatternError::Wildcard(e()));
        }
        if below && name.parse::<IpAddr>().is_ok() {
            return Err(PatternError::WildcardAddr(e()));
        }
        let name = normalize_name(name).map_err(|why| PatternError::Name { entry: e(), why })?;
        Ok(if below {
            Pattern::Below { domain: name, port }
        } else {
            Pattern::Host { name, port }
        })
    }

    /// Whether this entry allows the host name `name` (normalized) on `port`.
    pub fn matches_name(&self, name: &str, port: u16) -> bool {
        let port_ok = |p: &Option<u16>| match p {
            Some(p) => *p == port,
            None => DEFAULT_PORTS.contains(&port),
        };
        match self {
            Pattern::Host { name: n, port: p } => n == name && port_ok(p),
            Pattern::Below { domain, port: p } => {
                name.len() > domain.len() + 1
                    && name.ends_with(domain.as_str())
                    && name.as_bytes()[name.len() - domain.len() - 1] == b'.'
                    && port_ok(p)
            }
            Pattern::Addr(_) => false,
        }
    }

    /// Whether this entry lists exactly `addr` (an IPv4-mapped IPv6 address is its IPv4 one).
    pub fn matches_addr(&self, addr: SocketAddr) -> bool {
        match self {
            Pattern::Addr(a) => canonical(*a) == canonical(addr),
            _ => false,
        }
    }
}

/// `addr` with an IPv4-mapped IPv6 address written as its IPv4 address.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Host { name, port: None } => write!(f, "{name}"),
            Pattern::Host {
                name,
                port: Some(p),
            } => write!(f, "{name}:{p}"),
            Pattern::Below { domain, port: None } => write!(f, "*.{domain}"),
            Pattern::Below {
                domain,
                port: Some(p),
            } => write!(f, "*.{domain}:{p}"),
            Pattern::Addr(a) => write!(f, "{a}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]
    use super::*;

    #[test]
    fn entries_parse_to_their_kind() {
        assert_eq!(
            Pattern::parse("Example.COM.").unwrap(),
            Pattern::Host {
                name: "example.com".into(),
                port: None
            }
        );
        assert_eq!(
            Pattern::parse("*.example.com:8443").unwrap(),
            Pattern::Below {
                domain: "example.com".into(),
                port: Some(8443)
            }
        );
        assert_eq!(
            Pattern::parse("127.0.0.1:8080").unwrap(),
            Pattern::Addr("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            Pattern::parse("[::1]:8080").unwrap(),
            Pattern::Addr("[::1]:8080".parse().unwrap())
        );
        for entry in ["localhost:3000", "a.test", "*.b.test", "[fe80::1]:80"] {
            assert_eq!(Pattern::parse(entry).unwrap().to_string(), entry);
        }
    }

    #[test]
    fn every_malformed_entry_is_refused_by_its_rule() {
        let cases: &[(&str, fn(&PatternError) -> bool)] = &[
            ("", |e| matches!(e, PatternError::Empty(_))),
            ("*", |e| matches!(e, PatternError::BareWildcard(_))),
            ("*:443", |e| matches!(e, PatternError::BareWildcard(_))),
            ("https://example.com", |e| {
                matches!(e, PatternError::Scheme(_))
            }),
            ("example.com/path", |e| matches!(e, PatternError::Path(_))),
            ("example.com?x", |e| matches!(e, PatternError::Path(_))),
            ("u@example.com", |e| matches!(e, PatternError::UserInfo(_))),
            ("a.*.example.com", |e| {
                matches!(e, PatternError::Wildcard(_))
            }),
            ("*example.com", |e| matches!(e, PatternError::Wildcard(_))),
            ("**.example.com", |e| matches!(e, PatternError::Wildcard(_))),
            ("127.0.0.1", |e| {
                matches!(e, PatternError::AddrWithoutPort(_))
            }),
            ("::1", |e| matches!(e, PatternError::AddrWithoutPort(_))),
            ("[::1]", |e| matches!(e, PatternError::AddrWithoutPort(_))),
            ("*.10.0.0.1", |e| matches!(e, PatternError::WildcardAddr(_))),
            ("example.com:0", |e| matches!(e, PatternError::Port { .. })),
            ("example.com:65536", |e| {
                matches!(e, PatternError::Port { .. })
            }),
            ("example.com:+80", |e| {
                matches!(e, PatternError::Port { .. })
            }),
            ("example.com:", |e| matches!(e, PatternError::Port { .. })),
            (" example.com", |e| matches!(e, PatternError::Name { .. })),
            ("exa mple.com", |e| matches!(e, PatternError::Name { .. })),
            ("a..b", |e| matches!(e, PatternError::Name { .. })),
            ("-a.test", |e| matches!(e, PatternError::Name { .. })),
            ("1.2.3", |e| matches!(e, PatternError::Name { .. })),
            ("[nope]:80", |e| matches!(e, PatternError::Name { .. })),
            ("[::1]x", |e| matches!(e, PatternError::Name { .. })),
            ("ex\u{e4}mple.test", |e| {
                matches!(e, PatternError::Name { .. })
            }),
        ];
        for (entry, is) in cases {
            let err = Pattern::parse(entry).unwrap_err();
            assert!(is(&err), "{entry:?}: {err:?}");
            assert!(
                err.to_string().contains(&format!("{entry:?}")),
                "the message names the entry: {err}"
            );
        }
        let long = format!("{}.test", "a".repeat(64));
        assert!(Pattern::parse(&long).is_err());
    }

    #[test]
    fn a_domain_wildcard_matches_names_below_it_and_not_the_domain_or_lookalikes() {
        let p = Pattern::parse("*.example.com").unwrap();
        assert!(p.matches_name("a.example.com", 443));
        assert!(p.matches_name("a.b.example.com", 80));
        assert!(!p.matches_name("example.com", 443));
        assert!(!p.matches_name("badexample.com", 443));
        assert!(!p.matches_name("a.example.com", 8080));
        let h = Pattern::parse("example.com:8080").unwrap();
        assert!(h.matches_name("example.com", 8080));
        assert!(!h.matches_name("example.com", 443));
        assert!(!h.matches_name("a.example.com", 8080));
    }

    #[test]
    fn an_address_entry_matches_its_ipv4_mapped_form() {
        let p = Pattern::parse("127.0.0.1:8080").unwrap();
        assert!(p.matches_addr("[::ffff:127.0.0.1]:8080".parse().unwrap()));
        assert!(p.matches_addr("127.0.0.1:8080".parse().unwrap()));
        assert!(!p.matches_addr("127.0.0.1:8081".parse().unwrap()));
        assert!(!p.matches_addr("127.0.0.2:8080".parse().unwrap()));
        assert!(!p.matches_name("127.0.0.1", 8080));
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics_and_a_parsed_entry_reparses_to_itself(s in "\\PC{0,40}") {
            if let Ok(p) = Pattern::parse(&s) {
                proptest::prop_assert_eq!(Pattern::parse(&p.to_string()).unwrap(), p);
            }
        }
    }
}
