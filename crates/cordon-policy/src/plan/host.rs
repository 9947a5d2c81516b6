//! Facts about the host, behind a small trait so that resolving a plan is deterministic and a fake
//! host makes every generator snapshot-testable.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// What a path is, without following a final symlink (like `lstat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A socket, FIFO or device.
    Other,
}

/// The questions a plan asks of a host. Implementations must not write anything.
pub trait HostFacts {
    /// The home directory of the user running cordon, absolute.
    fn home_dir(&self) -> Option<PathBuf>;
    /// The canonical form of `path` (every symlink resolved), or `None` if it does not resolve.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;
    /// What `path` is, without following a final symlink; `None` if nothing is there.
    fn kind(&self, path: &Path) -> Option<EntryKind>;
    /// The target of the symlink at `path`, as stored.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// The contents of a small text file (at most 4 KiB are read), such as a worktree's `.git` file.
    fn read_small_text(&self, path: &Path) -> Option<String>;
    /// The names directly in the directory `path` (following symlinks), or `None` when it is
    /// not a directory that can be listed. One `readdir`, so callers bound how often they ask.
    fn list_dir(&self, path: &Path) -> Option<Vec<OsString>>;
    /// The entries directly in the directory `path` (following symlinks) with what each is
    /// (not following its own symlink), from one `readdir`; `None` as for
    /// [`HostFacts::list_dir`].
    fn list_dir_kinds(&self, path: &Path) -> Option<Vec<(OsString, EntryKind)>>;
    /// The first `max` bytes (or fewer) of the regular file at `path`, following symlinks: enough
    /// to read a script's `#!` line. `None` when it is not a regular file that can be read. Ask
    /// only about a path [`HostFacts::kind`] found a regular file: opening a FIFO blocks.
    fn read_head(&self, path: &Path, max: usize) -> Option<Vec<u8>>;

    /// [`HostFacts::read_head`] of each of `names` in the directory `dir`, in order, not
    /// following a symlink at the name: a `PATH` entry's programs, asked as one batch because
    /// opening them is most of what a walk of a long entry (a version manager's shims) costs.
    fn read_heads(&self, dir: &Path, names: &[OsString], max: usize) -> Vec<Option<Vec<u8>>> {
        names
            .iter()
            .map(|n| match self.kind(&dir.join(n)) {
                Some(EntryKind::File) => self.read_head(&dir.join(n), max),
                _ => None,
            })
            .collect()
    }

    /// The trees an earlier `PATH` walk with the same `inputs` found, when nothing that walk
    /// looked at has changed since; `None` (the default: nothing is remembered) and the caller
    /// walks. A host that remembers walks starts noting what is asked of it on `None`, until
    /// [`HostFacts::remember_walk`].
    fn recall_walk(&self, inputs: &[u8]) -> Option<Vec<(PathBuf, String)>> {
        let _ = inputs;
        None
    }

    /// The answer of the walk for `inputs` that followed a `None` from
    /// [`HostFacts::recall_walk`], to be remembered with what the walk looked at.
    fn remember_walk(&self, inputs: &[u8], trees: &[(PathBuf, String)]) {
        let _ = (inputs, trees);
    }

    /// What `path` resolves to, following symlinks.
    fn resolved_kind(&self, path: &Path) -> Option<EntryKind> {
        self.canonicalize(path).and_then(|c| self.kind(&c))
    }
}

/// The real host, read through `std::fs`.
#[derive(Debug, Clone)]
pub struct RealHost {
    home: Option<PathBuf>,
}

impl RealHost {
    /// A host whose home directory is taken from the value of `HOME` given here (the caller reads
    /// the environment; this crate never does).
    pub fn new(home: Option<OsString>) -> RealHost {
        let home = home.map(PathBuf::from).filter(|p| p.is_absolute());
        RealHost { home }
    }
}

impl HostFacts for RealHost {
    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }

    fn kind(&self, path: &Path) -> Option<EntryKind> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let ft = meta.file_type();
        Some(if ft.is_symlink() {
            EntryKind::Symlink
        } else if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }

    fn read_small_text(&self, path: &Path) -> Option<String> {
        let file = std::fs::File::open(path).ok()?;
        let mut text = String::new();
        file.take(4096).read_to_string(&mut text).ok()?;
        Some(text)
    }

    fn list_dir_kinds(&self, path: &Path) -> Option<Vec<(OsString, EntryKind)>> {
        let mut entries: Vec<(OsString, EntryKind)> = std::fs::read_dir(path)
            .ok()?
            .filter_map(|e| {
                let e = e.ok()?;
                // The type readdir gave (std asks `lstat` only where the file system gives none).
                let ft = e.file_type().ok()?;
                let kind = if ft.is_symlink() {
                    EntryKind::Symlink
                } else if ft.is_dir() {
                    EntryKind::Dir
                } else if ft.is_file() {
                    EntryKind::File
                } else {
                    EntryKind::Other
                };
                Some((e.file_name(), kind))
            })
            .collect();
        entries.sort();
        Some(entries)
    }

    fn read_head(&self, path: &Path, max: usize) -> Option<Vec<u8>> {
        // Only a regular file (callers ask about what `kind` called one; the check is on the
        // opened file, so the path is walked once).
        let file = std::fs::File::open(path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut head = Vec::with_capacity(max.min(4096));
        file.take(u64::try_from(max).ok()?)
            .read_to_end(&mut head)
            .ok()?;
        Some(head)
    }

    fn list_dir(&self, path: &Path) -> Option<Vec<OsString>> {
        let mut names: Vec<OsString> = std::fs::read_dir(path)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort();
        Some(names)
    }
}

