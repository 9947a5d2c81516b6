//! Root identities recorded by the scan, and the per-command check that they still hold.
//!
//! The scan walks once per session; a command later in the session is safe to jail only if each
//! writable root is still the directory that was walked. Replacing a root (rename another tree
//! into its place, mount over it) changes its device, inode or mount ID, which one `statx` of
//! each root shows without walking anything.

use std::fmt;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, StatxFlags};
use serde::Serialize;

use crate::error::ScanError;

/// What identifies a directory on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// Device major number.
    pub dev_major: u32,
    /// Device minor number.
    pub dev_minor: u32,
    /// Inode number.
    pub ino: u64,
    /// The mount ID (`STATX_MNT_ID`), when the kernel reports it.
    pub mnt_id: Option<u64>,
}

impl Identity {
    /// Whether `other` is the same directory: same device and inode, and the same mount when
    /// both know their mount.
    pub fn same_as(&self, other: &Identity) -> bool {
        self.dev_major == other.dev_major
            && self.dev_minor == other.dev_minor
            && self.ino == other.ino
            && match (self.mnt_id, other.mnt_id) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// The identity of what `fd` refers to.
    pub(crate) fn of_fd<Fd: AsFd>(fd: Fd) -> std::io::Result<Identity> {
        identity(fd, "", AtFlags::EMPTY_PATH)
    }

    /// The identity of `path` itself (a symlink is not followed).
    pub(crate) fn of_path(path: &Path) -> std::io::Result<Identity> {
        identity(CWD, path, AtFlags::SYMLINK_NOFOLLOW)
    }
}

fn identity<Fd: AsFd>(fd: Fd, path: impl AsRef<Path>, flags: AtFlags) -> std::io::Result<Identity> {
    let path = path.as_ref();
    match rustix::fs::statx(&fd, path, flags, StatxFlags::INO | StatxFlags::MNT_ID) {
        Ok(stx) => Ok(Identity {
            dev_major: stx.stx_dev_major,
            dev_minor: stx.stx_dev_minor,
            ino: stx.stx_ino,
            mnt_id: StatxFlags::from_bits_retain(stx.stx_mask)
                .contains(StatxFlags::MNT_ID)
                .then_some(stx.stx_mnt_id),
        }),
        // statx is missing (or filtered): device and inode from plain stat.
        Err(rustix::io::Errno::NOSYS) => {
            let st = rustix::fs::statat(&fd, path, flags)?;
            let dev = st.st_dev;
            Ok(Identity {
                dev_major: rustix::fs::major(dev),
                dev_minor: rustix::fs::minor(dev),
                ino: st.st_ino,
                mnt_id: None,
            })
        }
        Err(e) => Err(e.into()),
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device {}:{} inode {}",
            self.dev_major, self.dev_minor, self.ino
        )?;
        if let Some(id) = self.mnt_id {
            write!(f, " mount {id}")?;
        }
        Ok(())
    }
}

/// The identities of the roots a session scanned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    roots: Vec<(PathBuf, Identity)>,
}

impl Snapshot {
    /// Records the identity of each root as it is now (without walking anything).
    pub fn take<P: AsRef<Path>>(roots: &[P]) -> Result<Snapshot, ScanError> {
        let mut recorded = Vec::with_capacity(roots.len());
        for root in roots {
            let root = root.as_ref();
            let id = Identity::of_path(root).map_err(|source| ScanError::RootGone {
                root: root.to_owned(),
                source,
            })?;
            recorded.push((root.to_owned(), id));
        }
        Ok(Snapshot { roots: recorded })
    }

    pub(crate) fn from_parts(roots: Vec<(PathBuf, Identity)>) -> Snapshot {
        Snapshot { roots }
    }

    /// The roots and their recorded identities.
    pub fn roots(&self) -> &[(PathBuf, Identity)] {
        &self.roots
    }

    /// One `statx` per root, no walk: fails when a root is gone or is no longer the directory
    /// that was recorded (replaced, renamed over, mounted over, turned into a symlink).
    pub fn check(&self) -> Result<(), ScanError> {
        for (root, then) in &self.roots {
            let now = Identity::of_path(root).map_err(|source| ScanError::RootGone {
                root: root.clone(),
                source,
            })?;
            if !then.same_as(&now) {
                return Err(ScanError::RootReplaced {
                    root: root.clone(),
                    then: *then,
                    now,
                });
            }
        }
        Ok(())
    }
}
