//! The system calls: the only module of this crate with `unsafe`.
//!
//! Each wrapper takes owned or borrowed descriptors and byte strings and returns an
//! [`io::Result`]; nothing here decides anything.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// One notification: the calling thread and its call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notification {
    pub(crate) id: u64,
    pub(crate) pid: u32,
    pub(crate) nr: i64,
    pub(crate) args: [u64; 6],
}

fn cvt(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn cstr(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn own(fd: libc::c_long) -> io::Result<OwnedFd> {
    let fd = RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Waits for the next notification (`SECCOMP_IOCTL_NOTIF_RECV`).
pub(crate) fn receive(listener: BorrowedFd<'_>) -> io::Result<Notification> {
    // SAFETY: seccomp_notif is plain data; zeroed is what the ioctl requires.
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one seccomp_notif into `n`.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &raw mut n,
        )
    };
    cvt(rc.into())?;
    Ok(Notification {
        id: n.id,
        pid: n.pid,
        nr: i64::from(n.data.nr),
        args: n.data.args,
    })
}

/// Answers a notification: `Ok(value)` is the call's return value, `Err(errno)` its error.
pub(crate) fn respond(
    listener: BorrowedFd<'_>,
    id: u64,
    result: Result<i64, i32>,
) -> io::Result<()> {
    let (val, error) = match result {
        Ok(v) => (v, 0),
        Err(e) => (0, -e.abs()),
    };
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: the ioctl reads one seccomp_notif_resp.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &raw mut resp,
        )
    };
    cvt(rc.into()).map(drop)
}

/// Puts `fd` into the caller's descriptor table and answers the call with its number
/// (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SEND`, atomically).
pub(crate) fn send_fd(
    listener: BorrowedFd<'_>,
    id: u64,
    fd: BorrowedFd<'_>,
    cloexec: bool,
) -> io::Result<()> {
    let mut add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: u32::try_from(fd.as_raw_fd())
            .map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: the ioctl reads one seccomp_notif_addfd.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &raw mut add,
        )
    };
    cvt(rc.into()).map(drop)
}

/// Reads `len` bytes at `addr` in process `pid` (`process_vm_readv`); fewer at the end of a
/// mapping.
pub(crate) fn read_memory(pid: u32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: one local iovec over `buf`, which lives across the call; the remote one is only
    // an address in the other process, checked by the kernel.
    let n = unsafe { libc::process_vm_readv(pid, &raw const local, 1, &raw const remote, 1, 0) };
    let n = usize::try_from(cvt(n as libc::c_long)?).unwrap_or(0);
    buf.truncate(n);
    Ok(buf)
}

/// Gives the calling thread a filesystem context (umask, cwd) of its own (`unshare(CLONE_FS)`),
/// so that [`set_umask`] changes no other thread's.
pub(crate) fn own_fs_context() -> io::Result<()> {
    // SAFETY: unshare with a flag; no memory is passed.
    cvt(unsafe { libc::unshare(libc::CLONE_FS) }.into()).map(drop)
}

/// Sets the calling thread's umask (after [`own_fs_context`]).
pub(crate) fn set_umask(mask: u32) {
    // SAFETY: umask cannot fail.
    unsafe { libc::umask(mask & 0o777) };
}

/// Empties the calling thread's effective capability set: a supervisor started by root does
/// for the jail only what the jail, which has none, could do.
pub(crate) fn drop_effective_capabilities() -> io::Result<()> {
    set_effective(0)
}

/// `CAP_CHOWN` and `CAP_FOWNER`, as bits of the first capability word.
const OWNER_CAPS: u32 = (1 << 0) | (1 << 3);

/// Runs `f` with `CAP_CHOWN` and `CAP_FOWNER` in the calling thread's effective set when its
/// permitted set has them (a root launcher), then empties the effective set again.
pub(crate) fn with_owner_caps<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    set_effective(OWNER_CAPS)?;
    let out = f();
    set_effective(0)?;
    out
}

