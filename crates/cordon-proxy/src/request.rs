//! What a tool sends a proxy: an HTTP request head (a `CONNECT` tunnel or a plain request in
//! absolute form) or a SOCKS5 greeting and request. Each reader takes the bytes received so far
//! and says whether it needs more ([`Parsed::Incomplete`]), what was asked, or why it is refused.

use std::net::IpAddr;

use crate::decide::{Host, Target};
use crate::pattern::normalize_name;

/// The most bytes of an HTTP request head the proxy reads before refusing it.
pub const MAX_HEAD: usize = 32 * 1024;

/// A reader's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<T> {
    /// More bytes are needed.
    Incomplete,
    /// The value, and how many bytes of the input it took.
    Done(T, usize),
}

/// Why a request is refused before any destination is judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The head is longer than [`MAX_HEAD`].
    #[error("the request head is longer than {MAX_HEAD} bytes")]
    TooLong,
    /// Not an HTTP/1.x request line.
    #[error("the request line is not HTTP/1.x: {0:?}")]
    RequestLine(String),
    /// A header line without a colon, or not text.
    #[error("a header line is malformed: {0:?}")]
    Header(String),
    /// A request in origin form (`GET /path`): a proxy needs the host in the request line.
    #[error(
        "the request names no host (origin form {0:?}); send it through the proxy in absolute form"
    )]
    OriginForm(String),
    /// `https://` or another scheme in a plain request: HTTPS goes through `CONNECT`.
    #[error("the request's scheme in {0:?} is not http; HTTPS goes through CONNECT")]
    Scheme(String),
    /// The request line's host and the `Host` header differ.
    #[error("the Host header {header:?} does not name the host the request is sent to ({target})")]
    HostMismatch {
        /// The `Host` header.
        header: String,
        /// The destination of the request line.
        target: String,
    },
    /// More than one `Host` header.
    #[error("the request has more than one Host header")]
    DuplicateHost,
    /// The authority is not `host:port`.
    #[error("the destination {0:?} is not HOST:PORT")]
    Authority(String),
    /// A SOCKS version other than 5.
    #[error("SOCKS version {0} is not supported (SOCKS5 only)")]
    SocksVersion(u8),
    /// The client offers no method but "no authentication".
    #[error("the SOCKS5 client offers no method cordon accepts (no authentication)")]
    SocksMethods,
    /// A SOCKS5 command other than CONNECT.
    #[error("SOCKS5 command {0} is not supported (CONNECT only)")]
    SocksCommand(u8),
    /// An unknown SOCKS5 address type.
    #[error("SOCKS5 address type {0} is not supported")]
    SocksAddressType(u8),
}

/// An HTTP request head, as far as the proxy reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpRequest {
    /// `CONNECT host:port`: a tunnel.
    Connect(Target),
    /// A plain request in absolute form (`GET http://host[:port]/path`).
    Forward {
        /// Where it goes.
        target: Target,
        /// The head to send upstream: the request line in origin form, the client's headers
        /// without the proxy's own (`Proxy-*`) and with `Connection: close`.
        head: Vec<u8>,
    },
}

/// Parses `HOST` (a name, an IPv4 address, or a bracketed IPv6 address) into a [`Host`].
pub fn parse_host(text: &str) -> Result<Host, &'static str> {
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return inner
            .parse::<std::net::Ipv6Addr>()
            .map(|ip| Host::Ip(IpAddr::V6(ip)))
            .map_err(|_| "the bracketed text is not an IPv6 address");
    }
    if let Ok(ip) = text.parse::<std::net::Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(ip)));
    }
    normalize_name(text).map(Host::Name)
}

/// Parses `host:port`, or `host` with `default_port` when given.
fn parse_authority(text: &str, default_port: Option<u16>) -> Result<Target, RequestError> {
    let bad = || RequestError::Authority(text.to_owned());
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && (!h.contains(':') || h.ends_with(']')) => {
            if !p.bytes().all(|b| b.is_ascii_digit()) || p.is_empty() {
                return Err(bad());
            }
            (h, p.parse::<u16>().map_err(|_| bad())?)
        }
        _ => (text, default_port.ok_or_else(bad)?),
    };
    if port == 0 {
        return Err(bad());
    }
    let host = parse_host(host).map_err(|_| bad())?;
    Ok(Target { host, port })
}

