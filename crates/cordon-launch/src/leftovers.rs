//! What a run creates on the host, and how it is always removed: even when the launcher is killed.
//!
//! A run may create two kinds of things outside the jail: placeholders in a writable root
//! (`guard.rs`: an empty `.vscode` that a read-only bind keeps from being created, a `.git/commondir`
//! reading `.`) and, for root, a `pids` control group (`pids.rs`). Both must be gone when the run
//! is over, whatever happens to the launcher — a peer's users keep finding the empty mount-point
//! files its sandbox left in their checkouts.
//!
//! - **A reaper outlives the launcher.** Before the jail starts, the launcher spawns the cordon
//!   binary in reaper mode ([`reap_main`]), in its own process group, holding the placeholders'
//!   descriptors. It learns the jail's pid through a pipe, waits on a pidfd until the jail is gone
//!   (bubblewrap dies with its parent, so a `SIGKILL`ed launcher ends the jail, and then the
//!   reaper cleans up), removes what the run created, and exits. The launcher waits for it, so a
//!   run returns only after its host is clean. Where no reaper can be started, the launcher
//!   removes the same things itself when the run ends.
//! - **Concurrent jails share placeholders safely.** Every run that relies on a placeholder,
//!   whether it created it or found it, holds a shared `flock` on it for as long as its jail
//!   lives. A placeholder is removed only under an exclusive lock, which a shared one blocks, so
//!   one jail's cleanup never pulls a read-only bind out from under another's (on Linux, removing
//!   a directory detaches the mounts on it in every other namespace). The last run out removes
//!   it: each releases its shared lock and tries an exclusive one without waiting; failing means
//!   another holder is still there and will try in turn.
//! - **Only what cordon made is removed.** A placeholder carries the `user.cordon.placeholder`
//!   extended attribute, and is removed only when the path still names the same inode, a
//!   directory is still empty (`rmdir` checks that atomically) and a file still holds exactly what
//!   was written. A directory a person creates, or fills, during the run stays. On a file system
//!   without user extended attributes only the run that created a placeholder removes it.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// The extended attribute that marks a placeholder.
const MARK: &str = "user.cordon.placeholder";

/// How many times creating a placeholder is retried when another run removes it meanwhile.
const ATTEMPTS: usize = 8;

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An empty directory.
    Dir,
    /// A file holding exactly these bytes.
    File(&'static [u8]),
}

/// A placeholder this run relies on: open, with a shared lock held on it.
#[derive(Debug)]
pub(crate) struct Placeholder {
    path: PathBuf,
    kind: Kind,
    fd: OwnedFd,
    created: bool,
}

/// Something created on the host for a run.
#[derive(Debug)]
enum Leftover {
    Placeholder(Placeholder),
    Cgroup(PathBuf),
    /// A private temporary directory (the Landlock backend's), removed with its content.
    Scratch(PathBuf),
}

fn same_inode(fd: &OwnedFd, path: &Path) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::lstat(path)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

fn open_held(path: &Path, kind: Kind) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let flags = match kind {
        Kind::Dir => flags | OFlags::DIRECTORY,
        Kind::File(_) => flags,
    };
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    rustix::fs::flock(&fd, FlockOperation::LockShared)?;
    Ok(fd)
}

