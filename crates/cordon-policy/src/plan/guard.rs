//! What a read-only bind of each protected path leaves open, closed in the plan itself.
//!
//! A [`Plan`] lists the protected paths that exist. Binding each one read-only is not enough;
//! the escape suite found three ways around it, all inside a writable root and all leading to
//! code that host tools run later:
//!
//! - **Renaming a parent away.** A bind mount cannot be renamed, but the directory holding it can:
//!   `mv .git .git-old; mkdir -p .git/hooks` leaves the host with a fresh, writable hooks
//!   directory. Every directory between a writable root and a protected path is therefore
//!   *pinned* (a writable root of its own, bound onto itself): a mount point cannot be renamed
//!   or removed.
//! - **Redirecting git.** `.git/commondir` makes git read its config and hooks from anywhere, and
//!   a linked worktree's `.git` file names its administrative directory; either one walks around
//!   a protected `.git/config`. An existing `commondir`, `gitdir` or `.git` file is protected; a
//!   repository without `commondir` gets a placeholder reading `.` (git's own meaning: the
//!   repository itself); so does a missing protected `config.worktree` (empty: no settings).
//! - **Creating what did not exist.** A missing protected path cannot be bound, so the command
//!   could create `.vscode/tasks.json` or `.claude/settings.json`. Only git's redirections
//!   inside a git directory, which host git reads on every command, get a placeholder: a missing
//!   `commondir` of any git directory (reading `.`) and a linked worktree's missing
//!   `config.worktree` (empty). Every other missing auto-run name is left to the launcher, which
//!   looks for it after the run with one `readdir` per root and moves what the command created
//!   aside (`docs/limits.md`), so the number of entries made per command does not grow with the
//!   registry ([`AutoRun::REGISTRY`](crate::AutoRun::REGISTRY)).
//! - **A workspace inside an enclosing repository.** A root without a `.git` of its own below a
//!   repository gets an empty read-only `.git` placeholder: git skips it on its way up, and
//!   `git init` there fails, so no repository with a planted configuration appears.
//!
//! - **Creating cordon's own state.** A missing `~/.config/cordon` or `~/.cache/cordon` (or an
//!   XDG one) inside a writable root ([`SkipReason::OwnStateMissing`]) gets an empty placeholder
//!   directory at its first missing component, so no global configuration can be planted; one
//!   that appeared since the plan was resolved (the launcher's probe writes its cache before the
//!   guard) is protected as it is.
//!
//! Every granted root is guarded, the ones inside another root too ([`Plan::inner_roots`]: the
//! workspace inside a `--write` parent keeps its `.git/commondir` placeholder).
//!
//! [`Plan::guard`] is pure: it reads the host through [`HostFacts`] and returns a
//! [`GuardedPlan`], which holds the plan with the pins and the extra protected paths, and the
//! [`Placeholder`]s the launcher must make (or join, when one is already there) before the jail
//! starts and remove after it. Every generator that builds a jail from it (bubblewrap's argument
//! list above all) therefore builds the same jail, whoever calls it.

use std::ops::Deref;
use std::path::{Component, Path, PathBuf};

use super::Plan;
use super::gitdirs;
use super::host::{EntryKind, HostFacts};
use super::parts::{ProtectedPath, SkipReason};
use crate::paths::is_within;

/// The name of cordon's own configuration and state directories (`~/.config/cordon`,
/// `~/.cache/cordon`, the XDG ones).
pub(crate) const OWN_STATE_NAME: &str = "cordon";

/// What `commondir` says when the repository is its own common directory.
pub const COMMONDIR_SELF: &[u8] = b".\n";

