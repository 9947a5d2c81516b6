//! One worker of the walk: take a directory, read it, queue its subdirectories, repeat.
//!
//! Each directory is read with `getdents64` into the worker's one buffer ([`RawDir`], no
//! allocation per entry). The entry's `d_type` decides what happens next, so only regular files
//! (whose link count matters) and entries of unknown type cost a `fstatat(AT_SYMLINK_NOFOLLOW)`
//! relative to the directory's descriptor. Subdirectories are opened with `openat2(RESOLVE_NO_XDEV
//! | RESOLVE_NO_SYMLINKS)` relative to their parent's descriptor, so a mount point answers
//! `EXDEV` instead of being entered, and a directory swapped for a symlink after it was listed is
//! not followed. Kernels without `openat2` get `openat(O_NOFOLLOW)` and a comparison of the mount
//! ID and device with the root's.
//!
//! The shared stack is last-in first-out, so the walk is roughly depth-first: a directory's
//! descriptor stays open while children of it are still to be opened, and open descriptors grow
//! with depth, not width.

use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, ResolveFlags};
use rustix::io::Errno;

use crate::finding::{Finding, FindingKind};
use crate::globs::{DenyGlobs, DenyMatch, EntryType};
use crate::snapshot::Identity;
use crate::walk::{Counts, OpenRoot};

/// What a root's directories share: its path and identity.
#[derive(Clone)]
pub(crate) struct RootInfo {
    pub(crate) path: Arc<PathBuf>,
    pub(crate) identity: Identity,
}

/// The links of one multiply-linked regular file seen inside the roots: `(path, root)` each.
pub(crate) struct Links {
    pub(crate) nlink: u64,
    pub(crate) paths: Vec<(PathBuf, Arc<PathBuf>)>,
}

/// What one worker found.
#[derive(Default)]
pub(crate) struct Harvest {
    pub(crate) counts: Counts,
    pub(crate) findings: Vec<Finding>,
    /// Mount points the walk met (`EXDEV`): path → root.
    pub(crate) mounts: Vec<(PathBuf, PathBuf)>,
    pub(crate) links: HashMap<(u64, u64), Links>,
    pub(crate) deny_matches: Vec<DenyMatch>,
}

/// How a queued directory is reached.
enum Source {
    /// A root: its own descriptor.
    Root(OwnedFd),
    /// A subdirectory: its name in its parent, opened when its turn comes.
    Child { parent: Arc<OwnedFd>, name: CString },
}

/// A directory still to be read.
struct Pending {
    source: Source,
    path: PathBuf,
    root: RootInfo,
    /// A deny glob matched it or a directory above it: its entries are not matched again.
    covered: bool,
}

struct State {
    pending: Vec<Pending>,
    /// Workers holding a directory (they may queue more).
    busy: usize,
    /// A worker panicked: the others stop instead of waiting for it.
    aborted: bool,
}

struct Queue {
    state: Mutex<State>,
    changed: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next directory, or `None` when nothing is queued and no worker can queue more.
    fn take(&self) -> Option<Pending> {
        let mut state = self.lock();
        loop {
            if state.aborted {
                return None;
            }
            if let Some(next) = state.pending.pop() {
                state.busy += 1;
                return Some(next);
            }
            if state.busy == 0 {
                return None;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Queues a directory's subdirectories and releases it.
    fn finish(&self, children: Vec<Pending>) {
        let mut state = self.lock();
        state.pending.extend(children);
        state.busy -= 1;
        drop(state);
        self.changed.notify_all();
    }
}

/// Marks the queue aborted if its worker unwinds, so no other worker waits forever.
struct AbortOnUnwind<'q>(&'q Queue);

impl Drop for AbortOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().aborted = true;
            self.0.changed.notify_all();
        }
    }
}

