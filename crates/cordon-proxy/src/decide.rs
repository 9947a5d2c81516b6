//! The verdict for one destination: the allowlist, the resolver, the addresses to connect to.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use crate::addr::classify;
use crate::pattern::{Pattern, PatternError, canonical};

/// A requested host: a name, or an address written as one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
    /// An address literal.
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// What a tool asked the proxy to reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    /// The host.
    pub host: Host,
    /// The port.
    pub port: u16,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Resolves a name to addresses. The launcher implements it with the host's resolver; tests
/// give fixed answers.
pub trait Resolver {
    /// The addresses of `name` (lowercase), or why there are none.
    fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, String>;
}

/// A destination the proxy may connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The addresses, in the resolver's order, each checked: connect to these and nothing else.
    pub addrs: Vec<SocketAddr>,
    /// The entry that allowed the name (or the address).
    pub rule: String,
    /// Addresses the name resolved to that were dropped, each with the reason.
    pub dropped: Vec<String>,
}

/// A refused destination: the rule in words, for the violation and the answer to the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Why, naming the entry or the address class, and the way out.
    pub rule: String,
}

/// The parsed `network.allow` list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allowlist {
    patterns: Vec<Pattern>,
}

impl Allowlist {
    /// Parses every entry; the first malformed one is the error.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Allowlist, PatternError> {
        let patterns = entries
            .iter()
            .map(|e| Pattern::parse(e.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Allowlist { patterns })
    }

    /// The entries.
    pub fn patterns(&self) -> &[Pattern] {
        &self.patterns
    }

    fn listed_addr(&self, addr: SocketAddr) -> Option<&Pattern> {
        self.patterns.iter().find(|p| p.matches_addr(addr))
    }

    /// The verdict for `target`. An address literal is allowed only by an exact `IP:PORT`
    /// entry. A name must match a name entry; it is then resolved through `resolver`, and each
    /// address that is not public (loopback, private, link-local, ...) is dropped unless
    /// that exact `IP:PORT` is listed. No address left: refused.
    pub fn decide(&self, target: &Target, resolver: &dyn Resolver) -> Result<Allowed, Refusal> {
        let port = target.port;
        let name = match &target.host {
            Host::Ip(ip) => {
                let addr = canonical(SocketAddr::new(*ip, port));
                return match self.listed_addr(addr) {
                    Some(p) => Ok(Allowed {
                        addrs: vec![addr],
                        rule: format!("network.allow entry {p}"),
                        dropped: Vec::new(),
                    }),
                    None => Err(Refusal {
                        rule: format!(
                            "{target} is not in network.allow (an address is allowed only by its exact IP:PORT entry)"
                        ),
                    }),
                };
            }
            Host::Name(n) => n,
        };
        let Some(pattern) = self.patterns.iter().find(|p| p.matches_name(name, port)) else {
            return Err(Refusal {
                rule: format!("{target} is not in network.allow"),
            });
        };
        let ips = resolver.resolve(name).map_err(|why| Refusal {
            rule: format!("{name} (allowed by {pattern}) could not be resolved: {why}"),
        })?;
        let mut addrs = Vec::new();
        let mut dropped = Vec::new();
        for ip in ips {
            let addr = canonical(SocketAddr::new(ip, port));
            let class = classify(addr.ip());
            if class.reachable_by_name() || self.listed_addr(addr).is_some() {
                if !addrs.contains(&addr) {
                    addrs.push(addr);
                }
            } else {
                dropped.push(format!("{} is {class}", addr.ip()));
            }
        }
        if addrs.is_empty() {
            let why = if dropped.is_empty() {
                "it resolved to no address".to_owned()
            } else {
                format!(
                    "it resolved only to addresses cordon refuses unless listed as IP:PORT ({})",
                    dropped.join(", ")
                )
            };
            return Err(Refusal {
                rule: format!("{target} (allowed by {pattern}): {why}"),
            });
        }
        Ok(Allowed {
            addrs,
            rule: format!("network.allow entry {pattern}"),
            dropped,
        })
    }
}