/// Protected files that get a placeholder when missing, with its content: git reads an empty
/// `config.worktree` as no settings.
pub(crate) const PLACEHOLDER_FILES: &[(&str, &[u8])] = &[("config.worktree", b"")];

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlaceholderKind {
    /// An empty directory.
    Dir,
    /// A file holding exactly these bytes.
    File(&'static [u8]),
}

/// A placeholder the launcher makes for the run (or joins, when one is already there: perhaps
/// another run's), protected while the jail lives and removed after it when still exactly what
/// was made.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placeholder {
    /// Canonical path, inside a writable root.
    pub path: PathBuf,
    /// Directory or file, and the file's content.
    pub kind: PlaceholderKind,
    /// True when nothing was there when the plan was guarded: the run creates it.
    pub created_for_the_run: bool,
}

/// A plan with the gaps of read-only binds closed ([`Plan::guard`]), and what the launcher must
/// make on the host for it. Dereferences to the guarded [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedPlan {
    plan: Plan,
    placeholders: Vec<Placeholder>,
    pins: Vec<PathBuf>,
}

/// A repository whose configuration the jail edits as a private copy (the git configuration
/// broker, cordon-launch's `gitbroker.rs`; the filter is `cordon-gitconfig`). In the jail,
/// `<git_dir>/commondir` reads `<shadow>`, a directory of cordon's inside `git_dir` that holds
/// the copy as `config` and links to everything else of `git_dir`, so git writes the copy (its
/// lock-and-rename protocol works there) while `<git_dir>/config` stays read-only. The launcher
/// makes one with [`ConfigBroker::new`] once it has made the shadow and hands it to the backend
/// beside the plan; bubblewrap binds `pointer` over the `commondir` placeholder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConfigBroker {
    /// The repository's `.git` directory (canonical).
    pub git_dir: PathBuf,
    /// cordon's shadow directory inside it.
    pub shadow: PathBuf,
    /// The file bound read-only at `commondir` in the jail: [`BROKER_POINTER`] in the shadow
    /// (it names the shadow).
    pub pointer: PathBuf,
    /// Where it is bound: the repository's `commondir` (a placeholder reading `.` on the host).
    pub commondir: PathBuf,
    /// Directories of `git_dir` bound (writable) into the shadow, where a link would not do:
    /// `objects` (git refuses to clone from a repository whose objects are a link).
    pub binds: Vec<(PathBuf, PathBuf)>,
}

/// The directories of a `.git` a broker binds into its shadow instead of linking them.
pub const BROKER_BOUND: &[&str] = &["objects"];

/// The name, inside a broker's shadow, of the file bound at `<git_dir>/commondir` in the jail.
pub const BROKER_POINTER: &str = ".commondir";

impl Deref for GuardedPlan {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.plan
    }
}

impl GuardedPlan {
    /// The guarded plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// A copy without the host sockets for which `present` is false, or `None` when every one
    /// is still there. A socket file removed since the plan was made can no longer be
    /// connected to, and bubblewrap cannot mount over a path that is gone (its start would
    /// fail): the launcher asks just before building the jail.
    pub fn without_gone_sockets(&self, present: impl Fn(&Path) -> bool) -> Option<GuardedPlan> {
        if self.plan.host_sockets.iter().all(|p| present(p)) {
            return None;
        }
        let mut copy = self.clone();
        copy.plan.host_sockets.retain(|p| present(p));
        Some(copy)
    }

    /// The placeholders to make or join before the jail starts, sorted by path.
    pub fn placeholders(&self) -> &[Placeholder] {
        &self.placeholders
    }

    /// The directories pinned (added to the writable roots) so that no protected path can be
    /// renamed away with its parent, sorted.
    pub fn pins(&self) -> &[PathBuf] {
        &self.pins
    }

