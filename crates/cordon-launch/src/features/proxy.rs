//! The destination proxy of a `proxy` network: the only way out of a jail whose network
//! namespace holds nothing but `lo`.
//!
//! How a jail reaches it (the bridge): the stage, inside the jail's own network namespace,
//! listens on `127.0.0.1:`[`PORT`] before anything else runs there, hands the listening socket
//! to the launcher over a socket pair (`SCM_RIGHTS`, [`crate::host::sys::send_fd`]), closes its own
//! copy and execs the payload. A socket keeps the namespace it was made in: only processes of
//! that jail can connect to it, nothing in the jail holds a route out, and no process inside
//! forwards anything. The launcher accepts on it here, outside the jail, on a thread of its own
//! per jail, and every decision is `cordon-proxy`'s ([`Allowlist::decide`]): the name matched,
//! resolved here, each address checked, the connection made to a checked address (never a
//! second lookup), a tunnel's TLS server name compared with the host it was opened to.
//!
//! Every refusal is recorded ([`Record::denied`], a `network-denied` violation of the result)
//! and answered so the tool says why: HTTP `403` whose body names cordon and the rule, or the
//! SOCKS5 reply "not allowed by ruleset". Allowed connections are counted per destination.
//!
//! The proxy ends with its jail ([`JailProxy::finish`]): the accept thread stops, every live
//! connection is shut down. Nothing of it outlives the launcher: the listener exists only in
//! the launcher's descriptor table once the stage closed its copy, and the jail's namespace
//! goes with the jail.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cordon_proxy::request::{self, HttpRequest, Parsed, SocksReply};
use cordon_proxy::{Allowlist, Resolver, Target, tls};
use serde::Serialize;

use crate::host::sys;

/// The port the stage listens on inside the jail's network namespace (its own: no other
/// process of the host can hold it).
pub const PORT: u16 = 3128;

/// How long a tool has to send its request (and a tunnel its first TLS flight).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection to an allowed address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The variables set inside a proxied jail (never taken from the host): every tool that honours
/// a proxy variable goes through the proxy; `NO_PROXY` is empty so nothing bypasses it (and
/// nothing could: the jail has no other route).
pub fn env_vars() -> Vec<(&'static str, String)> {
    let http = format!("http://127.0.0.1:{PORT}");
    let socks = format!("socks5h://127.0.0.1:{PORT}");
    vec![
        ("HTTP_PROXY", http.clone()),
        ("HTTPS_PROXY", http.clone()),
        ("http_proxy", http.clone()),
        ("https_proxy", http),
        ("ALL_PROXY", socks.clone()),
        ("all_proxy", socks),
        ("NO_PROXY", String::new()),
        ("no_proxy", String::new()),
    ]
}

/// The host's resolver (`getaddrinfo` through the standard library), in the launcher.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, name: &str) -> Result<Vec<std::net::IpAddr>, String> {
        (name, 0u16)
            .to_socket_addrs()
            .map(|addrs| addrs.map(|a| a.ip()).collect())
            .map_err(|e| e.to_string())
    }
}

/// What the proxy of one plan decides with: shared by every jail of a session.
pub struct Rules {
    allow: Allowlist,
    resolver: Box<dyn Resolver + Send + Sync>,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules")
            .field("allow", &self.allow)
            .finish_non_exhaustive()
    }
}

impl Rules {
    /// The rules of `entries` (a plan's `network_allow`) with `resolver`.
    pub fn new(
        entries: &[String],
        resolver: Box<dyn Resolver + Send + Sync>,
    ) -> Result<Rules, cordon_proxy::PatternError> {
        Ok(Rules {
            allow: Allowlist::parse(entries)?,
            resolver,
        })
    }
}

/// A refused request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denied {
    /// The host asked for, when the request named one.
    pub host: Option<String>,
    /// The port asked for.
    pub port: Option<u16>,
    /// The rule that refused it.
    pub rule: String,
}

/// One destination reached through the proxy (the result's `network.destinations`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// The host as requested.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Connections made.
    pub connections: u64,
    /// Bytes sent from the jail to it.
    pub bytes_out: u64,
    /// Bytes received from it into the jail.
    pub bytes_in: u64,
}

/// What one jail's proxy saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// Refusals, in order (at most [`MAX_DENIED`]).
    pub denied: Vec<Denied>,
    /// Allowed destinations, by `host:port`.
    pub destinations: BTreeMap<String, Destination>,
}

