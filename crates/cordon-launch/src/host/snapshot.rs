//! One plan's view of the host, asked once per path ([`Snapshot`]): a plan asks what the same
//! directories are many times (every program of a `PATH` entry climbs the same parents to its
//! interpreter's prefix, every canonical form walks the same ancestors), and each question is a
//! system call. Within one plan the answers are one snapshot: the plan writes nothing, and what
//! changes after it is the guard's to see (it asks the host afresh).
//!
//! `canonicalize` is resolved here component by component from the memoized `lstat`s and
//! `readlink`s, so paths that share ancestors share their resolution; it answers as
//! `realpath(3)` does (a dangling link, a loop, a component under a non-directory: `None`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use cordon_policy::{EntryKind, HostFacts, RealHost};

/// As the kernel's `MAXSYMLINKS`: more links than this in one resolution is a loop.
const MAX_LINKS: usize = 40;

/// Memoized answers of one plan (see the module documentation).
/// Keyed by the path's bytes (hashing a `Path` parses its components; another spelling of the
/// same path is only asked again).
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    kinds: RefCell<HashMap<OsString, Option<EntryKind>>>,
    links: RefCell<HashMap<OsString, Option<PathBuf>>>,
    canonical: RefCell<HashMap<OsString, Option<PathBuf>>>,
    /// What a `PATH` walk being recorded asks (`walks.rs`).
    pub(crate) recorder: super::walks::Recorder,
}

impl Snapshot {
    /// [`HostFacts::kind`], asked of `host` once per path.
    pub(crate) fn kind(&self, host: &RealHost, path: &Path) -> Option<EntryKind> {
        self.recorder.note(path, super::walks::Look::Identity);
        if let Some(k) = self.kinds.borrow().get(path.as_os_str()) {
            return *k;
        }
        let k = host.kind(path);
        self.kinds
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), k);
        k
    }

    /// [`HostFacts::read_link`], asked of `host` once per path.
    pub(crate) fn read_link(&self, host: &RealHost, path: &Path) -> Option<PathBuf> {
        self.recorder.note(path, super::walks::Look::Identity);
        if let Some(t) = self.links.borrow().get(path.as_os_str()) {
            return t.clone();
        }
        let t = host.read_link(path);
        self.links
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), t.clone());
        t
    }

    /// [`HostFacts::canonicalize`] of an absolute path from the memoized answers; a relative
    /// one is asked of `host` (it depends on the working directory).
    pub(crate) fn canonicalize(&self, host: &RealHost, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            self.recorder.unstamped();
            return host.canonicalize(path);
        }
        // While a walk is recorded, the resolution is gone through again (from the memoized
        // answers) so that every path it rests on is noted.
        if !self.recorder.recording()
            && let Some(c) = self.canonical.borrow().get(path.as_os_str())
        {
            return c.clone();
        }
        let mut links = 0;
        let c = self.resolve(host, path, &mut links);
        self.canonical
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), c.clone());
        c
    }

    /// The canonical form of the absolute `path`, counting the links followed in `links`.
    fn resolve(&self, host: &RealHost, path: &Path, links: &mut usize) -> Option<PathBuf> {
        let mut out = PathBuf::from("/");
        // Whether `out` is known to be a directory (the root is).
        let mut dir = true;
        for part in path.components() {
            let name = match part {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
                Component::ParentDir => {
                    // `out` holds no link, so its parent is the lexical one.
                    if !dir {
                        return None;
                    }
                    out.pop();
                    continue;
                }
                Component::Normal(name) => name,
            };
            if !dir {
                // A name below a file: ENOTDIR.
                return None;
            }
            let next = out.join(name);
            match self.kind(host, &next)? {
                EntryKind::Symlink => {
                    *links += 1;
                    if *links > MAX_LINKS {
                        return None;
                    }
                    let target = self.read_link(host, &next)?;
                    let whole = if target.is_absolute() {
                        target
                    } else {
                        out.join(target)
                    };
                    out = self.resolve(host, &whole, links)?;
                    dir = self.kind(host, &out) == Some(EntryKind::Dir);
                }
                kind => {
                    out = next;
                    dir = kind == EntryKind::Dir;
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn canonical_forms_agree_with_realpath() {
        let tmp = std::env::temp_dir().join(format!("cordon-snapshot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("a/b/c")).unwrap();
        std::fs::write(tmp.join("a/b/file"), b"x").unwrap();
        symlink("b/c", tmp.join("a/rel")).unwrap();
        symlink(tmp.join("a/b"), tmp.join("abs")).unwrap();
        symlink("../a/rel/..", tmp.join("a/up")).unwrap();
        symlink("rel", tmp.join("a/chain")).unwrap();
        symlink("nowhere", tmp.join("a/dangling")).unwrap();
        symlink("loop2", tmp.join("a/loop1")).unwrap();
        symlink("loop1", tmp.join("a/loop2")).unwrap();
        symlink("b/file", tmp.join("a/tofile")).unwrap();
        let tmp = std::fs::canonicalize(&tmp).unwrap();
        let host = RealHost::new(None);
        let snap = Snapshot::default();
        let cases = [
            "a",
            "a/b/c",
            "a/rel",
            "a/rel/..",
            "a/rel/../file",
            "abs/c",
            "abs/../rel",
            "a/up",
            "a/up/c",
            "a/chain",
            "a/./b//c/",
            "a/dangling",
            "a/loop1",
            "a/b/file",
            "a/b/file/x",
            "a/b/file/..",
            "a/tofile",
            "a/tofile/..",
            "a/missing",
            "a/missing/..",
        ];
        // Twice: the second round is answered from what the first remembered.
        for _ in 0..2 {
            for case in cases {
                let p = tmp.join(case);
                assert_eq!(
                    snap.canonicalize(&host, &p),
                    std::fs::canonicalize(&p).ok(),
                    "{case}"
                );
            }
        }
        assert_eq!(
            snap.canonicalize(&host, Path::new("/")),
            Some(PathBuf::from("/"))
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn each_path_is_asked_once() {
        let tmp = std::env::temp_dir().join(format!("cordon-snapshot-once-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let host = RealHost::new(None);
        let snap = Snapshot::default();
        let p = tmp.join("f");
        assert_eq!(snap.kind(&host, &p), None);
        std::fs::write(&p, b"x").unwrap();
        // The snapshot's answer stands for the rest of the plan.
        assert_eq!(snap.kind(&host, &p), None);
        assert_eq!(Snapshot::default().kind(&host, &p), Some(EntryKind::File));
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