    /// The repositories whose configuration a broker can take: a `.git` directory whose
    /// `config` is a protected file and whose `commondir` is a placeholder reading `.` (so host
    /// git sees no redirection while the jail's git is pointed at the shadow).
    pub fn broker_candidates(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .plan
            .protected
            .iter()
            .filter(|p| p.kind == EntryKind::File && p.path.file_name() == Some("config".as_ref()))
            .filter_map(|p| p.path.parent().map(Path::to_path_buf))
            .filter(|git| git.file_name() == Some(".git".as_ref()))
            .filter(|git| {
                self.placeholders.iter().any(|ph| {
                    ph.path == git.join("commondir")
                        && ph.kind == PlaceholderKind::File(COMMONDIR_SELF)
                })
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

impl ConfigBroker {
    /// The broker of `git_dir` (a [candidate](GuardedPlan::broker_candidates) of the guarded
    /// plan) whose shadow the launcher made at `shadow` inside it, with the [`BROKER_BOUND`]
    /// directories named in `bound` (those that exist) bound into it. `None` when `git_dir` is
    /// no candidate or `shadow` lies outside it. The broker is handed to the backend beside the
    /// plan, which it does not change.
    pub fn new(
        plan: &GuardedPlan,
        git_dir: &Path,
        shadow: PathBuf,
        bound: &[&str],
    ) -> Option<ConfigBroker> {
        if !plan.broker_candidates().iter().any(|c| c == git_dir) || !shadow.starts_with(git_dir) {
            return None;
        }
        Some(ConfigBroker {
            git_dir: git_dir.to_path_buf(),
            pointer: shadow.join(BROKER_POINTER),
            commondir: git_dir.join("commondir"),
            binds: BROKER_BOUND
                .iter()
                .filter(|d| bound.contains(d))
                .map(|d| (git_dir.join(d), shadow.join(d)))
                .collect(),
            shadow,
        })
    }
}

fn add(placeholders: &mut Vec<Placeholder>, path: &Path, kind: PlaceholderKind, created: bool) {
    if !placeholders.iter().any(|p| p.path == path) {
        placeholders.push(Placeholder {
            path: path.to_path_buf(),
            kind,
            created_for_the_run: created,
        });
    }
}

/// Whether the commit judges what a layered command does to a protected path, so that it needs
/// no read-only bind: a path in a git directory, or at a name of the auto-run registry. Cordon's
/// own state, and a path the user's configuration protects beyond those (`protected =
/// ["secrets"]`), stay read-only: no rule of the commit knows them.
fn left_to_the_commit(p: &ProtectedPath) -> bool {
    if p.path.file_name().is_some_and(|n| n == OWN_STATE_NAME) {
        return false;
    }
    let in_git_dir = p.path.components().any(|c| c.as_os_str() == ".git");
    let registry = p.path.strip_prefix(&p.root).is_ok_and(|rel| {
        rel.components().any(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|n| crate::AutoRun::for_root_name(n).is_some())
        })
    });
    in_git_dir || registry
}

fn root_of<'a>(plan: &'a Plan, p: &Path) -> Option<&'a PathBuf> {
    plan.writable.iter().find(|r| is_within(p, r))
}

fn protect(plan: &mut Plan, path: PathBuf, kind: EntryKind) {
    if plan.protected.iter().any(|p| p.path == path) {
        return;
    }
    if let Some(root) = root_of(plan, &path).cloned() {
        plan.protected.push(ProtectedPath { path, kind, root });
    }
}

/// The first component of `path` that does not exist (its parent does, as a directory).
fn first_missing(host: &dyn HostFacts, path: &Path) -> Option<PathBuf> {
    let mut first = None;
    for a in path.ancestors() {
        match host.kind(a) {
            None => first = Some(a.to_path_buf()),
            Some(EntryKind::Dir) => return first,
            Some(_) => return None,
        }
    }
    None
}

