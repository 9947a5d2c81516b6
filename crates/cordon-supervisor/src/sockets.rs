//! The calls that name an address, when the network is denied and no namespace holds the jail:
//! `bind`, `connect`, `listen`, `sendto` with a destination, `sendmsg`, `sendmmsg`.
//!
//! Each handler takes the caller's socket itself (`pidfd_getfd`: the same open file
//! description), reads the address once, judges it (`net.rs`) and performs the call on that
//! socket with an address it built from its own copy. A bind lands on loopback; a connect or a
//! send reaches only a socket the jail bound (its inode in [`Owned`], checked against the
//! kernel's tables), a socket file the jail bound, or a granted host socket (the proxy). A
//! send copies the caller's data and ancillary data (its descriptors taken over like the
//! socket), and a send or connect that would block is finished on a thread of its own.
//!
//! Abstract Unix names are the host's, with no network namespace: the jail's are given a
//! prefix unique to the run, when bound and when connected to, so the jail can neither take a
//! name a host program listens for nor reach one.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};

use crate::judge::{Change, Refusal, Rules};
use crate::net::{self, Address, Owned, Proto};
use crate::netsys::{self, SocketInfo};
use crate::ops::Outcome;
use crate::resolve::Caller;
use crate::sys;

/// The most bytes one send copies: a stream send is shortened to it (as the kernel may),
/// a datagram larger than it fails with `EMSGSIZE`.
const MAX_SEND: usize = 1 << 20;
/// The most ancillary bytes one send copies.
const MAX_CONTROL: usize = 64 * 1024;
/// The most buffers of one message (`UIO_MAXIOV`), and messages of one `sendmmsg`.
const MAX_IOV: usize = 1024;

/// What the socket handlers share: the notification (to check that its caller is the one the
/// socket is taken from) and the jail's sockets.
pub(crate) struct Net<'a> {
    pub(crate) listener: std::os::fd::BorrowedFd<'a>,
    pub(crate) id: u64,
    pub(crate) owned: &'a Arc<Mutex<Owned>>,
    /// The run's prefix for abstract Unix names.
    pub(crate) prefix: &'a [u8],
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Outcome::Errno(errno_of(&e)),
        }
    };
}

macro_rules! outcome {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(o) => return o,
        }
    };
}

fn refused(addr: &Address, errno: i32) -> Outcome {
    Outcome::Refused(Refusal {
        path: net::shown(addr).into(),
        rule: "network",
        errno,
        key: None,
    })
}

/// The caller's socket `fd`, the pidfd it was taken through, and what it is.
struct Taken {
    pidfd: OwnedFd,
    sock: OwnedFd,
    info: SocketInfo,
}

fn take(c: &Caller<'_>, n: &Net<'_>, fd: u64) -> io::Result<Taken> {
    let pidfd = netsys::pidfd(c.pid)?;
    if !netsys::id_valid(n.listener, n.id) {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    let sock = netsys::take_fd(pidfd.as_fd(), fd)?;
    let info = netsys::socket_info(sock.as_fd())?;
    Ok(Taken { pidfd, sock, info })
}

impl Net<'_> {
    fn own(&self, inode: u64) {
        self.owned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sockets
            .insert(inode);
    }

    fn owns(&self, found: &[u64]) -> bool {
        let owned = self.owned.lock().unwrap_or_else(PoisonError::into_inner);
        net::all_owned(found, &owned.sockets)
    }

    /// The abstract name the jail's `name` is in the host's namespace of names.
    fn abstract_name(&self, name: &[u8]) -> Result<Vec<u8>, i32> {
        let full = if name.starts_with(self.prefix) {
            name.to_vec()
        } else {
            [self.prefix, name].concat()
        };
        if full.len() > 107 {
            return Err(libc::ENAMETOOLONG);
        }
        Ok([&(libc::AF_UNIX as u16).to_ne_bytes()[..], &[0], &full].concat())
    }
}

/// A raw address copied from the caller (`len` bytes at `addr`, at most
/// [`net::MAX_ADDRESS`]).
fn address(c: &Caller<'_>, addr: u64, len: u64) -> Result<Address, Outcome> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > net::MAX_ADDRESS {
        return Err(Outcome::Errno(libc::EINVAL));
    }
    let raw = c
        .bytes(addr, len)
        .map_err(|e| Outcome::Errno(errno_of(&e)))?;
    net::parse(&raw).map_err(Outcome::Errno)
}

