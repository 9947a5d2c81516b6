//! The tree before and after the command, as the judge sees it: the change set over the host's
//! nodes (through [`Contents`]), and where a path lands, lexically.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::model::{Change, ChangeKind, ChangeSet, Contents, Node};

/// The change set indexed by path, over the host.
pub(crate) struct View<'a> {
    pub(crate) set: &'a ChangeSet,
    pub(crate) contents: &'a dyn Contents,
    by_path: HashMap<&'a Path, &'a Change>,
    /// Whether a directory is a git directory (memoized; see `git::is_git_dir`).
    pub(crate) git_dirs: RefCell<HashMap<PathBuf, bool>>,
    /// Directories a `.git` file or link of the change set names (inside the root).
    pub(crate) named_git_dirs: Vec<PathBuf>,
}

impl<'a> View<'a> {
    pub(crate) fn new(set: &'a ChangeSet, contents: &'a dyn Contents) -> Self {
        View {
            set,
            contents,
            by_path: set.changes.iter().map(|c| (c.path.as_path(), c)).collect(),
            git_dirs: RefCell::new(HashMap::new()),
            named_git_dirs: Vec::new(),
        }
    }

    /// The change at `path`, if the set has one.
    pub(crate) fn change(&self, path: &Path) -> Option<&'a Change> {
        self.by_path.get(path).copied()
    }

    /// What is at `path` after the command.
    pub(crate) fn new_node(&self, path: &Path) -> Option<Node> {
        if let Some(c) = self.change(path) {
            return (c.kind != ChangeKind::Deleted).then(|| c.node.clone());
        }
        // Below a deleted directory, or a directory the command replaced by something else,
        // nothing of the host's is left.
        for a in path.ancestors().skip(1) {
            if let Some(c) = self.change(a)
                && (c.kind == ChangeKind::Deleted || !matches!(c.node, Node::Dir { .. }))
            {
                return None;
            }
        }
        self.contents.old_node(path)
    }

    /// Whether something is at `path` before or after the command.
    pub(crate) fn exists(&self, path: &Path) -> bool {
        self.new_node(path).is_some() || self.contents.old_node(path).is_some()
    }

    /// Whether a path inside the root passes through a symbolic link (after the command) on its
    /// way: a lexical answer about it would not be where it lands.
    pub(crate) fn through_link(&self, rel: &Path) -> bool {
        let mut prefix = PathBuf::new();
        rel.components().any(|c| {
            prefix.push(c);
            matches!(self.new_node(&prefix), Some(Node::Symlink { .. }))
        })
    }

    /// Where `target`, read in the directory `base` (relative to the root), lands: inside the
    /// root (relative, lexically, and through no link after the command), or outside.
    pub(crate) fn land(&self, base: &Path, target: &Path) -> Landing {
        let landing = land(&self.set.root, base, target);
        match landing {
            Landing::Inside(ref rel) if self.through_link(rel) => Landing::Outside(rel.clone()),
            other => other,
        }
    }
}

/// Where a path lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Landing {
    /// Inside the root: the path relative to it.
    Inside(PathBuf),
    /// Outside the root (or inside it only through a link): the path lexically, absolute when
    /// it could be made so.
    Outside(PathBuf),
}

/// [`View::land`] without the links: lexical only.
pub(crate) fn land(root: &Path, base: &Path, target: &Path) -> Landing {
    if target.is_absolute() {
        let clean = clean(target);
        return match clean.strip_prefix(clean_root(root)) {
            Ok(rel) => Landing::Inside(rel.to_path_buf()),
            Err(_) => Landing::Outside(clean),
        };
    }
    let mut stack: Vec<Component<'_>> = base.components().collect();
    for c in target.components() {
        match c {
            Component::Normal(_) => stack.push(c),
            Component::ParentDir => {
                if stack.pop().is_none() {
                    return Landing::Outside(clean(&root.join(base).join(target)));
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Landing::Outside(clean(target));
            }
        }
    }
    Landing::Inside(stack.iter().collect())
}

fn clean_root(root: &Path) -> PathBuf {
    clean(root)
}

/// `path` with `.` dropped and `..` taken lexically.
pub(crate) fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether a change's path is plain: relative, normal components only (the empty path is the
/// root itself).
pub(crate) fn is_plain(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// A path's components as text (a name that is not UTF-8 matches no rule's name, which are all
/// ASCII).
pub(crate) fn names(path: &Path) -> Vec<String> {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}
