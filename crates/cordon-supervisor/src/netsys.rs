//! The system calls on the caller's descriptors — sockets, and the masters of its terminals:
//! with `sys.rs`, the only module of this crate with `unsafe`.
//!
//! The supervisor acts on the caller's own socket, taken with `pidfd_getfd(2)` (the same open
//! file description: what it binds, connects or sends is the caller's), with addresses it built
//! itself from the copy it judged.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

fn cvt(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

fn own(fd: libc::c_long) -> io::Result<OwnedFd> {
    let fd = RawFd::try_from(fd).map_err(|_| errno(libc::EBADF))?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread that need not lead its group.
const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;

/// A pidfd for the calling thread `tid`: for the thread itself where the kernel allows it,
/// else for its thread group (read from `/proc`).
pub(crate) fn pidfd(tid: u32) -> io::Result<OwnedFd> {
    let pid = libc::c_long::from(tid);
    // SAFETY: pidfd_open takes two integers.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, PIDFD_THREAD) };
    if let Ok(fd) = cvt(rc) {
        return own(fd);
    }
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    let tgid: libc::c_long = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| errno(libc::ESRCH))?;
    // SAFETY: as above.
    own(cvt(unsafe {
        libc::syscall(libc::SYS_pidfd_open, tgid, 0)
    })?)
}

/// The caller's descriptor `fd`, duplicated into this process (`pidfd_getfd(2)`).
pub(crate) fn take_fd(pidfd: BorrowedFd<'_>, fd: u64) -> io::Result<OwnedFd> {
    let fd = i32::try_from(fd as i64).map_err(|_| errno(libc::EBADF))?;
    // SAFETY: pidfd_getfd takes three integers and returns a new descriptor.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_getfd,
            libc::c_long::from(pidfd.as_raw_fd()),
            libc::c_long::from(fd),
            0 as libc::c_long,
        )
    };
    own(cvt(rc)?)
}

/// Whether the notification `id` is still pending (its caller has not died since): checked
/// after a pidfd is taken, so the pid it was taken for was the caller's.
pub(crate) fn id_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    // SAFETY: the ioctl reads one u64.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &raw mut id,
        )
    };
    rc == 0
}

/// What a socket is: its inode, domain, type, and whether its file is non-blocking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketInfo {
    pub(crate) inode: u64,
    pub(crate) domain: i32,
    pub(crate) kind: i32,
    pub(crate) nonblocking: bool,
}

fn int_option(fd: BorrowedFd<'_>, name: i32) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `v`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            (&raw mut v).cast(),
            &raw mut len,
        )
    };
    cvt(rc.into())?;
    Ok(v)
}

/// [`SocketInfo`] of `fd`; `ENOTSOCK` for anything but a socket.
pub(crate) fn socket_info(fd: BorrowedFd<'_>) -> io::Result<SocketInfo> {
    let (mode, _, inode) = crate::sys::stat(fd)?;
    if mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(errno(libc::ENOTSOCK));
    }
    // SAFETY: F_GETFL takes no pointer.
    let flags = cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) }.into())?;
    Ok(SocketInfo {
        inode,
        domain: int_option(fd, libc::SO_DOMAIN)?,
        kind: int_option(fd, libc::SO_TYPE)?,
        nonblocking: flags & libc::c_long::from(libc::O_NONBLOCK) != 0,
    })
}

fn socklen(addr: &[u8]) -> io::Result<libc::socklen_t> {
    libc::socklen_t::try_from(addr.len()).map_err(|_| errno(libc::EINVAL))
}

/// `bind(2)` of `fd` to the raw socket address `addr`.
pub(crate) fn bind(fd: BorrowedFd<'_>, addr: &[u8]) -> io::Result<()> {
    // SAFETY: the kernel reads `addr.len()` bytes of `addr`.
    let rc = unsafe { libc::bind(fd.as_raw_fd(), addr.as_ptr().cast(), socklen(addr)?) };
    cvt(rc.into()).map(drop)
}

/// `connect(2)` of `fd` to the raw socket address `addr`.
pub(crate) fn connect(fd: BorrowedFd<'_>, addr: &[u8]) -> io::Result<()> {
    // SAFETY: the kernel reads `addr.len()` bytes of `addr`.
    let rc = unsafe { libc::connect(fd.as_raw_fd(), addr.as_ptr().cast(), socklen(addr)?) };
    cvt(rc.into()).map(drop)
}

/// `listen(2)`.
pub(crate) fn listen(fd: BorrowedFd<'_>, backlog: i32) -> io::Result<()> {
    // SAFETY: two integers.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), backlog) }.into()).map(drop)
}

/// The raw local address of `fd` (`getsockname(2)`).
pub(crate) fn local_address(fd: BorrowedFd<'_>) -> io::Result<Vec<u8>> {
    let mut buf = [0u8; 128];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockname writes at most `len` bytes into `buf`.
    let rc = unsafe { libc::getsockname(fd.as_raw_fd(), buf.as_mut_ptr().cast(), &raw mut len) };
    cvt(rc.into())?;
    Ok(buf[..(len as usize).min(buf.len())].to_vec())
}