fn find_head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// Reads an HTTP/1.x request head from `bytes`.
pub fn parse_http(bytes: &[u8]) -> Result<Parsed<HttpRequest>, RequestError> {
    let Some(end) = find_head_end(bytes) else {
        return if bytes.len() > MAX_HEAD {
            Err(RequestError::TooLong)
        } else {
            Ok(Parsed::Incomplete)
        };
    };
    if end > MAX_HEAD {
        return Err(RequestError::TooLong);
    }
    let head = std::str::from_utf8(&bytes[..end - 4])
        .map_err(|_| RequestError::RequestLine(String::from_utf8_lossy(&bytes[..end]).into()))?;
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(uri), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(RequestError::RequestLine(line.to_owned()));
    };
    if !(version == "HTTP/1.1" || version == "HTTP/1.0")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
    {
        return Err(RequestError::RequestLine(line.to_owned()));
    }
    let mut headers = Vec::new();
    for h in lines {
        let Some((name, value)) = h.split_once(':') else {
            return Err(RequestError::Header(h.to_owned()));
        };
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(RequestError::Header(h.to_owned()));
        }
        headers.push((name, value.trim()));
    }
    if method == "CONNECT" {
        return Ok(Parsed::Done(
            HttpRequest::Connect(parse_authority(uri, None)?),
            end,
        ));
    }
    if uri.starts_with('/') || uri == "*" {
        return Err(RequestError::OriginForm(uri.to_owned()));
    }
    let Some(rest) = uri
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &uri[7..])
    else {
        return Err(RequestError::Scheme(uri.to_owned()));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_owned()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_owned()),
    };
    if authority.contains('@') {
        return Err(RequestError::Authority(authority.to_owned()));
    }
    let target = parse_authority(authority, Some(80))?;
    let hosts: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| *v)
        .collect();
    match hosts.as_slice() {
        [] => {}
        [one] => {
            let named = parse_authority(one, Some(80)).ok();
            if named.as_ref() != Some(&target) {
                return Err(RequestError::HostMismatch {
                    header: (*one).to_owned(),
                    target: target.to_string(),
                });
            }
        }
        _ => return Err(RequestError::DuplicateHost),
    }
    let mut out = format!("{method} {path} {version}\r\n");
    if hosts.is_empty() {
        out.push_str(&format!("Host: {authority}\r\n"));
    }
    for (name, value) in &headers {
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("proxy-") || lower == "connection" || lower == "keep-alive" {
            continue;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Parsed::Done(
        HttpRequest::Forward {
            target,
            head: out.into_bytes(),
        },
        end,
    ))
}

/// A proxy's answer to a refused HTTP request: `403 Forbidden` whose body names cordon, the
/// destination and the rule.
pub fn http_refusal(status: &str, reason: &str) -> Vec<u8> {
    let body = format!("cordon refused this request: {reason}\n");
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Cordon-Refused: {}\r\n\r\n{body}",
        body.len(),
        reason.replace(['\r', '\n'], " ")
    )
    .into_bytes()
}

/// The answer that opens a tunnel.
pub const CONNECT_OK: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";

/// The first byte of a SOCKS5 greeting.
pub const SOCKS5: u8 = 5;

/// Reads a SOCKS5 greeting (version, methods); `Done` when "no authentication" is offered.
pub fn parse_socks_greeting(bytes: &[u8]) -> Result<Parsed<()>, RequestError> {
    let [version, n, ..] = bytes else {
        return Ok(Parsed::Incomplete);
    };
    if *version != SOCKS5 {
        return Err(RequestError::SocksVersion(*version));
    }
    let len = 2 + usize::from(*n);
    let Some(methods) = bytes.get(2..len) else {
        return Ok(Parsed::Incomplete);
    };
    if !methods.contains(&0) {
        return Err(RequestError::SocksMethods);
    }
    Ok(Parsed::Done((), len))
}

/// The reply to a greeting: "no authentication" chosen, or none acceptable.
pub fn socks_method_reply(accepted: bool) -> [u8; 2] {
    [SOCKS5, if accepted { 0 } else { 0xff }]
}