/// Sets the calling thread's effective capabilities (first word) to `effective` within its
/// permitted set; the second word to none.
fn set_effective(effective: u32) -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget fills two Data for version 3.
    cvt(unsafe { libc::syscall(libc::SYS_capget, &raw mut header, data.as_mut_ptr()) })?;
    data[0].effective = effective & data[0].permitted;
    data[1].effective = 0;
    // SAFETY: capset reads the header and two Data; pid 0 is the calling thread.
    cvt(unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) }).map(drop)
}

/// `openat(2)`.
pub(crate) fn openat(
    dir: Option<BorrowedFd<'_>>,
    path: &[u8],
    flags: i32,
    mode: u32,
) -> io::Result<OwnedFd> {
    let path = cstr(path)?;
    let dir = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a live C string; the result is a new descriptor or -1.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    own(cvt(fd.into())?)
}

/// `readlinkat(2)`.
pub(crate) fn readlinkat(dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<OsString> {
    let name = cstr(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(cvt(n as libc::c_long)?).unwrap_or(0);
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

/// The path a descriptor of this process stands for (`/proc/self/fd/N`).
pub(crate) fn fd_path(fd: BorrowedFd<'_>) -> io::Result<OsString> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map(std::path::PathBuf::into_os_string)
}

fn at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<(RawFd, CString)> {
    Ok((dir.as_raw_fd(), cstr(name.as_bytes())?))
}

/// `mkdirat(2)`.
pub(crate) fn mkdirat(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let (d, n) = at(dir, name)?;
    // SAFETY: a live C string.
    cvt(unsafe { libc::mkdirat(d, n.as_ptr(), mode) }.into()).map(drop)
}

/// `mknodat(2)`, for regular files, fifos and sockets only (device 0).
pub(crate) fn mknodat(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let (d, n) = at(dir, name)?;
    // SAFETY: a live C string.
    cvt(unsafe { libc::mknodat(d, n.as_ptr(), mode, 0) }.into()).map(drop)
}

/// `unlinkat(2)`.
pub(crate) fn unlinkat(dir: BorrowedFd<'_>, name: &OsStr, flags: i32) -> io::Result<()> {
    let (d, n) = at(dir, name)?;
    // SAFETY: a live C string.
    cvt(unsafe { libc::unlinkat(d, n.as_ptr(), flags) }.into()).map(drop)
}

/// `renameat2(2)`.
pub(crate) fn renameat2(
    from: BorrowedFd<'_>,
    old: &OsStr,
    to: BorrowedFd<'_>,
    new: &OsStr,
    flags: u32,
) -> io::Result<()> {
    let (fd1, n1) = at(from, old)?;
    let (fd2, n2) = at(to, new)?;
    // SAFETY: live C strings.
    cvt(unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            fd1,
            n1.as_ptr(),
            fd2,
            n2.as_ptr(),
            flags,
        )
    })
    .map(drop)
}

/// `linkat(2)` from a path (`/proc/self/fd/N` for a descriptor) to `to`/`new`.
pub(crate) fn link(old: &[u8], to: BorrowedFd<'_>, new: &OsStr, follow: bool) -> io::Result<()> {
    let old = cstr(old)?;
    let (d, n) = at(to, new)?;
    let flags = if follow { libc::AT_SYMLINK_FOLLOW } else { 0 };
    // SAFETY: live C strings.
    cvt(unsafe { libc::linkat(libc::AT_FDCWD, old.as_ptr(), d, n.as_ptr(), flags) }.into())
        .map(drop)
}

/// `symlinkat(2)`.
pub(crate) fn symlinkat(target: &[u8], dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let target = cstr(target)?;
    let (d, n) = at(dir, name)?;
    // SAFETY: live C strings.
    cvt(unsafe { libc::symlinkat(target.as_ptr(), d, n.as_ptr()) }.into()).map(drop)
}

/// `ftruncate(2)`.
pub(crate) fn ftruncate(fd: BorrowedFd<'_>, len: i64) -> io::Result<()> {
    // SAFETY: a live descriptor.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), len) }.into()).map(drop)
}

/// `chmod(2)` on a path.
pub(crate) fn chmod(path: &[u8], mode: u32) -> io::Result<()> {
    let path = cstr(path)?;
    // SAFETY: a live C string.
    cvt(unsafe { libc::chmod(path.as_ptr(), mode) }.into()).map(drop)
}

/// `fchownat(2)`: `name` in `dir`, or `dir` itself when `name` is empty.
pub(crate) fn fchownat(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    uid: u32,
    gid: u32,
    nofollow: bool,
) -> io::Result<()> {
    let (d, n) = at(dir, name)?;
    let mut flags = if nofollow {
        libc::AT_SYMLINK_NOFOLLOW
    } else {
        0
    };
    if name.is_empty() {
        flags |= libc::AT_EMPTY_PATH;
    }
    // SAFETY: a live C string.
    cvt(unsafe { libc::fchownat(d, n.as_ptr(), uid, gid, flags) }.into()).map(drop)
}

/// `utimensat(2)` on `name` in `dir`; `times` as the call's two timespecs, or `None` for now.
pub(crate) fn utimensat(
    dir: Option<BorrowedFd<'_>>,
    name: &[u8],
    times: Option<[(i64, i64); 2]>,
    nofollow: bool,
) -> io::Result<()> {
    let n = cstr(name)?;
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    let ts = times.map(|t| {
        t.map(|(sec, nsec)| libc::timespec {
            tv_sec: sec,
            tv_nsec: nsec,
        })
    });
    let ptr = ts.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
    let flags = if nofollow {
        libc::AT_SYMLINK_NOFOLLOW
    } else {
        0
    };
    // SAFETY: a live C string and, when given, two live timespecs.
    cvt(unsafe { libc::utimensat(d, n.as_ptr(), ptr, flags) }.into()).map(drop)
}

/// `setxattr(2)` or `lsetxattr(2)` on a path.
pub(crate) fn setxattr(
    path: &[u8],
    name: &[u8],
    value: &[u8],
    flags: i32,
    nofollow: bool,
) -> io::Result<()> {
    let path = cstr(path)?;
    let name = cstr(name)?;
    // SAFETY: live C strings and a live value slice.
    let rc = unsafe {
        if nofollow {
            libc::lsetxattr(
                path.as_ptr(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                flags,
            )
        } else {
            libc::setxattr(
                path.as_ptr(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                flags,
            )
        }
    };
    cvt(rc.into()).map(drop)
}

/// `removexattr(2)` or `lremovexattr(2)` on a path.
pub(crate) fn removexattr(path: &[u8], name: &[u8], nofollow: bool) -> io::Result<()> {
    let path = cstr(path)?;
    let name = cstr(name)?;
    // SAFETY: live C strings.
    let rc = unsafe {
        if nofollow {
            libc::lremovexattr(path.as_ptr(), name.as_ptr())
        } else {
            libc::removexattr(path.as_ptr(), name.as_ptr())
        }
    };
    cvt(rc.into()).map(drop)
}

/// Whether `fd` (an `O_PATH` descriptor of this process) is a symbolic link, a directory, a
/// fifo, and its mode's type bits.
pub(crate) fn file_type(fd: BorrowedFd<'_>) -> io::Result<u32> {
    stat(fd).map(|(mode, _, _)| mode & libc::S_IFMT)
}

/// `(mode, device, inode)` of `fd` (any descriptor, `O_PATH` included), not following it.
pub(crate) fn stat(fd: BorrowedFd<'_>) -> io::Result<(u32, u64, u64)> {
    // SAFETY: stat is plain data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat with AT_EMPTY_PATH on a live descriptor writes one stat.
    let rc = unsafe {
        libc::fstatat(
            fd.as_raw_fd(),
            c"".as_ptr(),
            &raw mut st,
            libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    cvt(rc.into())?;
    Ok((st.st_mode, st.st_dev, st.st_ino))
}

/// Waits until the listener has a notification (`true`) or no process uses the filter any
/// more (`false`, `POLLHUP`).
pub(crate) fn wait_readable(listener: BorrowedFd<'_>) -> io::Result<bool> {
    loop {
        let mut p = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let rc = unsafe { libc::poll(&raw mut p, 1, -1) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if p.revents & libc::POLLIN != 0 {
            return Ok(true);
        }
        if p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return Ok(false);
        }
    }
}

/// In a child between `fork` and `exec`: installs `program` as a seccomp filter with a listener
/// (`SECCOMP_FILTER_FLAG_NEW_LISTENER`, no-new-privileges already set), tells the launcher over
/// the socket `to` its process id and the listener's number, waits until the launcher took the
/// listener ([`take_listener`]), then closes it. Async-signal-safe: raw calls on memory
/// prepared before the fork.
///
/// The listener is not sent with `sendmsg(2)`: the filter may send that very call to the
/// listener, which nobody serves yet. `write` and `read` are never supervised.
pub fn install_with_listener(program: &[libc::sock_filter], to: RawFd) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp with a program that lives across the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &raw const prog,
        )
    };
    let fd = RawFd::try_from(cvt(fd)?).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: getpid takes nothing.
    let pid = unsafe { libc::getpid() };
    let mut said = [0u8; 8];
    said[..4].copy_from_slice(&pid.to_ne_bytes());
    said[4..].copy_from_slice(&fd.to_ne_bytes());
    let mut ack = [0u8; 1];
    // SAFETY: write and read on the locals above; close of the listener this call made.
    let taken = unsafe {
        let wrote = libc::write(to, said.as_ptr().cast(), said.len());
        let read = if wrote == 8 {
            libc::read(to, ack.as_mut_ptr().cast(), 1)
        } else {
            -1
        };
        libc::close(fd);
        read == 1 && ack[0] == 1
    };
    if taken {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::EPROTO))
    }
}

