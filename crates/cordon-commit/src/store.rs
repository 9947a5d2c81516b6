//! The workspace's state directory: its lock, its runs (`runs/<name>/`: `run.json`, `kept/`,
//! `journal`, `progress`), records written atomically, and the command's versions moved aside
//! into `kept/`.

use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::beneath::Tree;
use crate::error::CommitError;
use crate::report::Manifest;

pub(crate) const RUNS: &str = "runs";
pub(crate) const MANIFEST: &str = "run.json";
pub(crate) const JOURNAL: &str = "journal";
pub(crate) const PROGRESS: &str = "progress";
pub(crate) const KEPT: &str = "kept";

/// The workspace's lock, held while a commit, an `apply`, a `drop` or a recovery runs: jails
/// committing into one workspace take turns.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

pub(crate) fn make_dir(path: &Path) -> Result<(), CommitError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(CommitError::io("making the directory", path))
}

impl Lock {
    pub(crate) fn take(state: &Path) -> Result<Lock, CommitError> {
        make_dir(&state.join(RUNS))?;
        let (file, path) = Lock::open(state)?;
        rustix::fs::flock(&file, FlockOperation::LockExclusive)
            .map_err(CommitError::errno("locking", &path))?;
        Ok(Lock { _file: file })
    }

    /// The lock of the workspace's state directory `state`, if nothing holds it now (no
    /// commit, `apply`, `drop` or recovery is running there); it is held until dropped.
    pub fn try_take(state: &Path) -> Option<Lock> {
        let (file, _) = Lock::open(state).ok()?;
        rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).ok()?;
        Some(Lock { _file: file })
    }

    fn open(state: &Path) -> Result<(File, PathBuf), CommitError> {
        let path = state.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc_nofollow())
            .open(&path)
            .map_err(CommitError::io("opening the lock", &path))?;
        Ok((file, path))
    }
}

fn libc_nofollow() -> i32 {
    i32::try_from(OFlags::NOFOLLOW.bits()).unwrap_or(0)
}

/// A run's name: made here, only `[0-9a-z-]`.
pub(crate) fn valid_name(run: &str) -> bool {
    !run.is_empty()
        && run.len() <= 64
        && run
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase() || b == b'-')
}

/// The directory of an existing run.
pub(crate) fn run_dir(state: &Path, run: &str) -> Result<PathBuf, CommitError> {
    if !valid_name(run) {
        return Err(CommitError::BadRunName { run: run.into() });
    }
    let dir = state.join(RUNS).join(run);
    if !dir.join(MANIFEST).is_file() {
        return Err(CommitError::NoSuchRun {
            run: run.into(),
            state: state.to_path_buf(),
        });
    }
    Ok(dir)
}

/// Makes a new run's directory: `<seconds>-<pid>-<n>`.
pub(crate) fn new_run(state: &Path) -> Result<(String, PathBuf), CommitError> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let pid = std::process::id();
    for n in 0u32.. {
        let name = format!("{secs}-{pid}-{n}");
        let dir = state.join(RUNS).join(&name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                make_dir(&dir.join(KEPT))?;
                return Ok((name, dir));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(CommitError::io("making the run directory", &dir)(e)),
        }
    }
    Err(CommitError::io("making the run directory", state)(
        std::io::ErrorKind::AlreadyExists.into(),
    ))
}

/// Writes `value` as JSON to `dir/name` atomically and durably (a temporary file, fsync, rename,
/// fsync of the directory).
pub(crate) fn write_json<T: Serialize>(
    dir: &Path,
    name: &str,
    value: &T,
) -> Result<(), CommitError> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    let bytes = serde_json::to_vec(value).map_err(|e| CommitError::Damaged {
        path: path.clone(),
        why: e.to_string(),
    })?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(CommitError::io("writing", &tmp))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .map_err(CommitError::io("writing", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(CommitError::io("renaming", &path))?;
    sync_dir(dir)
}

pub(crate) fn sync_dir(dir: &Path) -> Result<(), CommitError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(CommitError::io("syncing", dir))
}

pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, CommitError> {
    let bytes = std::fs::read(path).map_err(CommitError::io("reading", path))?;
    serde_json::from_slice(&bytes).map_err(|e| CommitError::Damaged {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

pub(crate) fn read_manifest(run_dir: &Path) -> Result<Manifest, CommitError> {
    read_json(&run_dir.join(MANIFEST))
}

/// How the command's version was moved aside.
pub(crate) struct Kept {
    /// The mode it got (set-id bits stripped), for a file.
    pub mode: Option<u32>,
}

/// Moves the command's file or link `rel` from `upper` to `kept/rel` in `run_dir`: renamed when
/// on one file system (else copied), rewritten with the judge's bytes when given, copied into a
/// new file of this user's when another user owns it, set-id bits stripped.
/// The directories [`keep`] used last: entries of one directory come one after another, so
/// each upper parent is opened, and each kept parent made, once per directory.
#[derive(Default)]
pub(crate) struct Keeper {
    kept_parent: Option<PathBuf>,
    upper_parent: Option<(PathBuf, std::os::fd::OwnedFd)>,
}

pub(crate) fn keep(
    keeper: &mut Keeper,
    upper: &Tree,
    rel: &Path,
    run_dir: &Path,
    rewrite: Option<&[u8]>,
    judged_mode: Option<u32>,
) -> Result<Kept, CommitError> {
    let dest = run_dir.join(KEPT).join(rel);
    if let Some(parent) = dest.parent()
        && keeper.kept_parent.as_deref() != Some(parent)
    {
        make_dir(parent)?;
        keeper.kept_parent = Some(parent.to_path_buf());
    }
    let from = upper.path().join(rel);
    let (parent, name) = crate::beneath::split(rel).ok_or_else(|| {
        CommitError::io("moving aside", &from)(std::io::ErrorKind::InvalidInput.into())
    })?;
    if keeper.upper_parent.as_ref().map(|(p, _)| p.as_path()) != Some(parent) {
        let fd = upper
            .open_dir(parent, OFlags::PATH)
            .map_err(CommitError::errno("opening the parent of", &from))?;
        keeper.upper_parent = Some((parent.to_path_buf(), fd));
    }
    let Some((_, dir)) = keeper.upper_parent.as_ref() else {
        return Err(CommitError::io("moving aside", &from)(
            std::io::ErrorKind::NotFound.into(),
        ));
    };
    let meta = rustix::fs::statx(
        dir,
        name,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        rustix::fs::StatxFlags::BASIC_STATS,
    )
    .map(|s| crate::beneath::Meta::from_statx(&s))
    .map_err(CommitError::errno("moving aside", &from))?;
    let moved = rustix::fs::renameat(dir, name, rustix::fs::CWD, &dest);
    match moved {
        Ok(()) => {}
        Err(Errno::XDEV) => {
            copy_entry(upper, rel, &dest, meta.kind)?;
            if meta.kind == FileType::RegularFile {
                std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(meta.mode & 0o777))
                    .map_err(CommitError::io("changing the mode of", &dest))?;
            }
        }
        Err(e) => return Err(CommitError::errno("moving aside", &from)(e)),
    }
    if meta.kind != FileType::RegularFile {
        return Ok(Kept { mode: None });
    }
    strip_overlay_xattrs(&dest)?;
    let mode = judged_mode.unwrap_or(meta.mode) & 0o777;
    let foreign = meta.uid != rustix::process::geteuid().as_raw();
    if let Some(bytes) = rewrite {
        replace(&dest, bytes, mode)?;
    } else if foreign {
        let bytes = std::fs::read(&dest).map_err(CommitError::io("reading", &dest))?;
        replace(&dest, &bytes, mode)?;
    } else if meta.mode & 0o7777 != mode {
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
            .map_err(CommitError::io("changing the mode of", &dest))?;
    }
    Ok(Kept { mode: Some(mode) })
}

/// Replaces `dest` by a new file of this user's holding `bytes` (never written through a link
/// another name shares).
fn replace(dest: &Path, bytes: &[u8], mode: u32) -> Result<(), CommitError> {
    let tmp = dest.with_file_name(format!(
        ".{}.cordon-new",
        dest.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(mode)
        .open(&tmp)
        .map_err(CommitError::io("writing", &tmp))?;
    file.write_all(bytes)
        .and_then(|()| file.set_permissions(std::fs::Permissions::from_mode(mode)))
        .map_err(CommitError::io("writing", &tmp))?;
    std::fs::rename(&tmp, dest).map_err(CommitError::io("renaming", dest))
}

/// Copies the file or link `rel` of `tree` to the new path `dest`.
fn copy_entry(tree: &Tree, rel: &Path, dest: &Path, kind: FileType) -> Result<(), CommitError> {
    if kind == FileType::Symlink {
        let target = tree.read_link(rel)?;
        return std::os::unix::fs::symlink(&target, dest).map_err(CommitError::io("linking", dest));
    }
    let from = tree.path().join(rel);
    let (dir, name) = tree
        .parent(rel)
        .map_err(CommitError::errno("opening the parent of", &from))?;
    let src = rustix::fs::openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(CommitError::errno("opening", &from))?;
    let mut src = File::from(src);
    let mut out = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(dest)
        .map_err(CommitError::io("writing", dest))?;
    std::io::copy(&mut src, &mut out).map_err(CommitError::io("copying to", dest))?;
    Ok(())
}

/// Removes overlayfs's own attributes (`user.overlay.*`, `trusted.overlay.*`) from a kept file, so
/// that a host file never carries layer metadata into the next layer.
fn strip_overlay_xattrs(path: &Path) -> Result<(), CommitError> {
    let mut names = vec![0u8; 4096];
    let len = match rustix::fs::llistxattr(path, &mut names[..]) {
        Ok(n) => n,
        Err(Errno::RANGE) => {
            names = vec![0u8; 65536];
            rustix::fs::llistxattr(path, &mut names[..])
                .map_err(CommitError::errno("listing attributes of", path))?
        }
        Err(Errno::NOTSUP) => return Ok(()),
        Err(e) => return Err(CommitError::errno("listing attributes of", path)(e)),
    };
    for name in names[..len].split(|b| *b == 0).filter(|n| !n.is_empty()) {
        if name.starts_with(b"user.overlay.") || name.starts_with(b"trusted.overlay.") {
            let name = std::ffi::OsStr::from_bytes(name);
            match rustix::fs::lremovexattr(path, name) {
                Err(Errno::ACCESS | Errno::PERM) => removed_while_writable(path, name)?,
                other => other.map_err(CommitError::errno("removing an attribute of", path))?,
            }
        }
    }
    Ok(())
}

/// Removes a `user.` attribute from a file of this user's that its owner cannot write (git's
/// objects are 0444, and git's freshening of one copies it up): the kernel asks for write
/// permission to change a `user.` attribute, so the owner's write bit is set for the moment.
/// The file is in cordon's state, not yet on the host's tree.
fn removed_while_writable(path: &Path, name: &std::ffi::OsStr) -> Result<(), CommitError> {
    let meta = std::fs::symlink_metadata(path).map_err(CommitError::io("reading", path))?;
    let mode = meta.permissions().mode() & 0o7777;
    if !meta.is_file()
        || std::os::unix::fs::MetadataExt::uid(&meta) != rustix::process::geteuid().as_raw()
        || mode & 0o200 != 0
    {
        return Err(CommitError::errno("removing an attribute of", path)(
            Errno::ACCESS,
        ));
    }
    let set = |m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m))
            .map_err(CommitError::io("changing the mode of", path))
    };
    set(mode | 0o200)?;
    let removed = rustix::fs::lremovexattr(path, name)
        .map_err(CommitError::errno("removing an attribute of", path));
    set(mode)?;
    removed
}