/// The placeholder kind a missing protected path gets, if any: only git's redirections inside a
/// git directory, which cordon pins anyway and host git reads on every command (an editor's git
/// view runs `git status` while the jail lives). Every other missing auto-run path is looked for
/// after the run instead (`docs/limits.md`), so the count does not grow with the registry.
fn placeholder_kind(host: &dyn HostFacts, path: &Path) -> Option<PlaceholderKind> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent()?;
    match name {
        "commondir" if host.kind(&parent.join("HEAD")).is_some() => {
            Some(PlaceholderKind::File(COMMONDIR_SELF))
        }
        // A linked worktree's own settings (`.git/worktrees/<name>/config.worktree`).
        "config.worktree"
            if parent
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "worktrees") =>
        {
            PLACEHOLDER_FILES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, content)| PlaceholderKind::File(content))
        }
        _ => None,
    }
}

/// Whether an existing protected path may be another run's placeholder, to be joined: a
/// `commondir` that says `.`, an empty `config.worktree` of a linked worktree.
fn joinable(host: &dyn HostFacts, path: &Path) -> Option<PlaceholderKind> {
    let kind = placeholder_kind(host, path)?;
    let PlaceholderKind::File(content) = kind else {
        return Some(kind);
    };
    (host.read_small_text(path)?.as_bytes() == content).then_some(kind)
}

impl Plan {
    /// The plan with what read-only binds leave open closed (the module documentation): existing
    /// git redirections protected, placeholders listed for missing protected directories and
    /// `commondir`, every directory between a writable root and a protected path pinned. Reads
    /// the host only through `host`; writes nothing.
    pub fn guard(&self, host: &dyn HostFacts) -> GuardedPlan {
        self.guard_beside_layer(host, &self.roots_under_a_layer())
    }

    /// The roots a plan resolved to the copy-on-write layer puts under it, as far as the plan
    /// knows: every writable root but the workspace's toolchain cache (cordon's own). A plan
    /// whose mode is still `auto` has none: the launcher resolves the mode against its backend
    /// before it guards (and names the roots it layers itself, [`Plan::guard_beside_layer`]),
    /// and a harness that builds bubblewrap's list from the public crates alone
    /// (`cordon_bwrap::build`) makes a live jail.
    pub fn roots_under_a_layer(&self) -> Vec<PathBuf> {
        if !matches!(
            self.workspace_mode,
            crate::WorkspaceMode::Layer | crate::WorkspaceMode::Review
        ) {
            return Vec::new();
        }
        let own_cache = self.caches.as_ref().map(|c| &c.root);
        self.writable
            .iter()
            .filter(|r| Some(*r) != own_cache)
            .cloned()
            .collect()
    }

