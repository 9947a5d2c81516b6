#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::SocketAddr;

use super::*;
use crate::{request, tls};

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

/// A proxy over a listener of this test's (the bridge's part, played here).
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
    let proxy = start(Arc::new(rules), move |_stop: &OwnedFd| Some(listener)).unwrap();
    (proxy, addr)
}

/// A local upstream server that answers `hello` to whatever it is sent.
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
    let out = String::from_utf8(exchange(addr, b"GET http://meta.test/ HTTP/1.1\r\n\r\n")).unwrap();
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

#[test]
fn a_proxy_whose_listener_never_comes_ends_when_finished() {
    let rules = Rules::new(&["a.test".into()], Box::new(SystemResolver)).unwrap();
    // The listener function waits on the stop descriptor, as the launcher's bridge does, and
    // sees it readable (end of file) once the proxy ends.
    let (saw, seen) = std::sync::mpsc::channel();
    let proxy = start(Arc::new(rules), move |stop: &OwnedFd| {
        let mut byte = [0u8; 1];
        let _ = saw.send(rustix::io::read(stop, &mut byte).map_err(std::io::Error::from));
        None
    })
    .unwrap();
    assert_eq!(proxy.finish(), Record::default());
    assert_eq!(
        seen.recv().unwrap().unwrap(),
        0,
        "end of file on the stop descriptor"
    );
}
