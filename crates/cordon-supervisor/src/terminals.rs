//! The jail's own pseudo-terminals, where its `/dev/pts` is the host's (no namespace).
//!
//! Opening `/dev/ptmx` is a write-open, so it comes here, and the supervisor performs it like any
//! device the rules list: a new terminal in the host's devpts, whose master the caller gets.
//! Its other end, `/dev/pts/N`, is a name among the host's terminals: the caller may open it
//! only while it holds the master of terminal N itself. The supervisor looks for that master
//! among the caller's descriptors, takes a copy of it (`pidfd_getfd`) and holds it while it
//! opens the slave, so N cannot be freed and made again for a host session in between. Every
//! other `/dev/pts/N` (another session's terminal) is judged like any path outside the writable
//! set: refused. A read-only open never comes here and Landlock grants nothing in `/dev/pts`;
//! glibc's `openpty` asks the master for its slave (`TIOCGPTPEER`), which Landlock refuses for
//! that reason, and falls back to the path, which comes here.
//!
//! `/dev/tty` is opened as the caller's own controlling terminal ([`controlling`]), not the
//! supervisor's. The slave is opened with `O_NOCTTY`: the supervisor's process never takes a
//! terminal of the jail's as its own. A program that acquires its controlling terminal by
//! opening it (rather than with `TIOCSCTTY`, as `login_tty` and `forkpty` do) does not get one.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::netsys;

/// The most descriptors of the caller looked through for a terminal's master.
const MAX_SCANNED: usize = 4096;

/// The major device number of Unix 98 pseudo-terminal slaves (`/dev/pts/N`).
const PTS_MAJOR: u32 = 136;

/// A terminal the supervisor opens on the caller's behalf rather than as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallersTerminal {
    /// `/dev/tty`: the caller's controlling terminal, not the supervisor's.
    Controlling,
    /// `/dev/pts/N`: the slave of a terminal whose master the caller holds.
    Slave(u32),
}

/// Which of the caller's terminals the real path `path` names, if any: the one place that
/// decides which opens take the terminal branches of `ops::open`.
pub(crate) fn callers_terminal(path: &Path) -> Option<CallersTerminal> {
    if path == Path::new("/dev/tty") {
        return Some(CallersTerminal::Controlling);
    }
    slave_number(path).map(CallersTerminal::Slave)
}

/// N, for a real path `/dev/pts/N`.
fn slave_number(path: &Path) -> Option<u32> {
    let digits = path.as_os_str().as_bytes().strip_prefix(b"/dev/pts/")?;
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The link a terminal master's descriptor shows in `/proc/PID/fd`.
fn is_master_link(link: &[u8]) -> bool {
    link == b"/dev/ptmx" || link == b"/dev/pts/ptmx"
}

/// A copy of the master of terminal `n`, if the caller (`pid`, its pidfd taken and checked)
/// holds one.
pub(crate) fn callers_master(pid: u32, pidfd: BorrowedFd<'_>, n: u32) -> Option<OwnedFd> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for entry in entries.take(MAX_SCANNED).flatten() {
        let Ok(link) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if !is_master_link(link.as_os_str().as_bytes()) {
            continue;
        }
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|f| f.parse::<u64>().ok())
        else {
            continue;
        };
        let Ok(master) = netsys::take_fd(pidfd, fd) else {
            continue;
        };
        if netsys::pty_number(master.as_fd()).ok() == Some(n) {
            return Some(master);
        }
    }
    None
}

/// The controlling terminal of process `pid` as a path the supervisor can open for it: `None`
/// when it has none (`/dev/tty` then fails `ENXIO`, as the kernel's would), `/dev/pts/N` for a
/// pseudo-terminal, else `/dev/tty` (a terminal it can only have inherited from the launcher's
/// session, which is the supervisor's own).
pub(crate) fn controlling(pid: u32) -> io::Result<Option<std::path::PathBuf>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // `pid (comm) state ppid pgrp session tty_nr …`; comm may hold anything: from the last `)`.
    let tty: u64 = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(4))
        .and_then(|t| t.parse::<i64>().ok())
        .and_then(|t| u64::try_from(t).ok())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EIO))?;
    if tty == 0 {
        return Ok(None);
    }
    let major = (tty >> 8) & 0xfff;
    let minor = (tty & 0xff) | ((tty >> 12) & 0xf_ff00);
    Ok(Some(if major == u64::from(PTS_MAJOR) {
        format!("/dev/pts/{minor}").into()
    } else {
        "/dev/tty".into()
    }))
}

/// Whether `fd` is the slave of terminal `n`.
pub(crate) fn is_slave(fd: BorrowedFd<'_>, n: u32) -> io::Result<bool> {
    Ok(netsys::char_device(fd)?
        .is_some_and(|rdev| libc::major(rdev) == PTS_MAJOR && libc::minor(rdev) == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_numbered_name_below_dev_pts_is_a_slave() {
        assert_eq!(slave_number(Path::new("/dev/pts/0")), Some(0));
        assert_eq!(slave_number(Path::new("/dev/pts/17")), Some(17));
        for not in [
            "/dev/pts/ptmx",
            "/dev/pts/",
            "/dev/pts/1/x",
            "/dev/pts/01a",
            "/dev/ptmx",
            "/tmp/dev/pts/1",
            "/dev/pts/99999999999",
        ] {
            assert_eq!(slave_number(Path::new(not)), None, "{not}");
        }
        assert_eq!(
            callers_terminal(Path::new("/dev/tty")),
            Some(CallersTerminal::Controlling)
        );
        assert_eq!(
            callers_terminal(Path::new("/dev/pts/3")),
            Some(CallersTerminal::Slave(3))
        );
        for not in ["/dev/tty0", "/dev/ttyS0", "/tmp/dev/tty", "/dev/pts/ptmx"] {
            assert_eq!(callers_terminal(Path::new(not)), None, "{not}");
        }
        assert!(is_master_link(b"/dev/ptmx") && is_master_link(b"/dev/pts/ptmx"));
        assert!(!is_master_link(b"/dev/pts/3"));
    }
}
