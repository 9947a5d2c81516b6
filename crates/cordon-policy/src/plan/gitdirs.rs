//! Git's internals found from the repository's own structure, not from fixed names.
//!
//! For a writable root, [`discover`] reads (through [`HostFacts`], never walking the work tree):
//!
//! - the root's `.git`: a directory, or a file naming one (`gitdir:`, a linked worktree or an
//!   absorbed submodule), and its `commondir`;
//! - every linked worktree's administrative directory (`.git/worktrees/*`: one `readdir`);
//! - every submodule's git directory below `.git/modules`, recursively (submodule names may hold
//!   `/`, so a directory without `HEAD` is a step of a name and is listed in turn), and each
//!   submodule's own `.git` file in the work tree, at the paths `.gitmodules` names;
//! - the enclosing repository: when the root has no `.git`, the nearest ancestor that has one
//!   (one `lstat` per ancestor).
//!
//! Each git directory found gets the registry's git-directory paths
//! (`hooks`, `config`, `info/attributes`, `commondir`, ...). The number of calls is bounded by
//! [`MAX_GIT_DIRS`] and [`MAX_DEPTH`]; past either bound the directory that holds the rest is
//! protected whole ([`GitLayout::whole`]), which keeps every file in it read-only. Every host
//! call is counted ([`GitLayout::calls`]) so a test can hold the cost to the structure's size.

use std::path::{Component, Path, PathBuf};

use super::host::{EntryKind, HostFacts};

/// At most this many git directories (the repository, worktrees, submodules) per root.
pub(crate) const MAX_GIT_DIRS: usize = 256;

/// At most this many directory levels below `.git/modules` (names with `/`, nested submodules).
pub(crate) const MAX_DEPTH: usize = 16;

/// The git structure of one writable root, found from the repository's own structure (never by
/// walking the work tree): its git directories, the files that redirect git, and what a bound
/// made cordon protect whole ([`GitLayout::discover`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitLayout {
    /// Git directories (canonical) whose auto-run paths are protected.
    pub git_dirs: Vec<PathBuf>,
    /// The ones of them that are submodules' (below `modules`, or a submodule's own `.git`).
    pub submodules: Vec<PathBuf>,
    /// Files that redirect git (a `.git` file, a submodule's `.git` file): protected.
    pub redirects: Vec<PathBuf>,
    /// Submodule work trees' `.git` paths that do not exist (an uninitialized submodule): looked
    /// for after the run.
    pub missing_redirects: Vec<PathBuf>,
    /// Directories protected whole because a bound was reached.
    pub whole: Vec<PathBuf>,
    /// The repository above the root, when the root has no `.git` of its own: its `.git`.
    pub enclosing: Option<PathBuf>,
    /// Host calls made (`lstat`, `readdir`, small reads, canonicalizations).
    pub calls: usize,
}

struct Counted<'a> {
    host: &'a dyn HostFacts,
    calls: usize,
}

impl Counted<'_> {
    fn kind(&mut self, p: &Path) -> Option<EntryKind> {
        self.calls += 1;
        self.host.kind(p)
    }
    fn list(&mut self, p: &Path) -> Option<Vec<std::ffi::OsString>> {
        self.calls += 1;
        self.host.list_dir(p)
    }
    fn read(&mut self, p: &Path) -> Option<String> {
        self.calls += 1;
        self.host.read_small_text(p)
    }
    fn canon(&mut self, p: &Path) -> Option<PathBuf> {
        self.calls += 1;
        self.host.canonicalize(p)
    }
}

/// The git directory a `.git` file names, canonical.
fn gitdir_of_file(h: &mut Counted<'_>, dot_git: &Path) -> Option<PathBuf> {
    let text = h.read(dot_git)?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    h.canon(&base.join(target))
}

/// A relative path of plain names only (no `..`, no root): safe to join under a root.
fn plain_relative(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    if p.is_empty() || path.is_absolute() {
        return None;
    }
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| path.to_path_buf())
}

/// The `path = ...` values of a `.gitmodules` file.
fn submodule_paths(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let (key, value) = l.trim().split_once('=')?;
            (key.trim() == "path").then(|| value.trim().trim_matches('"').to_owned())
        })
        .filter_map(|v| plain_relative(&v))
        .collect()
}

fn enclosing_counted(h: &mut Counted<'_>, root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .skip(1)
        .map(|a| a.join(".git"))
        .find(|candidate| h.kind(candidate).is_some())
}

