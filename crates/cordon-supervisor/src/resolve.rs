//! Where a jailed thread's path leads, found by the supervisor itself.
//!
//! The path is copied out of the caller's memory once; every later step works on that copy and
//! on descriptors the supervisor holds, so the caller cannot change what is judged after the
//! judgement. Directories are opened with the kernel's own resolution (the jail shares the
//! host's mounts); the last name is followed by hand, one link at a time, so each step's real
//! place is judged before anything is done there.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use crate::sys;

/// The most links followed for one path, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// A resolved place: the directory held open, the last name in it, and the real path the two
/// make (what the judge sees).
#[derive(Debug)]
pub(crate) struct Place {
    pub(crate) dir: OwnedFd,
    pub(crate) name: OsString,
    pub(crate) path: PathBuf,
    /// The name is a descriptor of the caller (`/proc/<pid>/fd/N`): reopened, never created.
    pub(crate) magic: bool,
}

/// The thread whose call is being handled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caller<'a> {
    pub(crate) pid: u32,
    /// The jail's own `/dev/shm`: an absolute path below `/dev/shm` is taken there.
    pub(crate) shm: Option<&'a std::path::Path>,
    /// The listener and the notification: whether a pid taken is still the caller's.
    pub(crate) listener: std::os::fd::BorrowedFd<'a>,
    pub(crate) id: u64,
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

