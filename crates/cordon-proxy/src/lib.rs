//! cordon's destination proxy: its decisions, as pure functions (which destinations the
//! configuration names, what a tool asked for, and whether it may have it), and, behind the
//! `server` feature, the proxy server that serves them.
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
//! These decisions open no socket, read no file and spawn nothing: every parser takes bytes and
//! returns a value or an error, so each can be fuzzed, and without the `server` feature (off
//! by default) the crate has no I/O at all and depends on nothing but `thiserror`.
//!
//! With `server`, `server` is the proxy itself (HTTP `CONNECT`, absolute-form HTTP and SOCKS5
//! served, a tunnel's TLS server name inspected, the relay counted per destination, every
//! refusal recorded and answered), with the host's resolver (`SystemResolver`). It accepts on a
//! listener it is given and knows nothing of jails: how the listener is made inside a jail's
//! network namespace and handed over is the launcher's bridge (`cordon-launch`'s `features/proxy.rs`).
//!
//! # Example
//!
//! One allowlist, two requests: a listed name that resolves to a public address is allowed
//! (the address to connect to comes back), and a listed name that resolves to a private
//! address is refused, because only that exact `IP:PORT` being listed would allow it.
//!
//! ```
//! use std::net::IpAddr;
//! use cordon_proxy::{Allowlist, Host, Resolver, Target};
//!
//! struct Fixed;
//! impl Resolver for Fixed {
//!     fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, String> {
//!         match name {
//!             "api.example.com" => Ok(vec!["93.184.215.14".parse().unwrap()]),
//!             "internal.example.com" => Ok(vec!["10.0.0.7".parse().unwrap()]),
//!             _ => Err(format!("{name}: no such name")),
//!         }
//!     }
//! }
//!
//! let allow = Allowlist::parse(&["api.example.com", "*.example.com:443"])?;
//! let target = |host: &str| Target { host: Host::Name(host.into()), port: 443 };
//! let allowed = allow.decide(&target("api.example.com"), &Fixed).expect("listed, public");
//! assert_eq!(allowed.addrs, ["93.184.215.14:443".parse().unwrap()]);
//! assert!(allow.decide(&target("internal.example.com"), &Fixed).is_err());
//! assert!(allow.decide(&target("other.test"), &Fixed).is_err());
//! # Ok::<(), cordon_proxy::PatternError>(())
//! ```

pub mod addr;
pub mod decide;
pub mod pattern;
pub mod request;
#[cfg(feature = "server")]
pub mod server;
pub mod tls;

pub use addr::{AddrClass, classify};
pub use decide::{Allowed, Allowlist, Host, Refusal, Resolver, Target, check_server_name};
pub use pattern::{Pattern, PatternError};
