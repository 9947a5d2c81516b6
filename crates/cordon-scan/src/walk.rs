//! The session's walk: roots opened and checked, the work shared out, the results merged.
//!
//! The roots must be disjoint, or a file would be counted twice and an outside hard link could
//! hide behind the second count. Directories are read by a few worker threads ([`crate::worker`])
//! sharing one stack of directories still to read: the walk's cost is almost all in the kernel
//! (`fstatat` of each regular file), so two cores read a large tree in about half the time of
//! one. Everything a worker gathers is merged and sorted afterwards, so the result does not
//! depend on which thread read what.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{CWD, Mode, OFlags};
use serde::Serialize;

use crate::error::ScanError;
use crate::finding::{Finding, FindingKind};
use crate::globs::{DenyGlobs, DenyMatch};
use crate::mountinfo::MountTable;
use crate::snapshot::{Identity, Snapshot};
use crate::worker::{self, Harvest, RootInfo};

/// The most worker threads a scan starts (fewer on a machine with fewer cores).
const MAX_THREADS: usize = 4;

/// How much the walk looked at, for `doctor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Roots walked.
    pub roots: u64,
    /// Directories read, roots included.
    pub dirs: u64,
    /// Directory entries seen (`.` and `..` excluded), roots excluded.
    pub entries: u64,
    /// Regular files among them.
    pub files: u64,
    /// Symbolic links among them (never followed).
    pub symlinks: u64,
    /// `fstatat` calls made (regular files and entries of unknown type).
    pub stats: u64,
    /// Entries that disappeared between being listed and being looked at.
    pub vanished: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, other: &Counts) {
        self.roots += other.roots;
        self.dirs += other.dirs;
        self.entries += other.entries;
        self.files += other.files;
        self.symlinks += other.symlinks;
        self.stats += other.stats;
        self.vanished += other.vanished;
    }
}

/// The outcome of one session's scan.
#[derive(Debug, Clone)]
pub struct SessionScan {
    roots: Vec<PathBuf>,
    findings: Vec<Finding>,
    deny_matches: Vec<DenyMatch>,
    counts: Counts,
    snapshot: Snapshot,
}

impl SessionScan {
    /// The roots walked, canonical, in the order given.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// What makes the jail unsafe, sorted by path. Empty when the roots are clean.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Paths the deny globs matched, sorted by path.
    pub fn deny_matches(&self) -> &[DenyMatch] {
        &self.deny_matches
    }

    /// How much was looked at.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The roots' identities when they were walked, for [`Snapshot::check`] before each command.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// `Ok` when nothing was found; otherwise [`ScanError::Refused`] listing every finding.
    pub fn refusal(&self) -> Result<(), ScanError> {
        if self.findings.is_empty() {
            Ok(())
        } else {
            Err(ScanError::Refused(self.findings.clone()))
        }
    }
}

/// Walks each root once with the calling thread's mount table. See [`scan_with`].
pub fn scan<P: AsRef<Path>>(roots: &[P], globs: &DenyGlobs) -> Result<SessionScan, ScanError> {
    scan_with(roots, globs, &MountTable::read()?)
}

/// Walks each root once: findings, deny-glob matches, counts and the roots' identities.
///
/// Roots must be absolute and disjoint; they are canonicalized first. Every mount point in
/// `mounts` strictly beneath a root is a finding even where the walk cannot reach it (hidden
/// under another mount, say); the walk also refuses to enter any mount it meets, listed or not.
pub fn scan_with<P: AsRef<Path>>(
    roots: &[P],
    globs: &DenyGlobs,
    mounts: &MountTable,
) -> Result<SessionScan, ScanError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS);
    scan_inner(roots, globs, mounts, threads, true)
}

