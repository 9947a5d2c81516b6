//! cordon-proxy's readers on fuzzed bytes: what a jailed tool sends the proxy.
//!
//! Beyond "no panic": a reader that is done took no more bytes than it was given; an HTTP
//! request that is done names a destination whose port is not 0, and a forwarded request's
//! head is in origin form; an allowlist entry that parses prints back to itself; a server name
//! is lowercase; and the verdict for any destination through a resolver that answers with the
//! input's own addresses never allows an address that is not public unless it is listed.

#![no_main]

use std::net::IpAddr;

use cordon_proxy::request::{self, HttpRequest, Parsed};
use cordon_proxy::{Allowlist, Pattern, Resolver, classify, tls};
use libfuzzer_sys::fuzz_target;

/// Answers every name with addresses cut from the input.
struct FromInput(Vec<IpAddr>);

impl Resolver for FromInput {
    fn resolve(&self, _name: &str) -> Result<Vec<IpAddr>, String> {
        Ok(self.0.clone())
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(Parsed::Done(req, used)) = request::parse_http(data) {
        assert!(used <= data.len());
        match req {
            HttpRequest::Connect(t) => assert_ne!(t.port, 0),
            HttpRequest::Forward { target, head } => {
                assert_ne!(target.port, 0);
                let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
                let path = line.split(|b| *b == b' ').nth(1).unwrap_or_default();
                assert!(path.starts_with(b"/"), "not origin form: {line:?}");
                assert!(head.ends_with(b"Connection: close\r\n\r\n"));
            }
        }
    }
    if let Ok(Parsed::Done((), used)) = request::parse_socks_greeting(data) {
        assert!(used <= data.len());
    }
    if let Ok(Parsed::Done(t, used)) = request::parse_socks_request(data) {
        assert!(used <= data.len());
        assert_ne!(t.port, 0);
    }
    if let Ok(Parsed::Done(name, used)) = tls::server_name(data) {
        assert!(used <= data.len());
        if let Some(n) = name {
            assert_eq!(n, n.to_ascii_lowercase());
        }
    }

    // Entries, one per line of the input's text.
    let text = String::from_utf8_lossy(data);
    let entries: Vec<&str> = text.lines().take(8).collect();
    for e in &entries {
        if let Ok(p) = Pattern::parse(e) {
            assert_eq!(
                Pattern::parse(&p.to_string()).ok(),
                Some(p.clone()),
                "{e:?}"
            );
        }
    }
    let addrs: Vec<IpAddr> = data
        .chunks_exact(16)
        .take(4)
        .map(|c| {
            let mut o = [0u8; 16];
            o.copy_from_slice(c);
            IpAddr::from(o)
        })
        .collect();
    let Ok(list) = Allowlist::parse(
        &entries
            .iter()
            .filter(|e| Pattern::parse(e).is_ok())
            .collect::<Vec<_>>(),
    ) else {
        return;
    };
    let target = match request::parse_socks_request(data) {
        Ok(Parsed::Done(t, _)) => t,
        _ => return,
    };
    if let Ok(allowed) = list.decide(&target, &FromInput(addrs)) {
        for a in allowed.addrs {
            assert!(
                classify(a.ip()).reachable_by_name()
                    || list.patterns().iter().any(|p| p.matches_addr(a)),
                "{a} allowed without an entry"
            );
        }
    }
});
