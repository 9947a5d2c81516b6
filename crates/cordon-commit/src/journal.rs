//! The journal: the list of operations that apply a run's chosen changes, written and synced
//! before the host is touched (sealed by a rename), then applied in order, each operation
//! idempotent so that a journal found after a crash is rolled forward to its end.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::beneath::{Found, Tree, same_device};
use crate::error::CommitError;
use crate::report::{ChangeWord, CommitReport, Entry, Finding, Manifest, NodeWord, Status};
use crate::store::{self, JOURNAL, KEPT, PROGRESS};

/// One step on the host. Paths are relative to the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    /// Unlink a file, link or special (done if absent, or a directory now).
    RemoveFile(PathBuf),
    /// Remove an empty directory (done if absent, or not a directory now).
    RemoveDir(PathBuf),
    /// Make a directory (done if one is there).
    MakeDir(PathBuf, u32),
    /// Set a directory's mode.
    SetMode(PathBuf, u32),
    /// Move `kept/PATH` onto PATH (done if `kept/PATH` is gone); `true`: the path is new, and
    /// one the host made meanwhile is a conflict (`RENAME_NOREPLACE`).
    Place(PathBuf, bool),
}

impl Op {
    fn path(&self) -> &Path {
        match self {
            Op::RemoveFile(p)
            | Op::RemoveDir(p)
            | Op::MakeDir(p, _)
            | Op::SetMode(p, _)
            | Op::Place(p, _) => p,
        }
    }
}

/// A sealed journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Journal {
    #[serde(with = "crate::pathser")]
    pub root: PathBuf,
    /// The entries this journal applies.
    pub applies: Vec<PathBuf>,
    pub ops: Vec<Op>,
}

/// The operations that apply `entries` (each one the run's), deletions deepest first, then
/// creations shallowest first.
pub(crate) fn ops_for(entries: &[&Entry]) -> Vec<Op> {
    let mut removals: Vec<Op> = Vec::new();
    let mut creations: Vec<Op> = Vec::new();
    for e in entries {
        let p = e.path.clone();
        match (e.change, e.node) {
            (ChangeWord::Deleted, NodeWord::Dir) => removals.push(Op::RemoveDir(p)),
            (ChangeWord::Deleted, _) => removals.push(Op::RemoveFile(p)),
            (_, NodeWord::Dir) => {
                let mode = e.mode.unwrap_or(0o755);
                if e.change == ChangeWord::Modified && e.host_dir {
                    creations.push(Op::SetMode(p, mode));
                } else {
                    if e.change == ChangeWord::Modified {
                        removals.push(Op::RemoveFile(p.clone()));
                    }
                    creations.push(Op::MakeDir(p, mode));
                }
            }
            (_, NodeWord::File | NodeWord::Symlink) => {
                if e.host_dir {
                    removals.push(Op::RemoveDir(p.clone()));
                }
                creations.push(Op::Place(p, e.change == ChangeWord::Added));
            }
            (_, NodeWord::Special) => {}
        }
    }
    removals.sort_by(|a, b| {
        b.path()
            .components()
            .count()
            .cmp(&a.path().components().count())
            .then_with(|| a.path().cmp(b.path()))
    });
    creations.sort_by(|a, b| a.path().cmp(b.path()));
    removals.extend(creations);
    removals
}

/// Where a commit or recovery is, for a test's hook (a test kills the process at each point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Point {
    /// The command's version of change N was moved aside.
    KeptAside(usize),
    /// The run's record is written.
    Recorded,
    /// The journal is sealed: from here a crash is rolled forward.
    Sealed,
    /// Operation N is done on the host.
    Applied(usize),
    /// The run's record says what was applied; the journal is about to go.
    Finalized,
}

/// Writes and seals the journal in `run_dir` (after syncing what `kept/` holds).
pub(crate) fn seal(run_dir: &Path, journal: &Journal) -> Result<(), CommitError> {
    let kept = File::open(run_dir).map_err(CommitError::io("opening", run_dir))?;
    rustix::fs::syncfs(&kept).map_err(CommitError::errno("syncing", run_dir))?;
    store::write_json(run_dir, JOURNAL, journal)
}

