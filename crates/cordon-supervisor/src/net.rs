//! Addresses, as plain data: what a raw socket address says, which destinations the rules let
//! a jail without a network namespace reach, and which sockets the host's tables show bound
//! at an address.
//!
//! The jail may reach only sockets it bound itself: the supervisor performs every bind,
//! connect and addressed send, so it knows the inode of every socket the jail bound (and the
//! device and inode of every socket file it made), and before a connect or a send it reads the
//! kernel's tables for the socket bound at the destination. A host listener at the same
//! address is never one of them.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// What a raw socket address names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Address {
    /// `AF_UNSPEC`: for `connect`, dissolving a datagram socket's association.
    Unspec,
    /// IPv4 or IPv6 (an IPv4-mapped IPv6 address stays IPv6 here).
    Inet(SocketAddr),
    /// A Unix socket file.
    UnixPath(Vec<u8>),
    /// A Unix abstract name (without its leading NUL).
    UnixAbstract(Vec<u8>),
    /// A Unix address with no name (`bind` picks an abstract one).
    UnixUnnamed,
    /// Any other family.
    Other(u16),
}

const AF_UNSPEC: u16 = 0;
const AF_UNIX: u16 = 1;
const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;

/// The longest raw address read from a caller (`sockaddr_storage`).
pub(crate) const MAX_ADDRESS: usize = 128;

/// Reads a raw socket address; `EINVAL` when it is too short for its family.
pub(crate) fn parse(raw: &[u8]) -> Result<Address, i32> {
    if raw.len() < 2 {
        return Err(libc::EINVAL);
    }
    let family = u16::from_ne_bytes([raw[0], raw[1]]);
    match family {
        AF_UNSPEC => Ok(Address::Unspec),
        AF_INET => {
            if raw.len() < 16 {
                return Err(libc::EINVAL);
            }
            let port = u16::from_be_bytes([raw[2], raw[3]]);
            let ip = Ipv4Addr::new(raw[4], raw[5], raw[6], raw[7]);
            Ok(Address::Inet(SocketAddr::new(IpAddr::V4(ip), port)))
        }
        AF_INET6 => {
            if raw.len() < 24 {
                return Err(libc::EINVAL);
            }
            let port = u16::from_be_bytes([raw[2], raw[3]]);
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&raw[8..24]);
            Ok(Address::Inet(SocketAddr::new(
                IpAddr::V6(Ipv6Addr::from(octets)),
                port,
            )))
        }
        AF_UNIX => {
            let path = &raw[2..];
            match path.first() {
                None => Ok(Address::UnixUnnamed),
                Some(0) => Ok(Address::UnixAbstract(path[1..].to_vec())),
                Some(_) => {
                    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
                    Ok(Address::UnixPath(path[..end].to_vec()))
                }
            }
        }
        other => Ok(Address::Other(other)),
    }
}

/// The raw `sockaddr_in` or `sockaddr_in6` of `addr` (flow info and scope zero).
pub(crate) fn encode(addr: SocketAddr) -> Vec<u8> {
    let port = addr.port().to_be_bytes();
    match addr.ip() {
        IpAddr::V4(ip) => {
            let mut raw = vec![0u8; 16];
            raw[..2].copy_from_slice(&AF_INET.to_ne_bytes());
            raw[2..4].copy_from_slice(&port);
            raw[4..8].copy_from_slice(&ip.octets());
            raw
        }
        IpAddr::V6(ip) => {
            let mut raw = vec![0u8; 28];
            raw[..2].copy_from_slice(&AF_INET6.to_ne_bytes());
            raw[2..4].copy_from_slice(&port);
            raw[8..24].copy_from_slice(&ip.octets());
            raw
        }
    }
}

/// A raw `sockaddr_un` naming the socket file at `path` (at most 107 bytes).
pub(crate) fn unix_path(path: &[u8]) -> Result<Vec<u8>, i32> {
    if path.len() > 107 {
        return Err(libc::ENAMETOOLONG);
    }
    Ok([&AF_UNIX.to_ne_bytes()[..], path, &[0]].concat())
}

/// `ip` with an IPv4-mapped IPv6 address read as the IPv4 one.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// Where a jail's `bind` to `addr` goes: a loopback address as asked, the unspecified address
/// (every interface) made loopback, anything else refused (`None`): without a network
/// namespace a wildcard bind would listen on the host's network.
pub(crate) fn bind_target(addr: SocketAddr) -> Option<SocketAddr> {
    let ip = match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_unspecified()) => {
            IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped())
        }
        ip if canonical(ip).is_loopback() => ip,
        _ => return None,
    };
    Some(SocketAddr::new(ip, addr.port()))
}

