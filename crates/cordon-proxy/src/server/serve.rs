//! One connection of the proxy, served: the request read (HTTP or SOCKS5), the verdict asked
//! of [`Allowlist::decide`](crate::Allowlist::decide), the answer, and the relay with its
//! tunnel inspection and its counts.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use super::{Rules, Shared};
use crate::request::{self, HttpRequest, Parsed, SocksReply};
use crate::{Target, tls};

/// How long a tool has to send its request (and a tunnel its first TLS flight).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection to an allowed address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

pub(super) fn serve(rules: &Rules, shared: &Shared, conn: TcpStream, id: Option<u64>) {
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
            relay(shared, conn, upstream, &target, rest, id, true);
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
    relay(shared, conn, upstream, &target, rest, id, true);
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
            crate::check_server_name(target, sni.as_deref()).map_err(|r| Some(r.rule))
        }
        Ok(None) => Err(None),
        Err(tls::TlsError::NotTls) => Err(Some(format!(
            "the tunnel to {target} is on a TLS port and its first bytes are not TLS"
        ))),
        Err(e) => Err(Some(format!("the tunnel to {target}: {e}"))),
    }
}

/// Copies both ways until each side ends, counting bytes for `target`; `first` goes upstream
/// before anything else, after [`inspect`] when `inspected`: a tunnel, whose first bytes from
/// the jail are inspected before any goes upstream.
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