/// Applies a sealed journal from its recorded progress to its end, then records the outcome in
/// the run's manifest and removes the journal. Operations that meet a host that changed are
/// conflicts: their entries stay kept.
pub(crate) fn roll_forward(
    run_dir: &Path,
    hook: &mut dyn FnMut(Point),
) -> Result<CommitReport, CommitError> {
    let journal: Journal = store::read_json(&run_dir.join(JOURNAL))?;
    let root = Tree::open(&journal.root)?;
    let kept = Tree::open(&run_dir.join(KEPT))?;
    let progress_path = run_dir.join(PROGRESS);
    let progress = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&progress_path)
        .map_err(CommitError::io("opening", &progress_path))?;
    let start = read_progress(&progress);
    let same_fs = same_device(root.fd(), kept.fd());
    let mut failed: Vec<(PathBuf, String)> = Vec::new();
    for (i, op) in journal.ops.iter().enumerate() {
        if i < start {
            continue;
        }
        if let Err(why) = apply(&root, &kept, op, same_fs, i)? {
            failed.push((op.path().to_path_buf(), why));
        }
        let _ = progress.write_all_at(format!("{:020}", i + 1).as_bytes(), 0);
        hook(Point::Applied(i));
    }
    root.open_dir(Path::new(""), OFlags::RDONLY)
        .and_then(rustix::fs::syncfs)
        .map_err(CommitError::errno("syncing", root.path()))?;
    finalize(run_dir, &journal, &failed, hook)
}

