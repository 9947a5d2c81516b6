//! The destination proxy of a `proxy` network, served: the only way out of a jail whose network
//! namespace holds nothing but `lo`. Behind the `server` feature.
//!
//! The proxy does not know how its listening socket is made or reaches it: [`start`] takes a
//! function its thread calls first, with the proxy's stop descriptor (readable once the proxy
//! is ending), that returns the listener or `None`. The launcher's bridge (`cordon-launch`'s
//! `proxy.rs`) waits there for the listener the stage made inside the jail's own network
//! namespace and sent over a socket pair (`SCM_RIGHTS`); a socket keeps the namespace it was
//! made in, so only processes of that jail can connect to it. The proxy then accepts on it,
//! outside the jail, on a thread of its own per jail, and every decision is this crate's
//! ([`Allowlist::decide`]): the name matched, resolved here, each address checked, the
//! connection made to a checked address (never a second lookup), a tunnel's TLS server name
//! compared with the host it was opened to.
//!
//! Every refusal is recorded ([`Record::denied`], a `network-denied` violation of the result)
//! and answered so the tool says why: HTTP `403` whose body names cordon and the rule, or the
//! SOCKS5 reply "not allowed by ruleset". Allowed connections are counted per destination.
//!
//! The proxy ends with its jail ([`JailProxy::finish`]): the accept thread stops, every live
//! connection is shut down, the listener closes with the thread.

mod serve;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::{Allowlist, Resolver, Target};

/// The port the stage listens on inside the jail's network namespace (its own: no other
/// process of the host can hold it).
pub const PORT: u16 = 3128;

/// The variables set inside a proxied jail (never taken from the host): every tool that honours
/// a proxy variable goes through the proxy; `NO_PROXY` is empty so nothing bypasses it (and
/// nothing could: the jail has no other route).
pub fn env_vars() -> Vec<(&'static str, String)> {
    env_vars_at(PORT)
}

/// [`env_vars`] for a proxy listening at `127.0.0.1:port` (a jail without a network namespace
/// of its own reaches the launcher's listener on the host's loopback, at a port the kernel
/// chose).
pub fn env_vars_at(port: u16) -> Vec<(&'static str, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
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
    ) -> Result<Rules, crate::PatternError> {
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

/// One jail's proxy: the thread that waits for its listener and accepts on it.
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

/// Starts the proxy of one jail: its thread first calls `listener` with the proxy's stop
/// descriptor (readable once the proxy is ending, so a `listener` that waits can wait on it
/// too), then serves the listener it returns with `rules`; `None` ends the proxy at once.
pub fn start<L>(rules: Arc<Rules>, listener: L) -> std::io::Result<JailProxy>
where
    L: FnOnce(&OwnedFd) -> Option<TcpListener> + Send + 'static,
{
    let (stop_read, stop_write) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(std::io::Error::from)?;
    let shared = Arc::new(Shared::default());
    let inner = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("cordon-proxy".into())
        .spawn(move || {
            if let Some(listener) = listener(&stop_read) {
                accept_loop(&rules, &inner, &listener, &stop_read);
            }
        })?;
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

fn accept_loop(rules: &Arc<Rules>, shared: &Arc<Shared>, listener: &TcpListener, stop: &OwnedFd) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let listening: OwnedFd = match listener.try_clone() {
        Ok(l) => l.into(),
        Err(_) => return,
    };
    while accept_ready(stop, &listening) {
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
                serve::serve(&rules, &inner, conn, id);
                inner.unregister(id);
                inner.active.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Waits until `listening` has a connection to accept: `false` once `stop` is readable (the
/// proxy is ending), which wins over a waiting connection, or when polling fails.
fn accept_ready(stop: &OwnedFd, listening: &OwnedFd) -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [
        PollFd::new(stop, PollFlags::IN),
        PollFd::new(listening, PollFlags::IN),
    ];
    loop {
        match poll(&mut fds, None) {
            Ok(_) => return fds[0].revents().is_empty() && !fds[1].revents().is_empty(),
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}