/// The most refusals kept per jail.
pub const MAX_DENIED: usize = 256;

#[derive(Default)]
struct Shared {
    record: Mutex<Record>,
    /// Both ends of every live connection, to shut down when the jail ends.
    live: Mutex<BTreeMap<u64, Vec<TcpStream>>>,
    next: AtomicU64,
    active: AtomicUsize,
}

impl Shared {
    fn deny(&self, target: Option<&Target>, rule: String) {
        if let Ok(mut r) = self.record.lock()
            && r.denied.len() < MAX_DENIED
        {
            r.denied.push(Denied {
                host: target.map(|t| t.host.to_string()),
                port: target.map(|t| t.port),
                rule,
            });
        }
    }

    fn count(&self, target: &Target, connections: u64, out: u64, inn: u64) {
        if let Ok(mut r) = self.record.lock() {
            let d = r
                .destinations
                .entry(target.to_string())
                .or_insert_with(|| Destination {
                    host: target.host.to_string(),
                    port: target.port,
                    connections: 0,
                    bytes_out: 0,
                    bytes_in: 0,
                });
            d.connections += connections;
            d.bytes_out += out;
            d.bytes_in += inn;
        }
    }

    fn register(&self, streams: &[&TcpStream]) -> Option<u64> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let clones: Vec<TcpStream> = streams.iter().filter_map(|s| s.try_clone().ok()).collect();
        self.live.lock().ok()?.insert(id, clones);
        Some(id)
    }

    fn unregister(&self, id: Option<u64>) {
        if let (Some(id), Ok(mut live)) = (id, self.live.lock()) {
            live.remove(&id);
        }
    }
}

/// One jail's proxy: the thread that waits for the stage's listener and accepts on it.
pub struct JailProxy {
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for JailProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JailProxy").finish_non_exhaustive()
    }
}

/// Starts the proxy of one jail: it receives the listener on `channel` (the launcher's end of
/// the socket pair whose other end the stage holds), then serves it with `rules`.
pub fn start(rules: Arc<Rules>, channel: OwnedFd) -> std::io::Result<JailProxy> {
    let (stop_read, stop_write) = sys::pipe()?;
    let shared = Arc::new(Shared::default());
    let inner = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("cordon-proxy".into())
        .spawn(move || accept_loop(&rules, &inner, &channel, &stop_read))?;
    Ok(JailProxy {
        stop: Some(stop_write),
        thread: Some(thread),
        shared,
    })
}

