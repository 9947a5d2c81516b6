//! An overlayfs upper directory read as a change set. Only the upper is walked, plus a lookup of
//! each touched path on the host (and the listing of host directories the command deleted or
//! made opaque), so the cost follows what the command changed, not the workspace's size.

use std::path::{Path, PathBuf};

use cordon_changes::{Change, ChangeKind, ChangeSet, Node, Special};
use rustix::fs::FileType;

use crate::beneath::{Found, Meta, Tree};
use crate::error::CommitError;

/// Bounds on the walk, so that a hostile layer ends in a clear error rather than a long walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most path components below the root.
    pub max_depth: usize,
    /// Most entries visited (upper entries and deleted host entries together).
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 256,
            max_entries: 1_000_000,
        }
    }
}

/// The change set with what the host held at each path when it was read.
#[derive(Debug)]
pub(crate) struct Layer {
    pub set: ChangeSet,
    /// `host[i]` is what the host held at `set.changes[i].path`.
    pub host: Vec<Found>,
}

/// Reads the upper directory `upper` of an overlay over `root` as a [`ChangeSet`] (paths
/// relative to the root): a whiteout is a deletion (with the host's node), an opaque directory
/// deletes the host's entries it does not hold, an entry the host lacks is added, one it has is
/// modified; a directory that is only a parent of changes is no change unless its mode differs.
pub fn read_layer(root: &Path, upper: &Path) -> Result<ChangeSet, CommitError> {
    let root = Tree::open(root)?;
    let upper = Tree::open(upper)?;
    Ok(read(&root, &upper, Limits::default())?.set)
}

pub(crate) fn read(root: &Tree, upper: &Tree, limits: Limits) -> Result<Layer, CommitError> {
    let mut walk = Walk {
        root,
        upper,
        limits,
        seen: 0,
        layer: Layer {
            set: ChangeSet {
                root: root.path().to_path_buf(),
                changes: Vec::new(),
            },
            host: Vec::new(),
        },
    };
    walk.dir(Path::new(""), false)?;
    Ok(walk.layer)
}

struct Walk<'a> {
    root: &'a Tree,
    upper: &'a Tree,
    limits: Limits,
    seen: usize,
    layer: Layer,
}

impl Walk<'_> {
    fn count(&mut self, rel: &Path) -> Result<(), CommitError> {
        self.seen += 1;
        if self.seen > self.limits.max_entries {
            return Err(CommitError::TooMany {
                path: rel.to_path_buf(),
                limit: self.limits.max_entries,
            });
        }
        if rel.components().count() > self.limits.max_depth {
            return Err(CommitError::TooDeep {
                path: rel.to_path_buf(),
                limit: self.limits.max_depth,
            });
        }
        Ok(())
    }

    fn push(&mut self, path: PathBuf, kind: ChangeKind, node: Node, host: Found) {
        self.layer.set.changes.push(Change { path, kind, node });
        self.layer.host.push(host);
    }

    /// The upper directory `rel`; `opaque`: the host's entries it lacks are deleted.
    fn dir(&mut self, rel: &Path, opaque: bool) -> Result<(), CommitError> {
        let names = self.upper.names(rel)?;
        if opaque
            && let Found::Entry(m) = self.root.lookup_dir(rel)?
            && m.kind == FileType::Directory
        {
            let upper: std::collections::HashSet<&std::ffi::OsString> = names.iter().collect();
            for name in self.root.names(rel)? {
                if !upper.contains(&name) {
                    self.deleted(&rel.join(&name))?;
                }
            }
        }
        for name in names {
            let path = rel.join(&name);
            self.count(&path)?;
            let Found::Entry(meta) = self.upper.lookup(&path)? else {
                continue;
            };
            let host = self.root.lookup(&path)?;
            let host_meta = match host {
                Found::Entry(m) => Some(m),
                _ => None,
            };
            if is_whiteout(&meta) {
                if host_meta.is_some() {
                    self.deleted(&path)?;
                }
                continue;
            }
            let host_is_dir = host_meta.is_some_and(|m| m.kind == FileType::Directory);
            if meta.kind == FileType::Directory {
                let opaque = is_opaque(&self.upper.path().join(&path));
                match host_meta {
                    Some(m) if m.kind == FileType::Directory => {
                        if m.mode != meta.mode {
                            self.push(path.clone(), ChangeKind::Modified, dir_node(&meta), host);
                        }
                        self.dir(&path, opaque)?;
                    }
                    Some(_) => {
                        self.push(path.clone(), ChangeKind::Modified, dir_node(&meta), host);
                        self.dir(&path, false)?;
                    }
                    None => {
                        self.push(path.clone(), ChangeKind::Added, dir_node(&meta), host);
                        self.dir(&path, false)?;
                    }
                }
                continue;
            }
            if host_is_dir {
                // A directory replaced by a file: its host entries go first.
                for child in self.root.names(&path)? {
                    self.deleted(&path.join(child))?;
                }
            }
            let node = self.node(&path, &meta)?;
            let kind = if host_meta.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Added
            };
            self.push(path, kind, node, host);
        }
        Ok(())
    }

    /// The host's entry at `rel` is deleted (a directory with everything below it).
    fn deleted(&mut self, rel: &Path) -> Result<(), CommitError> {
        self.count(rel)?;
        let host = self.root.lookup(rel)?;
        let Found::Entry(meta) = host else {
            return Ok(());
        };
        let node = host_node(self.root, rel, &meta)?;
        self.push(rel.to_path_buf(), ChangeKind::Deleted, node, host);
        if meta.kind == FileType::Directory {
            for name in self.root.names(rel)? {
                self.deleted(&rel.join(name))?;
            }
        }
        Ok(())
    }

    fn node(&self, rel: &Path, meta: &Meta) -> Result<Node, CommitError> {
        node_of(self.upper, rel, meta)
    }
}