    /// [`Plan::guard`] with `layered` the roots under a copy-on-write layer. Those roots get no
    /// guard of git's or the registry's: nothing the command writes there reaches the host
    /// before the commit judges it (`cordon-changes`), a read-only bind would only make the
    /// tools' own lock-and-rename fail (`EBUSY`), a placeholder would be a write to the host's
    /// tree while the jail lives, and a pin would write through. Cordon's own state inside
    /// such a root (`~/.config/cordon` below a granted home) and paths the configuration
    /// protects beyond git's and the registry's keep their read-only bind (no pins, no
    /// placeholders): the commit judges a root's changes by their place in the root, and no
    /// rule of it knows them.
    pub fn guard_beside_layer(&self, host: &dyn HostFacts, layered: &[PathBuf]) -> GuardedPlan {
        let is = |p: &Path, kind: EntryKind| host.kind(p) == Some(kind);
        let under_layer = |p: &Path| layered.iter().any(|l| is_within(p, l));
        let mut plan = self.clone();
        plan.protected
            .retain(|p| !under_layer(&p.path) || !left_to_the_commit(p));
        // The same guard whatever the order of the plan's lists (and however a path is
        // spelled: `/a//b` and `/a/b` compare equal), so the root a protected path is counted
        // in is always the same one.
        let spelling = |p: &Path| p.as_os_str().to_owned();
        plan.writable
            .sort_by(|a, b| a.cmp(b).then_with(|| spelling(a).cmp(&spelling(b))));
        plan.protected.sort_by(|a, b| {
            a.cmp(b)
                .then_with(|| spelling(&a.path).cmp(&spelling(&b.path)))
                .then_with(|| spelling(&a.root).cmp(&spelling(&b.root)))
        });
        plan.skipped.sort_by(|a, b| {
            a.cmp(b)
                .then_with(|| spelling(&a.path).cmp(&spelling(&b.path)))
        });
        let mut placeholders: Vec<Placeholder> = Vec::new();

        // Every granted root, the ones inside another root too: each keeps its git guard.
        let mut roots = plan.writable.clone();
        roots.extend(plan.inner_roots.iter().cloned());
        for root in &roots {
            let dot_git = root.join(".git");
            // A pin (a directory inside another root, once guarded) is no repository's top.
            let pin = plan
                .writable
                .iter()
                .any(|r| r != root && is_within(root, r))
                && !plan.inner_roots.contains(root);
            if pin || under_layer(root) {
                // Nothing of its own to guard (a pin), or the commit judges it (a layer).
            } else if is(&dot_git, EntryKind::Dir)
                && host.list_dir(&dot_git).is_some_and(|n| n.is_empty())
                && gitdirs::enclosing(host, root).is_some()
            {
                // Another run's placeholder for the enclosing repository's case: joined.
                add(&mut placeholders, &dot_git, PlaceholderKind::Dir, false);
                protect(&mut plan, dot_git, EntryKind::Dir);
            } else if is(&dot_git, EntryKind::Dir) {
                let commondir = dot_git.join("commondir");
                match host.kind(&commondir) {
                    // Maybe another run's placeholder: joined, so that run cannot remove it
                    // under this one.
                    Some(EntryKind::File) => {
                        add(
                            &mut placeholders,
                            &commondir,
                            PlaceholderKind::File(COMMONDIR_SELF),
                            false,
                        );
                        protect(&mut plan, commondir, EntryKind::File);
                    }
                    None => {
                        add(
                            &mut placeholders,
                            &commondir,
                            PlaceholderKind::File(COMMONDIR_SELF),
                            true,
                        );
                        protect(&mut plan, commondir, EntryKind::File);
                    }
                    Some(_) => {}
                }
            } else if is(&dot_git, EntryKind::File) {
                // A linked worktree: its `.git` file names the administrative directory.
                protect(&mut plan, dot_git, EntryKind::File);
            } else if host.kind(&dot_git).is_none() && gitdirs::enclosing(host, root).is_some() {
                // A workspace inside an enclosing repository without a `.git` of its own: an
                // empty read-only `.git`, which git skips on its way up (not a repository) and
                // in which `git init` fails, so no repository with a planted config appears.
                add(&mut placeholders, &dot_git, PlaceholderKind::Dir, true);
                protect(&mut plan, dot_git, EntryKind::Dir);
            }
            // A worktree's administrative directory made writable (the git-worktree profile).
            if is(&root.join("commondir"), EntryKind::File) {
                for name in ["commondir", "gitdir"] {
                    if is(&root.join(name), EntryKind::File) {
                        protect(&mut plan, root.join(name), EntryKind::File);
                    }
                }
            }
        }

        for skipped in &plan.skipped.clone() {
            if skipped.reason == SkipReason::OwnStateMissing {
                // Not creatable: an empty read-only directory where its first missing component
                // would be (cordon's directory itself when its parent exists).
                // When it appeared since the plan was resolved (the launcher's probe writes its
                // cache before the jail is guarded), it is protected as it is, and joined.
                let (path, created) = match first_missing(host, &skipped.path) {
                    Some(first) => (first, true),
                    None if is(&skipped.path, EntryKind::Dir) => (skipped.path.clone(), false),
                    None => continue,
                };
                if root_of(&plan, &path).is_some_and(|r| *r != path) {
                    add(&mut placeholders, &path, PlaceholderKind::Dir, created);
                    protect(&mut plan, path, EntryKind::Dir);
                }
                continue;
            }
            let p = &skipped.path;
            if skipped.reason != SkipReason::ProtectedMissing || under_layer(p) {
                continue;
            }
            // The name first: the host is asked only about git's redirections.
            let Some(kind) = placeholder_kind(host, p) else {
                continue;
            };
            if !(p.parent().is_some_and(|d| is(d, EntryKind::Dir)) && root_of(&plan, p).is_some()) {
                continue;
            }
            add(&mut placeholders, p, kind, true);
            let entry = match kind {
                PlaceholderKind::Dir => EntryKind::Dir,
                PlaceholderKind::File(_) => EntryKind::File,
            };
            protect(&mut plan, p.clone(), entry);
        }
        // A protected path that exists under a placeholder's name may be another run's
        // placeholder: joined, so that run's cleanup waits for this jail.
        for prot in &plan.protected {
            if let Some(kind) = joinable(host, &prot.path) {
                add(&mut placeholders, &prot.path, kind, false);
            } else if prot.kind == EntryKind::Dir
                && prot.path.file_name().is_some_and(|n| n == OWN_STATE_NAME)
            {
                // Perhaps another run's placeholder for cordon's own directory (joining a real
                // one is harmless: only a marked placeholder is ever removed).
                add(&mut placeholders, &prot.path, PlaceholderKind::Dir, false);
            }
        }

        // Pin every directory between a writable root and a protected path. A root under the
        // copy-on-write layer (every granted root in layer mode but the workspace's toolchain
        // cache, cordon's own) takes no pins: renaming a directory of the layer's lower tree
        // fails (`EXDEV`), and a pin, a bind of the host's directory, would write through.
        // A plan whose mode is still `auto` is guarded as live: the launcher resolves the mode
        // against its backend before it guards, and a harness that builds bubblewrap's list
        // from the public crates alone (`cordon_bwrap::build`) makes a live jail.
        let mut pins: Vec<PathBuf> = Vec::new();
        for prot in &plan.protected {
            if under_layer(&prot.path) {
                continue;
            }
            let Ok(rel) = prot.path.strip_prefix(&prot.root) else {
                continue;
            };
            let mut dir = prot.root.clone();
            let parts: Vec<Component<'_>> = rel.components().collect();
            for part in parts.iter().take(parts.len().saturating_sub(1)) {
                dir.push(part);
                if is(&dir, EntryKind::Dir) && !pins.contains(&dir) {
                    pins.push(dir.clone());
                }
            }
        }
        pins.sort();
        for pin in &pins {
            if !plan.writable.contains(pin) {
                plan.writable.push(pin.clone());
            }
        }
        plan.writable.sort();
        plan.protected.sort();
        placeholders.sort();
        GuardedPlan {
            plan,
            placeholders,
            pins,
        }
    }

