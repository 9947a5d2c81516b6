//! The server name a TLS ClientHello asks for, read from the first bytes a tool sends through a
//! tunnel (no TLS library: the proxy only reads the client's clear-text first message).

use crate::request::Parsed;

/// The most bytes of handshake records read while looking for the whole ClientHello.
pub const MAX_HELLO: usize = 64 * 1024;

/// Why the first bytes of a tunnel are not a ClientHello the proxy can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    /// The first byte is not a TLS handshake record.
    #[error("the tunnel's first bytes are not TLS")]
    NotTls,
    /// The handshake is not a ClientHello, or its structure is broken.
    #[error("the TLS ClientHello is malformed: {0}")]
    Malformed(&'static str),
    /// The ClientHello is longer than [`MAX_HELLO`].
    #[error("the TLS ClientHello is longer than {MAX_HELLO} bytes")]
    TooLong,
}

/// Whether `bytes` starts like a TLS handshake record (content type 22, major version 3).
pub fn looks_like_tls(bytes: &[u8]) -> bool {
    matches!(bytes, [22, 3, ..] | [22])
}

/// Reads the ClientHello at the start of `bytes` (it may span several records) and returns its
/// server name (`None`: the client sent no `server_name`, as clients do for an address),
/// lowercased, and the bytes it took.
pub fn server_name(bytes: &[u8]) -> Result<Parsed<Option<String>>, TlsError> {
    if bytes.is_empty() {
        return Ok(Parsed::Incomplete);
    }
    if !looks_like_tls(bytes) {
        return Err(TlsError::NotTls);
    }
    let mut handshake = Vec::new();
    let mut at = 0;
    loop {
        let Some(header) = bytes.get(at..at + 5) else {
            return incomplete(bytes);
        };
        if header[0] != 22 || header[1] != 3 {
            return Err(TlsError::Malformed(
                "a record inside the ClientHello is not a handshake",
            ));
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len == 0 {
            return Err(TlsError::Malformed("an empty handshake record"));
        }
        let Some(fragment) = bytes.get(at + 5..at + 5 + len) else {
            return incomplete(bytes);
        };
        handshake.extend_from_slice(fragment);
        at += 5 + len;
        if handshake.len() >= 4 {
            if handshake[0] != 1 {
                return Err(TlsError::Malformed(
                    "the first handshake message is not a ClientHello",
                ));
            }
            let body_len = (usize::from(handshake[1]) << 16)
                | (usize::from(handshake[2]) << 8)
                | usize::from(handshake[3]);
            if body_len + 4 > MAX_HELLO {
                return Err(TlsError::TooLong);
            }
            if handshake.len() >= body_len + 4 {
                return hello_name(&handshake[4..4 + body_len]).map(|n| Parsed::Done(n, at));
            }
        }
        if at > MAX_HELLO {
            return Err(TlsError::TooLong);
        }
    }
}

fn incomplete(bytes: &[u8]) -> Result<Parsed<Option<String>>, TlsError> {
    if bytes.len() > MAX_HELLO + 5 {
        Err(TlsError::TooLong)
    } else {
        Ok(Parsed::Incomplete)
    }
}

/// A cursor over a ClientHello body; every read past its end is `Malformed`.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], TlsError> {
        if self.0.len() < n {
            return Err(TlsError::Malformed(
                "a length runs past the end of the ClientHello",
            ));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<usize, TlsError> {
        Ok(usize::from(self.take(1)?[0]))
    }
    fn u16(&mut self) -> Result<usize, TlsError> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    fn vec8(&mut self) -> Result<&'a [u8], TlsError> {
        let n = self.u8()?;
        self.take(n)
    }
    fn vec16(&mut self) -> Result<&'a [u8], TlsError> {
        let n = self.u16()?;
        self.take(n)
    }
}