/// [`scan_with`] with the worker count and the choice of `openat2` (false: the fallback for
/// kernels without it) made by the caller: the tests walk both ways.
pub(crate) fn scan_inner<P: AsRef<Path>>(
    roots: &[P],
    globs: &DenyGlobs,
    mounts: &MountTable,
    threads: usize,
    openat2: bool,
) -> Result<SessionScan, ScanError> {
    let opened = open_roots(roots)?;
    let harvests = worker::run(&opened, globs, threads.max(1), openat2);

    // Mount points from the table first: they carry the filesystem type.
    let mut nested: BTreeMap<PathBuf, (PathBuf, Option<String>)> = BTreeMap::new();
    for root in &opened {
        for m in mounts.beneath(&root.path) {
            nested
                .entry(m.mount_point.clone())
                .or_insert_with(|| (root.path.clone(), Some(m.fstype.clone())));
        }
    }
    let mut counts = Counts::default();
    let mut findings = Vec::new();
    let mut deny_matches = Vec::new();
    let mut links: HashMap<(u64, u64), worker::Links> = HashMap::new();
    for h in harvests {
        let Harvest {
            counts: c,
            findings: f,
            mounts: m,
            links: l,
            deny_matches: d,
        } = h;
        counts.add(&c);
        findings.extend(f);
        deny_matches.extend(d);
        for (path, root) in m {
            nested.entry(path).or_insert((root, None));
        }
        for (key, seen) in l {
            match links.get_mut(&key) {
                Some(all) => {
                    all.nlink = all.nlink.max(seen.nlink);
                    all.paths.extend(seen.paths);
                }
                None => {
                    links.insert(key, seen);
                }
            }
        }
    }
    for (path, (root, fstype)) in nested {
        findings.push(Finding {
            path,
            root,
            kind: FindingKind::NestedMount { fstype },
        });
    }
    for all in links.values() {
        let seen = all.paths.len() as u64;
        if seen < all.nlink {
            for (path, root) in &all.paths {
                findings.push(Finding {
                    path: path.clone(),
                    root: root.as_ref().clone(),
                    kind: FindingKind::OutsideHardLink {
                        links: all.nlink,
                        seen,
                    },
                });
            }
        }
    }
    findings.sort();
    findings.dedup();
    deny_matches.sort();
    let snapshot = Snapshot::from_parts(
        opened
            .iter()
            .map(|r| (r.path.clone(), r.identity))
            .collect(),
    );
    Ok(SessionScan {
        roots: opened.iter().map(|r| r.path.clone()).collect(),
        findings,
        deny_matches,
        counts,
        snapshot,
    })
}

/// A root, canonical, open, and identified.
pub(crate) struct OpenRoot {
    pub(crate) path: PathBuf,
    pub(crate) fd: OwnedFd,
    pub(crate) identity: Identity,
}

impl OpenRoot {
    pub(crate) fn info(&self) -> RootInfo {
        RootInfo {
            path: Arc::new(self.path.clone()),
            identity: self.identity,
        }
    }
}