/// Walks every root with `threads` workers and returns what each found. Without `openat2`, the
/// workers start on the fallback.
pub(crate) fn run(
    roots: &[OpenRoot],
    globs: &DenyGlobs,
    threads: usize,
    openat2: bool,
) -> Vec<Harvest> {
    let mut pending = Vec::new();
    let mut early = Harvest::default();
    for root in roots.iter().rev() {
        early.counts.roots += 1;
        let info = root.info();
        // A fresh descriptor, so the directory offset starts at 0 whatever the caller did.
        match rustix::fs::openat(
            &root.fd,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => pending.push(Pending {
                source: Source::Root(fd),
                path: info.path.as_ref().clone(),
                root: info,
                covered: false,
            }),
            Err(e) => unscannable(&mut early, &root.path, &info.path, e),
        }
    }
    let queue = Queue {
        state: Mutex::new(State {
            pending,
            busy: 0,
            aborted: false,
        }),
        changed: Condvar::new(),
    };
    let mut harvests = vec![early];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let _abort = AbortOnUnwind(&queue);
                    let mut w = Worker::new(globs, openat2);
                    while let Some(dir) = queue.take() {
                        let children = w.visit(dir);
                        queue.finish(children);
                    }
                    w.out
                })
            })
            .collect();
        for worker in workers {
            match worker.join() {
                Ok(h) => harvests.push(h),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    harvests
}

struct Worker<'g> {
    globs: &'g DenyGlobs,
    out: Harvest,
    /// getdents64's buffer: 64 KiB holds ~2,000 typical entries per call.
    buffer: Vec<u8>,
    scratch: Vec<usize>,
    relative: Vec<u8>,
    /// False once `openat2` answered ENOSYS.
    openat2: bool,
}