impl Placeholder {
    /// Creates the placeholder at `path` (or joins the one another run made), locked shared.
    /// `Ok(None)` when something that is not a placeholder of this kind is already there.
    pub(crate) fn create(path: &Path, kind: Kind) -> std::io::Result<Option<Placeholder>> {
        for _ in 0..ATTEMPTS {
            let created = match kind {
                Kind::Dir => match std::fs::create_dir(path) {
                    Ok(()) => true,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                    Err(e) => return Err(e),
                },
                Kind::File(content) => match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                {
                    Ok(mut f) => {
                        f.write_all(content)?;
                        true
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                    Err(e) => return Err(e),
                },
            };
            let fd = match open_held(path, kind) {
                Ok(fd) => fd,
                // Removed by its last user between our look and our open: try again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) if !created => return Ok(None),
                Err(e) => return Err(e),
            };
            if created {
                let _ = rustix::fs::fsetxattr(&fd, MARK, b"1", rustix::fs::XattrFlags::empty());
            }
            if same_inode(&fd, path) {
                return Ok(Some(Placeholder {
                    path: path.to_path_buf(),
                    kind,
                    fd,
                    created,
                }));
            }
            // Removed (and maybe re-made) while we waited for the lock: try again.
        }
        Err(std::io::Error::other(format!(
            "{} kept changing while a placeholder was being made there",
            path.display()
        )))
    }

    /// Joins an existing path that may be another run's placeholder, so that run cannot remove
    /// it while this jail relies on it. `None` when it cannot be opened.
    pub(crate) fn hold(path: &Path, kind: Kind) -> Option<Placeholder> {
        let fd = open_held(path, kind).ok()?;
        same_inode(&fd, path).then(|| Placeholder {
            path: path.to_path_buf(),
            kind,
            fd,
            created: false,
        })
    }

    fn marked(&self) -> bool {
        let mut buf = [0u8; 8];
        rustix::fs::fgetxattr(&self.fd, MARK, &mut buf[..]).is_ok_and(|n| buf[..n] == *b"1")
    }

    /// Releases this run's hold and removes the placeholder when this run is its last user.
    fn release(self) {
        let _ = rustix::fs::flock(&self.fd, FlockOperation::Unlock);
        if rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive).is_err() {
            return; // another run still relies on it, and will try in turn
        }
        if !same_inode(&self.fd, &self.path) || !(self.created || self.marked()) {
            return;
        }
        match self.kind {
            Kind::Dir => {
                let _ = std::fs::remove_dir(&self.path);
            }
            Kind::File(content) => {
                let mut now = Vec::new();
                let read = std::fs::File::from(self.fd)
                    .take(content.len() as u64 + 1)
                    .read_to_end(&mut now);
                if read.is_ok() && now == content {
                    let _ = std::fs::remove_file(&self.path);
                }
            }
        }
    }
}