fn hello_name(body: &[u8]) -> Result<Option<String>, TlsError> {
    let mut r = Reader(body);
    r.take(2 + 32)?; // legacy version, random
    r.vec8()?; // session id
    r.vec16()?; // cipher suites
    r.vec8()?; // compression methods
    if r.0.is_empty() {
        return Ok(None);
    }
    let mut extensions = Reader(r.vec16()?);
    let mut found = None;
    while !extensions.0.is_empty() {
        let kind = extensions.u16()?;
        let data = extensions.vec16()?;
        if kind != 0 {
            continue;
        }
        if found.is_some() {
            return Err(TlsError::Malformed("two server_name extensions"));
        }
        let mut list = Reader(Reader(data).vec16()?);
        let mut name = None;
        while !list.0.is_empty() {
            let name_type = list.u8()?;
            let value = list.vec16()?;
            if name_type != 0 {
                continue;
            }
            if name.is_some() {
                return Err(TlsError::Malformed("two host names in server_name"));
            }
            let text = std::str::from_utf8(value)
                .map_err(|_| TlsError::Malformed("the server name is not text"))?;
            name = Some(text.to_ascii_lowercase());
        }
        found = Some(name.ok_or(TlsError::Malformed("server_name holds no host name"))?);
    }
    Ok(found)
}

/// A minimal ClientHello asking for `name` (none: no `server_name` extension), as one record:
/// what a TLS client's first flight looks like to the proxy. For tests and the escape suite.
pub fn client_hello(name: Option<&str>) -> Vec<u8> {
    let mut ext = Vec::new();
    if let Some(name) = name {
        let n = name.as_bytes();
        let entry_len = 1 + 2 + n.len();
        ext.extend_from_slice(&0u16.to_be_bytes());
        ext.extend_from_slice(&((2 + entry_len) as u16).to_be_bytes());
        ext.extend_from_slice(&(entry_len as u16).to_be_bytes());
        ext.push(0);
        ext.extend_from_slice(&(n.len() as u16).to_be_bytes());
        ext.extend_from_slice(n);
    }
    let mut body = vec![3, 3];
    body.extend_from_slice(&[0x2a; 32]);
    body.push(0);
    body.extend_from_slice(&[0, 2, 0x13, 0x01]);
    body.extend_from_slice(&[1, 0]);
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut hs = vec![1];
    hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&body);
    let mut rec = vec![22, 3, 1];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]
    use super::*;

    #[test]
    fn the_server_name_is_read_from_one_record_or_several() {
        let hello = client_hello(Some("A.Example.com"));
        assert_eq!(
            server_name(&hello).unwrap(),
            Parsed::Done(Some("a.example.com".into()), hello.len())
        );
        let none = client_hello(None);
        assert_eq!(server_name(&none).unwrap(), Parsed::Done(None, none.len()));
        for cut in 0..hello.len() {
            assert_eq!(
                server_name(&hello[..cut]).unwrap(),
                Parsed::Incomplete,
                "{cut}"
            );
        }
        // The same handshake split over two records.
        let hs = &hello[5..];
        let mut split = vec![22, 3, 1, 0, 10];
        split.extend_from_slice(&hs[..10]);
        split.extend_from_slice(&[22, 3, 1]);
        split.extend_from_slice(&((hs.len() - 10) as u16).to_be_bytes());
        split.extend_from_slice(&hs[10..]);
        assert_eq!(
            server_name(&split).unwrap(),
            Parsed::Done(Some("a.example.com".into()), split.len())
        );
    }

    #[test]
    fn what_is_not_a_client_hello_is_refused() {
        assert_eq!(server_name(b"GET / HTTP/1.1\r\n"), Err(TlsError::NotTls));
        assert_eq!(server_name(b"SSH-2.0-x"), Err(TlsError::NotTls));
        let mut server_hello = client_hello(Some("a.test"));
        server_hello[5] = 2;
        assert!(matches!(
            server_name(&server_hello),
            Err(TlsError::Malformed(_))
        ));
        let mut short = client_hello(Some("a.test"));
        let last = short.len() - 1;
        short[last - 7] = 0xff; // the name's length runs past the end
        assert!(server_name(&short).is_err());
        assert_eq!(
            server_name(&[22, 3, 1, 0, 0]),
            Err(TlsError::Malformed("an empty handshake record"))
        );
        assert_eq!(
            server_name(&[22, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff]),
            Err(TlsError::TooLong)
        );
    }

    proptest::proptest! {
        #[test]
        fn the_reader_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = server_name(&bytes);
            let mut tls = vec![22, 3, 1];
            tls.extend_from_slice(&bytes);
            let _ = server_name(&tls);
        }
    }
}