    /// [`Plan::guard`], with each placeholder handed to `provide` (the launcher makes or joins
    /// it on the host) and the ones it could not provide left out: a placeholder that could not
    /// be made (the user cannot write there, something of another kind appeared) leaves its
    /// path unprotected, as it would be without the guard (nothing can be bound there, and the
    /// jail's user could not have made it either when it is the permission that is missing).
    /// Pins stay: a pin only keeps a directory in place. The result is the complete plan.
    pub fn guard_with(
        &self,
        host: &dyn HostFacts,
        provide: &mut dyn FnMut(&Placeholder) -> bool,
    ) -> GuardedPlan {
        self.guard_beside_layer_with(host, &self.roots_under_a_layer(), provide)
    }

    /// [`Plan::guard_with`] with `layered` the roots under a copy-on-write layer
    /// ([`Plan::guard_beside_layer`]).
    pub fn guard_beside_layer_with(
        &self,
        host: &dyn HostFacts,
        layered: &[PathBuf],
        provide: &mut dyn FnMut(&Placeholder) -> bool,
    ) -> GuardedPlan {
        let mut guarded = self.guard_beside_layer(host, layered);
        let mut left_out = Vec::new();
        for p in &guarded.placeholders {
            if !provide(p) && p.created_for_the_run {
                left_out.push(p.path.clone());
            }
        }
        guarded.placeholders.retain(|p| !left_out.contains(&p.path));
        guarded
            .plan
            .protected
            .retain(|p| !left_out.contains(&p.path));
        guarded
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{FakeHost, Invocation, Policy, Profile};

    /// The guard of a default plan (its mode unresolved: guarded as live).
    fn guarded(host: &FakeHost, work: &str) -> GuardedPlan {
        Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(work),
            host,
        )
        .unwrap()
        .guard(host)
    }