/// The node a [`Meta`] describes (a link's target read from `tree`).
pub(crate) fn node_of(tree: &Tree, rel: &Path, meta: &Meta) -> Result<Node, CommitError> {
    Ok(match meta.kind {
        FileType::RegularFile => Node::File {
            mode: meta.mode,
            size: meta.size,
        },
        FileType::Directory => dir_node(meta),
        FileType::Symlink => Node::Symlink {
            target: tree.read_link(rel)?,
        },
        FileType::Fifo => Node::Special(Special::Fifo),
        FileType::Socket => Node::Special(Special::Socket),
        FileType::CharacterDevice => Node::Special(Special::CharDevice),
        _ => Node::Special(Special::BlockDevice),
    })
}

fn host_node(root: &Tree, rel: &Path, meta: &Meta) -> Result<Node, CommitError> {
    node_of(root, rel, meta)
}

fn dir_node(meta: &Meta) -> Node {
    Node::Dir { mode: meta.mode }
}

/// overlayfs's whiteout: a character device 0/0.
fn is_whiteout(meta: &Meta) -> bool {
    meta.kind == FileType::CharacterDevice && meta.rdev == (0, 0)
}

/// overlayfs's opaque directory: `user.overlay.opaque` (mounted with `userxattr`) or
/// `trusted.overlay.opaque` is `y`.
fn is_opaque(path: &Path) -> bool {
    ["user.overlay.opaque", "trusted.overlay.opaque"]
        .iter()
        .any(|name| {
            let mut buf = [0u8; 4];
            matches!(rustix::fs::lgetxattr(path, *name, &mut buf), Ok(1) if buf[0] == b'y')
        })
}

impl Tree {
    /// [`Tree::lookup`], where `""` is the root itself.
    pub(crate) fn lookup_dir(&self, rel: &Path) -> Result<Found, CommitError> {
        if rel.as_os_str().is_empty() {
            let s = rustix::fs::fstat(self.fd())
                .map_err(CommitError::errno("looking up", self.path()))?;
            return Ok(Found::Entry(Meta {
                kind: FileType::from_raw_mode(s.st_mode),
                mode: s.st_mode & 0o7777,
                size: 0,
                uid: s.st_uid,
                ctime: (s.st_ctime, 0),
                rdev: (0, 0),
            }));
        }
        self.lookup(rel)
    }
}