/// An in-memory host for tests and snapshots.
#[derive(Debug, Clone, Default)]
pub struct FakeHost {
    home: Option<PathBuf>,
    entries: BTreeMap<PathBuf, FakeEntry>,
}

#[derive(Debug, Clone)]
enum FakeEntry {
    Dir,
    File(String),
    Symlink(PathBuf),
    /// A socket (or FIFO, or device): [`EntryKind::Other`].
    Other,
}

impl FakeHost {
    /// An empty host with only `/`.
    pub fn new() -> FakeHost {
        let mut host = FakeHost::default();
        host.entries.insert(PathBuf::from("/"), FakeEntry::Dir);
        host
    }

    /// A host shaped like a merged-`/usr` Debian machine with a user `u` at `/home/u` and a
    /// workspace at `/home/u/proj` holding a git repository.
    pub fn typical() -> FakeHost {
        FakeHost::new()
            .with_home("/home/u")
            .dir("/usr/bin")
            .dir("/usr/lib")
            .dir("/usr/lib64")
            .symlink("/bin", "usr/bin")
            .symlink("/lib", "usr/lib")
            .symlink("/lib64", "usr/lib64")
            .dir("/etc/ssl")
            .dir("/etc/alternatives")
            .file("/etc/passwd", "")
            .file("/etc/shadow", "")
            .file("/etc/ld.so.cache", "")
            .symlink(
                "/etc/resolv.conf",
                "../run/systemd/resolve/stub-resolv.conf",
            )
            .file("/run/systemd/resolve/stub-resolv.conf", "")
            .dir("/tmp")
            .dir("/var/tmp")
            .dir("/home/u/.ssh")
            .file("/home/u/.netrc", "")
            .dir("/home/u/.aws")
            .file("/home/u/.cargo/credentials.toml", "")
            .dir("/home/u/.cargo/bin")
            .dir("/home/u/.rustup")
            .dir("/home/u/proj/.git/hooks")
            .file("/home/u/proj/.git/config", "")
            .dir("/home/u/proj/src")
    }

    /// Sets the home directory.
    pub fn with_home(mut self, home: &str) -> FakeHost {
        self.home = Some(PathBuf::from(home));
        self.dir(home)
    }

    /// Adds a directory and its missing ancestors.
    pub fn dir(mut self, path: &str) -> FakeHost {
        self.insert(Path::new(path), FakeEntry::Dir);
        self
    }

    /// Adds a file and its missing ancestors.
    pub fn file(mut self, path: &str, contents: &str) -> FakeHost {
        self.insert(Path::new(path), FakeEntry::File(contents.to_owned()));
        self
    }

    /// Adds a socket file and its missing ancestors.
    pub fn socket(mut self, path: &str) -> FakeHost {
        self.insert(Path::new(path), FakeEntry::Other);
        self
    }

    /// Adds a symlink and its missing ancestors.
    pub fn symlink(mut self, path: &str, target: &str) -> FakeHost {
        self.insert(Path::new(path), FakeEntry::Symlink(PathBuf::from(target)));
        self
    }

    fn insert(&mut self, path: &Path, entry: FakeEntry) {
        for ancestor in path.ancestors().skip(1) {
            self.entries
                .entry(ancestor.to_path_buf())
                .or_insert(FakeEntry::Dir);
        }
        self.entries.insert(path.to_path_buf(), entry);
    }
}