impl JailProxy {
    /// Ends the proxy (no more connections; every live one shut down), waits for its
    /// connections to finish counting (a second at most), and returns what it saw.
    pub fn finish(mut self) -> Record {
        self.end();
        let deadline = Instant::now() + Duration::from_secs(1);
        while self.shared.active.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.shared
            .record
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    fn end(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Ok(live) = self.shared.live.lock() {
            for stream in live.values().flatten() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
}

impl Drop for JailProxy {
    fn drop(&mut self) {
        self.end();
    }
}

fn accept_loop(rules: &Arc<Rules>, shared: &Arc<Shared>, channel: &OwnedFd, stop: &OwnedFd) {
    // The stage sends the listener once its self-checks passed; a stage that failed closes.
    match sys::wait_readable(&[stop, channel]) {
        Ok(1) => {}
        _ => return,
    }
    let listener = match sys::recv_fd(channel) {
        Ok(Some(fd)) => TcpListener::from(fd),
        _ => return,
    };
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let listening: OwnedFd = match listener.try_clone() {
        Ok(l) => l.into(),
        Err(_) => return,
    };
    loop {
        match sys::wait_readable(&[stop, &listening]) {
            Ok(1) => {}
            _ => return,
        }
        let Ok((conn, _)) = listener.accept() else {
            continue;
        };
        if conn.set_nonblocking(false).is_err() {
            continue;
        }
        let (rules, inner) = (Arc::clone(rules), Arc::clone(shared));
        shared.active.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new()
            .name("cordon-proxy-conn".into())
            .spawn(move || {
                let id = inner.register(&[&conn]);
                serve(&rules, &inner, conn, id);
                inner.unregister(id);
                inner.active.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Reads from `conn` into `buf` until `parse` is done (or refuses, or the peer stops).
fn read_until<T, E>(
    conn: &mut TcpStream,
    buf: &mut Vec<u8>,
    limit: usize,
    parse: impl Fn(&[u8]) -> Result<Parsed<T>, E>,
) -> Result<Option<(T, usize)>, E> {
    loop {
        match parse(buf)? {
            Parsed::Done(v, n) => return Ok(Some((v, n))),
            Parsed::Incomplete if buf.len() >= limit => return Ok(None),
            Parsed::Incomplete => {}
        }
        let mut chunk = [0u8; 4096];
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn serve(rules: &Rules, shared: &Shared, conn: TcpStream, id: Option<u64>) {
    if conn.set_read_timeout(Some(REQUEST_TIMEOUT)).is_err() {
        return;
    }
    let mut first = [0u8; 1];
    match conn.peek(&mut first) {
        Ok(1) => {}
        _ => return,
    }
    if first[0] == request::SOCKS5 {
        serve_socks(rules, shared, conn, id);
    } else {
        serve_http(rules, shared, conn, id);
    }
}

fn serve_http(rules: &Rules, shared: &Shared, mut conn: TcpStream, id: Option<u64>) {
    let mut buf = Vec::new();
    let parsed = read_until(
        &mut conn,
        &mut buf,
        request::MAX_HEAD + 1,
        request::parse_http,
    );
    let (req, used) = match parsed {
        Ok(Some(done)) => done,
        Ok(None) => return,
        Err(e) => {
            let rule = format!("the request was refused: {e}");
            shared.deny(None, rule.clone());
            let _ = conn.write_all(&request::http_refusal("400 Bad Request", &rule));
            return;
        }
    };
    let target = match &req {
        HttpRequest::Connect(t) | HttpRequest::Forward { target: t, .. } => t.clone(),
    };
    let upstream = match reach(rules, shared, &target) {
        Ok(s) => s,
        Err(Failure::Refused(rule)) => {
            let _ = conn.write_all(&request::http_refusal("403 Forbidden", &rule));
            return;
        }
        Err(Failure::Unreachable(why)) => {
            let _ = conn.write_all(&request::http_refusal(
                "502 Bad Gateway",
                &format!("{target} is allowed but could not be reached: {why}"),
            ));
            return;
        }
    };
    let rest = buf[used..].to_vec();
    match req {
        HttpRequest::Connect(_) => {
            if conn.write_all(request::CONNECT_OK).is_err() {
                return;
            }
            tunnel(shared, conn, upstream, &target, rest, id);
        }
        HttpRequest::Forward { head, .. } => {
            let mut upstream = upstream;
            if upstream.write_all(&head).is_err() {
                return;
            }
            shared.count(&target, 0, head.len() as u64, 0);
            relay(shared, conn, upstream, &target, rest, id, false);
        }
    }
}

fn serve_socks(rules: &Rules, shared: &Shared, mut conn: TcpStream, id: Option<u64>) {
    let mut buf = Vec::new();
    let greeting = read_until(&mut conn, &mut buf, 258, request::parse_socks_greeting);
    let used = match greeting {
        Ok(Some(((), used))) => used,
        Ok(None) => return,
        Err(e) => {
            shared.deny(None, format!("the SOCKS request was refused: {e}"));
            let _ = conn.write_all(&request::socks_method_reply(false));
            return;
        }
    };
    if conn.write_all(&request::socks_method_reply(true)).is_err() {
        return;
    }
    buf.drain(..used);
    let parsed = read_until(&mut conn, &mut buf, 262, request::parse_socks_request);
    let (target, used) = match parsed {
        Ok(Some(done)) => done,
        Ok(None) => return,
        Err(e) => {
            let code = match e {
                request::RequestError::SocksCommand(_) => SocksReply::CommandNotSupported,
                request::RequestError::SocksAddressType(_) => SocksReply::AddressNotSupported,
                _ => SocksReply::Failure,
            };
            shared.deny(None, format!("the SOCKS request was refused: {e}"));
            let _ = conn.write_all(&request::socks_reply(code));
            return;
        }
    };
    let upstream = match reach(rules, shared, &target) {
        Ok(s) => s,
        Err(Failure::Refused(rule)) => {
            // SOCKS5 has no text in its reply: the code says "not allowed by ruleset", and
            // the rule is in the run's result.
            let _ = rule;
            let _ = conn.write_all(&request::socks_reply(SocksReply::NotAllowed));
            return;
        }
        Err(Failure::Unreachable(_)) => {
            let _ = conn.write_all(&request::socks_reply(SocksReply::Unreachable));
            return;
        }
    };
    if conn
        .write_all(&request::socks_reply(SocksReply::Ok))
        .is_err()
    {
        return;
    }
    let rest = buf[used..].to_vec();
    tunnel(shared, conn, upstream, &target, rest, id);
}

enum Failure {
    Refused(String),
    Unreachable(String),
}

/// The verdict for `target` and, when allowed, a connection to one of the addresses checked.
fn reach(rules: &Rules, shared: &Shared, target: &Target) -> Result<TcpStream, Failure> {
    let allowed = match rules.allow.decide(target, rules.resolver.as_ref()) {
        Ok(a) => a,
        Err(refusal) => {
            shared.deny(Some(target), refusal.rule.clone());
            return Err(Failure::Refused(refusal.rule));
        }
    };
    let mut last = String::from("no address");
    for addr in &allowed.addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    Err(Failure::Unreachable(last))
}

/// A tunnel: relayed both ways, with the first bytes from the jail inspected before any goes
/// upstream ([`inspect`]).
fn tunnel(
    shared: &Shared,
    conn: TcpStream,
    upstream: TcpStream,
    target: &Target,
    first: Vec<u8>,
    id: Option<u64>,
) {
    relay(shared, conn, upstream, target, first, id, true);
}

/// The first flight of a tunnel, read from the jail before a byte goes upstream: a tunnel to
/// port 443 must begin with a TLS ClientHello, and any tunnel that begins with one must name
/// the host it was opened to. `Err` is the rule broken (or `None`: the jail closed first).
/// The other direction already runs, so a protocol whose server speaks first is not held up.
fn inspect(conn: &mut TcpStream, target: &Target, buf: &mut Vec<u8>) -> Result<(), Option<String>> {
    let must_be_tls = target.port == 443;
    if buf.is_empty() {
        let mut chunk = [0u8; 4096];
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    if !must_be_tls && !tls::looks_like_tls(buf) {
        return Ok(());
    }
    let _ = conn.set_read_timeout(Some(REQUEST_TIMEOUT));
    let name = read_until(conn, buf, tls::MAX_HELLO + 5, tls::server_name);
    let _ = conn.set_read_timeout(None);
    match name {
        Ok(Some((sni, _))) => {
            cordon_proxy::check_server_name(target, sni.as_deref()).map_err(|r| Some(r.rule))
        }
        Ok(None) => Err(None),
        Err(tls::TlsError::NotTls) => Err(Some(format!(
            "the tunnel to {target} is on a TLS port and its first bytes are not TLS"
        ))),
        Err(e) => Err(Some(format!("the tunnel to {target}: {e}"))),
    }
}

/// Copies both ways until each side ends, counting bytes for `target`; `first` goes upstream
/// before anything else, after [`inspect`] when `inspected` (a tunnel).
fn relay(
    shared: &Shared,
    conn: TcpStream,
    upstream: TcpStream,
    target: &Target,
    first: Vec<u8>,
    id: Option<u64>,
    inspected: bool,
) {
    let _ = conn.set_read_timeout(None);
    shared.count(target, 1, 0, 0);
    if let (Some(id), Ok(mut live)) = (id, shared.live.lock())
        && let Ok(up) = upstream.try_clone()
    {
        live.entry(id).or_default().push(up);
    }
    let (Ok(mut conn_reader), Ok(mut up_writer)) = (conn.try_clone(), upstream.try_clone()) else {
        return;
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut first = first;
            if inspected && let Err(rule) = inspect(&mut conn_reader, target, &mut first) {
                if let Some(rule) = rule {
                    shared.deny(Some(target), rule);
                }
                // Nothing went upstream; both ends close, which ends the other direction.
                let _ = conn_reader.shutdown(Shutdown::Both);
                let _ = up_writer.shutdown(Shutdown::Both);
                return;
            }
            if !first.is_empty() {
                if up_writer.write_all(&first).is_err() {
                    let _ = up_writer.shutdown(Shutdown::Both);
                    return;
                }
                shared.count(target, 0, first.len() as u64, 0);
            }
            copy(shared, target, conn_reader, up_writer, true);
        });
        copy(shared, target, upstream, conn, false);
    });
}

fn copy(shared: &Shared, target: &Target, mut from: TcpStream, mut to: TcpStream, out: bool) {
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        let n = n as u64;
        if out {
            shared.count(target, 0, n, 0);
        } else {
            shared.count(target, 0, 0, n);
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

/// The listening socket the stage makes inside the jail's network namespace.
pub(crate) fn listen_in_jail() -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], PORT)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    struct Fixed(Vec<(&'static str, &'static str)>);
    impl Resolver for Fixed {
        fn resolve(&self, name: &str) -> Result<Vec<std::net::IpAddr>, String> {
            let found: Vec<_> = self
                .0
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, a)| a.parse().unwrap())
                .collect();
            if found.is_empty() {
                Err("not found".into())
            } else {
                Ok(found)
            }
        }
    }

    /// A proxy over a listener of this test's (the stage's part, played here), and a local
    /// upstream server that answers `hello` to whatever it is sent.
    fn harness(entries: &[String]) -> (JailProxy, SocketAddr) {
        let rules = Rules::new(
            entries,
            Box::new(Fixed(vec![
                ("localhost", "127.0.0.1"),
                ("meta.test", "169.254.169.254"),
            ])),
        )
        .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, theirs) = sys::socket_pair().unwrap();
        sys::send_fd(&theirs, &OwnedFd::from(listener)).unwrap();
        drop(theirs);
        (start(Arc::new(rules), ours).unwrap(), addr)
    }

    fn upstream() -> (SocketAddr, std::thread::JoinHandle<Vec<u8>>) {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut c, _) = server.accept().unwrap();
            c.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = c.read(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                if got.windows(4).any(|w| w == b"\r\n\r\n") || got.ends_with(b"ping") {
                    break;
                }
            }
            c.write_all(b"hello").unwrap();
            got
        });
        (addr, t)
    }