/// The `.git` of the nearest repository above `root` (not `root`'s own): one `lstat` per
/// ancestor.
pub(crate) fn enclosing(host: &dyn HostFacts, root: &Path) -> Option<PathBuf> {
    enclosing_counted(&mut Counted { host, calls: 0 }, root)
}

impl GitLayout {
    /// Reads the git structure of `root` (canonical): the root's `.git` (a directory, or a file
    /// naming one) and its `commondir`, every linked worktree's administrative directory, every
    /// submodule's git directory below `.git/modules` and its `.git` file in the work tree, and
    /// the enclosing repository when the root has none. The host calls are bounded (at most 256
    /// git directories, 16 levels below `.git/modules`); past a bound the directory that holds the
    /// rest is protected whole ([`GitLayout::whole`]).
    pub fn discover(host: &dyn HostFacts, root: &Path) -> GitLayout {
        discover(host, root)
    }
}

/// [`GitLayout::discover`]. See the module documentation.
fn discover(host: &dyn HostFacts, root: &Path) -> GitLayout {
    let mut h = Counted { host, calls: 0 };
    let mut out = GitLayout::default();
    let dot_git = root.join(".git");
    let main = match h.kind(&dot_git) {
        Some(EntryKind::Dir) => Some(dot_git.clone()),
        Some(EntryKind::File) => {
            out.redirects.push(dot_git.clone());
            gitdir_of_file(&mut h, &dot_git)
        }
        Some(_) => None,
        None => {
            out.enclosing = enclosing_counted(&mut h, root);
            None
        }
    };
    let Some(main) = main else {
        out.calls = h.calls;
        return out;
    };
    out.git_dirs.push(main.clone());
    // The common directory: a linked worktree's (or a commondir-redirected repository's).
    let common = match h.read(&main.join("commondir")) {
        Some(c) => h
            .canon(&main.join(c.trim()))
            .unwrap_or_else(|| main.clone()),
        None => main.clone(),
    };
    if common != main {
        out.git_dirs.push(common.clone());
    }
    // Linked worktrees' administrative directories.
    let worktrees = common.join("worktrees");
    if let Some(names) = h.list(&worktrees) {
        for name in names {
            let dir = worktrees.join(&name);
            if out.git_dirs.len() >= MAX_GIT_DIRS {
                out.whole.push(worktrees.clone());
                break;
            }
            if h.kind(&dir) == Some(EntryKind::Dir) && !out.git_dirs.contains(&dir) {
                out.git_dirs.push(dir);
            }
        }
    }
    // Submodules' git directories, recursively.
    let mut pending: Vec<(PathBuf, usize)> = vec![(common.join("modules"), 0)];
    if main != common {
        pending.push((main.join("modules"), 0));
    }
    while let Some((dir, depth)) = pending.pop() {
        let Some(names) = h.list(&dir) else { continue };
        if depth >= MAX_DEPTH || out.git_dirs.len() >= MAX_GIT_DIRS {
            out.whole.push(dir);
            continue;
        }
        for name in names {
            let sub = dir.join(&name);
            if h.kind(&sub) != Some(EntryKind::Dir) {
                continue;
            }
            if h.kind(&sub.join("HEAD")).is_some() {
                if out.git_dirs.len() >= MAX_GIT_DIRS {
                    out.whole.push(dir.clone());
                    break;
                }
                out.git_dirs.push(sub.clone());
                out.submodules.push(sub.clone());
                pending.push((sub.join("modules"), depth + 1));
            } else {
                // A step of a submodule name that holds `/`.
                pending.push((sub, depth + 1));
            }
        }
    }
    // Submodules' `.git` files in the work tree, where `.gitmodules` puts them.
    if let Some(text) = h.read(&root.join(".gitmodules")) {
        for rel in submodule_paths(&text).into_iter().take(MAX_GIT_DIRS) {
            let p = root.join(rel).join(".git");
            match h.kind(&p) {
                Some(EntryKind::File) => out.redirects.push(p),
                None => out.missing_redirects.push(p),
                // A submodule with its git directory inside its work tree (not absorbed):
                // a repository of its own.
                Some(EntryKind::Dir) => {
                    if out.git_dirs.len() < MAX_GIT_DIRS {
                        out.git_dirs.push(p.clone());
                        out.submodules.push(p);
                    }
                }
                Some(_) => {}
            }
        }
    }
    out.git_dirs.sort();
    out.git_dirs.dedup();
    out.submodules.sort();
    out.submodules.dedup();
    out.calls = h.calls;
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::FakeHost;

    #[test]
    fn submodules_worktrees_and_nested_names_are_found_with_bounded_calls() {
        let host = FakeHost::new()
            .dir("/w/.git/hooks")
            .file("/w/.git/HEAD", "ref: refs/heads/main\n")
            .file("/w/.git/worktrees/wt1/gitdir", "/x/wt1/.git\n")
            .file("/w/.git/worktrees/wt1/commondir", "../..\n")
            .file("/w/.git/modules/lib/HEAD", "x\n")
            .file("/w/.git/modules/lib/config", "")
            .file("/w/.git/modules/lib/modules/inner/HEAD", "x\n")
            .file("/w/.git/modules/a/b/HEAD", "x\n")
            .file(
                "/w/.gitmodules",
                "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n[submodule \"evil\"]\n\tpath = ../outside\n[submodule \"new\"]\n\tpath = vendor/new\n",
            )
            .file("/w/lib/.git", "gitdir: ../.git/modules/lib\n")
            .dir("/w/vendor");
        let g = discover(&host, Path::new("/w"));
        let dirs: Vec<&str> = g.git_dirs.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            dirs,
            [
                "/w/.git",
                "/w/.git/modules/a/b",
                "/w/.git/modules/lib",
                "/w/.git/modules/lib/modules/inner",
                "/w/.git/worktrees/wt1",
            ]
        );
        assert_eq!(g.redirects, [PathBuf::from("/w/lib/.git")]);
        assert_eq!(g.missing_redirects, [PathBuf::from("/w/vendor/new/.git")]);
        assert!(g.enclosing.is_none() && g.whole.is_empty());
        // One kind of .git, a read of commondir, a readdir of worktrees, one kind per worktree,
        // per modules directory a readdir, per entry a kind and a HEAD check, .gitmodules, one
        // kind per submodule path: no work tree walked.
        assert!(g.calls <= 24, "{} calls", g.calls);
    }

    #[test]
    fn a_plain_repository_costs_five_calls() {
        let host = FakeHost::new()
            .file("/w/.git/HEAD", "x\n")
            .dir("/w/src/deep/er");
        let g = discover(&host, Path::new("/w"));
        assert_eq!(g.git_dirs, [PathBuf::from("/w/.git")]);
        // lstat .git, read commondir, readdir worktrees, readdir modules, read .gitmodules.
        assert_eq!(g.calls, 5);
    }

    #[test]
    fn a_workspace_without_git_finds_the_enclosing_repository() {
        let host = FakeHost::new()
            .dir("/mono/.git/hooks")
            .dir("/mono/packages/app/src");
        let g = discover(&host, Path::new("/mono/packages/app"));
        assert_eq!(g.enclosing, Some(PathBuf::from("/mono/.git")));
        assert!(g.git_dirs.is_empty());
        assert_eq!(g.calls, 3);
        let alone = discover(&FakeHost::new().dir("/a/b"), Path::new("/a/b"));
        assert_eq!(alone.enclosing, None);
    }

    #[test]
    fn a_linked_worktree_reaches_its_common_directory() {
        let host = FakeHost::new()
            .file("/m/.git/HEAD", "x\n")
            .file("/m/.git/worktrees/wt/commondir", "../..\n")
            .file("/wt/.git", "gitdir: /m/.git/worktrees/wt\n");
        let g = discover(&host, Path::new("/wt"));
        assert_eq!(g.redirects, [PathBuf::from("/wt/.git")]);
        assert_eq!(
            g.git_dirs,
            [
                PathBuf::from("/m/.git"),
                PathBuf::from("/m/.git/worktrees/wt")
            ]
        );
    }

    #[test]
    fn past_the_bound_the_rest_is_protected_whole() {
        let mut host = FakeHost::new().file("/w/.git/HEAD", "x\n");
        for i in 0..(MAX_GIT_DIRS + 5) {
            host = host.file(&format!("/w/.git/modules/m{i}/HEAD"), "x\n");
        }
        let g = discover(&host, Path::new("/w"));
        assert!(g.git_dirs.len() <= MAX_GIT_DIRS);
        assert_eq!(g.whole, [PathBuf::from("/w/.git/modules")]);
    }
}
