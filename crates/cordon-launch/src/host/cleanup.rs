//! What one run holds on the host (placeholders, a control group, private directories, its
//! jail's marker), registered with the session reaper from before it exists until after it is
//! gone, and removed when the run's [`Cleanup`] drops.

use std::path::{Path, PathBuf};

use crate::host::placeholders::{Kind, Placeholder};
use crate::host::reaper::{Item, KindTag, Registered, Session, register, remove_cgroup, session};

/// Something a run holds, removed when the run's [`Cleanup`] drops.
#[derive(Debug)]
pub(crate) enum Held {
    Placeholder(Placeholder, Registered),
    Cgroup(Registered),
    Tree(Registered),
    Marker(Registered),
}

/// Everything one run created on the host; removed (and unregistered) on drop.
#[derive(Debug)]
pub(crate) struct Cleanup {
    session: Option<&'static Session>,
    pub(crate) items: Vec<Held>,
}

impl Cleanup {
    /// An empty cleanup that registers with `session`.
    pub(crate) fn new(session: Option<&'static Session>) -> Cleanup {
        Cleanup {
            session,
            items: Vec::new(),
        }
    }

    /// The session this cleanup registers with.
    pub(crate) fn session(&self) -> Option<&'static Session> {
        self.session
    }

    /// Makes (or joins) the placeholder at `path`; `Ok(false)` when it cannot be one.
    pub(crate) fn placeholder(&mut self, path: &Path, kind: Kind) -> std::io::Result<bool> {
        let session = self.session;
        let registered = register(
            session,
            Item::Placeholder(path.to_path_buf(), KindTag::of(kind)),
        );
        let made = Placeholder::make_or_join(path, kind, |tmp| {
            register(session, Item::Temp(tmp.to_path_buf()))
        })?;
        Ok(match made {
            Some(p) => {
                self.items.push(Held::Placeholder(p, registered));
                true
            }
            None => false,
        })
    }

    /// Registers a control group directory *before* it is made.
    pub(crate) fn cgroup(&mut self, dir: PathBuf) {
        let r = register(self.session, Item::Cgroup(dir));
        self.items.push(Held::Cgroup(r));
    }

    /// Takes over a directory removed with its content (already registered by its maker).
    pub(crate) fn tree(&mut self, tree: Tree) {
        self.items.push(Held::Tree(tree.into_registered()));
    }

    /// Registers the jail about to be spawned by `marker`, bytes unique to its command line
    /// ([`Item::Marked`]), until the run's end.
    pub(crate) fn mark_jail(&mut self, marker: &[u8]) {
        if !marker.is_empty() {
            let item = Item::Marked(marker.to_vec());
            self.items.push(Held::Marker(register(self.session, item)));
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for item in std::mem::take(&mut self.items) {
            match item {
                Held::Placeholder(p, _registered) => p.release(),
                Held::Cgroup(r) => {
                    if let Item::Cgroup(dir) = &r.item {
                        remove_cgroup(dir);
                    }
                }
                Held::Tree(r) => {
                    if let Item::Tree(dir) = &r.item {
                        let _ = std::fs::remove_dir_all(dir);
                    }
                }
                Held::Marker(_registered) => {}
            }
        }
    }
}

/// A directory made for a run or a probe, removed with its content on drop (registered with the
/// session reaper from before it exists until after it is gone).
#[derive(Debug)]
pub struct Tree {
    registered: Option<Registered>,
}

impl Tree {
    /// Registers `dir` (with the session of `binary`, if one can be started), then `make`s it.
    pub(crate) fn make(
        dir: &Path,
        binary: Option<&Path>,
        make: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> std::io::Result<Tree> {
        let tree = Tree {
            registered: Some(register(session(binary), Item::Tree(dir.to_path_buf()))),
        };
        make(dir)?;
        Ok(tree)
    }

    fn into_registered(mut self) -> Registered {
        // `registered` is always set until here; the fallback keeps `Drop` total.
        self.registered.take().unwrap_or(Registered {
            session: None,
            item: Item::Group(0),
        })
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if let Some(r) = self.registered.take()
            && let Item::Tree(dir) = &r.item
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::host::reaper::reap;
    use std::collections::BTreeSet;

    fn held(c: &mut Cleanup, p: &Path, kind: Kind) -> bool {
        c.placeholder(p, kind).unwrap()
    }

    #[test]
    fn the_last_of_two_holders_removes_a_shared_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let mut a = Cleanup::new(None);
        let mut b = Cleanup::new(None);
        assert!(held(&mut a, &p, Kind::Dir) && held(&mut b, &p, Kind::Dir));
        drop(a);
        assert!(p.is_dir(), "removed while another run still relied on it");
        drop(b);
        assert!(
            !p.exists(),
            "the last holder must remove a marked placeholder"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "a temporary name was left: {names:?}");
    }

    #[test]
    fn a_directory_a_person_made_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".idea");
        std::fs::create_dir(&p).unwrap();
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &p, Kind::Dir));
        drop(c);
        assert!(p.is_dir());
    }

    #[test]
    fn a_placeholder_written_into_is_kept_and_a_file_must_match() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join(".claude");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &d, Kind::Dir));
        std::fs::write(d.join("settings.json"), "{}").unwrap();
        drop(c);
        assert!(d.join("settings.json").exists());

        let f = dir.path().join("commondir");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &f, Kind::File(b".\n")));
        assert_eq!(std::fs::read(&f).unwrap(), b".\n");
        std::fs::write(&f, "../elsewhere\n").unwrap();
        drop(c);
        assert_eq!(std::fs::read(&f).unwrap(), b"../elsewhere\n");
    }

    #[test]
    fn a_file_that_was_already_there_is_joined_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("config.worktree");
        std::fs::write(&f, "").unwrap();
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &f, Kind::File(b"")));
        drop(c);
        assert!(
            f.exists(),
            "a person's empty file is not cordon's to remove"
        );
    }

    #[test]
    fn the_reaper_removes_what_is_still_registered() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &p, Kind::Dir));
        // The launcher "dies": its descriptors (and so its lock) go, nothing is removed by it.
        for item in std::mem::take(&mut c.items) {
            if let Held::Placeholder(p, _) = item {
                drop(p.fd);
            }
        }
        let tree = dir.path().join("cordon-tmp-x");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        let other = dir.path().join(".idea");
        std::fs::create_dir(&other).unwrap();
        let mut registry = BTreeSet::new();
        for item in [
            Item::Placeholder(p.clone(), KindTag::Dir),
            Item::Placeholder(other.clone(), KindTag::Dir),
            Item::Tree(tree.clone()),
        ] {
            registry.insert(item);
        }
        reap(registry, &BTreeSet::new(), true);
        assert!(!p.exists(), "a marked, unlocked placeholder stays");
        assert!(!tree.exists());
        assert!(other.exists(), "an unmarked directory was removed");
    }
}
