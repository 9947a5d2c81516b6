//! `socket(2)` when the network is denied.

use super::{Action, Cmp, CmpOp, Condition, Denial, eperm};

pub(super) const SOCKET_DENIAL: Denial = eperm(
    "socket",
    "network denied: no socket of any domain, AF_UNIX included, since a host socket file stays \
     connectable through a read-only bind; socketpair(2) stays allowed",
);

const AF_UNIX: u32 = 1;
const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
const AF_NETLINK: u32 = 16;
const NETLINK_ROUTE: u32 = 0;
const SOCK_TYPE_MASK: u32 = 0xf;
const SOCK_RAW: u32 = 3;
const SOCK_PACKET: u32 = 10;

const fn socket_when(cmps: &'static [Cmp], why: &'static str) -> Denial {
    Denial {
        syscall: "socket",
        condition: Condition::All(cmps),
        action: Action::Eperm,
        why,
    }
}

const fn cmp(arg: u8, op: CmpOp, value: u32, name: &'static str) -> Cmp {
    Cmp {
        arg,
        op,
        value,
        name,
    }
}

const OWN_LOOPBACK: &str = "network denied, in a network namespace of the jail's own (bubblewrap's, \
     holding only `lo`): IPv4 and IPv6 reach only the jail's loopback, so local test servers \
     work; AF_UNIX reaches the namespace's own abstract sockets and the socket files the jail \
     sees, where every host socket listening at launch is masked (the plan's host_sockets); \
     every other domain stays refused";

/// Network denied, with a network namespace of the jail's own: `socket(2)` only for IPv4 and
/// IPv6 (not raw, not packet) and route netlink, which reach nothing but that namespace, and
/// `AF_UNIX`: abstract names are per network namespace, and the host's listening socket files
/// are masked in bubblewrap's view (`cordon_policy::Plan::host_sockets`).
pub(super) const LOOPBACK_SOCKET_DENIALS: [Denial; 6] = [
    socket_when(
        &[
            cmp(0, CmpOp::Ne, AF_UNIX, "AF_UNIX"),
            cmp(0, CmpOp::Ne, AF_INET, "AF_INET"),
            cmp(0, CmpOp::Ne, AF_INET6, "AF_INET6"),
            cmp(0, CmpOp::Ne, AF_NETLINK, "AF_NETLINK"),
        ],
        OWN_LOOPBACK,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_NETLINK, "AF_NETLINK"),
            cmp(2, CmpOp::Ne, NETLINK_ROUTE, "NETLINK_ROUTE"),
        ],
        "only route netlink, which libc's getaddrinfo reads the jail's addresses through; the \
         other netlink families reach kernel subsystems beyond the namespace",
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET, "AF_INET"),
            cmp(1, CmpOp::MaskedEq(SOCK_TYPE_MASK), SOCK_RAW, "SOCK_RAW"),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET6, "AF_INET6"),
            cmp(1, CmpOp::MaskedEq(SOCK_TYPE_MASK), SOCK_RAW, "SOCK_RAW"),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET, "AF_INET"),
            cmp(
                1,
                CmpOp::MaskedEq(SOCK_TYPE_MASK),
                SOCK_PACKET,
                "SOCK_PACKET",
            ),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET6, "AF_INET6"),
            cmp(
                1,
                CmpOp::MaskedEq(SOCK_TYPE_MASK),
                SOCK_PACKET,
                "SOCK_PACKET",
            ),
        ],
        RAW_SOCKETS,
    ),
];

const SUPERVISED_LOOPBACK: &str = "network denied, without a network namespace (the Landlock \
     backend): IPv4, IPv6 and AF_UNIX sockets may be made, and every call that names an address \
     (bind, connect, listen, sendto with a destination, sendmsg, sendmmsg) goes to the \
     supervisor, which lets the jail reach only sockets the jail itself bound; netlink and every \
     other domain stay refused (route netlink would list the host's addresses)";

/// Network denied, with a supervisor and no network namespace: `socket(2)` for IPv4 and IPv6
/// (not raw, not packet) and `AF_UNIX`; the calls naming an address are the supervisor's
/// (`supervised::SUPERVISED_NET`).
pub(super) const SUPERVISED_SOCKET_DENIALS: [Denial; 5] = [
    socket_when(
        &[
            cmp(0, CmpOp::Ne, AF_UNIX, "AF_UNIX"),
            cmp(0, CmpOp::Ne, AF_INET, "AF_INET"),
            cmp(0, CmpOp::Ne, AF_INET6, "AF_INET6"),
        ],
        SUPERVISED_LOOPBACK,
    ),
    LOOPBACK_SOCKET_DENIALS[2],
    LOOPBACK_SOCKET_DENIALS[3],
    LOOPBACK_SOCKET_DENIALS[4],
    LOOPBACK_SOCKET_DENIALS[5],
];

const RAW_SOCKETS: &str = "raw and packet sockets build their own headers: refused even on the \
     jail's loopback (the jail has no capability for them either)";