    #[test]
    fn pins_parents_protects_commondir_and_lists_placeholders() {
        let host = FakeHost::typical();
        let g = guarded(&host, "/home/u/proj");
        let w = Path::new("/home/u/proj");
        assert_eq!(g.pins(), [w.join(".git")]);
        assert!(g.writable.contains(&w.join(".git")));
        // Resolved to a layer (the launcher's, under bubblewrap), the root takes no pins.
        let mut layered = g.plan().clone();
        layered.workspace_mode = crate::WorkspaceMode::Layer;
        assert!(layered.guard(&host).pins().is_empty());
        let protected: Vec<&Path> = g.protected.iter().map(|p| p.path.as_path()).collect();
        for p in [".git/commondir", ".git/hooks", ".git/config"] {
            assert!(
                protected.contains(&w.join(p).as_path()),
                "{p}: {protected:?}"
            );
        }
        let commondir = g
            .placeholders()
            .iter()
            .find(|p| p.path == w.join(".git/commondir"))
            .unwrap();
        assert_eq!(commondir.kind, PlaceholderKind::File(COMMONDIR_SELF));
        assert!(commondir.created_for_the_run);
        // Missing auto-run names at the root get no placeholder: they are looked for after the
        // run (skipped, listed), so the count of entries made does not grow with the registry.
        assert_eq!(g.placeholders().len(), 1, "{:?}", g.placeholders());
        for p in [
            ".vscode",
            ".claude",
            ".devcontainer.json",
            ".git/info/attributes",
        ] {
            assert!(
                g.skipped
                    .iter()
                    .any(|s| s.path == w.join(p) && s.reason == SkipReason::ProtectedMissing),
                "{p}"
            );
        }
        // Guarding reads only: the host is unchanged, and guarding twice gives the same plan.
        assert_eq!(g.plan().guard(&host).plan(), g.plan());
    }