/// The sockets the jail made itself, as the supervisor saw them bound, connected or used to
/// send: socket inodes, and the device and inode of each socket file it bound.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    pub(crate) sockets: HashSet<u64>,
    pub(crate) files: HashSet<(u64, u64)>,
}

/// Which protocol table a destination is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    /// `/proc/net/tcp{,6}`, listeners only (a connect reaches a listener).
    Tcp,
    /// `/proc/net/udp{,6}`, every socket bound there.
    Udp,
}

/// The TCP state `LISTEN` in `/proc/net/tcp`.
const TCP_LISTEN: &str = "0A";

/// Parses a `/proc/net/{tcp,udp}` local address: `0100007F:1F90` (IPv4, the word in host
/// order) or 32 hex digits (IPv6, four words in host order) and a port.
fn table_address(field: &str) -> Option<(IpAddr, u16)> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::swap_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?.to_be_bytes())),
        32 => {
            let mut octets = [0u8; 16];
            for i in 0..4 {
                let w = word(ip.get(i * 8..i * 8 + 8)?)?;
                octets[i * 4..i * 4 + 4].copy_from_slice(&w.to_be_bytes());
            }
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        _ => return None,
    };
    Some((ip, port))
}

/// One socket of the kernel's tables: its local address and port, and its inode.
pub(crate) type Bound = (IpAddr, u16, u64);

/// The inodes of the sockets among `sockets` that a packet or connection to `dest` could reach:
/// bound at its address (IPv4-mapped read as IPv4) or at the unspecified one, on its port.
pub(crate) fn reaching(sockets: &[Bound], dest: SocketAddr) -> Vec<u64> {
    let want = canonical(dest.ip());
    sockets
        .iter()
        .filter(|(ip, port, _)| {
            let ip = canonical(*ip);
            *port == dest.port() && (ip == want || ip.is_unspecified())
        })
        .map(|(_, _, inode)| *inode)
        .collect()
}

/// The sockets of one `/proc/net` inet table (for TCP, listeners only): the fallback where the
/// kernel's socket diagnostics are missing. Slow on a busy host: the table lists every
/// connection, those in `TIME_WAIT` included.
pub(crate) fn table_sockets(table: &str, proto: Proto) -> Vec<Bound> {
    let mut out = Vec::new();
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(state), Some(inode)) = (fields.get(1), fields.get(3), fields.get(9))
        else {
            continue;
        };
        let Some((ip, port)) = table_address(local) else {
            continue;
        };
        if proto == Proto::Tcp && *state != TCP_LISTEN {
            continue;
        }
        if let Ok(inode) = inode.parse() {
            out.push((ip, port, inode));
        }
    }
    out
}

/// `NLMSG_ERROR` and `NLMSG_DONE`.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;

/// The sockets in a `SOCK_DIAG_BY_FAMILY` dump's answer (netlink messages, each an
/// `inet_diag_msg`); `Err(errno)` for an error message.
pub(crate) fn diag_sockets(answer: &[u8]) -> Result<(Vec<Bound>, bool), i32> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= answer.len() {
        let word =
            |i: usize| u32::from_ne_bytes([answer[i], answer[i + 1], answer[i + 2], answer[i + 3]]);
        let len = word(at) as usize;
        let kind = u16::from_ne_bytes([answer[at + 4], answer[at + 5]]);
        if len < 16 || at + len > answer.len() {
            return Err(libc::EPROTO);
        }
        match kind {
            NLMSG_DONE => return Ok((out, true)),
            NLMSG_ERROR => {
                let errno = answer.get(at + 16..at + 20).map_or(libc::EPROTO, |e| {
                    -i32::from_ne_bytes([e[0], e[1], e[2], e[3]])
                });
                return Err(errno);
            }
            _ if len >= 16 + 72 => {
                let m = &answer[at + 16..at + len];
                let port = u16::from_be_bytes([m[4], m[5]]);
                let ip = match m[0] {
                    2 => IpAddr::V4(Ipv4Addr::new(m[8], m[9], m[10], m[11])),
                    _ => {
                        let mut octets = [0u8; 16];
                        octets.copy_from_slice(&m[8..24]);
                        IpAddr::V6(Ipv6Addr::from(octets))
                    }
                };
                let inode = u32::from_ne_bytes([m[68], m[69], m[70], m[71]]);
                out.push((ip, port, u64::from(inode)));
            }
            _ => {}
        }
        at += (len + 3) & !3;
    }
    Ok((out, false))
}