/// Whether a tunnel to `target` carrying a TLS ClientHello for `sni` is allowed: a named
/// host's server name must be that host; an address's tunnel must send no server name (clients
/// send none for an address). `Err` is the rule broken.
pub fn check_server_name(target: &Target, sni: Option<&str>) -> Result<(), Refusal> {
    match (&target.host, sni) {
        (Host::Name(n), Some(s)) if s.strip_suffix('.').unwrap_or(s) == n => Ok(()),
        (Host::Ip(_), None) => Ok(()),
        (_, None) => Err(Refusal {
            rule: format!(
                "the TLS ClientHello through the tunnel to {target} names no server; it must name {}",
                target.host
            ),
        }),
        (_, Some(s)) => Err(Refusal {
            rule: format!(
                "the TLS ClientHello through the tunnel to {target} asks for the server {s:?}; it must be the host the tunnel was opened to"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]
    use super::*;
    use std::collections::BTreeMap;

    struct Fake(BTreeMap<&'static str, Vec<&'static str>>);

    impl Resolver for Fake {
        fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, String> {
            self.0
                .get(name)
                .map(|v| v.iter().map(|a| a.parse().unwrap()).collect())
                .ok_or_else(|| "no such name".into())
        }
    }

    fn fake() -> Fake {
        Fake(BTreeMap::from([
            ("pkg.example.com", vec!["93.184.215.14", "2606:2800:21f::1"]),
            ("localhost", vec!["127.0.0.1", "::1"]),
            ("meta.example.com", vec!["169.254.169.254"]),
            ("mapped.example.com", vec!["::ffff:127.0.0.1"]),
            ("mixed.example.com", vec!["10.0.0.5", "93.184.215.15"]),
            (
                "cgnat.example.com",
                vec!["100.64.1.1", "fd00::1", "ff02::1", "0.0.0.0"],
            ),
        ]))
    }

    fn t(host: &str, port: u16) -> Target {
        Target {
            host: crate::request::parse_host(host).unwrap(),
            port,
        }
    }

    fn list(entries: &[&str]) -> Allowlist {
        Allowlist::parse(entries).unwrap()
    }

    #[test]
    fn a_listed_public_name_is_allowed_with_its_checked_addresses() {
        let a = list(&["pkg.example.com"])
            .decide(&t("pkg.example.com", 443), &fake())
            .unwrap();
        assert_eq!(
            a.addrs,
            ["93.184.215.14:443", "[2606:2800:21f::1]:443"].map(|s| s.parse().unwrap())
        );
        assert_eq!(a.rule, "network.allow entry pkg.example.com");
        let sub = list(&["*.example.com"]).decide(&t("pkg.example.com", 80), &fake());
        assert!(sub.is_ok());
    }

    #[test]
    fn names_off_the_list_and_ports_off_the_entry_are_refused() {
        let l = list(&["pkg.example.com", "*.example.com:8443"]);
        let r = l.decide(&t("other.test", 443), &fake()).unwrap_err();
        assert_eq!(r.rule, "other.test:443 is not in network.allow");
        assert!(l.decide(&t("pkg.example.com", 22), &fake()).is_err());
        assert!(l.decide(&t("example.com", 8443), &fake()).is_err());
        assert!(l.decide(&t("pkg.example.com", 8443), &fake()).is_ok());
    }

    #[test]
    fn a_listed_name_resolving_to_a_refused_class_is_refused_unless_its_address_is_listed() {
        let l = list(&[
            "localhost:8080",
            "meta.example.com",
            "mapped.example.com",
            "cgnat.example.com",
        ]);
        let r = l.decide(&t("localhost", 8080), &fake()).unwrap_err();
        assert!(r.rule.contains("127.0.0.1 is loopback"), "{}", r.rule);
        assert!(r.rule.contains("::1 is loopback"), "{}", r.rule);
        let r = l.decide(&t("meta.example.com", 80), &fake()).unwrap_err();
        assert!(
            r.rule.contains("169.254.169.254 is link-local"),
            "{}",
            r.rule
        );
        let r = l.decide(&t("mapped.example.com", 80), &fake()).unwrap_err();
        assert!(r.rule.contains("127.0.0.1 is loopback"), "{}", r.rule);
        let r = l.decide(&t("cgnat.example.com", 443), &fake()).unwrap_err();
        for why in ["carrier-grade", "unique-local", "multicast", "unspecified"] {
            assert!(r.rule.contains(why), "{}", r.rule);
        }
        // Listing the exact address allows that one address, not the other loopback one.
        let l = list(&["localhost:8080", "127.0.0.1:8080"]);
        let a = l.decide(&t("localhost", 8080), &fake()).unwrap();
        assert_eq!(a.addrs, vec!["127.0.0.1:8080".parse().unwrap()]);
        assert_eq!(a.dropped, vec!["::1 is loopback".to_owned()]);
        // And not on another port.
        let l = list(&["localhost", "127.0.0.1:8080"]);
        assert!(l.decide(&t("localhost", 80), &fake()).is_err());
    }

    #[test]
    fn refused_addresses_are_dropped_from_a_mixed_answer() {
        let a = list(&["mixed.example.com"])
            .decide(&t("mixed.example.com", 443), &fake())
            .unwrap();
        assert_eq!(a.addrs, vec!["93.184.215.15:443".parse().unwrap()]);
        assert_eq!(a.dropped, vec!["10.0.0.5 is private".to_owned()]);
    }

    #[test]
    fn an_address_is_allowed_only_by_its_exact_entry() {
        let l = list(&["127.0.0.1:8080", "[::1]:9000", "pkg.example.com"]);
        assert!(l.decide(&t("127.0.0.1", 8080), &fake()).is_ok());
        assert!(l.decide(&t("[::ffff:127.0.0.1]", 8080), &fake()).is_ok());
        assert!(l.decide(&t("[::1]", 9000), &fake()).is_ok());
        assert!(l.decide(&t("127.0.0.1", 8081), &fake()).is_err());
        assert!(
            l.decide(&t("93.184.215.14", 443), &fake()).is_err(),
            "a public address needs its entry too"
        );
        assert!(l.decide(&t("169.254.169.254", 80), &fake()).is_err());
    }

    #[test]
    fn an_unresolvable_listed_name_is_refused_with_the_reason() {
        let r = list(&["gone.invalid"])
            .decide(&t("gone.invalid", 443), &fake())
            .unwrap_err();
        assert!(
            r.rule.contains("could not be resolved: no such name"),
            "{}",
            r.rule
        );
    }

    #[test]
    fn the_server_name_must_be_the_tunnel_host() {
        assert!(check_server_name(&t("a.test", 443), Some("a.test")).is_ok());
        assert!(check_server_name(&t("a.test", 443), Some("a.test.")).is_ok());
        assert!(check_server_name(&t("a.test", 443), Some("b.test")).is_err());
        assert!(check_server_name(&t("a.test", 443), None).is_err());
        assert!(check_server_name(&t("127.0.0.1", 443), None).is_ok());
        assert!(check_server_name(&t("127.0.0.1", 443), Some("a.test")).is_err());
    }
}