    #[test]
    fn a_linked_worktree_git_file_is_protected_and_a_dropped_placeholder_unprotected() {
        let host = FakeHost::typical().dir("/home/u/wt").file(
            "/home/u/wt/.git",
            "gitdir: /home/u/proj/.git/worktrees/wt\n",
        );
        let g = guarded(&host, "/home/u/wt");
        let wt = Path::new("/home/u/wt");
        assert!(g.protected.iter().any(|p| p.path == wt.join(".git")));
        assert!(
            !g.placeholders()
                .iter()
                .any(|p| p.path.ends_with("commondir"))
        );
        let admin = Path::new("/home/u/proj/.git/worktrees/wt/config.worktree");
        assert!(
            g.placeholders().iter().any(|p| p.path == admin)
                || !g.writable.iter().any(|r| admin.starts_with(r))
        );
        // A launcher that could make no placeholder: each one created for the run is left
        // out (its path unprotected), what exists stays protected.
        let plan = Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at("/home/u/wt"),
            &host,
        )
        .unwrap();
        let mut asked = 0;
        let dropped = plan.guard_with(&host, &mut |_| {
            asked += 1;
            false
        });
        assert_eq!(asked, g.placeholders().len());
        for p in g.placeholders().iter().filter(|p| p.created_for_the_run) {
            assert!(!dropped.placeholders().iter().any(|q| q.path == p.path));
            assert!(!dropped.protected.iter().any(|q| q.path == p.path));
        }
        assert!(dropped.protected.iter().any(|p| p.path == wt.join(".git")));
    }

    #[test]
    fn a_workspace_inside_an_enclosing_repository_gets_an_empty_read_only_git() {
        let host = FakeHost::typical()
            .dir("/home/u/mono/.git/hooks")
            .file("/home/u/mono/.git/HEAD", "x\n")
            .dir("/home/u/mono/pkg/src");
        let g = guarded(&host, "/home/u/mono/pkg");
        let dot_git = Path::new("/home/u/mono/pkg/.git");
        let p = g.placeholders().iter().find(|p| p.path == dot_git).unwrap();
        assert_eq!(p.kind, PlaceholderKind::Dir);
        assert!(p.created_for_the_run);
        assert!(
            g.protected
                .iter()
                .any(|p| p.path == dot_git && p.kind == EntryKind::Dir)
        );
        // Another run's placeholder there (an empty `.git`) is joined, not taken for a
        // repository.
        let joined = guarded(
            &host.clone().dir("/home/u/mono/pkg/.git"),
            "/home/u/mono/pkg",
        );
        let p = joined
            .placeholders()
            .iter()
            .find(|p| p.path == dot_git)
            .unwrap();
        assert!(!p.created_for_the_run);
        assert!(
            !joined
                .placeholders()
                .iter()
                .any(|p| p.path.ends_with("commondir"))
        );
    }

    #[test]
    fn submodules_and_worktrees_seen_from_the_main_repository_are_protected() {
        let host = FakeHost::typical()
            .file("/home/u/proj/.git/HEAD", "x\n")
            .file("/home/u/proj/.git/modules/lib/HEAD", "x\n")
            .file("/home/u/proj/.git/modules/lib/config", "")
            .dir("/home/u/proj/.git/modules/lib/hooks")
            .file("/home/u/proj/.git/worktrees/wt/commondir", "../..\n")
            .file("/home/u/proj/.git/worktrees/wt/gitdir", "/home/u/wt/.git\n")
            .file(
                "/home/u/proj/.gitmodules",
                "[submodule \"lib\"]\n\tpath = lib\n",
            )
            .file("/home/u/proj/lib/.git", "gitdir: ../.git/modules/lib\n")
            .file("/home/u/proj/app.code-workspace", "{}\n");
        let g = guarded(&host, "/home/u/proj");
        let w = Path::new("/home/u/proj");
        assert!(
            g.restored
                .iter()
                .any(|x| x.path == w.join(".git/modules/lib/config")),
            "a submodule's config is put back after the run"
        );
        for p in [
            ".git/modules/lib/hooks",
            ".git/modules/lib/commondir",
            ".git/worktrees/wt/commondir",
            ".git/worktrees/wt/gitdir",
            ".git/worktrees/wt/config.worktree",
            "lib/.git",
            "app.code-workspace",
        ] {
            assert!(g.protected.iter().any(|x| x.path == w.join(p)), "{p}");
        }
        // Placeholders only inside git directories: commondir of the repository and of the
        // submodule, and the worktree's config.worktree.
        let made: Vec<&Path> = g.placeholders().iter().map(|p| p.path.as_path()).collect();
        assert_eq!(
            made,
            [
                w.join(".git/commondir").as_path(),
                w.join(".git/modules/lib/commondir").as_path(),
                w.join(".git/worktrees/wt/config.worktree").as_path(),
            ]
        );
        // The directories above them are pinned, so none can be renamed away.
        for p in [
            ".git",
            ".git/modules",
            ".git/modules/lib",
            ".git/worktrees/wt",
            "lib",
        ] {
            assert!(g.pins().contains(&w.join(p)), "{p}: {:?}", g.pins());
        }
    }
}