/// The inodes of the sockets bound at the abstract Unix name `name` in `/proc/net/unix` (which
/// shows the name after an `@`, each NUL in it as `@` too).
pub(crate) fn abstract_bound(table: &[u8], name: &[u8]) -> Vec<u64> {
    let shown: Vec<u8> = std::iter::once(b'@')
        .chain(name.iter().map(|b| if *b == 0 { b'@' } else { *b }))
        .collect();
    let mut out = Vec::new();
    for line in table.split(|b| *b == b'\n').skip(1) {
        // Num RefCount Protocol Flags Type St Inode Path: the path is the rest of the line.
        let mut rest = line;
        let mut fields = Vec::new();
        for _ in 0..7 {
            let start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            let end = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = &rest[end..];
        }
        let path = rest.strip_prefix(b" ").unwrap_or(rest);
        if path == shown.as_slice()
            && let Some(inode) = std::str::from_utf8(fields[6])
                .ok()
                .and_then(|s| s.parse().ok())
        {
            out.push(inode);
        }
    }
    out
}

/// Whether a destination whose bound sockets are `found` is the jail's own: at least one, and
/// every one the jail's (a host socket sharing the port, by `SO_REUSEPORT` or a wildcard,
/// could take the packet).
pub(crate) fn all_owned(found: &[u64], owned: &HashSet<u64>) -> bool {
    !found.is_empty() && found.iter().all(|i| owned.contains(i))
}