impl<'g> Worker<'g> {
    fn new(globs: &'g DenyGlobs, openat2: bool) -> Worker<'g> {
        Worker {
            globs,
            out: Harvest::default(),
            buffer: Vec::with_capacity(64 * 1024),
            scratch: Vec::new(),
            relative: Vec::new(),
            openat2,
        }
    }

    /// Opens and reads one directory; returns its subdirectories.
    fn visit(&mut self, dir: Pending) -> Vec<Pending> {
        let Pending {
            source,
            path,
            root,
            covered,
        } = dir;
        let fd = match source {
            Source::Root(fd) => fd,
            Source::Child { parent, name } => match self.open_child(&parent, &name, &path, &root) {
                Some(fd) => fd,
                None => return Vec::new(),
            },
        };
        self.read_dir(Arc::new(fd), &path, &root, covered)
    }

    /// Opens a listed subdirectory without crossing a mount or following a symlink.
    fn open_child(
        &mut self,
        parent: &OwnedFd,
        name: &CString,
        path: &Path,
        root: &RootInfo,
    ) -> Option<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if self.openat2 {
            match rustix::fs::openat2(
                parent,
                name.as_c_str(),
                flags,
                Mode::empty(),
                ResolveFlags::NO_XDEV | ResolveFlags::NO_SYMLINKS,
            ) {
                Ok(fd) => return Some(fd),
                Err(Errno::XDEV) => {
                    self.out
                        .mounts
                        .push((path.to_owned(), (*root.path).clone()));
                    return None;
                }
                Err(Errno::NOSYS) => self.openat2 = false,
                Err(e) => {
                    self.open_failed(path, root, e);
                    return None;
                }
            }
        }
        let fd = match rustix::fs::openat(parent, name.as_c_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) => {
                self.open_failed(path, root, e);
                return None;
            }
        };
        match Identity::of_fd(&fd) {
            Ok(id)
                if id.mnt_id != root.identity.mnt_id
                    || (id.dev_major, id.dev_minor)
                        != (root.identity.dev_major, root.identity.dev_minor) =>
            {
                self.out
                    .mounts
                    .push((path.to_owned(), (*root.path).clone()));
                None
            }
            Ok(_) => Some(fd),
            Err(e) => {
                let errno = Errno::from_io_error(&e).unwrap_or(Errno::IO);
                unscannable(&mut self.out, path, &root.path, errno);
                None
            }
        }
    }

    fn open_failed(&mut self, path: &Path, root: &RootInfo, e: Errno) {
        match e {
            // Gone, or no longer a directory (now a symlink: not followed; now a file: the tree
            // changed under the walk, as a later command could change it anyway).
            Errno::NOENT | Errno::LOOP | Errno::NOTDIR => self.out.counts.vanished += 1,
            e => unscannable(&mut self.out, path, &root.path, e),
        }
    }

    fn read_dir(
        &mut self,
        fd: Arc<OwnedFd>,
        path: &Path,
        root: &RootInfo,
        covered: bool,
    ) -> Vec<Pending> {
        self.out.counts.dirs += 1;
        let mut subdirs: Vec<(CString, bool)> = Vec::new();
        let mut buffer = std::mem::take(&mut self.buffer);
        let mut entries = RawDir::new(&*fd, buffer.spare_capacity_mut());
        while let Some(entry) = entries.next() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    unscannable(&mut self.out, path, &root.path, e);
                    break;
                }
            };
            let name = entry.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            self.out.counts.entries += 1;
            let mut kind = entry.file_type();
            let mut nlink_key = None;
            if kind == FileType::Unknown || kind == FileType::RegularFile {
                self.out.counts.stats += 1;
                match rustix::fs::statat(&*fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => {
                        kind = FileType::from_raw_mode(st.st_mode);
                        // `st_nlink` is u32 on some architectures.
                        #[allow(clippy::useless_conversion)]
                        let nlink = u64::from(st.st_nlink);
                        nlink_key = Some((nlink, st.st_dev, st.st_ino));
                    }
                    Err(Errno::NOENT) => {
                        self.out.counts.vanished += 1;
                        continue;
                    }
                    Err(e) => {
                        let at = path.join(OsStr::from_bytes(bytes));
                        unscannable(&mut self.out, &at, &root.path, e);
                        continue;
                    }
                }
            }
            let mut now_covered = covered;
            if !covered && !self.globs.is_empty() {
                now_covered = self.match_globs(path, root, bytes, kind);
            }
            let finding = match kind {
                FileType::Directory => {
                    subdirs.push((name.to_owned(), now_covered));
                    None
                }
                FileType::RegularFile => {
                    self.out.counts.files += 1;
                    if let Some((nlink, dev, ino)) = nlink_key
                        && nlink > 1
                    {
                        let links = self.out.links.entry((dev, ino)).or_insert_with(|| Links {
                            nlink,
                            paths: Vec::new(),
                        });
                        // Fail closed if the count changed while the walk ran.
                        links.nlink = links.nlink.max(nlink);
                        links
                            .paths
                            .push((path.join(OsStr::from_bytes(bytes)), Arc::clone(&root.path)));
                    }
                    None
                }
                FileType::Symlink => {
                    self.out.counts.symlinks += 1;
                    None
                }
                FileType::Socket => Some(FindingKind::Socket),
                FileType::Fifo => Some(FindingKind::Fifo),
                FileType::BlockDevice => Some(FindingKind::BlockDevice),
                FileType::CharacterDevice => Some(FindingKind::CharDevice),
                FileType::Unknown => Some(FindingKind::Unscannable {
                    error: "the kernel reports no file type".into(),
                }),
            };
            if let Some(kind) = finding {
                self.out.findings.push(Finding {
                    path: path.join(OsStr::from_bytes(bytes)),
                    root: (*root.path).clone(),
                    kind,
                });
            }
        }
        self.buffer = buffer;
        // In listing order: the last queued is taken first.
        subdirs
            .into_iter()
            .rev()
            .map(|(name, covered)| Pending {
                path: path.join(OsStr::from_bytes(name.to_bytes())),
                source: Source::Child {
                    parent: Arc::clone(&fd),
                    name,
                },
                root: root.clone(),
                covered,
            })
            .collect()
    }

    /// Matches one entry against the deny globs; returns whether its subtree is now covered.
    fn match_globs(&mut self, dir: &Path, root: &RootInfo, name: &[u8], kind: FileType) -> bool {
        self.relative.clear();
        let dir_bytes = dir.as_os_str().as_bytes();
        let root_len = root.path.as_os_str().len();
        if dir_bytes.len() > root_len {
            // Skip the root and the `/` after it (the root `/` has no separator of its own).
            let start = if root_len == 1 { 1 } else { root_len + 1 };
            self.relative.extend_from_slice(&dir_bytes[start..]);
            self.relative.push(b'/');
        }
        self.relative.extend_from_slice(name);
        let relative = Path::new(OsStr::from_bytes(&self.relative));
        let Some(index) = self.globs.first_match(relative, &mut self.scratch) else {
            return false;
        };
        let entry = match kind {
            FileType::Directory => EntryType::Dir,
            FileType::RegularFile => EntryType::File,
            FileType::Symlink => EntryType::Symlink,
            _ => EntryType::Other,
        };
        self.out.deny_matches.push(DenyMatch {
            path: dir.join(OsStr::from_bytes(name)),
            root: (*root.path).clone(),
            pattern: self.globs.patterns()[index].clone(),
            entry,
        });
        kind == FileType::Directory
    }
}

fn unscannable(out: &mut Harvest, path: &Path, root: &Path, e: Errno) {
    out.findings.push(Finding {
        path: path.to_owned(),
        root: root.to_owned(),
        kind: FindingKind::Unscannable {
            error: std::io::Error::from(e).to_string(),
        },
    });
}
