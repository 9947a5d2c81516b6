//! A descriptor-relative open that cannot leave its root: `openat2` with `RESOLVE_BENEATH`,
//! `RESOLVE_NO_SYMLINKS` and `RESOLVE_NO_MAGICLINKS`, so a directory swapped for a symlink
//! mid-open, a `..` past the root or a `/proc/self/fd` link fails in the kernel instead of being
//! followed. Linux only; elsewhere, and on kernels before 5.6, it refuses with a clear error.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use rustix::fs::OFlags;

use crate::error::FloorError;

/// Opens `relative` beneath the directory `root` with `flags` (`OFlags::RDONLY`,
/// `OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC`, …; close-on-exec is always added, and a
/// created file gets mode 0666 less the umask).
///
/// Refused: an absolute or empty path, any symlink on the way (the last component included),
/// anything that resolves outside `root`, and, when opened for writing, a regular file with more
/// than one hard link (it is checked before any truncation).
///
/// ```no_run
/// use cordon_floor::{OFlags, open_beneath};
///
/// let root = std::fs::File::open("/home/u/proj")?;
/// let fd = open_beneath(&root, "src/main.rs".as_ref(), OFlags::RDONLY)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_beneath<Fd: AsFd>(
    root: Fd,
    relative: &Path,
    flags: OFlags,
) -> Result<OwnedFd, FloorError> {
    if relative.as_os_str().is_empty() || relative.is_absolute() {
        return Err(FloorError::NotRelative {
            path: relative.to_path_buf(),
        });
    }
    if relative.as_os_str().as_bytes().contains(&0) {
        return Err(FloorError::NulByte {
            path: relative.to_path_buf(),
        });
    }
    imp::open(root.as_fd(), relative, flags)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;

    use crate::error::FloorError;

    /// How often a lookup raced by a rename is retried before giving up.
    const RETRIES: usize = 32;

    pub(super) fn open(
        root: BorrowedFd<'_>,
        relative: &Path,
        flags: OFlags,
    ) -> Result<OwnedFd, FloorError> {
        let writing = flags.intersects(OFlags::WRONLY | OFlags::RDWR);
        let truncate = flags.contains(OFlags::TRUNC);
        let open_flags = (flags - OFlags::TRUNC) | OFlags::CLOEXEC;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        // openat2 refuses a mode without O_CREAT or O_TMPFILE.
        let mode = if flags.intersects(OFlags::CREATE | OFlags::TMPFILE) {
            Mode::from_raw_mode(0o666)
        } else {
            Mode::empty()
        };
        let mut tries = 0;
        let fd = loop {
            match openat2(root, relative, open_flags, mode, resolve) {
                Ok(fd) => break fd,
                // The kernel saw a rename or mount during the lookup and cannot vouch for `..`.
                Err(Errno::AGAIN) if tries < RETRIES => tries += 1,
                Err(Errno::INTR) => {}
                Err(e) => return Err(error(e, relative)),
            }
        };
        if !writing {
            return Ok(fd);
        }
        let file = std::fs::File::from(fd);
        let meta = file.metadata().map_err(|source| FloorError::Io {
            path: relative.to_path_buf(),
            source,
        })?;
        if meta.is_file() && meta.nlink() > 1 {
            return Err(FloorError::HardLinked {
                path: relative.to_path_buf(),
                links: meta.nlink(),
            });
        }
        if truncate {
            file.set_len(0).map_err(|source| FloorError::Io {
                path: relative.to_path_buf(),
                source,
            })?;
        }
        Ok(OwnedFd::from(file))
    }

    pub(super) fn error(e: Errno, relative: &Path) -> FloorError {
        let path = relative.to_path_buf();
        match e {
            Errno::NOSYS => FloorError::Openat2Unsupported,
            Errno::XDEV => FloorError::EscapesRoot { path },
            Errno::LOOP => FloorError::SymlinkBeneath { path },
            other => FloorError::Io {
                path,
                source: other.into(),
            },
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;

    use rustix::fs::OFlags;

    use crate::error::FloorError;

    pub(super) fn open(_: BorrowedFd<'_>, _: &Path, _: OFlags) -> Result<OwnedFd, FloorError> {
        Err(FloorError::Openat2Unsupported)
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;
    use rustix::io::Errno;

    fn setup() -> (tempfile::TempDir, std::fs::File) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(dir.path().join("sub")).unwrap_or_default();
        std::fs::write(dir.path().join("sub/f"), "inside").unwrap_or_default();
        let root = std::fs::File::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        (dir, root)
    }

    #[test]
    fn opens_beneath_and_refuses_escapes() {
        let (dir, root) = setup();
        assert!(open_beneath(&root, Path::new("sub/f"), OFlags::RDONLY).is_ok());
        assert!(matches!(
            open_beneath(&root, Path::new("../x"), OFlags::RDONLY),
            Err(FloorError::EscapesRoot { .. })
        ));
        assert!(matches!(
            open_beneath(&root, Path::new("/etc/passwd"), OFlags::RDONLY),
            Err(FloorError::NotRelative { .. })
        ));
        std::os::unix::fs::symlink("sub", dir.path().join("link")).unwrap_or_default();
        assert!(matches!(
            open_beneath(&root, Path::new("link/f"), OFlags::RDONLY),
            Err(FloorError::SymlinkBeneath { .. })
        ));
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("abs")).unwrap_or_default();
        assert!(open_beneath(&root, Path::new("abs"), OFlags::RDONLY).is_err());
        assert!(open_beneath(&root, Path::new("proc-like"), OFlags::RDONLY).is_err());
    }

    #[test]
    fn refuses_to_write_a_hard_linked_file_and_leaves_it_whole() {
        let (dir, root) = setup();
        std::fs::hard_link(dir.path().join("sub/f"), dir.path().join("g")).unwrap_or_default();
        let res = open_beneath(&root, Path::new("g"), OFlags::WRONLY | OFlags::TRUNC);
        assert!(matches!(res, Err(FloorError::HardLinked { links: 2, .. })));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/f")).unwrap_or_default(),
            "inside"
        );
        // Reading it is fine.
        assert!(open_beneath(&root, Path::new("g"), OFlags::RDONLY).is_ok());
    }

    #[test]
    fn creates_and_truncates() {
        let (dir, root) = setup();
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
        let fd = open_beneath(&root, Path::new("sub/new"), flags).unwrap_or_else(|e| panic!("{e}"));
        drop(fd);
        assert!(dir.path().join("sub/new").exists());
        let fd = open_beneath(&root, Path::new("sub/f"), flags).unwrap_or_else(|e| panic!("{e}"));
        drop(fd);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/f")).unwrap_or_default(),
            ""
        );
    }

    #[test]
    fn a_kernel_without_openat2_gets_a_clear_error() {
        let err = imp::error(Errno::NOSYS, Path::new("x"));
        assert!(matches!(err, FloorError::Openat2Unsupported));
        assert!(err.to_string().contains("openat2"));
    }
}