/// `sendmsg(2)` of one buffer, with a destination (`name`, raw, or none) and ancillary data
/// (`control`, raw, already holding this process's descriptors).
pub(crate) fn send(
    fd: BorrowedFd<'_>,
    data: &[u8],
    name: Option<&[u8]>,
    control: &[u8],
    flags: i32,
) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr().cast_mut().cast(),
        iov_len: data.len(),
    };
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    if let Some(name) = name {
        msg.msg_name = name.as_ptr().cast_mut().cast();
        msg.msg_namelen = socklen(name)?;
    }
    if !control.is_empty() {
        msg.msg_control = control.as_ptr().cast_mut().cast();
        msg.msg_controllen = control.len();
    }
    // SAFETY: every pointer in `msg` points into buffers that live across the call, and the
    // kernel only reads them.
    let n = cvt(unsafe { libc::sendmsg(fd.as_raw_fd(), &raw const msg, flags) } as libc::c_long)?;
    usize::try_from(n).map_err(|_| errno(libc::EIO))
}

/// Writes `bytes` at `addr` in process `pid` (`process_vm_writev`): a result the call returns
/// through memory (`sendmmsg(2)`'s `msg_len`).
pub(crate) fn write_memory(pid: u32, addr: u64, bytes: &[u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: bytes.as_ptr().cast_mut().cast(),
        iov_len: bytes.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let pid = libc::pid_t::try_from(pid).map_err(|_| errno(libc::ESRCH))?;
    // SAFETY: one local iovec over `bytes`, read only; the remote one is an address in the
    // other process, checked by the kernel.
    let n = unsafe { libc::process_vm_writev(pid, &raw const local, 1, &raw const remote, 1, 0) };
    if cvt(n as libc::c_long)? as usize == bytes.len() {
        Ok(())
    } else {
        Err(errno(libc::EFAULT))
    }
}

/// Makes `dir` the supervisor thread's working directory (its own: `unshare(CLONE_FS)`), so a
/// socket is bound at a name in it.
pub(crate) fn enter(dir: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fchdir takes a descriptor.
    cvt(unsafe { libc::fchdir(dir.as_raw_fd()) }.into()).map(drop)
}

/// `SIGPIPE` to the caller's process, which a send to a closed stream raises when the caller
/// did not ask for `MSG_NOSIGNAL` (the supervisor always does, for itself).
pub(crate) fn raise_sigpipe(tid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(tid) {
        // SAFETY: kill takes two integers.
        unsafe { libc::kill(pid, libc::SIGPIPE) };
    }
}

/// `NETLINK_SOCK_DIAG` and its `SOCK_DIAG_BY_FAMILY` request.
const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;

/// The kernel's socket diagnostics for one family and protocol, in the TCP states of the
/// bitmask `states` (`1 << 10`: listeners), dumped (`NETLINK_SOCK_DIAG`): the raw answer,
/// every netlink message up to `NLMSG_DONE`, for `net::diag_sockets`. Only the sockets asked
/// for are walked, not every connection of the host as `/proc/net/tcp` does.
pub(crate) fn diag_dump(family: u8, protocol: u8, states: u32) -> io::Result<Vec<u8>> {
    // SAFETY: socket takes integers and returns a new descriptor.
    let fd = own(cvt(unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    }
    .into())?)?;
    const LEN: usize = 16 + 56;
    let mut request = [0u8; LEN];
    request[..4].copy_from_slice(&(LEN as u32).to_ne_bytes());
    request[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    request[6..8].copy_from_slice(&flags.to_ne_bytes());
    request[16] = family;
    request[17] = protocol;
    request[20..24].copy_from_slice(&states.to_ne_bytes());
    // SAFETY: send reads `request`, which lives across the call.
    let sent = unsafe { libc::send(fd.as_raw_fd(), request.as_ptr().cast(), request.len(), 0) };
    cvt(sent as libc::c_long)?;
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        let n = usize::try_from(cvt(n as libc::c_long)?).unwrap_or(0);
        if n == 0 {
            return Ok(answer);
        }
        answer.extend_from_slice(&buf[..n]);
        match crate::net::diag_sockets(&answer) {
            Ok((_, true)) => return Ok(answer),
            Ok((_, false)) => {}
            Err(e) => return Err(errno(e)),
        }
    }
}

/// The number of the pseudo-terminal whose master `fd` is (`TIOCGPTN`).
pub(crate) fn pty_number(fd: BorrowedFd<'_>) -> io::Result<u32> {
    let mut n: libc::c_uint = 0;
    // SAFETY: the ioctl writes one unsigned int.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGPTN, &raw mut n) };
    cvt(rc.into())?;
    Ok(n)
}

/// The device number (`st_rdev`) of the character device `fd` opens; `None` for anything else.
pub(crate) fn char_device(fd: BorrowedFd<'_>) -> io::Result<Option<u64>> {
    // SAFETY: stat is plain data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a live descriptor writes one stat.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &raw mut st) }.into())?;
    Ok((st.st_mode & libc::S_IFMT == libc::S_IFCHR).then_some(st.st_rdev))
}