/// Where a connect or send goes: the raw address to use, and the socket file it names (held
/// open while its `/proc/self/fd` path is used).
struct Destination {
    raw: Vec<u8>,
    _file: Option<OwnedFd>,
}

fn destination(
    c: &Caller<'_>,
    n: &Net<'_>,
    info: &SocketInfo,
    addr: &Address,
) -> Result<Destination, Outcome> {
    let plain = |raw| Ok(Destination { raw, _file: None });
    match addr {
        Address::Inet(a) => {
            let proto = match info.kind {
                libc::SOCK_STREAM => Proto::Tcp,
                libc::SOCK_DGRAM => Proto::Udp,
                _ => return Err(refused(addr, libc::ENETUNREACH)),
            };
            if !net::canonical(a.ip()).is_loopback() {
                return Err(refused(addr, libc::ENETUNREACH));
            }
            if n.owns(&bound(proto, *a)) {
                plain(net::encode(*a))
            } else {
                Err(refused(addr, libc::ECONNREFUSED))
            }
        }
        Address::UnixPath(path) => {
            let place = c
                .place(libc::AT_FDCWD as u64, path, true)
                .map_err(|e| Outcome::Errno(errno_of(&e)))?;
            let file = sys::openat(
                Some(place.dir.as_fd()),
                std::os::unix::ffi::OsStrExt::as_bytes(place.name.as_os_str()),
                libc::O_PATH | libc::O_NOFOLLOW,
                0,
            )
            .map_err(|e| Outcome::Errno(errno_of(&e)))?;
            let (mode, dev, ino) =
                sys::stat(file.as_fd()).map_err(|e| Outcome::Errno(errno_of(&e)))?;
            let mine = mode & libc::S_IFMT == libc::S_IFSOCK
                && n.owned
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .files
                    .contains(&(dev, ino));
            if !mine {
                return Err(refused(
                    &Address::UnixPath(place.path.as_os_str().as_encoded_bytes().to_vec()),
                    libc::ECONNREFUSED,
                ));
            }
            let raw = net::unix_path(format!("/proc/self/fd/{}", file.as_raw_fd()).as_bytes())
                .map_err(Outcome::Errno)?;
            Ok(Destination {
                raw,
                _file: Some(file),
            })
        }
        Address::UnixAbstract(name) => {
            let raw = n.abstract_name(name).map_err(Outcome::Errno)?;
            let table = std::fs::read("/proc/net/unix").unwrap_or_default();
            if n.owns(&net::abstract_bound(&table, &raw[3..])) {
                plain(raw)
            } else {
                Err(refused(addr, libc::ECONNREFUSED))
            }
        }
        Address::UnixUnnamed => Err(Outcome::Errno(libc::EINVAL)),
        // A send's AF_UNSPEC is read as IPv4 by the kernel: never passed on.
        Address::Unspec | Address::Other(_) => Err(refused(addr, libc::EAFNOSUPPORT)),
    }
}

/// The sockets bound where `dest` reaches, from the kernel's socket diagnostics (an IPv4
/// destination in the IPv6 family too, where a dual-stack socket may hold it); from
/// `/proc/net` where the diagnostics are missing.
fn bound(proto: Proto, dest: SocketAddr) -> Vec<u64> {
    let (protocol, states, name) = match proto {
        Proto::Tcp => (libc::IPPROTO_TCP as u8, 1u32 << 10, "tcp"),
        Proto::Udp => (libc::IPPROTO_UDP as u8, u32::MAX, "udp"),
    };
    let families: &[(u8, &str)] = if net::canonical(dest.ip()).is_ipv4() {
        &[(libc::AF_INET as u8, ""), (libc::AF_INET6 as u8, "6")]
    } else {
        &[(libc::AF_INET6 as u8, "6")]
    };
    let mut found = Vec::new();
    for (family, suffix) in families {
        let sockets = netsys::diag_dump(*family, protocol, states)
            .ok()
            .and_then(|answer| net::diag_sockets(&answer).ok())
            .map(|(sockets, _)| sockets)
            .unwrap_or_else(|| {
                let table = std::fs::read_to_string(format!("/proc/net/{name}{suffix}"));
                net::table_sockets(&table.unwrap_or_default(), proto)
            });
        found.extend(net::reaching(&sockets, dest));
    }
    found
}

