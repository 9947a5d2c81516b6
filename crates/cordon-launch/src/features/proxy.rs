//! The bridge of a `proxy` network: how the destination proxy (`cordon-proxy`'s `server`, a
//! thread of the launcher per jail) gets a listener only the jail can connect to.
//!
//! The stage, inside the jail's own network namespace, listens on `127.0.0.1:`[`PORT`]
//! (`stage::listen_for_proxy`) before anything else runs there, hands the listening socket to the
//! launcher over a socket pair (`SCM_RIGHTS`, [`crate::host::sys::send_fd`]), closes its own copy and
//! execs the payload. A socket keeps the namespace it was made in: only processes of that jail
//! can connect to it, nothing in the jail holds a route out, and no process inside forwards
//! anything. The proxy's thread waits here for it ([`start`]) and then accepts on it, outside
//! the jail; the serving, the decisions and the record of refusals are `cordon-proxy`'s.
//!
//! Nothing of the proxy outlives the launcher: the listener exists only in the launcher's
//! descriptor table once the stage closed its copy, and the jail's namespace goes with the
//! jail.

use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::sync::Arc;

pub(crate) use cordon_proxy::server::{
    Denied, JailProxy, Rules, SystemResolver, env_vars, env_vars_at,
};
pub use cordon_proxy::server::{Destination, PORT};

use crate::host::sys;

/// Starts the proxy of one jail: it receives the listener on `channel` (the launcher's end of
/// the socket pair whose other end the stage holds), then serves it with `rules`.
pub(crate) fn start(rules: Arc<Rules>, channel: OwnedFd) -> std::io::Result<JailProxy> {
    cordon_proxy::server::start(rules, move |stop: &OwnedFd| receive(&channel, stop))
}

/// Starts the proxy of one jail on a listener of the launcher's own, on the host's loopback
/// (the Landlock backend, whose supervisor lets the jail reach that one host socket).
pub(crate) fn start_on(rules: Arc<Rules>, listener: TcpListener) -> std::io::Result<JailProxy> {
    cordon_proxy::server::start(rules, move |_stop: &OwnedFd| Some(listener))
}

/// The stage's listener, once it is sent on `channel`; `None` when the proxy ends first or the
/// stage closes its end without sending one (a stage whose self-checks failed).
fn receive(channel: &OwnedFd, stop: &OwnedFd) -> Option<TcpListener> {
    match sys::wait_readable(&[stop, channel]) {
        Ok(1) => {}
        _ => return None,
    }
    match sys::recv_fd(channel) {
        Ok(Some(fd)) => Some(TcpListener::from(fd)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use std::io::Read;
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;

    fn rules() -> Arc<Rules> {
        Arc::new(Rules::new(&["a.test".into()], Box::new(SystemResolver)).unwrap())
    }

    #[test]
    fn the_listener_sent_over_the_socket_pair_is_served() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, theirs) = sys::socket_pair().unwrap();
        let proxy = start(rules(), ours).unwrap();
        sys::send_fd(&theirs, &OwnedFd::from(listener)).unwrap();
        drop(theirs);
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        std::io::Write::write_all(&mut c, b"CONNECT b.test:443 HTTP/1.1\r\n\r\n").unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        assert!(out.starts_with(b"HTTP/1.1 403"), "{out:?}");
        let record = proxy.finish();
        assert_eq!(record.denied.len(), 1, "{record:?}");
        assert_eq!(record.denied[0].host.as_deref(), Some("b.test"));
    }

    #[test]
    fn a_stage_that_sends_nothing_leaves_an_empty_record() {
        let (ours, theirs) = sys::socket_pair().unwrap();
        let proxy = start(rules(), ours).unwrap();
        drop(theirs);
        let record = proxy.finish();
        assert!(record.denied.is_empty() && record.destinations.is_empty());
    }

    #[test]
    fn a_proxy_ended_before_the_stage_sends_stops_waiting() {
        let (ours, _theirs) = sys::socket_pair().unwrap();
        let proxy = start(rules(), ours).unwrap();
        assert!(proxy.finish().denied.is_empty());
    }
}