impl Caller<'_> {
    /// A NUL-terminated string at `addr` in the caller's memory (at most `PATH_MAX` bytes).
    pub(crate) fn string(&self, addr: u64) -> io::Result<Vec<u8>> {
        if addr == 0 {
            return Err(errno(libc::EFAULT));
        }
        let max = libc::PATH_MAX as usize;
        let mut out = Vec::new();
        let mut at = addr;
        while out.len() < max {
            // Up to the end of the page, so a string near an unmapped page still reads.
            let room = 4096 - (at % 4096) as usize;
            let chunk = sys::read_memory(self.pid, at, room.min(max - out.len()))?;
            if chunk.is_empty() {
                return Err(errno(libc::EFAULT));
            }
            if let Some(end) = chunk.iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            at += chunk.len() as u64;
            out.extend_from_slice(&chunk);
        }
        Err(errno(libc::ENAMETOOLONG))
    }

    /// `count` bytes at `addr` in the caller's memory.
    pub(crate) fn bytes(&self, addr: u64, count: usize) -> io::Result<Vec<u8>> {
        let got = sys::read_memory(self.pid, addr, count)?;
        if got.len() == count {
            Ok(got)
        } else {
            Err(errno(libc::EFAULT))
        }
    }

    /// `count` native-endian 64-bit words at `addr` in the caller's memory (`timespec` and
    /// `timeval` pairs, `utimbuf`).
    pub(crate) fn words(&self, addr: u64, count: usize) -> io::Result<Vec<i64>> {
        let raw = self.bytes(addr, count * 8)?;
        Ok(raw
            .chunks_exact(8)
            .map(|c| i64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    }

    /// The caller's descriptor `fd`, opened `O_PATH` through `/proc`.
    pub(crate) fn fd(&self, fd: u64) -> io::Result<OwnedFd> {
        let fd = i32::try_from(fd as i64).map_err(|_| errno(libc::EBADF))?;
        if fd < 0 {
            return Err(errno(libc::EBADF));
        }
        sys::openat(
            None,
            format!("/proc/{}/fd/{fd}", self.pid).as_bytes(),
            libc::O_PATH,
            0,
        )
    }

    /// Whether the caller runs as root (its effective user id is 0).
    pub(crate) fn is_root(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
            })
            .unwrap_or(false)
    }

    /// The caller's umask.
    pub(crate) fn umask(&self) -> u32 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    }

    /// `/proc/self` and `/proc/thread-self` mean the caller, not the supervisor.
    fn own_proc(&self, path: &[u8]) -> Vec<u8> {
        for (prefix, with) in [
            (&b"/proc/self"[..], format!("/proc/{}", self.pid)),
            (
                &b"/proc/thread-self"[..],
                format!("/proc/{0}/task/{0}", self.pid),
            ),
        ] {
            if let Some(rest) = path.strip_prefix(prefix)
                && (rest.is_empty() || rest[0] == b'/')
            {
                return [with.as_bytes(), rest].concat();
            }
        }
        path.to_vec()
    }

    /// Where `path` (relative to the caller's `dirfd`, or its working directory for
    /// `AT_FDCWD`) leads; the last name followed when it is a link and `follow`.
    pub(crate) fn place(&self, dirfd: u64, path: &[u8], follow: bool) -> io::Result<Place> {
        if path.is_empty() {
            return Err(errno(libc::ENOENT));
        }
        let private;
        let path = match (self.shm, path.strip_prefix(b"/dev/shm")) {
            (Some(shm), Some(rest)) if rest.is_empty() || rest[0] == b'/' => {
                private = [shm.as_os_str().as_bytes(), rest].concat();
                &private[..]
            }
            _ => path,
        };
        let mut base = if path[0] == b'/' {
            sys::openat(None, b"/", libc::O_PATH | libc::O_DIRECTORY, 0)?
        } else if dirfd as i32 == libc::AT_FDCWD {
            sys::openat(
                None,
                format!("/proc/{}/cwd", self.pid).as_bytes(),
                libc::O_PATH | libc::O_DIRECTORY,
                0,
            )?
        } else {
            self.fd(dirfd)?
        };
        let mut path = self.own_proc(path);
        for _ in 0..MAX_LINKS {
            let (dir_part, name) = split(&path);
            let dir = sys::openat(
                Some(base.as_fd()),
                &dir_part,
                libc::O_PATH | libc::O_DIRECTORY,
                0,
            )?;
            let (dir, real) = self.not_mine(dir)?;
            if real.as_os_str().as_bytes().ends_with(b" (deleted)") {
                return Err(errno(libc::ENOENT));
            }
            let magic = self.is_fd_dir(&real);
            if follow && !magic && name != b"." && name != b".." {
                match sys::readlinkat(dir.as_fd(), &name) {
                    Ok(target) => {
                        path = self.own_proc(target.as_bytes());
                        if path.first() == Some(&b'/') {
                            base = sys::openat(None, b"/", libc::O_PATH | libc::O_DIRECTORY, 0)?;
                        } else {
                            base = dir;
                        }
                        continue;
                    }
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOENT)) => {}
                    Err(e) => return Err(e),
                }
            }
            let name = OsString::from_vec(name);
            let path = if name == "." || name == ".." {
                real.clone()
            } else {
                real.join(&name)
            };
            return Ok(Place {
                dir,
                name,
                path,
                magic,
            });
        }
        Err(errno(libc::ELOOP))
    }

    /// A directory the kernel resolved through `/proc/self` (`/dev/fd`) is the supervisor's:
    /// the caller's own is opened instead. With the directory's real path, read once.
    fn not_mine(&self, dir: OwnedFd) -> io::Result<(OwnedFd, PathBuf)> {
        let real = sys::fd_path(dir.as_fd())?;
        let mine = format!("/proc/{}", std::process::id());
        let bytes = real.as_bytes();
        if let Some(rest) = bytes.strip_prefix(mine.as_bytes())
            && (rest.is_empty() || rest[0] == b'/')
        {
            let theirs = [format!("/proc/{}", self.pid).as_bytes(), rest].concat();
            let dir = sys::openat(None, &theirs, libc::O_PATH | libc::O_DIRECTORY, 0)?;
            let real = PathBuf::from(sys::fd_path(dir.as_fd())?);
            return Ok((dir, real));
        }
        Ok((dir, PathBuf::from(real)))
    }

    /// `/proc/<caller>/fd` or `/proc/<caller>/task/<tid>/fd`: its entries are the caller's
    /// descriptors.
    fn is_fd_dir(&self, real: &std::path::Path) -> bool {
        let parts: Vec<&OsStr> = real.iter().collect();
        let pid = OsString::from(self.pid.to_string());
        let is = |c: &OsStr, s: &str| c == OsStr::new(s);
        match parts.as_slice() {
            [_, proc, p, fd] => is(proc, "proc") && *p == pid.as_os_str() && is(fd, "fd"),
            [_, proc, p, task, _, fd] => {
                is(proc, "proc") && *p == pid.as_os_str() && is(task, "task") && is(fd, "fd")
            }
            _ => false,
        }
    }
}

/// `a/b/c` → (`a/b`, `c`); `c` → (`.`, `c`); `/c` → (`/`, `c`); trailing slashes dropped (`a/`
/// → (`.`, `a`)); `/` → (`/`, `.`).
fn split(path: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let trimmed = &path[..end];
    if trimmed == b"/" {
        return (b"/".to_vec(), b".".to_vec());
    }
    match trimmed.iter().rposition(|b| *b == b'/') {
        None => (b".".to_vec(), trimmed.to_vec()),
        Some(0) => (b"/".to_vec(), trimmed[1..].to_vec()),
        Some(i) => (trimmed[..i].to_vec(), trimmed[i + 1..].to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_keeps_the_last_name() {
        let s = |p: &str| {
            let (d, n) = split(p.as_bytes());
            (String::from_utf8(d).unwrap(), String::from_utf8(n).unwrap())
        };
        assert_eq!(s("a/b/c"), ("a/b".into(), "c".into()));
        assert_eq!(s("c"), (".".into(), "c".into()));
        assert_eq!(s("/c"), ("/".into(), "c".into()));
        assert_eq!(s("a/"), (".".into(), "a".into()));
        assert_eq!(s("/"), ("/".into(), ".".into()));
        assert_eq!(s("a//b//"), ("a/".into(), "b".into()));
    }
}