fn open_roots<P: AsRef<Path>>(roots: &[P]) -> Result<Vec<OpenRoot>, ScanError> {
    let mut opened: Vec<OpenRoot> = Vec::with_capacity(roots.len());
    for root in roots {
        let given = root.as_ref();
        if !given.is_absolute() {
            return Err(ScanError::RelativeRoot {
                root: given.to_owned(),
            });
        }
        let unreadable = |source: std::io::Error| ScanError::RootUnreadable {
            root: given.to_owned(),
            source,
        };
        let path = std::fs::canonicalize(given).map_err(unreadable)?;
        let fd = rustix::fs::openat(
            CWD,
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| unreadable(e.into()))?;
        let identity = Identity::of_fd(&fd).map_err(unreadable)?;
        for other in &opened {
            let (inner, outer) = if path.starts_with(&other.path) {
                (&path, &other.path)
            } else if other.path.starts_with(&path) {
                (&other.path, &path)
            } else if (identity.dev_major, identity.dev_minor, identity.ino)
                == (
                    other.identity.dev_major,
                    other.identity.dev_minor,
                    other.identity.ino,
                )
            {
                (&path, &other.path)
            } else {
                continue;
            };
            return Err(ScanError::OverlappingRoots {
                inner: inner.clone(),
                outer: outer.clone(),
            });
        }
        opened.push(OpenRoot { path, fd, identity });
    }
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use rustix::fs::{CWD, FileType, Mode};

    use super::*;

    fn fifo(path: &Path) {
        rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    }

    /// A tree with one of each finding the walk itself makes, a symlinked directory and deny-glob
    /// matches; every combination of workers and open call must see the same.
    #[test]
    fn every_walk_mode_sees_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        for d in 0..20 {
            let sub = root.join(format!("d{d}/e{}", d % 3));
            std::fs::create_dir_all(&sub).unwrap();
            for f in 0..15 {
                std::fs::write(sub.join(format!("f{f}")), "x").unwrap();
            }
            std::fs::write(sub.join(".env"), "x").unwrap();
        }
        fifo(&root.join("d3/e0/pipe"));
        std::fs::write(base.join("outside"), "x").unwrap();
        std::fs::hard_link(base.join("outside"), root.join("d7/e1/link")).unwrap();
        std::os::unix::fs::symlink(&base, root.join("d9/up")).unwrap();
        let globs = DenyGlobs::new(["**/.env"]).unwrap();
        let table = MountTable::default();

        let reference = scan_inner(&[&root], &globs, &table, 1, true).unwrap();
        let rules: Vec<&str> = reference.findings().iter().map(|f| f.kind.rule()).collect();
        assert_eq!(rules, ["fifo", "outside-hard-link"]);
        assert_eq!(reference.deny_matches().len(), 20);
        assert_eq!(reference.counts().dirs, 41);
        for threads in [1, 2, 4] {
            for openat2 in [true, false] {
                let s = scan_inner(&[&root], &globs, &table, threads, openat2).unwrap();
                assert_eq!(s.findings(), reference.findings(), "{threads} {openat2}");
                assert_eq!(s.deny_matches(), reference.deny_matches());
                assert_eq!(s.counts(), reference.counts(), "{threads} {openat2}");
            }
        }
    }

    const CHILD_ROOT: &str = "CORDON_SCAN_TEST_ROOT";
    const CHILD_OTHER: &str = "CORDON_SCAN_TEST_OTHER";
    const CHILD_DONE: &str = "CORDON_SCAN_TEST_DONE";

    /// The fallback for kernels without `openat2` compares mount IDs instead of relying on
    /// `RESOLVE_NO_XDEV`. Checked on a real bind mount, made by a copy of this test binary run
    /// by `unshare` in a private mount namespace (so the host never sees it, and it vanishes
    /// with the child). Needs root, as CI has.
    #[test]
    fn the_fallback_refuses_to_enter_a_mount() {
        assert!(
            rustix::process::geteuid().is_root(),
            "bind mounts need root (euid {}); run this test as root, as CI does",
            rustix::process::geteuid().as_raw()
        );
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        let other = base.join("other");
        std::fs::create_dir_all(root.join("sub/mnt")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        fifo(&other.join("pipe"));
        let done = base.join("child-ran");
        let output = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--"])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "walk::tests::fallback_child",
                "--ignored",
                "--test-threads=1",
            ])
            .env(CHILD_ROOT, &root)
            .env(CHILD_OTHER, &other)
            .env(CHILD_DONE, &done)
            .output()
            .expect("unshare(1) from util-linux must be installed");
        assert!(
            output.status.success(),
            "the child failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        // A filter that matched no test would also exit 0: the child leaves proof it ran.
        assert!(done.exists(), "the child test did not run");
        // The mount lived only in the child's namespace.
        assert!(
            std::fs::read_dir(root.join("sub/mnt"))
                .unwrap()
                .next()
                .is_none()
        );
    }

    #[test]
    #[ignore = "run by the_fallback_refuses_to_enter_a_mount inside a private mount namespace"]
    fn fallback_child() {
        let var = |name: &str| {
            std::path::PathBuf::from(
                std::env::var_os(name).unwrap_or_else(|| panic!("{name} is not set")),
            )
        };
        let (root, other, done) = (var(CHILD_ROOT), var(CHILD_OTHER), var(CHILD_DONE));
        let mnt = root.join("sub/mnt");
        rustix::mount::mount_bind(&other, &mnt).unwrap();
        for openat2 in [false, true] {
            let s = scan_inner(
                &[&root],
                &DenyGlobs::none(),
                &MountTable::default(),
                2,
                openat2,
            )
            .unwrap();
            assert_eq!(
                s.findings(),
                [Finding {
                    path: mnt.clone(),
                    root: root.clone(),
                    kind: FindingKind::NestedMount { fstype: None },
                }],
                "openat2 {openat2}"
            );
            // proj and sub: the mounted directory (and its FIFO) was not read.
            assert_eq!(s.counts().dirs, 2, "openat2 {openat2}");
        }
        std::fs::write(done, "ran").unwrap();
    }
}