fn remove_cgroup(dir: &Path) {
    // The jail's tasks are reaped as its PID namespace ends, usually within microseconds of
    // bubblewrap's exit: retry with a short, growing pause.
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    while std::fs::remove_dir(dir).is_err() && start.elapsed() < Duration::from_secs(2) {
        if !dir.exists() {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Everything a run created on the host, removed in [`Drop`] unless handed to a reaper.
#[derive(Debug, Default)]
pub(crate) struct Cleanup {
    items: Vec<Leftover>,
}

impl Cleanup {
    /// Adds a placeholder.
    pub(crate) fn placeholder(&mut self, p: Placeholder) {
        self.items.push(Leftover::Placeholder(p));
    }

    /// Whether a placeholder at `path` is already held.
    pub(crate) fn holds(&self, path: &Path) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Leftover::Placeholder(p) if p.path == path))
    }

    /// Adds a private temporary directory, removed with everything in it.
    pub(crate) fn scratch(&mut self, dir: PathBuf) {
        self.items.push(Leftover::Scratch(dir));
    }

    /// Adds a control group directory.
    pub(crate) fn cgroup(&mut self, dir: PathBuf) {
        self.items.push(Leftover::Cgroup(dir));
    }

    /// Spawns `binary` as the reaper holding everything here. The returned descriptor gets the
    /// jail's pid (or is closed when no jail starts); the reaper itself keeps the pipe open until
    /// it is dropped. On failure the launcher keeps the cleanup.
    pub(crate) fn hand_to_reaper(mut self, binary: &Path) -> Result<(Reaper, OwnedFd), Cleanup> {
        if self.items.is_empty() {
            return Err(self);
        }
        let Ok((pid_read, pid_write)) = crate::sys::pipe() else {
            return Err(self);
        };
        let mut args: Vec<OsString> = vec![crate::stage::STAGE_ARG.into(), "reap".into()];
        let mut keep = Vec::new();
        for item in &self.items {
            match item {
                Leftover::Placeholder(p) => {
                    keep.push(crate::sys::raw(&p.fd));
                    args.push("p".into());
                    args.push(crate::sys::raw(&p.fd).to_string().into());
                    args.push(match p.kind {
                        Kind::Dir => "dir".into(),
                        Kind::File(content) => format!("file:{}", hex(content)).into(),
                    });
                    args.push(if p.created { "1" } else { "0" }.into());
                    args.push(p.path.clone().into_os_string());
                }
                Leftover::Cgroup(dir) => {
                    args.push("c".into());
                    args.push(dir.clone().into_os_string());
                }
                Leftover::Scratch(dir) => {
                    args.push("t".into());
                    args.push(dir.clone().into_os_string());
                }
            }
        }
        let mut command = Command::new(binary);
        command
            .args(&args)
            .env_clear()
            .stdin(Stdio::from(pid_read))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        crate::sys::inherit_only(&mut command, &keep);
        let Ok(pid_to) = pid_write.try_clone() else {
            return Err(self);
        };
        match command.spawn() {
            Ok(child) => {
                // The reaper holds the locks now (same open file descriptions).
                self.items.clear();
                Ok((
                    Reaper {
                        child: Some(child),
                        open: Some(pid_write),
                    },
                    pid_to,
                ))
            }
            Err(_) => Err(self),
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        release_all(std::mem::take(&mut self.items));
    }
}

fn release_all(items: Vec<Leftover>) {
    for item in items {
        match item {
            Leftover::Placeholder(p) => p.release(),
            Leftover::Cgroup(dir) => remove_cgroup(&dir),
            Leftover::Scratch(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

/// A running reaper. Dropping it tells the reaper the run is over (end of file on its stdin) and
/// waits for it to finish.
#[derive(Debug)]
pub(crate) struct Reaper {
    child: Option<Child>,
    open: Option<OwnedFd>,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        drop(self.open.take());
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// How long the reaper still waits for the jail once the launcher is gone: bubblewrap dies with
/// its parent within milliseconds; the bound only matters if the pid was reused.
const AFTER_LAUNCHER: Duration = Duration::from_secs(2);

/// Reads the jail's pid from the launcher's pipe, then waits until that process has ended — or,
/// once the launcher has closed the pipe (run over, or launcher killed), at most
/// [`AFTER_LAUNCHER`] more.
fn wait_for_jail(launcher: &OwnedFd) {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < 32 {
        match rustix::io::read(launcher, &mut byte) {
            Ok(1) if byte[0] != b'\n' => line.push(byte[0]),
            Err(rustix::io::Errno::INTR) => {}
            _ => break,
        }
    }
    let Some(pid) = std::str::from_utf8(&line)
        .ok()
        .and_then(|l| l.trim().parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return; // no jail was started
    };
    let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
        return; // already gone
    };
    let mut deadline: Option<Instant> = None;
    loop {
        let mut fds = [
            rustix::event::PollFd::new(&pidfd, rustix::event::PollFlags::IN),
            rustix::event::PollFd::new(launcher, rustix::event::PollFlags::IN),
        ];
        let timeout = deadline.map(|d| {
            let left = d.saturating_duration_since(Instant::now());
            rustix::event::Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            }
        });
        match rustix::event::poll(
            &mut fds[..if deadline.is_some() { 1 } else { 2 }],
            timeout.as_ref(),
        ) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
            Ok(_) => {}
        }
        if !fds[0].revents().is_empty() {
            return; // the jail is gone
        }
        match deadline {
            Some(d) if Instant::now() >= d => return,
            Some(_) => {}
            None if !fds[1].revents().is_empty() => {
                // The launcher is gone and the jail is not: end its whole process group (the
                // jail leads it). Its leader is alive, so the group id cannot have been reused.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                deadline = Some(Instant::now() + AFTER_LAUNCHER);
            }
            None => {}
        }
    }
}

/// The reaper's `main` (`__cordon_stage reap ...`, stdin the launcher's pipe): wait for the jail
/// to end, then release and remove what the run created. Returns the exit code.
pub fn reap_main(args: &[OsString]) -> i32 {
    let Some(items) = parse(args) else {
        return 2;
    };
    if let Ok(stdin) = rustix::io::dup(std::io::stdin().as_fd()) {
        wait_for_jail(&stdin);
    }
    release_all(items);
    0
}

fn parse(args: &[OsString]) -> Option<Vec<Leftover>> {
    let mut items = Vec::new();
    let mut rest = args;
    while let Some((tag, tail)) = rest.split_first() {
        match tag.as_bytes() {
            b"p" => {
                let [fd, kind, created, path, tail @ ..] = tail else {
                    return None;
                };
                let fd = crate::sys::inherited_fd(fd.to_str()?.parse().ok()?)?;
                let kind = match kind.to_str()? {
                    "dir" => Kind::Dir,
                    k => Kind::File(known_content(&unhex(k.strip_prefix("file:")?)?)?),
                };
                items.push(Leftover::Placeholder(Placeholder {
                    path: PathBuf::from(path),
                    kind,
                    fd,
                    created: created == OsStr::new("1"),
                }));
                rest = tail;
            }
            b"c" | b"t" => {
                let [dir, tail @ ..] = tail else {
                    return None;
                };
                let dir = PathBuf::from(dir);
                items.push(if tag == "c" {
                    Leftover::Cgroup(dir)
                } else {
                    Leftover::Scratch(dir)
                });
                rest = tail;
            }
            _ => return None,
        }
    }
    Some(items)
}

/// The placeholder contents the guard writes, as `'static` slices.
fn known_content(bytes: &[u8]) -> Option<&'static [u8]> {
    crate::guard::PLACEHOLDER_CONTENTS
        .iter()
        .copied()
        .find(|c| *c == bytes)
}

/// The descriptor of a held placeholder, for tests.
#[cfg(test)]
impl Placeholder {
    pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn the_last_of_two_holders_removes_a_shared_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let a = Placeholder::create(&p, Kind::Dir).unwrap().unwrap();
        let b = Placeholder::create(&p, Kind::Dir).unwrap().unwrap();
        assert!(a.created && !b.created);
        a.release();
        assert!(p.is_dir(), "removed while another run still relied on it");
        b.release();
        assert!(
            !p.exists(),
            "the last holder must remove a marked placeholder"
        );
    }

    #[test]
    fn a_directory_a_person_made_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".idea");
        std::fs::create_dir(&p).unwrap();
        let held = Placeholder::create(&p, Kind::Dir).unwrap().unwrap();
        assert!(!held.created);
        held.release();
        assert!(p.is_dir());
    }

    #[test]
    fn a_placeholder_written_into_is_kept_and_a_file_must_match() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join(".claude");
        let held = Placeholder::create(&d, Kind::Dir).unwrap().unwrap();
        std::fs::write(d.join("settings.json"), "{}").unwrap();
        held.release();
        assert!(d.join("settings.json").exists());

        let f = dir.path().join("commondir");
        let held = Placeholder::create(&f, Kind::File(b".\n"))
            .unwrap()
            .unwrap();
        std::fs::write(&f, "../elsewhere\n").unwrap();
        held.release();
        assert_eq!(std::fs::read(&f).unwrap(), b"../elsewhere\n");
    }

    #[test]
    fn a_file_that_was_already_there_is_joined_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("config.worktree");
        std::fs::write(&f, "").unwrap();
        let held = Placeholder::create(&f, Kind::File(b"")).unwrap().unwrap();
        assert!(!held.created && !held.marked());
        held.release();
        assert!(
            f.exists(),
            "a person's empty file is not cordon's to remove"
        );
    }

    #[test]
    fn reaper_arguments_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let held = Placeholder::create(&p, Kind::Dir).unwrap().unwrap();
        let fd = rustix::io::dup(held.fd()).unwrap();
        let raw = crate::sys::raw(&fd);
        std::mem::forget(fd); // parse() takes ownership of the number
        let args: Vec<OsString> = vec![
            "p".into(),
            raw.to_string().into(),
            format!("file:{}", hex(b".\n")).into(),
            "1".into(),
            "/x/commondir".into(),
            "c".into(),
            "/sys/fs/cgroup/pids/cordon-1-2".into(),
        ];
        let items = parse(&args).unwrap();
        assert!(matches!(&items[0], Leftover::Placeholder(p) if p.kind == Kind::File(b".\n")));
        assert!(matches!(&items[1], Leftover::Cgroup(d) if d.ends_with("cordon-1-2")));
        assert!(parse(&["p".into(), "x".into()]).is_none());
        assert!(parse(&["zz".into()]).is_none());
        assert_eq!(unhex("2e0a").unwrap(), b".\n");
        assert!(unhex("2").is_none());
        drop(items);
        held.release();
    }
}