/// Reads a SOCKS5 request (`CONNECT` with an IPv4 address, a host name or an IPv6 address).
pub fn parse_socks_request(bytes: &[u8]) -> Result<Parsed<Target>, RequestError> {
    let [version, command, _reserved, kind, rest @ ..] = bytes else {
        return Ok(Parsed::Incomplete);
    };
    if *version != SOCKS5 {
        return Err(RequestError::SocksVersion(*version));
    }
    if *command != 1 {
        return Err(RequestError::SocksCommand(*command));
    }
    let (host, used) = match kind {
        1 => {
            let Some(a) = rest.get(..4) else {
                return Ok(Parsed::Incomplete);
            };
            (Host::Ip(IpAddr::from([a[0], a[1], a[2], a[3]])), 4)
        }
        3 => {
            let Some(n) = rest.first() else {
                return Ok(Parsed::Incomplete);
            };
            let n = usize::from(*n);
            let Some(name) = rest.get(1..1 + n) else {
                return Ok(Parsed::Incomplete);
            };
            let text = String::from_utf8_lossy(name);
            let host = parse_host(&text)
                .map_err(|_| RequestError::Authority(text.clone().into_owned()))?;
            (host, 1 + n)
        }
        4 => {
            let Some(a) = rest.get(..16) else {
                return Ok(Parsed::Incomplete);
            };
            let mut octets = [0u8; 16];
            octets.copy_from_slice(a);
            (Host::Ip(IpAddr::from(octets)), 16)
        }
        other => return Err(RequestError::SocksAddressType(*other)),
    };
    let Some(p) = rest.get(used..used + 2) else {
        return Ok(Parsed::Incomplete);
    };
    let port = u16::from_be_bytes([p[0], p[1]]);
    if port == 0 {
        return Err(RequestError::Authority(format!("{host}:0")));
    }
    Ok(Parsed::Done(Target { host, port }, 4 + used + 2))
}

/// SOCKS5 reply codes cordon sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SocksReply {
    /// Succeeded.
    Ok = 0,
    /// "Connection not allowed by ruleset": every refusal of a destination.
    NotAllowed = 2,
    /// Host unreachable: the allowed destination could not be reached.
    Unreachable = 4,
    /// Command not supported.
    CommandNotSupported = 7,
    /// Address type not supported.
    AddressNotSupported = 8,
    /// General failure: a malformed request.
    Failure = 1,
}