fn read_progress(file: &File) -> usize {
    let mut buf = [0u8; 20];
    match file.read_at(&mut buf, 0) {
        Ok(20) => std::str::from_utf8(&buf)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Marks the journal's entries applied (or conflicts), removes the journal, and the run's
/// directory too when it keeps nothing.
fn finalize(
    run_dir: &Path,
    journal: &Journal,
    failed: &[(PathBuf, String)],
    hook: &mut dyn FnMut(Point),
) -> Result<CommitReport, CommitError> {
    let mut manifest: Manifest = store::read_manifest(run_dir)?;
    let applies: std::collections::HashSet<&PathBuf> = journal.applies.iter().collect();
    let failed: std::collections::HashMap<&PathBuf, &String> =
        failed.iter().map(|(p, w)| (p, w)).collect();
    for e in &mut manifest.entries {
        if !applies.contains(&e.path) {
            continue;
        }
        if let Some(why) = failed.get(&e.path) {
            e.status = Status::Conflict;
            e.finding = Some(Finding::commit("conflict", (*why).clone()));
        } else {
            e.status = Status::Applied;
        }
    }
    store::write_json(run_dir, store::MANIFEST, &manifest)?;
    hook(Point::Finalized);
    let keeps = manifest.entries.iter().any(|e| e.status != Status::Applied);
    let report = CommitReport::of(
        &manifest,
        true,
        keeps.then(|| run_dir.to_path_buf()),
        Some(&journal.applies),
    );
    if keeps {
        for name in [JOURNAL, PROGRESS] {
            let path = run_dir.join(name);
            std::fs::remove_file(&path).map_err(CommitError::io("removing", &path))?;
        }
    } else {
        std::fs::remove_file(run_dir.join(JOURNAL))
            .map_err(CommitError::io("removing", run_dir.join(JOURNAL)))?;
        std::fs::remove_dir_all(run_dir).map_err(CommitError::io("removing", run_dir))?;
    }
    Ok(report)
}

/// The host changed under this operation: the reason (the operation's entry becomes a conflict).
fn host_changed(e: Errno) -> Option<String> {
    Some(match e {
        Errno::LOOP | Errno::XDEV => "a parent directory on the host is a symbolic link".into(),
        Errno::NOTEMPTY => "the host added entries to the directory".into(),
        Errno::NOENT | Errno::NOTDIR => "a parent directory is gone from the host".into(),
        Errno::EXIST | Errno::ISDIR => "the host made something else at the path".into(),
        _ => return None,
    })
}

/// One operation: `Ok(Ok(()))` done, `Ok(Err(why))` the host changed under it.
fn apply(
    root: &Tree,
    kept: &Tree,
    op: &Op,
    same_fs: bool,
    index: usize,
) -> Result<Result<(), String>, CommitError> {
    let at = root.path().join(op.path());
    let result = step(root, kept, op, same_fs, index);
    match result {
        Ok(()) => Ok(Ok(())),
        Err(e) => match host_changed(e) {
            Some(why) => Ok(Err(why)),
            None => Err(CommitError::errno("applying to", at)(e)),
        },
    }
}

fn step(root: &Tree, kept: &Tree, op: &Op, same_fs: bool, index: usize) -> Result<(), Errno> {
    let rel = op.path();
    match op {
        Op::RemoveFile(_) | Op::RemoveDir(_) => {
            let (dir, name) = match root.parent(rel) {
                Ok(p) => p,
                Err(Errno::NOENT | Errno::NOTDIR) => return Ok(()),
                Err(e) => return Err(e),
            };
            let want_dir = matches!(op, Op::RemoveDir(_));
            let st = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(Errno::NOENT) => return Ok(()),
                Err(e) => return Err(e),
            };
            let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
            if is_dir != want_dir {
                return Ok(());
            }
            let flags = if want_dir {
                AtFlags::REMOVEDIR
            } else {
                AtFlags::empty()
            };
            match rustix::fs::unlinkat(&dir, name, flags) {
                Err(Errno::NOENT) => Ok(()),
                r => r,
            }
        }
        Op::MakeDir(_, mode) => {
            let (dir, name) = root.parent(rel)?;
            match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(mode & 0o775)) {
                Err(Errno::EXIST) => match root.lookup(rel) {
                    Ok(Found::Entry(m)) if m.kind == FileType::Directory => Ok(()),
                    _ => Err(Errno::EXIST),
                },
                r => r,
            }
        }
        Op::SetMode(_, mode) => {
            let fd = root.open_dir(rel, OFlags::RDONLY)?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o775))
        }
        Op::Place(_, new) => {
            let (from_dir, from_name) = match kept.parent(rel) {
                Ok(p) => p,
                Err(Errno::NOENT | Errno::NOTDIR) => return Ok(()),
                Err(e) => return Err(e),
            };
            match rustix::fs::statat(&from_dir, from_name, AtFlags::SYMLINK_NOFOLLOW) {
                Err(Errno::NOENT) => return Ok(()),
                Err(e) => return Err(e),
                Ok(_) => {}
            }
            let (dir, name) = root.parent(rel)?;
            let flags = if *new {
                RenameFlags::NOREPLACE
            } else {
                RenameFlags::empty()
            };
            if same_fs {
                return rustix::fs::renameat_with(&from_dir, from_name, &dir, name, flags);
            }
            place_by_copy(&from_dir, from_name, &dir, name, flags, index)
        }
    }
}

/// Another file system: copy to a temporary name beside the target, sync, rename over it, then
/// remove the kept copy.
fn place_by_copy(
    from_dir: &impl std::os::fd::AsFd,
    from_name: &std::ffi::OsStr,
    dir: &impl std::os::fd::AsFd,
    name: &std::ffi::OsStr,
    flags: RenameFlags,
    index: usize,
) -> Result<(), Errno> {
    let tmp = format!(".cordon-commit-{}-{index}", std::process::id());
    let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    let st = rustix::fs::statat(from_dir, from_name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
        let target = rustix::fs::readlinkat(from_dir, from_name, Vec::new())?;
        rustix::fs::symlinkat(target.as_c_str(), dir, tmp.as_str())?;
    } else {
        let src = rustix::fs::openat(
            from_dir,
            from_name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let out = rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(st.st_mode & 0o777),
        )?;
        let mut src = File::from(src);
        let mut out = File::from(out);
        std::io::copy(&mut src, &mut out)
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))?;
        rustix::fs::fchmod(&out, Mode::from_raw_mode(st.st_mode & 0o777))?;
        rustix::fs::fsync(&out)?;
    }
    if let Err(e) = rustix::fs::renameat_with(dir, tmp.as_str(), dir, name, flags) {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        return Err(e);
    }
    rustix::fs::unlinkat(from_dir, from_name, AtFlags::empty())
}