/// How an address shows in a refusal.
pub(crate) fn shown(addr: &Address) -> String {
    match addr {
        Address::Unspec => "AF_UNSPEC".to_owned(),
        Address::Inet(a) => a.to_string(),
        Address::UnixPath(p) => String::from_utf8_lossy(p).into_owned(),
        Address::UnixAbstract(n) => format!("@{}", String::from_utf8_lossy(n)),
        Address::UnixUnnamed => "an unnamed Unix address".to_owned(),
        Address::Other(f) => format!("an address of family {f}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_parse() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let v6: SocketAddr = "[::1]:53".parse().unwrap();
        assert_eq!(parse(&encode(v4)), Ok(Address::Inet(v4)));
        assert_eq!(parse(&encode(v6)), Ok(Address::Inet(v6)));
        assert_eq!(parse(&[2, 0, 0]), Err(libc::EINVAL));
        assert_eq!(
            parse(&unix_path(b"/tmp/x.sock").unwrap()),
            Ok(Address::UnixPath(b"/tmp/x.sock".to_vec()))
        );
        assert_eq!(
            parse(&[1, 0, 0, b'a', 0, b'b']),
            Ok(Address::UnixAbstract(b"a\0b".to_vec()))
        );
        assert_eq!(parse(&[1, 0]), Ok(Address::UnixUnnamed));
        assert_eq!(parse(&[0, 0]), Ok(Address::Unspec));
        assert_eq!(parse(&[16, 0, 0, 0]), Ok(Address::Other(16)));
        assert_eq!(unix_path(&[b'a'; 108]), Err(libc::ENAMETOOLONG));
    }

    #[test]
    fn binds_stay_on_loopback() {
        let t = |s: &str| bind_target(s.parse().unwrap()).map(|a| a.to_string());
        assert_eq!(t("0.0.0.0:80").as_deref(), Some("127.0.0.1:80"));
        assert_eq!(t("[::]:0").as_deref(), Some("[::1]:0"));
        assert_eq!(
            t("[::ffff:0.0.0.0]:5").as_deref(),
            Some("[::ffff:127.0.0.1]:5")
        );
        assert_eq!(t("127.0.0.2:9").as_deref(), Some("127.0.0.2:9"));
        assert_eq!(
            t("[::ffff:127.0.0.1]:9").as_deref(),
            Some("[::ffff:127.0.0.1]:9")
        );
        assert_eq!(t("192.0.2.1:80"), None);
        assert_eq!(t("[2001:db8::1]:80"), None);
    }

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0
   3: 0200007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
";

    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5555 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6666 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn tables_show_who_is_bound_where() {
        let at = |t: &str, p, s: &str| reaching(&table_sockets(t, p), s.parse().unwrap());
        // The listener at 127.0.0.1:8080, not the connected socket on that port.
        assert_eq!(at(TCP, Proto::Tcp, "127.0.0.1:8080"), vec![1111]);
        // A wildcard listener takes loopback connections too.
        assert_eq!(at(TCP, Proto::Tcp, "127.0.0.1:80"), vec![2222]);
        assert_eq!(at(TCP, Proto::Tcp, "127.0.0.2:8080"), vec![4444]);
        assert_eq!(at(TCP, Proto::Udp, "127.0.0.1:8080"), vec![1111, 3333]);
        assert!(at(TCP, Proto::Tcp, "127.0.0.1:81").is_empty());
        assert_eq!(at(TCP6, Proto::Tcp, "[::1]:53"), vec![5555]);
        // An IPv4-mapped listener is found for the IPv4 destination, and the other way round.
        assert_eq!(at(TCP6, Proto::Tcp, "127.0.0.1:8080"), vec![6666]);
        assert_eq!(at(TCP, Proto::Tcp, "[::ffff:127.0.0.1]:8080"), vec![1111]);
    }

    /// One `inet_diag_msg` in its netlink header, as the kernel answers a dump.
    fn diag_message(family: u8, port: u16, addr: &[u8], inode: u32) -> Vec<u8> {
        let mut m = vec![0u8; 16 + 72];
        m[..4].copy_from_slice(&(88u32).to_ne_bytes());
        m[4..6].copy_from_slice(&20u16.to_ne_bytes());
        m[16] = family;
        m[16 + 4..16 + 6].copy_from_slice(&port.to_be_bytes());
        m[16 + 8..16 + 8 + addr.len()].copy_from_slice(addr);
        m[16 + 68..16 + 72].copy_from_slice(&inode.to_ne_bytes());
        m
    }

    #[test]
    fn a_socket_diagnostics_dump_reads_as_the_table_does() {
        let mut answer = diag_message(2, 8080, &[127, 0, 0, 1], 1111);
        let mut loopback6 = [0u8; 16];
        loopback6[15] = 1;
        answer.extend(diag_message(10, 53, &loopback6, 5555));
        let mut done = vec![0u8; 20];
        done[..4].copy_from_slice(&20u32.to_ne_bytes());
        done[4..6].copy_from_slice(&NLMSG_DONE.to_ne_bytes());
        answer.extend(&done);
        let (sockets, finished) = diag_sockets(&answer).unwrap();
        assert!(finished);
        assert_eq!(
            reaching(&sockets, "127.0.0.1:8080".parse().unwrap()),
            vec![1111]
        );
        assert_eq!(reaching(&sockets, "[::1]:53".parse().unwrap()), vec![5555]);
        assert!(reaching(&sockets, "127.0.0.1:53".parse().unwrap()).is_empty());
        // Without its end the dump is unfinished; an error message is the kernel's errno.
        assert!(!diag_sockets(&answer[..88]).unwrap().1);
        let mut error = vec![0u8; 20];
        error[..4].copy_from_slice(&20u32.to_ne_bytes());
        error[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        error[16..20].copy_from_slice(&(-libc::ENOENT).to_ne_bytes());
        assert_eq!(diag_sockets(&error), Err(libc::ENOENT));
        assert_eq!(
            diag_sockets(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(libc::EPROTO)
        );
    }

    #[test]
    fn abstract_names_are_found_by_their_shown_form() {
        let table = b"Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 7777 @cordon-test
0000000000000000: 00000002 00000000 00010000 0001 01 8888 @with@nul
0000000000000000: 00000002 00000000 00010000 0001 01 9999 /run/some.sock
0000000000000000: 00000002 00000000 00000000 0001 03 1234
";
        assert_eq!(abstract_bound(table, b"cordon-test"), vec![7777]);
        assert_eq!(abstract_bound(table, b"with\0nul"), vec![8888]);
        assert!(abstract_bound(table, b"cordon").is_empty());
    }

    #[test]
    fn a_destination_is_owned_only_when_every_socket_there_is() {
        let owned: HashSet<u64> = [1, 2].into_iter().collect();
        assert!(all_owned(&[1], &owned));
        assert!(all_owned(&[1, 2], &owned));
        assert!(!all_owned(&[1, 3], &owned));
        assert!(!all_owned(&[], &owned));
    }
}