impl HostFacts for FakeHost {
    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            return None;
        }
        let mut pending: Vec<PathBuf> = path
            .components()
            .rev()
            .filter_map(|c| match c {
                Component::Normal(p) => Some(PathBuf::from(p)),
                Component::ParentDir => Some(PathBuf::from("..")),
                _ => None,
            })
            .collect();
        let mut current = PathBuf::from("/");
        let mut hops = 0;
        while let Some(part) = pending.pop() {
            if part.as_os_str() == ".." {
                current.pop();
                continue;
            }
            let next = current.join(&part);
            match self.entries.get(&next)? {
                FakeEntry::Symlink(target) => {
                    hops += 1;
                    if hops > 40 {
                        return None;
                    }
                    if target.is_absolute() {
                        current = PathBuf::from("/");
                    }
                    for c in target.components().rev() {
                        match c {
                            Component::Normal(p) => pending.push(PathBuf::from(p)),
                            Component::ParentDir => pending.push(PathBuf::from("..")),
                            _ => {}
                        }
                    }
                }
                _ => current = next,
            }
        }
        Some(current)
    }

    fn kind(&self, path: &Path) -> Option<EntryKind> {
        // Ancestors are resolved, the final component is not (lstat semantics).
        let parent = match path.parent() {
            Some(parent) => self.canonicalize(parent)?,
            None => return Some(EntryKind::Dir),
        };
        let Some(name) = path.file_name() else {
            return Some(EntryKind::Dir);
        };
        Some(match self.entries.get(&parent.join(name))? {
            FakeEntry::Dir => EntryKind::Dir,
            FakeEntry::File(_) => EntryKind::File,
            FakeEntry::Symlink(_) => EntryKind::Symlink,
            FakeEntry::Other => EntryKind::Other,
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        let parent = self.canonicalize(path.parent()?)?;
        match self.entries.get(&parent.join(path.file_name()?))? {
            FakeEntry::Symlink(target) => Some(target.clone()),
            _ => None,
        }
    }

    fn read_small_text(&self, path: &Path) -> Option<String> {
        match self.entries.get(&self.canonicalize(path)?)? {
            FakeEntry::File(text) => Some(text.clone()),
            _ => None,
        }
    }

    fn list_dir_kinds(&self, path: &Path) -> Option<Vec<(OsString, EntryKind)>> {
        let dir = self.canonicalize(path)?;
        let names = self.list_dir(&dir)?;
        Some(
            names
                .into_iter()
                .filter_map(|n| {
                    let kind = self.kind(&dir.join(&n))?;
                    Some((n, kind))
                })
                .collect(),
        )
    }

    fn read_head(&self, path: &Path, max: usize) -> Option<Vec<u8>> {
        match self.entries.get(&self.canonicalize(path)?)? {
            FakeEntry::File(text) => Some(text.as_bytes().iter().take(max).copied().collect()),
            _ => None,
        }
    }

    fn list_dir(&self, path: &Path) -> Option<Vec<OsString>> {
        let dir = self.canonicalize(path)?;
        if !matches!(self.entries.get(&dir)?, FakeEntry::Dir) {
            return None;
        }
        Some(
            self.entries
                .range(dir.clone()..)
                .skip(1)
                .take_while(|(p, _)| p.starts_with(&dir))
                .filter(|(p, _)| p.parent() == Some(dir.as_path()))
                .filter_map(|(p, _)| p.file_name().map(|n| n.to_owned()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_host_resolves_relative_and_absolute_symlinks() {
        let h = FakeHost::typical();
        assert_eq!(
            h.canonicalize(Path::new("/bin/sh")),
            None,
            "missing files do not resolve"
        );
        assert_eq!(
            h.canonicalize(Path::new("/bin")),
            Some(PathBuf::from("/usr/bin"))
        );
        assert_eq!(
            h.canonicalize(Path::new("/etc/resolv.conf")),
            Some(PathBuf::from("/run/systemd/resolve/stub-resolv.conf"))
        );
        assert_eq!(h.kind(Path::new("/bin")), Some(EntryKind::Symlink));
        assert_eq!(h.resolved_kind(Path::new("/bin")), Some(EntryKind::Dir));
        let looped = FakeHost::new().symlink("/a", "/b").symlink("/b", "/a");
        assert_eq!(looped.canonicalize(Path::new("/a")), None);
    }

    #[test]
    fn real_host_agrees_with_std() {
        let dir = tempfile::tempdir().unwrap();
        let real = RealHost::new(None);
        std::fs::write(dir.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("l")).unwrap();
        assert_eq!(real.kind(&dir.path().join("l")), Some(EntryKind::Symlink));
        assert_eq!(
            real.resolved_kind(&dir.path().join("l")),
            Some(EntryKind::File)
        );
        assert_eq!(
            real.read_small_text(&dir.path().join("l")).as_deref(),
            Some("x")
        );
        assert_eq!(
            real.list_dir_kinds(dir.path()),
            Some(vec![
                ("f".into(), EntryKind::File),
                ("l".into(), EntryKind::Symlink)
            ])
        );
        assert_eq!(
            real.read_head(&dir.path().join("l"), 8).as_deref(),
            Some(&b"x"[..])
        );
        assert_eq!(
            real.read_head(dir.path(), 8),
            None,
            "a directory has no head"
        );
        assert_eq!(real.home_dir(), None);
    }
}