/// How long [`take_listener`] waits for the child's word.
const HANDOVER_PATIENCE_MS: i32 = 30_000;

/// Takes the listener of a child that calls [`install_with_listener`] with the other end of
/// `from`, on a thread of its own started *before* the spawn (the child waits for it before
/// its `exec`, and the spawn returns after the `exec`): the child's word read, its listener
/// duplicated with `pidfd_getfd(2)`, the child told to go on. An error when the child ended or
/// said nothing for 30 s.
///
/// # Errors
///
/// When the thread cannot be started.
pub fn take_listener(from: OwnedFd) -> io::Result<std::thread::JoinHandle<io::Result<OwnedFd>>> {
    std::thread::Builder::new()
        .name("cordon-handover".into())
        .spawn(move || {
            let mut p = libc::pollfd {
                fd: from.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one live pollfd.
            let rc = unsafe { libc::poll(&raw mut p, 1, HANDOVER_PATIENCE_MS) };
            if rc <= 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the child did not hand its seccomp listener over",
                ));
            }
            let mut said = [0u8; 8];
            // SAFETY: read into a local array of that size.
            let n = unsafe { libc::read(from.as_raw_fd(), said.as_mut_ptr().cast(), 8) };
            if n != 8 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the child ended before handing its seccomp listener over",
                ));
            }
            let pid = u32::from_ne_bytes([said[0], said[1], said[2], said[3]]);
            let fd = u32::from_ne_bytes([said[4], said[5], said[6], said[7]]);
            let pidfd = crate::netsys::pidfd(pid)?;
            let listener = crate::netsys::take_fd(std::os::fd::AsFd::as_fd(&pidfd), u64::from(fd))?;
            // SAFETY: write of one byte from a local.
            let wrote = unsafe { libc::write(from.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            cvt(wrote as libc::c_long)?;
            Ok(listener)
        })
}