/// `bind(fd, addr, len)`.
pub(crate) fn bind(rules: &Rules, c: &Caller<'_>, n: &Net<'_>, a: [u64; 3]) -> Outcome {
    let t = tri!(take(c, n, a[0]));
    let addr = outcome!(address(c, a[1], a[2]));
    match &addr {
        Address::Inet(at) => {
            let Some(target) = net::bind_target(*at) else {
                return refused(&addr, libc::EADDRNOTAVAIL);
            };
            n.own(t.info.inode);
            netsys::bind(t.sock.as_fd(), &net::encode(target)).into()
        }
        Address::UnixPath(path) => {
            let place = tri!(c.place(libc::AT_FDCWD as u64, path, false));
            if let Err(r) = rules.judge(Change::Create, &place.path) {
                return Outcome::Refused(r);
            }
            // Bound by the caller's own name (relative ones from its working directory), since
            // the kernel keeps that name for getsockname and peers (multiprocessing's managers
            // hand it on); then checked to have landed where it was judged.
            let raw = outcome!(net::unix_path(path).map_err(Outcome::Errno));
            let name = place.name.as_encoded_bytes();
            if path.first() != Some(&b'/') {
                let cwd = tri!(sys::openat(
                    None,
                    format!("/proc/{}/cwd", c.pid).as_bytes(),
                    libc::O_PATH | libc::O_DIRECTORY,
                    0,
                ));
                tri!(netsys::enter(cwd.as_fd()));
            }
            sys::set_umask(c.umask());
            tri!(netsys::bind(t.sock.as_fd(), &raw));
            n.own(t.info.inode);
            let made = sys::openat(
                Some(place.dir.as_fd()),
                name,
                libc::O_PATH | libc::O_NOFOLLOW,
                0,
            )
            .and_then(|f| sys::stat(f.as_fd()));
            match made {
                Ok((mode, dev, ino)) if mode & libc::S_IFMT == libc::S_IFSOCK => {
                    n.owned
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .files
                        .insert((dev, ino));
                    Outcome::Value(0)
                }
                // A directory on the way was swapped since it was judged: the socket is not
                // where the judge allowed it (a socket file, which no program runs or reads).
                _ => Outcome::Refused(Refusal {
                    path: place.path,
                    rule: "network",
                    errno: libc::EACCES,
                    key: None,
                }),
            }
        }
        Address::UnixAbstract(name) => {
            let raw = outcome!(n.abstract_name(name).map_err(Outcome::Errno));
            n.own(t.info.inode);
            netsys::bind(t.sock.as_fd(), &raw).into()
        }
        Address::UnixUnnamed => {
            n.own(t.info.inode);
            netsys::bind(t.sock.as_fd(), &(libc::AF_UNIX as u16).to_ne_bytes()).into()
        }
        // AF_UNSPEC with the any address binds an IPv4 socket to every interface.
        Address::Unspec | Address::Other(_) => refused(&addr, libc::EAFNOSUPPORT),
    }
}

/// `connect(fd, addr, len)`.
pub(crate) fn connect(c: &Caller<'_>, n: &Net<'_>, a: [u64; 3]) -> Outcome {
    let t = tri!(take(c, n, a[0]));
    let addr = outcome!(address(c, a[1], a[2]));
    if addr == Address::Unspec {
        // Dissolves the association: reaches nothing.
        let unspec = 0u16.to_ne_bytes();
        let raw = [&unspec[..], &[0u8; 14]].concat();
        return netsys::connect(t.sock.as_fd(), &raw).into();
    }
    let dest = outcome!(destination(c, n, &t.info, &addr));
    n.own(t.info.inode);
    if t.info.nonblocking {
        return netsys::connect(t.sock.as_fd(), &dest.raw).into();
    }
    Outcome::LaterValue(Box::new(move || {
        // The whole destination, its socket file's descriptor included.
        let dest = &dest;
        netsys::connect(t.sock.as_fd(), &dest.raw).map(|()| 0)
    }))
}

