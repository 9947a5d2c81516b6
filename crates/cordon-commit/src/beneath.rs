//! A directory tree reached only beneath its root: every parent is resolved with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`), and the last component is
//! only ever acted on by the `*at` calls that do not follow it. A parent that became a symbolic
//! link is an error here, and a conflict for the commit.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Statx, StatxFlags};
use rustix::io::Errno;

use crate::error::CommitError;

/// One tree, its root opened once.
#[derive(Debug)]
pub(crate) struct Tree {
    root: OwnedFd,
    path: PathBuf,
}

/// What a lookup found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing there (or a parent is missing or not a directory).
    Absent,
    /// A parent is a symbolic link (or leads out of the root).
    ParentIsLink,
    /// An entry.
    Entry(Meta),
}

/// The few facts of an entry cordon uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub kind: FileType,
    pub mode: u32,
    pub size: u64,
    pub uid: u32,
    pub ctime: (i64, u32),
    pub rdev: (u32, u32),
}

impl Meta {
    pub(crate) fn from_statx(s: &Statx) -> Meta {
        Meta {
            kind: FileType::from_raw_mode(u32::from(s.stx_mode)),
            mode: u32::from(s.stx_mode) & 0o7777,
            size: s.stx_size,
            uid: s.stx_uid,
            ctime: (s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec),
            rdev: (s.stx_rdev_major, s.stx_rdev_minor),
        }
    }
}

pub(crate) const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// The parent of a relative path and its last name, or the reason there is none.
pub(crate) fn split(rel: &Path) -> Option<(&Path, &OsStr)> {
    let name = rel.file_name()?;
    let parent = rel.parent().unwrap_or(Path::new(""));
    Some((parent, name))
}

/// A relative path cordon made from directory entries: plain names only.
pub(crate) fn is_plain(rel: &Path) -> bool {
    !rel.as_os_str().is_empty()
        && rel.components().all(|c| matches!(c, Component::Normal(_)))
        && !rel.as_os_str().as_bytes().contains(&0)
}

impl Tree {
    /// Opens `path` (followed: the caller names the root it means).
    pub(crate) fn open(path: &Path) -> Result<Tree, CommitError> {
        let root = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(CommitError::errno("opening the directory", path))?;
        Ok(Tree {
            root,
            path: path.to_path_buf(),
        })
    }

    /// The root's path, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The root's descriptor.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.root
    }

    /// Opens the directory `rel` beneath the root (`""` is the root) with `flags`.
    pub(crate) fn open_dir(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        if !(rel == Path::new(".") || is_plain(rel)) {
            return Err(Errno::INVAL);
        }
        rustix::fs::openat2(
            &self.root,
            rel,
            flags | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
            RESOLVE,
        )
    }

    /// The parent directory of `rel` (opened as a path) and the last name.
    pub(crate) fn parent<'a>(&self, rel: &'a Path) -> Result<(OwnedFd, &'a OsStr), Errno> {
        let (parent, name) = split(rel).ok_or(Errno::INVAL)?;
        Ok((self.open_dir(parent, OFlags::PATH)?, name))
    }

    /// What is at `rel`, never following it or a parent.
    pub(crate) fn lookup(&self, rel: &Path) -> Result<Found, CommitError> {
        let (dir, name) = match self.parent(rel) {
            Ok(p) => p,
            Err(e) => return classify(e, &self.path.join(rel)),
        };
        match rustix::fs::statx(
            &dir,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::BASIC_STATS,
        ) {
            Ok(s) => Ok(Found::Entry(Meta::from_statx(&s))),
            Err(e) => classify(e, &self.path.join(rel)),
        }
    }

    /// A symbolic link's target.
    pub(crate) fn read_link(&self, rel: &Path) -> Result<PathBuf, CommitError> {
        let at = self.path.join(rel);
        let (dir, name) = self
            .parent(rel)
            .map_err(CommitError::errno("opening the parent of", &at))?;
        let target = rustix::fs::readlinkat(&dir, name, Vec::new())
            .map_err(CommitError::errno("reading the link", &at))?;
        Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
    }

    /// The regular file at `rel` when it holds at most `limit` bytes (`None`: longer, not a
    /// regular file, or unreadable: the judge never acts on a prefix).
    pub(crate) fn read_capped(&self, rel: &Path, limit: usize) -> Option<Vec<u8>> {
        let (dir, name) = self.parent(rel).ok()?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .ok()?;
        let st = rustix::fs::fstat(&fd).ok()?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return None;
        }
        let mut bytes = Vec::new();
        let file = std::fs::File::from(fd);
        file.take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
            .read_to_end(&mut bytes)
            .ok()?;
        (bytes.len() <= limit).then_some(bytes)
    }

    /// The names in the directory `rel` (not `.` or `..`).
    pub(crate) fn names(&self, rel: &Path) -> Result<Vec<std::ffi::OsString>, CommitError> {
        let at = self.path.join(rel);
        let fd = self
            .open_dir(rel, OFlags::RDONLY)
            .map_err(CommitError::errno("opening the directory", &at))?;
        let dir = rustix::fs::Dir::new(fd).map_err(CommitError::errno("listing", &at))?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(CommitError::errno("listing", &at))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        names.sort();
        Ok(names)
    }
}

/// A lookup's error as a finding, or a real error.
fn classify(e: Errno, at: &Path) -> Result<Found, CommitError> {
    match e {
        Errno::NOENT | Errno::NOTDIR => Ok(Found::Absent),
        Errno::LOOP | Errno::XDEV => Ok(Found::ParentIsLink),
        e => Err(CommitError::errno("looking up", at)(e)),
    }
}

/// Whether `fd`'s directory is on the same file system as `other`'s.
pub(crate) fn same_device(a: impl AsFd, b: impl AsFd) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(x), Ok(y)) => x.st_dev == y.st_dev,
        _ => false,
    }
}
