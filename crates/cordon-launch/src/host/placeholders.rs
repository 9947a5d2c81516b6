//! Placeholders: what the guard (`cordon_policy::GuardedPlan`) asks to exist for a run, made and
//! removed so that no person's file is ever lost.
//!
//! - **A placeholder appears whole.** It is made under a unique temporary name, marked with the
//!   `user.cordon.placeholder` extended attribute, and only then renamed into place
//!   (`RENAME_NOREPLACE`), so an unmarked placeholder never exists at its final name.
//! - **Concurrent jails share placeholders safely.** Every run that relies on a placeholder,
//!   whether it created it or found it, holds a shared `flock` on it while its jail lives. It is
//!   removed only under an exclusive lock, which a shared one blocks, so one jail's cleanup never
//!   pulls a read-only bind from under another's (removing a directory detaches the mounts on it
//!   in every other namespace). The last run out removes it: each releases its shared lock and
//!   tries an exclusive one without waiting; failing means another holder remains and will try
//!   in turn.
//! - **Only what cordon made is removed.** A placeholder is removed only when it carries the mark
//!   (or this run made it), the path still names the same inode, a directory is still empty
//!   (`rmdir` checks that atomically) and a file still holds exactly what was written. A
//!   directory a person creates, or fills, during the run stays.
//!
//! Registration with the session reaper (so a killed launcher's placeholders go too) is
//! `cleanup.rs`'s; this module only touches the filesystem.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags};

pub(crate) use cordon_policy::PlaceholderKind as Kind;

/// The extended attribute that marks a placeholder.
const MARK: &str = "user.cordon.placeholder";

/// How many times making a placeholder is retried when another run removes it meanwhile.
const ATTEMPTS: usize = 8;

/// A placeholder this run relies on: open, with a shared lock held on it.
#[derive(Debug)]
pub(crate) struct Placeholder {
    pub(crate) path: PathBuf,
    kind: Kind,
    pub(crate) fd: OwnedFd,
    created: bool,
}

fn same_inode(fd: &OwnedFd, path: &Path) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::lstat(path)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

fn open_at(path: &Path, kind: Kind) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let flags = match kind {
        Kind::Dir => flags | OFlags::DIRECTORY,
        Kind::File(_) => flags,
    };
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

fn open_held(path: &Path, kind: Kind) -> std::io::Result<OwnedFd> {
    let fd = open_at(path, kind)?;
    rustix::fs::flock(&fd, FlockOperation::LockShared)?;
    Ok(fd)
}

/// Makes a marked placeholder under the unique name `tmp`.
fn make_marked(tmp: &Path, kind: Kind) -> std::io::Result<()> {
    let fd = match kind {
        Kind::Dir => {
            std::fs::create_dir(tmp)?;
            open_at(tmp, kind)?
        }
        Kind::File(content) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(tmp)?;
            f.write_all(content)?;
            OwnedFd::from(f)
        }
    };
    // Best effort: without user extended attributes only the creating run removes it.
    let _ = rustix::fs::fsetxattr(&fd, MARK, b"1", rustix::fs::XattrFlags::empty());
    Ok(())
}

pub(crate) fn remove_any(path: &Path) {
    if std::fs::remove_dir(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}

impl Placeholder {
    /// Makes the placeholder at `path` (or joins the one there), locked shared. `temp` is told
    /// each temporary name before it is made, and what it returns is dropped once the name is
    /// gone (the session reaper's registration). `Ok(None)` when something that cannot be opened
    /// as this kind is already there.
    pub(crate) fn make_or_join<T>(
        path: &Path,
        kind: Kind,
        mut temp: impl FnMut(&Path) -> T,
    ) -> std::io::Result<Option<Placeholder>> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        for _ in 0..ATTEMPTS {
            // Join what is there.
            match open_held(path, kind) {
                Ok(fd) if same_inode(&fd, path) => {
                    return Ok(Some(Placeholder {
                        path: path.to_path_buf(),
                        kind,
                        fd,
                        created: false,
                    }));
                }
                Ok(_) => continue, // removed while we waited for the lock
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return Ok(None),
            }
            // Make it whole under a unique name, then move it into place without replacing.
            let tmp = dir.join(format!(
                ".{}.cordon-{}",
                name.to_string_lossy(),
                crate::host::token::nonce()
            ));
            let registered = temp(&tmp);
            make_marked(&tmp, kind)?;
            let moved = rustix::fs::renameat_with(
                rustix::fs::CWD,
                &tmp,
                rustix::fs::CWD,
                path,
                rustix::fs::RenameFlags::NOREPLACE,
            );
            if moved.is_err() {
                remove_any(&tmp);
                drop(registered);
                continue; // someone else's is there now: join it
            }
            drop(registered);
            let fd = open_held(path, kind)?;
            if same_inode(&fd, path) {
                return Ok(Some(Placeholder {
                    path: path.to_path_buf(),
                    kind,
                    fd,
                    created: true,
                }));
            }
        }
        Err(std::io::Error::other(format!(
            "{} kept changing while a placeholder was being made there",
            path.display()
        )))
    }

    /// The placeholder a killed launcher left at `path`, opened (not locked) for the reaper.
    pub(crate) fn left_behind(path: PathBuf, kind: Kind) -> Option<Placeholder> {
        let fd = open_at(&path, kind).ok()?;
        Some(Placeholder {
            path,
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
    pub(crate) fn release(self) {
        if self.try_exclusive() {
            self.remove_if_ours();
        }
        // Otherwise another run still relies on it, and will try in turn.
    }

    /// Drops this run's shared lock and tries for the exclusive one without waiting.
    pub(crate) fn try_exclusive(&self) -> bool {
        let _ = rustix::fs::flock(&self.fd, FlockOperation::Unlock);
        rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive).is_ok()
    }

    /// With the exclusive lock held: removes the placeholder if it is still what cordon made.
    pub(crate) fn remove_if_ours(self) {
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
