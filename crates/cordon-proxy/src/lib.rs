//! The decisions of cordon's destination proxy, as pure functions: which destinations the
//! configuration names, what a tool asked for, and whether it may have it.
//!
//! A jail in `proxy` network mode has no route out; the launcher runs a proxy outside it and
//! this crate tells that proxy what to do with each request:
//!
//! - [`Pattern`] is one `network.allow` entry (`HOST`, `*.DOMAIN`, `HOST:PORT`, `*.DOMAIN:PORT`,
//!   `IP:PORT`, `[IPv6]:PORT`), parsed strictly: a bare `*`, a scheme, a path, an address
//!   without its port are [`PatternError`]s naming the entry and the rule.
//! - [`classify`] puts an address in its [`AddrClass`] (loopback, private, link-local with the
//!   cloud metadata address, CGNAT, unique-local, multicast, unspecified, reserved, public),
//!   looking through IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 forms.
//! - [`request`] reads what a tool sends a proxy: an HTTP `CONNECT`, a plain HTTP request in
//!   absolute form (whose `Host` header must name the host it is sent to), or a SOCKS5
//!   `CONNECT` with a host name or an address; [`tls::server_name`] reads the server name of a
//!   TLS ClientHello.
//! - [`Allowlist::decide`] is the verdict for one destination: the name matched against the
//!   list, resolved through a [`Resolver`] the caller gives (so tests inject one), every
//!   resolved address that is not public refused unless that exact `IP:PORT` is listed, and
//!   the addresses to connect to returned (the proxy connects to those, never resolving again).
//!
//! It opens no socket, reads no file and spawns nothing: the launcher (`cordon-launch`'s
//! `proxy.rs`) does the I/O and implements [`Resolver`] with the host's resolver. Every parser
//! takes bytes and returns a value or an error, so each can be fuzzed.

pub mod addr;
pub mod decide;
pub mod pattern;
pub mod request;
pub mod tls;

pub use addr::{AddrClass, classify};
pub use decide::{Allowed, Allowlist, Host, Refusal, Resolver, Target, check_server_name};
pub use pattern::{Pattern, PatternError};