/// `listen(fd, backlog)`: an IPv4 or IPv6 socket not bound yet is bound to loopback first (the
/// kernel would bind it to every interface).
pub(crate) fn listen(c: &Caller<'_>, n: &Net<'_>, a: [u64; 2]) -> Outcome {
    let t = tri!(take(c, n, a[0]));
    if matches!(t.info.domain, libc::AF_INET | libc::AF_INET6) {
        let local = tri!(netsys::local_address(t.sock.as_fd()));
        if let Ok(Address::Inet(at)) = net::parse(&local)
            && at.port() == 0
        {
            let ip: std::net::IpAddr = if t.info.domain == libc::AF_INET {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            tri!(netsys::bind(
                t.sock.as_fd(),
                &net::encode(SocketAddr::new(ip, 0))
            ));
        }
    }
    n.own(t.info.inode);
    netsys::listen(t.sock.as_fd(), a[1] as i32).into()
}

/// One message, copied and judged, ready to send.
struct Message {
    data: Vec<u8>,
    dest: Option<Destination>,
    control: Vec<u8>,
    /// The descriptors the ancillary data passes, taken from the caller.
    _passed: Vec<OwnedFd>,
}

/// The data of `iov` (`count` buffers) in the caller's memory, at most [`MAX_SEND`] bytes;
/// `EMSGSIZE` for a larger datagram.
fn gather(c: &Caller<'_>, info: &SocketInfo, iov: u64, count: u64) -> Result<Vec<u8>, i32> {
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count > MAX_IOV {
        return Err(libc::EMSGSIZE);
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    let io = |e: io::Error| errno_of(&e);
    let words = c.words(iov, count * 2).map_err(io)?;
    let mut data = Vec::new();
    for pair in words.chunks_exact(2) {
        let (base, len) = (
            pair[0] as u64,
            usize::try_from(pair[1]).unwrap_or(usize::MAX),
        );
        let room = MAX_SEND - data.len();
        if len > room && info.kind != libc::SOCK_STREAM {
            return Err(libc::EMSGSIZE);
        }
        data.extend(c.bytes(base, len.min(room)).map_err(io)?);
        if data.len() == MAX_SEND {
            break;
        }
    }
    Ok(data)
}

/// The ancillary data at `at` (`len` bytes), with every descriptor passed (`SCM_RIGHTS`) taken
/// from the caller and replaced by this process's copy.
fn ancillary(
    c: &Caller<'_>,
    pidfd: &OwnedFd,
    at: u64,
    len: u64,
) -> Result<(Vec<u8>, Vec<OwnedFd>), i32> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if at == 0 || len == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    if len > MAX_CONTROL {
        return Err(libc::ENOBUFS);
    }
    let mut control = c.bytes(at, len).map_err(|e| errno_of(&e))?;
    let mut passed = Vec::new();
    let header = std::mem::size_of::<libc::cmsghdr>();
    let mut off = 0;
    while off + header <= control.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&control[off..off + 8]);
        let clen = usize::try_from(u64::from_ne_bytes(w)).unwrap_or(usize::MAX);
        if clen < header || off + clen > control.len() {
            return Err(libc::EINVAL);
        }
        let int = |c: &[u8], i: usize| i32::from_ne_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
        let (level, kind) = (int(&control, off + 8), int(&control, off + 12));
        if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
            let mut at = off + header;
            while at + 4 <= off + clen {
                let theirs = int(&control, at);
                let mine =
                    netsys::take_fd(pidfd.as_fd(), theirs as u64).map_err(|e| errno_of(&e))?;
                control[at..at + 4].copy_from_slice(&mine.as_raw_fd().to_ne_bytes());
                passed.push(mine);
                at += 4;
            }
        }
        off += (clen + 7) & !7;
    }
    Ok((control, passed))
}

/// The `msghdr` at `at` in the caller's memory, copied and judged.
/// Whether a send's destination means nothing: TCP ignores it (unless `MSG_FASTOPEN`, which
/// connects with it), so it is left out rather than judged (a server answering a client by its
/// address on the connected socket is not refused).
fn ignored_destination(info: &SocketInfo, flags: i32) -> bool {
    matches!(info.domain, libc::AF_INET | libc::AF_INET6)
        && info.kind == libc::SOCK_STREAM
        && flags & libc::MSG_FASTOPEN == 0
}

fn message(
    c: &Caller<'_>,
    n: &Net<'_>,
    t: &Taken,
    at: u64,
    flags: i32,
) -> Result<Message, Outcome> {
    let e = |e: i32| Outcome::Errno(e);
    // msg_name, msg_namelen, msg_iov, msg_iovlen, msg_control, msg_controllen, msg_flags.
    let h = c.words(at, 7).map_err(|x| e(errno_of(&x)))?;
    let (name, namelen) = (h[0] as u64, h[1] as u64 & 0xffff_ffff);
    let dest = if name != 0 && namelen > 0 && !ignored_destination(&t.info, flags) {
        let addr = address(c, name, namelen)?;
        Some(destination(c, n, &t.info, &addr)?)
    } else {
        None
    };
    let data = gather(c, &t.info, h[2] as u64, h[3] as u64).map_err(e)?;
    let (control, passed) = ancillary(c, &t.pidfd, h[4] as u64, h[5] as u64).map_err(e)?;
    Ok(Message {
        data,
        dest,
        control,
        _passed: passed,
    })
}

