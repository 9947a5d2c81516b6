//! One handler per supervised call: decode the arguments, resolve, judge, perform.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use crate::broker;
use crate::judge::{Change, Refusal, Rules};
use crate::netsys;
use crate::resolve::{Caller, Place};
use crate::sockets::{self, Net};
use crate::sys::{self, Notification};
use crate::terminals;

/// What a handler ends with.
pub(crate) enum Outcome {
    /// The call's return value.
    Value(i64),
    /// A descriptor to install in the caller, which is then the call's value.
    Fd(OwnedFd, bool),
    /// The call fails with this errno (the kernel's own answer for the supervisor's attempt).
    Errno(i32),
    /// The judge refused it.
    Refused(Refusal),
    /// A git configuration brokered: the call succeeded, without these keys.
    Brokered(Vec<Refusal>),
    /// An open that may wait (a FIFO's), judged already: done on a thread of its own, its
    /// descriptor then installed like [`Outcome::Fd`]'s.
    Later(Box<dyn FnOnce() -> io::Result<OwnedFd> + Send>, bool),
    /// A call that may wait (a blocking connect, a send to a full buffer), judged already:
    /// done on a thread of its own, its value then the answer.
    LaterValue(Box<dyn FnOnce() -> io::Result<i64> + Send>),
}

impl From<io::Result<()>> for Outcome {
    fn from(r: io::Result<()>) -> Outcome {
        match r {
            Ok(()) => Outcome::Value(0),
            Err(e) => Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Outcome::Errno(io::Error::raw_os_error(&e).unwrap_or(libc::EIO)),
        }
    };
}

macro_rules! judged {
    ($rules:expr, $change:expr, $path:expr) => {
        if let Err(r) = $rules.judge($change, $path) {
            return Outcome::Refused(r);
        }
    };
}

fn self_fd(fd: BorrowedFd<'_>) -> Vec<u8> {
    format!("/proc/self/fd/{}", fd.as_raw_fd()).into_bytes()
}