/// A SOCKS5 reply with a zero bound address.
pub fn socks_reply(code: SocksReply) -> [u8; 10] {
    [SOCKS5, code as u8, 0, 1, 0, 0, 0, 0, 0, 0]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]
    use super::*;

    fn target(s: &str) -> Target {
        parse_authority(s, None).unwrap()
    }

    #[test]
    fn connect_names_its_destination() {
        let req = b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\nrest";
        let Parsed::Done(HttpRequest::Connect(t), used) = parse_http(req).unwrap() else {
            panic!()
        };
        assert_eq!(t, target("a.test:443"));
        assert_eq!(&req[used..], b"rest");
        let Parsed::Done(HttpRequest::Connect(t), _) =
            parse_http(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap()
        else {
            panic!()
        };
        assert_eq!(t.host, Host::Ip("::1".parse().unwrap()));
        assert_eq!(
            parse_http(b"CONNECT a.test:443 HTTP/1.1\r\n").unwrap(),
            Parsed::Incomplete
        );
        for bad in [
            &b"CONNECT a.test HTTP/1.1\r\n\r\n"[..],
            b"CONNECT a.test:0 HTTP/1.1\r\n\r\n",
            b"CONNECT a.test:x HTTP/1.1\r\n\r\n",
            b"CONNECT ::1:80 HTTP/1.1\r\n\r\n",
            b"CONNECT a.test:443 HTTP/2\r\n\r\n",
            b"CONNECT  a.test:443 HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse_http(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_plain_request_goes_upstream_in_origin_form_without_proxy_headers() {
        let req = b"GET http://A.test:8080/x?y HTTP/1.1\r\nHost: a.test:8080\r\nProxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        let Parsed::Done(HttpRequest::Forward { target: t, head }, _) = parse_http(req).unwrap()
        else {
            panic!()
        };
        assert_eq!(t, target("a.test:8080"));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET /x?y HTTP/1.1\r\nHost: a.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let Parsed::Done(HttpRequest::Forward { target: t, head }, _) =
            parse_http(b"GET http://127.0.0.1?q HTTP/1.0\r\n\r\n").unwrap()
        else {
            panic!()
        };
        assert_eq!(t, target("127.0.0.1:80"));
        assert!(
            String::from_utf8(head)
                .unwrap()
                .starts_with("GET /?q HTTP/1.0\r\nHost: 127.0.0.1\r\n")
        );
    }

    #[test]
    fn a_plain_request_must_name_the_host_it_is_sent_to() {
        let cases: &[(&[u8], fn(&RequestError) -> bool)] = &[
            (
                b"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
                |e| matches!(e, RequestError::HostMismatch { .. }),
            ),
            (
                b"GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n",
                |e| matches!(e, RequestError::HostMismatch { .. }),
            ),
            (
                b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nhost: a.test\r\n\r\n",
                |e| matches!(e, RequestError::DuplicateHost),
            ),
            (b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", |e| {
                matches!(e, RequestError::OriginForm(_))
            }),
            (b"GET https://a.test/ HTTP/1.1\r\n\r\n", |e| {
                matches!(e, RequestError::Scheme(_))
            }),
            (b"GET http://u@a.test/ HTTP/1.1\r\n\r\n", |e| {
                matches!(e, RequestError::Authority(_))
            }),
            (b"GET http://a.test/ HTTP/1.1\r\nbad header\r\n\r\n", |e| {
                matches!(e, RequestError::Header(_))
            }),
        ];
        for (req, is) in cases {
            let err = parse_http(req).unwrap_err();
            assert!(is(&err), "{}: {err:?}", String::from_utf8_lossy(req));
        }
        // The default port matches an explicit :80.
        assert!(parse_http(b"GET http://a.test/ HTTP/1.1\r\nHost: a.test:80\r\n\r\n").is_ok());
        let long = [
            b"GET http://a.test/ HTTP/1.1\r\nX: ".as_slice(),
            &[b'a'; MAX_HEAD],
        ]
        .concat();
        assert_eq!(parse_http(&long), Err(RequestError::TooLong));
    }

    #[test]
    fn socks5_reads_names_and_addresses() {
        assert_eq!(
            parse_socks_greeting(&[5, 1, 0]).unwrap(),
            Parsed::Done((), 3)
        );
        assert_eq!(parse_socks_greeting(&[5, 2]).unwrap(), Parsed::Incomplete);
        assert_eq!(
            parse_socks_greeting(&[5, 1, 2]),
            Err(RequestError::SocksMethods)
        );
        assert_eq!(
            parse_socks_greeting(&[4, 1, 0]),
            Err(RequestError::SocksVersion(4))
        );
        let mut name = vec![5, 1, 0, 3, 6];
        name.extend_from_slice(b"a.test");
        name.extend_from_slice(&443u16.to_be_bytes());
        assert_eq!(
            parse_socks_request(&name).unwrap(),
            Parsed::Done(target("a.test:443"), name.len())
        );
        assert_eq!(parse_socks_request(&name[..8]).unwrap(), Parsed::Incomplete);
        let v4 = [5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90];
        assert_eq!(
            parse_socks_request(&v4).unwrap(),
            Parsed::Done(target("127.0.0.1:8080"), 10)
        );
        let mut v6 = vec![5, 1, 0, 4];
        v6.extend_from_slice(
            &"::ffff:169.254.169.254"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
        );
        v6.extend_from_slice(&80u16.to_be_bytes());
        let Parsed::Done(t, _) = parse_socks_request(&v6).unwrap() else {
            panic!()
        };
        assert_eq!(t.host, Host::Ip("::ffff:169.254.169.254".parse().unwrap()));
        assert_eq!(
            parse_socks_request(&[5, 2, 0, 1]),
            Err(RequestError::SocksCommand(2))
        );
        assert_eq!(
            parse_socks_request(&[5, 1, 0, 9, 0, 0]),
            Err(RequestError::SocksAddressType(9))
        );
        assert!(parse_socks_request(&[5, 1, 0, 3, 3, b'a', b' ', b'b', 0, 80]).is_err());
    }

    #[test]
    fn a_refusal_names_cordon_and_the_rule() {
        let text = String::from_utf8(http_refusal(
            "403 Forbidden",
            "b.test:443 is not listed\r\nX: y",
        ))
        .unwrap();
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"));
        assert!(text.contains("X-Cordon-Refused: b.test:443 is not listed  X: y\r\n"));
        assert!(text.ends_with("cordon refused this request: b.test:443 is not listed\r\nX: y\n"));
    }

    proptest::proptest! {
        #[test]
        fn the_readers_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = parse_http(&bytes);
            let _ = parse_socks_greeting(&bytes);
            let _ = parse_socks_request(&bytes);
        }
    }
}