/// Sends `m` on the caller's socket: at once when it can, else (a blocking socket whose buffer
/// is full) on a thread of its own. `SIGPIPE` goes to the caller, not to this process.
fn deliver(c: &Caller<'_>, t: Taken, m: Message, flags: i32, done: Option<u64>) -> Outcome {
    let pid = c.pid;
    let wait = !t.info.nonblocking && flags & libc::MSG_DONTWAIT == 0;
    let send = move |extra: i32| -> io::Result<i64> {
        // The whole message, its held descriptors included, lives as long as the closure.
        let m = &m;
        let r = netsys::send(
            t.sock.as_fd(),
            &m.data,
            m.dest.as_ref().map(|d| d.raw.as_slice()),
            &m.control,
            flags | libc::MSG_NOSIGNAL | extra,
        );
        if let Err(e) = &r
            && e.raw_os_error() == Some(libc::EPIPE)
            && flags & libc::MSG_NOSIGNAL == 0
        {
            netsys::raise_sigpipe(pid);
        }
        let sent = r?;
        if let Some(len_at) = done {
            netsys::write_memory(pid, len_at, &(sent as u32).to_ne_bytes())?;
            return Ok(1);
        }
        Ok(sent as i64)
    };
    match send(libc::MSG_DONTWAIT) {
        Err(e) if wait && e.raw_os_error() == Some(libc::EAGAIN) => {
            Outcome::LaterValue(Box::new(move || send(0)))
        }
        Ok(v) => Outcome::Value(v),
        Err(e) => Outcome::Errno(errno_of(&e)),
    }
}

/// `sendto(fd, buf, len, flags, addr, addrlen)` with a destination.
pub(crate) fn sendto(c: &Caller<'_>, n: &Net<'_>, a: [u64; 6]) -> Outcome {
    let t = tri!(take(c, n, a[0]));
    let dest = if ignored_destination(&t.info, a[3] as i32) {
        None
    } else {
        let addr = outcome!(address(c, a[4], a[5]));
        Some(outcome!(destination(c, n, &t.info, &addr)))
    };
    let len = usize::try_from(a[2]).unwrap_or(usize::MAX);
    if len > MAX_SEND && t.info.kind != libc::SOCK_STREAM {
        return Outcome::Errno(libc::EMSGSIZE);
    }
    let data = tri!(c.bytes(a[1], len.min(MAX_SEND)));
    n.own(t.info.inode);
    let m = Message {
        data,
        dest,
        control: Vec::new(),
        _passed: Vec::new(),
    };
    deliver(c, t, m, a[3] as i32, None)
}

/// `sendmsg(fd, msg, flags)`.
pub(crate) fn sendmsg(c: &Caller<'_>, n: &Net<'_>, a: [u64; 3]) -> Outcome {
    let t = tri!(take(c, n, a[0]));
    let m = outcome!(message(c, n, &t, a[1], a[2] as i32));
    n.own(t.info.inode);
    deliver(c, t, m, a[2] as i32, None)
}

/// `sendmmsg(fd, msgvec, vlen, flags)`: message by message, each `msg_len` written back; a
/// failure after the first ends it with the count sent.
pub(crate) fn sendmmsg(c: &Caller<'_>, n: &Net<'_>, a: [u64; 4]) -> Outcome {
    /// `struct mmsghdr`: a `msghdr` then `msg_len`, padded.
    const ENTRY: u64 = 64;
    let count = a[2].min(MAX_IOV as u64);
    let mut sent = 0;
    for i in 0..count {
        let at = a[1] + i * ENTRY;
        let t = tri!(take(c, n, a[0]));
        let m = match message(c, n, &t, at, a[3] as i32) {
            Ok(m) => m,
            Err(o) if sent == 0 => return o,
            Err(_) => break,
        };
        n.own(t.info.inode);
        let flags = a[3] as i32;
        // Only the first may wait: after one is sent, the count is the answer.
        let flags = if sent == 0 {
            flags
        } else {
            flags | libc::MSG_DONTWAIT
        };
        match deliver(c, t, m, flags, Some(at + 56)) {
            Outcome::Value(_) => sent += 1,
            later @ Outcome::LaterValue(_) if sent == 0 => return later,
            other if sent == 0 => return other,
            _ => break,
        }
    }
    Outcome::Value(sent)
}