/// The inode `via` names, opened `O_PATH` without following it; a link where one was followed
/// (the caller swapped it in since) is `ELOOP`.
fn inode(via: &[u8], follow: bool, by_path: bool) -> io::Result<OwnedFd> {
    if !by_path {
        // The caller's descriptor, through this process's magic link: followed.
        return sys::openat(None, via, libc::O_PATH, 0);
    }
    let f = sys::openat(None, via, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
    if follow && sys::file_type(f.as_fd())? == libc::S_IFLNK {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(f)
}

/// [`Change::Create`] when nothing is at the place yet, else [`Change::Write`].
fn new_or_existing(place: &Place) -> Change {
    match sys::openat(
        Some(place.dir.as_fd()),
        place.name.as_bytes(),
        libc::O_PATH | libc::O_NOFOLLOW,
        0,
    ) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Change::Create,
        _ => Change::Write,
    }
}

fn in_dir(place: &Place) -> Vec<u8> {
    [&self_fd(place.dir.as_fd())[..], b"/", place.name.as_bytes()].concat()
}

/// Handles one notification from `listener`; `net` is there when the rules have a network
/// part.
pub(crate) fn handle(
    rules: &Rules,
    listener: BorrowedFd<'_>,
    net: Option<&Net<'_>>,
    n: &Notification,
) -> Outcome {
    let c = Caller {
        pid: n.pid,
        shm: rules.shm.as_deref(),
        listener,
        id: n.id,
    };
    let a = n.args;
    let nr = n.nr;
    match nr {
        libc::SYS_openat => open(rules, &c, a[0], a[1], a[2], a[3]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => open(rules, &c, libc::AT_FDCWD as u64, a[0], a[1], a[2]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => open(
            rules,
            &c,
            libc::AT_FDCWD as u64,
            a[0],
            (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
            a[1],
        ),
        libc::SYS_mkdirat => make(rules, &c, a[0], a[1], a[2], None),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mkdir => make(rules, &c, libc::AT_FDCWD as u64, a[0], a[1], None),
        libc::SYS_mknodat => make(rules, &c, a[0], a[1], a[2], Some(a[3])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => make(rules, &c, libc::AT_FDCWD as u64, a[0], a[1], Some(a[2])),
        libc::SYS_unlinkat => remove(rules, &c, a[0], a[1], a[2] as i32),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_unlink => remove(rules, &c, libc::AT_FDCWD as u64, a[0], 0),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rmdir => remove(rules, &c, libc::AT_FDCWD as u64, a[0], libc::AT_REMOVEDIR),
        libc::SYS_renameat2 => rename(rules, &c, [a[0], a[1], a[2], a[3]], a[4] as u32),
        libc::SYS_renameat => rename(rules, &c, [a[0], a[1], a[2], a[3]], 0),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => {
            let cwd = libc::AT_FDCWD as u64;
            rename(rules, &c, [cwd, a[0], cwd, a[1]], 0)
        }
        libc::SYS_linkat => link(rules, &c, [a[0], a[1], a[2], a[3]], a[4] as i32),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_link => {
            let cwd = libc::AT_FDCWD as u64;
            link(rules, &c, [cwd, a[0], cwd, a[1]], 0)
        }
        libc::SYS_symlinkat => symlink(rules, &c, a[0], a[1], a[2]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_symlink => symlink(rules, &c, a[0], libc::AT_FDCWD as u64, a[1]),
        libc::SYS_truncate => truncate(rules, &c, a[0], a[1] as i64),
        libc::SYS_fchmodat => chmod(rules, &c, Target::At(a[0], a[1], true), a[2] as u32),
        libc::SYS_fchmodat2 => chmod(rules, &c, at(a[0], a[1], a[3] as i32), a[2] as u32),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chmod => chmod(
            rules,
            &c,
            Target::At(libc::AT_FDCWD as u64, a[0], true),
            a[1] as u32,
        ),
        libc::SYS_fchmod => chmod(rules, &c, Target::Fd(a[0]), a[1] as u32),
        libc::SYS_fchownat => chown(rules, &c, at(a[0], a[1], a[4] as i32), a[2], a[3]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chown => chown(
            rules,
            &c,
            Target::At(libc::AT_FDCWD as u64, a[0], true),
            a[1],
            a[2],
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_lchown => chown(
            rules,
            &c,
            Target::At(libc::AT_FDCWD as u64, a[0], false),
            a[1],
            a[2],
        ),
        libc::SYS_fchown => chown(rules, &c, Target::Fd(a[0]), a[1], a[2]),
        libc::SYS_utimensat => utimens(rules, &c, a),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utimes => utimes(rules, &c, libc::AT_FDCWD as u64, a[0], a[1]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_futimesat => utimes(rules, &c, a[0], a[1], a[2]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utime => utime(rules, &c, a[0], a[1]),
        libc::SYS_setxattr => setxattr(rules, &c, Target::At(libc::AT_FDCWD as u64, a[0], true), a),
        libc::SYS_lsetxattr => {
            setxattr(rules, &c, Target::At(libc::AT_FDCWD as u64, a[0], false), a)
        }
        libc::SYS_fsetxattr => setxattr(rules, &c, Target::Fd(a[0]), a),
        libc::SYS_removexattr => removexattr(
            rules,
            &c,
            Target::At(libc::AT_FDCWD as u64, a[0], true),
            a[1],
        ),
        libc::SYS_lremovexattr => removexattr(
            rules,
            &c,
            Target::At(libc::AT_FDCWD as u64, a[0], false),
            a[1],
        ),
        libc::SYS_fremovexattr => removexattr(rules, &c, Target::Fd(a[0]), a[1]),
        libc::SYS_bind
        | libc::SYS_connect
        | libc::SYS_listen
        | libc::SYS_sendto
        | libc::SYS_sendmsg
        | libc::SYS_sendmmsg => {
            let Some(net) = net else {
                return Outcome::Errno(libc::ENOSYS);
            };
            match nr {
                libc::SYS_bind => sockets::bind(rules, &c, net, [a[0], a[1], a[2]]),
                libc::SYS_connect => sockets::connect(&c, net, [a[0], a[1], a[2]]),
                libc::SYS_listen => sockets::listen(&c, net, [a[0], a[1]]),
                libc::SYS_sendto => sockets::sendto(&c, net, a),
                libc::SYS_sendmsg => sockets::sendmsg(&c, net, [a[0], a[1], a[2]]),
                _ => sockets::sendmmsg(&c, net, [a[0], a[1], a[2], a[3]]),
            }
        }
        // setxattrat and removexattrat (Linux 6.13) take their arguments in a structure; libc
        // falls back to the calls above.
        _ => Outcome::Errno(libc::ENOSYS),
    }
}

/// A path relative to a descriptor (followed at the end or not), or a descriptor itself.
enum Target {
    At(u64, u64, bool),
    Fd(u64),
}

fn at(dirfd: u64, path: u64, flags: i32) -> Target {
    if flags & libc::AT_EMPTY_PATH != 0 && path == 0 {
        return Target::Fd(dirfd);
    }
    Target::At(dirfd, path, flags & libc::AT_SYMLINK_NOFOLLOW == 0)
}

/// The inode a [`Target`] names, as a path this process can use, with its real path; the
/// `bool` is whether the path's last name must not be followed.
fn locate(
    c: &Caller<'_>,
    t: &Target,
) -> io::Result<(Vec<u8>, std::path::PathBuf, bool, Option<OwnedFd>)> {
    match *t {
        Target::Fd(fd) => {
            let f = c.fd(fd)?;
            let real = std::path::PathBuf::from(sys::fd_path(f.as_fd())?);
            Ok((self_fd(f.as_fd()), real, false, Some(f)))
        }
        Target::At(dirfd, path, follow) => {
            let path = c.string(path)?;
            if path.is_empty() {
                return Err(io::Error::from_raw_os_error(libc::ENOENT));
            }
            let place = c.place(dirfd, &path, follow)?;
            if place.magic {
                // `/proc/self/fd/N` (what `tar` uses): the caller's descriptor, judged where
                // it leads.
                let f = sys::openat(
                    Some(place.dir.as_fd()),
                    place.name.as_bytes(),
                    libc::O_PATH,
                    0,
                )?;
                let real = std::path::PathBuf::from(sys::fd_path(f.as_fd())?);
                return Ok((self_fd(f.as_fd()), real, false, Some(f)));
            }
            let via = in_dir(&place);
            Ok((via, place.path, true, Some(place.dir)))
        }
    }
}

fn open(rules: &Rules, c: &Caller<'_>, dirfd: u64, path: u64, flags: u64, mode: u64) -> Outcome {
    let flags = flags as i32;
    let mode = (mode as u32) & 0o7777;
    let path = tri!(c.string(path));
    let excl = flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0;
    let follow = flags & libc::O_NOFOLLOW == 0 && !excl;
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let tmpfile = flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let place = tri!(c.place(dirfd, &path, follow && !tmpfile));
    if tmpfile {
        // An unnamed file in a directory: judged as a new entry there.
        judged!(rules, Change::Write, &place.path.join("#tmpfile"));
        let dir = tri!(sys::openat(
            Some(place.dir.as_fd()),
            place.name.as_bytes(),
            libc::O_PATH | libc::O_DIRECTORY,
            0
        ));
        sys::set_umask(c.umask());
        let fd = tri!(sys::openat(
            Some(dir.as_fd()),
            b".",
            flags & !libc::O_CLOEXEC,
            mode
        ));
        return Outcome::Fd(fd, cloexec);
    }
    if place.magic {
        // The caller's own descriptor, reopened: judged where it leads.
        let f = tri!(sys::openat(
            Some(place.dir.as_fd()),
            place.name.as_bytes(),
            libc::O_PATH,
            0
        ));
        let real = tri!(sys::fd_path(f.as_fd()));
        if real.as_bytes().first() == Some(&b'/') {
            judged!(rules, Change::Write, std::path::Path::new(&real));
        }
        let reopen = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC);
        let fd = tri!(sys::openat(None, &self_fd(f.as_fd()), reopen, 0));
        return Outcome::Fd(fd, cloexec);
    }
    // The caller's terminals (terminals.rs): `/dev/tty` is its controlling terminal, not the
    // supervisor's (a shell's `> /dev/tty` asks O_CREAT: on an existing device it creates
    // nothing); a slave is opened for the caller that holds its master, else judged below.
    match terminals::callers_terminal(&place.path) {
        Some(terminals::CallersTerminal::Controlling) => {
            return open_controlling_terminal(rules, c, flags);
        }
        Some(terminals::CallersTerminal::Slave(n)) => {
            if let Some(outcome) = open_own_terminal(c, &place, n, flags) {
                return outcome;
            }
        }
        None => {}
    }
    let change = if flags & libc::O_CREAT != 0 {
        new_or_existing(&place)
    } else {
        Change::Write
    };
    judged!(rules, change, &place.path);
    if flags & libc::O_CREAT != 0 {
        sys::set_umask(c.umask());
    }
    let nofollow = if follow { libc::O_NOFOLLOW } else { 0 };
    let flags = (flags | nofollow) & !libc::O_CLOEXEC;
    // A FIFO's write-open waits for a reader: done on a thread of its own, so that the
    // supervisor goes on answering (the reader may need it first).
    if flags & libc::O_NONBLOCK == 0 && is_fifo(&place) {
        return Outcome::Later(
            Box::new(move || {
                sys::openat(Some(place.dir.as_fd()), place.name.as_bytes(), flags, mode)
            }),
            cloexec,
        );
    }
    let fd = tri!(sys::openat(
        Some(place.dir.as_fd()),
        place.name.as_bytes(),
        flags,
        mode
    ));
    Outcome::Fd(fd, cloexec)
}

/// The slave of terminal `n` at `place`, opened when the caller holds its master; `None`
/// (judged like any other path) when it does not.
fn open_own_terminal(c: &Caller<'_>, place: &Place, n: u32, flags: i32) -> Option<Outcome> {
    let pidfd = netsys::pidfd(c.pid).ok()?;
    if !netsys::id_valid(c.listener, c.id) {
        return Some(Outcome::Errno(libc::ENOENT));
    }
    // Held until the slave is open: terminal N stays this one.
    let _master = terminals::callers_master(c.pid, pidfd.as_fd(), n)?;
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let flags = (flags | libc::O_NOCTTY | libc::O_NOFOLLOW) & !libc::O_CLOEXEC;
    let fd = match sys::openat(Some(place.dir.as_fd()), place.name.as_bytes(), flags, 0) {
        Ok(fd) => fd,
        Err(e) => return Some(Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO))),
    };
    Some(match terminals::is_slave(fd.as_fd(), n) {
        Ok(true) => Outcome::Fd(fd, cloexec),
        Ok(false) => Outcome::Errno(libc::EACCES),
        Err(e) => Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
    })
}

/// The caller's controlling terminal, opened for it (`O_NOCTTY`: never the supervisor's).
fn open_controlling_terminal(rules: &Rules, c: &Caller<'_>, flags: i32) -> Outcome {
    judged!(rules, Change::Write, std::path::Path::new("/dev/tty"));
    let tty = tri!(terminals::controlling(c.pid));
    // The pid was the caller's when its stat was read.
    if !netsys::id_valid(c.listener, c.id) {
        return Outcome::Errno(libc::ENOENT);
    }
    let Some(tty) = tty else {
        return Outcome::Errno(libc::ENXIO);
    };
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let flags = (flags | libc::O_NOCTTY) & !libc::O_CLOEXEC;
    let path = tty.as_os_str().as_bytes();
    Outcome::Fd(tri!(sys::openat(None, path, flags, 0)), cloexec)
}

/// Whether a FIFO is at the place (not followed).
fn is_fifo(place: &Place) -> bool {
    sys::openat(
        Some(place.dir.as_fd()),
        place.name.as_bytes(),
        libc::O_PATH | libc::O_NOFOLLOW,
        0,
    )
    .and_then(|f| sys::file_type(f.as_fd()))
    .is_ok_and(|t| t == libc::S_IFIFO)
}

fn make(
    rules: &Rules,
    c: &Caller<'_>,
    dirfd: u64,
    path: u64,
    mode: u64,
    node: Option<u64>,
) -> Outcome {
    let path = tri!(c.string(path));
    let place = tri!(c.place(dirfd, &path, false));
    if place.name == "." || place.name == ".." {
        return Outcome::Errno(libc::EEXIST);
    }
    let change = if node.is_none() {
        Change::MakeDir
    } else {
        Change::Create
    };
    judged!(rules, change, &place.path);
    let mode = mode as u32;
    sys::set_umask(c.umask());
    let dir = place.dir.as_fd();
    match node {
        None => sys::mkdirat(dir, &place.name, mode & 0o7777).into(),
        Some(_) => {
            let kind = mode & libc::S_IFMT;
            if !matches!(kind, 0 | libc::S_IFREG | libc::S_IFIFO | libc::S_IFSOCK) {
                return Outcome::Errno(libc::EPERM);
            }
            sys::mknodat(dir, &place.name, mode).into()
        }
    }
}

fn remove(rules: &Rules, c: &Caller<'_>, dirfd: u64, path: u64, flags: i32) -> Outcome {
    let path = tri!(c.string(path));
    let place = tri!(c.place(dirfd, &path, false));
    if place.name == "." {
        return Outcome::Errno(libc::EINVAL);
    }
    if place.name == ".." {
        return Outcome::Errno(libc::ENOTEMPTY);
    }
    judged!(rules, Change::Remove, &place.path);
    sys::unlinkat(place.dir.as_fd(), &place.name, flags).into()
}

fn rename(rules: &Rules, c: &Caller<'_>, a: [u64; 4], flags: u32) -> Outcome {
    let old = tri!(c.string(a[1]));
    let new = tri!(c.string(a[3]));
    let from = tri!(c.place(a[0], &old, false));
    let to = tri!(c.place(a[2], &new, false));
    for p in [&from, &to] {
        if p.name == "." || p.name == ".." {
            return Outcome::Errno(libc::EBUSY);
        }
    }
    judged!(rules, Change::Remove, &from.path);
    if flags == 0 && rules.brokers(&to.path) {
        return broker::config(c, &from, &to);
    }
    if flags == 0 && rules.brokers_gitmodules(&to.path) {
        return broker::gitmodules(c, &from, &to);
    }
    // Onto a free name a rename creates; over an existing entry it removes that one.
    let onto = match new_or_existing(&to) {
        Change::Create => Change::Create,
        _ => Change::Remove,
    };
    // A directory moved onto a free `.git` would bring hooks and a configuration in unjudged.
    let onto = if to.name == ".git" {
        Change::Remove
    } else {
        onto
    };
    judged!(rules, onto, &to.path);
    sys::renameat2(
        from.dir.as_fd(),
        &from.name,
        to.dir.as_fd(),
        &to.name,
        flags,
    )
    .into()
}

fn link(rules: &Rules, c: &Caller<'_>, a: [u64; 4], flags: i32) -> Outcome {
    let follow = flags & libc::AT_SYMLINK_FOLLOW != 0;
    let source = if flags & libc::AT_EMPTY_PATH != 0 && tri!(c.string(a[1])).is_empty() {
        Target::Fd(a[0])
    } else {
        Target::At(a[0], a[1], follow)
    };
    let (via, real, _, _hold) = tri!(locate(c, &source));
    judged!(rules, Change::LinkSource, &real);
    let new = tri!(c.string(a[3]));
    let to = tri!(c.place(a[2], &new, false));
    judged!(rules, Change::Create, &to.path);
    let follow_via = matches!(source, Target::Fd(_));
    sys::link(&via, to.dir.as_fd(), &to.name, follow_via).into()
}

fn symlink(rules: &Rules, c: &Caller<'_>, target: u64, dirfd: u64, path: u64) -> Outcome {
    let target = tri!(c.string(target));
    let path = tri!(c.string(path));
    let place = tri!(c.place(dirfd, &path, false));
    judged!(rules, Change::Create, &place.path);
    sys::symlinkat(&target, place.dir.as_fd(), &place.name).into()
}

fn truncate(rules: &Rules, c: &Caller<'_>, path: u64, len: i64) -> Outcome {
    let path = tri!(c.string(path));
    let place = tri!(c.place(libc::AT_FDCWD as u64, &path, true));
    judged!(rules, Change::Write, &place.path);
    let fd = tri!(sys::openat(
        Some(place.dir.as_fd()),
        place.name.as_bytes(),
        libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0
    ));
    sys::ftruncate(fd.as_fd(), len).into()
}

fn chmod(rules: &Rules, c: &Caller<'_>, t: Target, mode: u32) -> Outcome {
    let follow = !matches!(t, Target::At(_, _, false));
    let (via, real, by_path, _hold) = tri!(locate(c, &t));
    judged!(rules, Change::Metadata, &real);
    let f = tri!(inode(&via, follow, by_path));
    if tri!(sys::file_type(f.as_fd())) == libc::S_IFLNK {
        // Linux keeps no mode on a link.
        return Outcome::Errno(libc::EOPNOTSUPP);
    }
    let chmod = || sys::chmod(&self_fd(f.as_fd()), mode);
    match chmod() {
        // A root jail's file it gave away (root's `tar` chowns, then chmods).
        Err(e) if e.raw_os_error() == Some(libc::EPERM) && c.is_root() => {
            sys::with_owner_caps(chmod).into()
        }
        other => other.into(),
    }
}

fn chown(rules: &Rules, c: &Caller<'_>, t: Target, uid: u64, gid: u64) -> Outcome {
    let follow = !matches!(t, Target::At(_, _, false));
    let (via, real, by_path, _hold) = tri!(locate(c, &t));
    judged!(rules, Change::Metadata, &real);
    let f = tri!(inode(&via, follow, by_path));
    let chown = || sys::fchownat(f.as_fd(), OsStr::new(""), uid as u32, gid as u32, true);
    match chown() {
        // A root jail gives a file in its writable set to another owner as root's `tar` does
        // (judged above); an unprivileged launcher has no such capability to lend.
        Err(e) if e.raw_os_error() == Some(libc::EPERM) && c.is_root() => {
            sys::with_owner_caps(chown).into()
        }
        other => other.into(),
    }
}

fn utimens(rules: &Rules, c: &Caller<'_>, a: [u64; 6]) -> Outcome {
    let flags = a[3] as i32;
    let t = if a[1] == 0 {
        Target::Fd(a[0])
    } else {
        at(a[0], a[1], flags)
    };
    let times = if a[2] == 0 {
        None
    } else {
        let w = tri!(c.words(a[2], 4));
        let word = |i: usize| w[i];
        Some([(word(0), word(1)), (word(2), word(3))])
    };
    set_times(rules, c, &t, times)
}

#[cfg(target_arch = "x86_64")]
fn utimes(rules: &Rules, c: &Caller<'_>, dirfd: u64, path: u64, times: u64) -> Outcome {
    let t = Target::At(dirfd, path, true);
    let times = if times == 0 {
        None
    } else {
        let w = tri!(c.words(times, 4));
        let word = |i: usize| w[i];
        Some([(word(0), word(1) * 1000), (word(2), word(3) * 1000)])
    };
    set_times(rules, c, &t, times)
}

#[cfg(target_arch = "x86_64")]
fn utime(rules: &Rules, c: &Caller<'_>, path: u64, times: u64) -> Outcome {
    let t = Target::At(libc::AT_FDCWD as u64, path, true);
    let times = if times == 0 {
        None
    } else {
        let w = tri!(c.words(times, 2));
        let word = |i: usize| w[i];
        Some([(word(0), 0), (word(1), 0)])
    };
    set_times(rules, c, &t, times)
}

fn set_times(rules: &Rules, c: &Caller<'_>, t: &Target, times: Option<[(i64, i64); 2]>) -> Outcome {
    let nofollow = matches!(t, Target::At(_, _, false));
    let (via, real, by_path, _hold) = tri!(locate(c, t));
    judged!(rules, Change::Metadata, &real);
    if nofollow {
        return sys::utimensat(None, &via, times, true).into();
    }
    let f = tri!(inode(&via, true, by_path));
    let touch = || sys::utimensat(None, &self_fd(f.as_fd()), times, false);
    match touch() {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) && c.is_root() => {
            sys::with_owner_caps(touch).into()
        }
        other => other.into(),
    }
}

fn setxattr(rules: &Rules, c: &Caller<'_>, t: Target, a: [u64; 6]) -> Outcome {
    let nofollow = matches!(t, Target::At(_, _, false));
    let name = tri!(c.string(a[1]));
    let size = usize::try_from(a[3]).unwrap_or(usize::MAX);
    if size > 65536 {
        return Outcome::Errno(libc::E2BIG);
    }
    let value = if size == 0 {
        Vec::new()
    } else {
        tri!(c.bytes(a[2], size))
    };
    let (via, real, by_path, _hold) = tri!(locate(c, &t));
    judged!(rules, Change::Metadata, &real);
    if nofollow {
        return sys::setxattr(&via, &name, &value, a[4] as i32, true).into();
    }
    let f = tri!(inode(&via, true, by_path));
    sys::setxattr(&self_fd(f.as_fd()), &name, &value, a[4] as i32, false).into()
}

fn removexattr(rules: &Rules, c: &Caller<'_>, t: Target, name: u64) -> Outcome {
    let nofollow = matches!(t, Target::At(_, _, false));
    let name = tri!(c.string(name));
    let (via, real, by_path, _hold) = tri!(locate(c, &t));
    judged!(rules, Change::Metadata, &real);
    if nofollow {
        return sys::removexattr(&via, &name, true).into();
    }
    let f = tri!(inode(&via, true, by_path));
    sys::removexattr(&self_fd(f.as_fd()), &name, false).into()
}
