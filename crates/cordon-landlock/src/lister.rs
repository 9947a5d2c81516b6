//! Directory listings, behind a small trait so that building rules is deterministic and a fake
//! tree makes the piecewise grants testable.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use cordon_policy::EntryKind;

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's name: one path component.
    pub name: OsString,
    /// What it is, without following a symlink.
    pub kind: EntryKind,
}

/// Lists directories. Only the directories that hold a masked or protected path below them are
/// ever listed: their entries are granted one by one.
pub trait Lister {
    /// The entries of `dir`, without `.` and `..`.
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>>;
}

/// The real filesystem, read through `std::fs::read_dir`; kinds come from the directory entry
/// and never follow a symlink.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsLister;

impl Lister for FsLister {
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let ft = entry.file_type()?;
            let kind = if ft.is_symlink() {
                EntryKind::Symlink
            } else if ft.is_dir() {
                EntryKind::Dir
            } else if ft.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
            out.push(DirEntry {
                name: entry.file_name(),
                kind,
            });
        }
        out.sort();
        Ok(out)
    }
}

/// An in-memory tree for tests and snapshots. Adding a path adds its missing ancestors as
/// directories.
#[derive(Debug, Clone, Default)]
pub struct FakeLister {
    entries: BTreeMap<PathBuf, EntryKind>,
}

impl FakeLister {
    /// An empty tree holding only `/`.
    pub fn new() -> FakeLister {
        let mut lister = FakeLister::default();
        lister.entries.insert(PathBuf::from("/"), EntryKind::Dir);
        lister
    }

    /// Adds a directory.
    pub fn dir(self, path: impl AsRef<Path>) -> FakeLister {
        self.with(path.as_ref(), EntryKind::Dir)
    }

    /// Adds a regular file.
    pub fn file(self, path: impl AsRef<Path>) -> FakeLister {
        self.with(path.as_ref(), EntryKind::File)
    }

    /// Adds a symbolic link (its target does not matter to a listing).
    pub fn symlink(self, path: impl AsRef<Path>) -> FakeLister {
        self.with(path.as_ref(), EntryKind::Symlink)
    }

    /// Adds an entry of any kind.
    pub fn with(mut self, path: &Path, kind: EntryKind) -> FakeLister {
        for ancestor in path.ancestors().skip(1) {
            self.entries
                .entry(ancestor.to_path_buf())
                .or_insert(EntryKind::Dir);
        }
        self.entries.insert(path.to_path_buf(), kind);
        self
    }

    /// Every path of the tree with its kind, sorted.
    pub fn paths(&self) -> impl Iterator<Item = (&Path, EntryKind)> {
        self.entries.iter().map(|(p, k)| (p.as_path(), *k))
    }
}

impl Lister for FakeLister {
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        match self.entries.get(dir) {
            Some(EntryKind::Dir) => {}
            Some(_) => return Err(io::Error::from_raw_os_error(20)), // ENOTDIR
            None => return Err(io::Error::from(io::ErrorKind::NotFound)),
        }
        Ok(self
            .entries
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .filter_map(|(p, k)| {
                Some(DirEntry {
                    name: p.file_name()?.to_owned(),
                    kind: *k,
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_lists_direct_children_only() {
        let l = FakeLister::new().file("/a/b/c").symlink("/a/l");
        let names: Vec<_> = l.list(Path::new("/a")).unwrap();
        assert_eq!(
            names,
            vec![
                DirEntry {
                    name: "b".into(),
                    kind: EntryKind::Dir
                },
                DirEntry {
                    name: "l".into(),
                    kind: EntryKind::Symlink
                },
            ]
        );
        assert!(l.list(Path::new("/a/b/c")).is_err());
        assert!(l.list(Path::new("/nope")).is_err());
    }

    #[test]
    fn fs_lister_does_not_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink("d", dir.path().join("l")).unwrap();
        let kinds: Vec<(String, EntryKind)> = FsLister
            .list(dir.path())
            .unwrap()
            .into_iter()
            .map(|e| (e.name.to_string_lossy().into_owned(), e.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("d".to_owned(), EntryKind::Dir),
                ("f".to_owned(), EntryKind::File),
                ("l".to_owned(), EntryKind::Symlink),
            ]
        );
    }
}
