//! Address classes: which resolved addresses the proxy refuses unless listed exactly.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The class of an address, as far as the proxy's decision goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddrClass {
    /// Anything not below: reachable on the public internet.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, and the deprecated site-local `fec0::/10`.
    Private,
    /// `169.254/16` (the cloud metadata address `169.254.169.254` among them), `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10`.
    Cgnat,
    /// Unique-local IPv6, `fc00::/7`.
    UniqueLocal,
    /// `224/4`, `255.255.255.255`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// Special-purpose and unroutable: `192.0.0/24`, the documentation ranges, `198.18/15`,
    /// `240/4`, `2001:db8::/32`, `100::/64`, the remaining reserved IPv6 prefixes.
    Reserved,
}

impl AddrClass {
    /// Whether the proxy connects to an address of this class without an exact `IP:PORT` entry.
    pub fn reachable_by_name(self) -> bool {
        self == AddrClass::Public
    }
}

impl fmt::Display for AddrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddrClass::Public => "public",
            AddrClass::Loopback => "loopback",
            AddrClass::Private => "private",
            AddrClass::LinkLocal => "link-local (the cloud metadata range)",
            AddrClass::Cgnat => "carrier-grade NAT",
            AddrClass::UniqueLocal => "unique-local",
            AddrClass::Multicast => "multicast or broadcast",
            AddrClass::Unspecified => "unspecified",
            AddrClass::Reserved => "reserved",
        })
    }
}

/// The class of `ip`. An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) has the class of the
/// IPv4 address it reaches.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => AddrClass::Unspecified,
        (127, _, _) => AddrClass::Loopback,
        (10, _, _) | (192, 168, _) => AddrClass::Private,
        (172, b, _) if (16..32).contains(&b) => AddrClass::Private,
        (169, 254, _) => AddrClass::LinkLocal,
        (100, b, _) if (64..128).contains(&b) => AddrClass::Cgnat,
        _ if ip.is_broadcast() => AddrClass::Multicast,
        (224..=239, _, _) => AddrClass::Multicast,
        (240..=255, _, _) => AddrClass::Reserved,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddrClass::Reserved,
        (198, 18 | 19, _) => AddrClass::Reserved,
        _ => AddrClass::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if ip.is_unspecified() {
        return AddrClass::Unspecified;
    }
    if ip.is_loopback() {
        return AddrClass::Loopback;
    }
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    // IPv4-compatible (deprecated, ::a.b.c.d) and NAT64's well-known prefix carry an IPv4
    // address in their last 32 bits; 6to4 in bits 16-47.
    if s[..6] == [0; 6] || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return classify_v4(embedded(s[1], s[2]));
    }
    match s[0] {
        x if x & 0xff00 == 0xff00 => AddrClass::Multicast,
        x if x & 0xffc0 == 0xfe80 => AddrClass::LinkLocal,
        x if x & 0xffc0 == 0xfec0 => AddrClass::Private,
        x if x & 0xfe00 == 0xfc00 => AddrClass::UniqueLocal,
        _ if s[0] == 0x2001 && s[1] == 0x0db8 => AddrClass::Reserved,
        _ if s[..4] == [0x100, 0, 0, 0] => AddrClass::Reserved,
        // Outside 2000::/3 nothing is allocated for unicast.
        x if x & 0xe000 != 0x2000 => AddrClass::Reserved,
        _ => AddrClass::Public,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]
    use super::*;

    fn class(s: &str) -> AddrClass {
        classify(s.parse().unwrap())
    }

    #[test]
    fn every_refused_range_is_refused_at_both_ends() {
        use AddrClass::*;
        let cases = [
            ("0.0.0.0", Unspecified),
            ("0.255.255.255", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.0.0.0", Private),
            ("10.255.255.255", Private),
            ("172.16.0.0", Private),
            ("172.31.255.255", Private),
            ("192.168.0.1", Private),
            ("192.168.255.255", Private),
            ("169.254.169.254", LinkLocal),
            ("169.254.0.0", LinkLocal),
            ("100.64.0.0", Cgnat),
            ("100.127.255.255", Cgnat),
            ("224.0.0.1", Multicast),
            ("239.255.255.255", Multicast),
            ("255.255.255.255", Multicast),
            ("240.0.0.1", Reserved),
            ("192.0.2.1", Reserved),
            ("198.51.100.7", Reserved),
            ("203.0.113.9", Reserved),
            ("198.18.0.1", Reserved),
            ("::", Unspecified),
            ("::1", Loopback),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", Private),
            ("fc00::1", UniqueLocal),
            ("fdff:ffff::1", UniqueLocal),
            ("ff02::1", Multicast),
            ("2001:db8::1", Reserved),
            ("100::1", Reserved),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:10.1.2.3", Private),
            ("::ffff:0.0.0.0", Unspecified),
            ("::ffff:100.64.0.1", Cgnat),
            ("::127.0.0.1", Loopback),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::7f00:1", Loopback),
            ("2002:7f00:0001::1", Loopback),
            ("2002:c0a8:0101::1", Private),
        ];
        for (ip, want) in cases {
            assert_eq!(class(ip), want, "{ip}");
            assert!(!want.reachable_by_name(), "{ip}");
        }
    }

    #[test]
    fn public_addresses_are_public_just_outside_each_range() {
        for ip in [
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "192.167.255.255",
            "223.255.255.255",
            "2606:4700::1",
            "::ffff:8.8.4.4",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert_eq!(class(ip), AddrClass::Public, "{ip}");
        }
    }
}