    fn exchange(proxy: SocketAddr, bytes: &[u8]) -> Vec<u8> {
        let mut c = TcpStream::connect(proxy).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(bytes).unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        out
    }

    #[test]
    fn a_listed_address_is_tunnelled_and_counted() {
        let (up, server) = upstream();
        let (proxy, addr) = harness(&[up.to_string()]);
        let out = exchange(
            addr,
            format!("CONNECT {up} HTTP/1.1\r\n\r\nping").as_bytes(),
        );
        assert_eq!(out, [request::CONNECT_OK, b"hello"].concat());
        assert_eq!(server.join().unwrap(), b"ping");
        let record = proxy.finish();
        assert!(record.denied.is_empty(), "{record:?}");
        let d = &record.destinations[&up.to_string()];
        assert_eq!((d.connections, d.bytes_out, d.bytes_in), (1, 4, 5));
    }

    #[test]
    fn a_plain_request_is_forwarded_in_origin_form() {
        let (up, server) = upstream();
        let (proxy, addr) = harness(&[up.to_string()]);
        let out = exchange(
            addr,
            format!("GET http://{up}/x HTTP/1.1\r\nHost: {up}\r\nProxy-Authorization: x\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(out, b"hello");
        let sent = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(sent.starts_with("GET /x HTTP/1.1\r\n"), "{sent}");
        assert!(!sent.contains("Proxy-Authorization"), "{sent}");
        assert_eq!(proxy.finish().destinations.len(), 1);
    }

    #[test]
    fn refusals_are_answered_naming_cordon_and_recorded() {
        let (up, _server) = upstream();
        let (proxy, addr) = harness(&[format!("localhost:{}", up.port()), "meta.test".into()]);
        let out =
            String::from_utf8(exchange(addr, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n")).unwrap();
        assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{out}");
        assert!(
            out.contains("cordon refused this request: other.test:443 is not in network.allow"),
            "{out}"
        );
        let out = String::from_utf8(exchange(
            addr,
            format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", up.port()).as_bytes(),
        ))
        .unwrap();
        assert!(out.contains("127.0.0.1 is loopback"), "{out}");
        let out =
            String::from_utf8(exchange(addr, b"GET http://meta.test/ HTTP/1.1\r\n\r\n")).unwrap();
        assert!(out.contains("169.254.169.254 is link-local"), "{out}");
        let out = String::from_utf8(exchange(
            addr,
            b"GET http://meta.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n",
        ))
        .unwrap();
        assert!(out.starts_with("HTTP/1.1 400"), "{out}");
        // SOCKS5 with a name off the list: "not allowed by ruleset".
        let mut socks = vec![5, 1, 0, 5, 1, 0, 3, 10];
        socks.extend_from_slice(b"other.test");
        socks.extend_from_slice(&443u16.to_be_bytes());
        assert_eq!(exchange(addr, &socks), [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
        let record = proxy.finish();
        let hosts: Vec<Option<&str>> = record.denied.iter().map(|d| d.host.as_deref()).collect();
        assert_eq!(
            hosts,
            [
                Some("other.test"),
                Some("localhost"),
                Some("meta.test"),
                None,
                Some("other.test")
            ]
        );
        assert_eq!(record.denied[0].port, Some(443));
        assert!(record.destinations.is_empty());
    }

    #[test]
    fn a_tunnel_whose_server_name_is_not_its_host_is_cut_before_anything_goes_upstream() {
        let (up, server) = upstream();
        let (proxy, addr) = harness(&[format!("localhost:{}", up.port()), up.to_string()]);
        let hello = tls::client_hello(Some("other.test"));
        let out = exchange(
            addr,
            &[
                format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", up.port()).as_bytes(),
                &hello,
            ]
            .concat(),
        );
        assert_eq!(out, request::CONNECT_OK, "the tunnel opened, then closed");
        let record = proxy.finish();
        assert_eq!(record.denied.len(), 1, "{record:?}");
        assert!(
            record.denied[0].rule.contains("\"other.test\""),
            "{record:?}"
        );
        // The upstream saw a connection and no byte of the hello.
        assert_eq!(server.join().unwrap(), b"");
    }

    #[test]
    fn a_hello_sent_after_the_tunnel_opened_is_inspected_too() {
        let (up, server) = upstream();
        let (proxy, addr) = harness(&[format!("localhost:{}", up.port()), up.to_string()]);
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", up.port()).as_bytes())
            .unwrap();
        let mut ok = vec![0u8; request::CONNECT_OK.len()];
        c.read_exact(&mut ok).unwrap();
        assert_eq!(ok, request::CONNECT_OK);
        std::thread::sleep(Duration::from_millis(50));
        c.write_all(&tls::client_hello(Some("fronted.test")))
            .unwrap();
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
        assert_eq!(rest, b"", "closed, nothing relayed back");
        assert_eq!(
            server.join().unwrap(),
            b"",
            "no byte of the hello went upstream"
        );
        let record = proxy.finish();
        assert!(
            record.denied[0].rule.contains("\"fronted.test\""),
            "{record:?}"
        );
    }

    #[test]
    fn a_socks5_name_is_resolved_by_the_proxy() {
        let (up, server) = upstream();
        let (proxy, addr) = harness(&[format!("localhost:{}", up.port()), up.to_string()]);
        let mut socks = vec![5, 1, 0, 5, 1, 0, 3, 9];
        socks.extend_from_slice(b"localhost");
        socks.extend_from_slice(&up.port().to_be_bytes());
        socks.extend_from_slice(b"ping");
        let out = exchange(addr, &socks);
        assert_eq!(
            out,
            [&[5u8, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0][..], b"hello"].concat()
        );
        assert_eq!(server.join().unwrap(), b"ping");
        assert_eq!(proxy.finish().destinations.len(), 1);
    }

    #[test]
    fn the_proxy_stops_accepting_when_its_jail_ends() {
        let (proxy, addr) = harness(&["a.test".into()]);
        // Served while it runs.
        let out = exchange(addr, b"CONNECT b.test:443 HTTP/1.1\r\n\r\n");
        assert!(out.starts_with(b"HTTP/1.1 403"));
        drop(proxy);
        // The listener is gone with it: nothing accepts there any more.
        assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn the_jail_environment_points_every_proxy_variable_at_the_bridge() {
        let vars: BTreeMap<_, _> = env_vars().into_iter().collect();
        assert_eq!(vars["HTTPS_PROXY"], "http://127.0.0.1:3128");
        assert_eq!(vars["all_proxy"], "socks5h://127.0.0.1:3128");
        assert_eq!(vars["NO_PROXY"], "");
        assert_eq!(vars.len(), 8);
    }
}
