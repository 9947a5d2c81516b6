//! Protected paths: what stays read-only inside the writable roots (the policy's paths under
//! every granted root, git's internals found from each repository's structure, the root-level
//! auto-run names, cordon's own directories), the files put back after the run instead, and the
//! ones left out with the reason.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use super::Invocation;
use super::gitdirs::GitLayout;
use super::host::{EntryKind, HostFacts};
use super::parts::{ProtectedPath, Resolved, SkipReason, Skipped};
use super::roots::Worktree;
use crate::autorun::{self, AutoRun};
use crate::defaults;
use crate::error::PolicyError;
use crate::model::policy::Policy;
use crate::paths::{PathSpec, check_no_nul, is_within};

/// The roots a plan's protected paths are resolved under.
pub(super) struct Roots<'a> {
    /// Every granted root, one inside another too.
    pub(super) granted: &'a [PathBuf],
    /// The merged writable roots.
    pub(super) writable: &'a [PathBuf],
    /// The linked worktrees among them.
    pub(super) worktrees: &'a [Worktree],
}

/// The protected paths that exist inside a writable root, and the ones left out; the files to
/// put back after the run instead ([`autorun::Protection::RestoredAfterRun`]) go to `restored`,
/// as found (not yet resolved: [`resolve_restored`]).
pub(super) fn resolve_protected(
    policy: &Policy,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
    roots: &Roots<'_>,
    restored: &mut Vec<PathBuf>,
) -> Resolved<ProtectedPath> {
    let Roots {
        granted,
        writable,
        worktrees,
    } = *roots;
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut protected = Vec::new();
    let mut skipped = Vec::new();
    // One readdir per root: a one-name protected path that is not among its names is missing
    // without asking the host again (the registry's root entries cost one call per root).
    let listings: Vec<Option<Vec<OsString>>> =
        granted.iter().map(|root| host.list_dir(root)).collect();
    for spec in policy.protected() {
        match spec {
            // Under every granted root, not only the merged ones: a root that holds another
            // (`--write` a parent of the workspace) must not swallow the inner root's `.git`.
            PathSpec::Relative(rel) => {
                let one_name = rel.components().count() == 1
                    && matches!(rel.components().next(), Some(Component::Normal(_)));
                for (root, listing) in granted.iter().zip(&listings) {
                    let path = spec.under(home, root);
                    match listing {
                        Some(names) if one_name && !names.iter().any(|n| n == rel.as_os_str()) => {
                            if writable.iter().any(|r| is_within(&path, r)) {
                                skipped.push(Skipped {
                                    path,
                                    reason: SkipReason::ProtectedMissing,
                                });
                            }
                        }
                        _ => candidates.push(path),
                    }
                }
            }
            _ => candidates.push(spec.under(home, workspace)),
        }
    }
    for wt in worktrees {
        candidates.push(wt.admin.join("config.worktree"));
        candidates.push(wt.common.join("hooks"));
        candidates.push(wt.common.join("config"));
    }
    let mut missing_redirects: Vec<PathBuf> = Vec::new();
    for (root, listing) in granted.iter().zip(&listings) {
        // Root-level patterns (`*.code-workspace`): the same readdir of the root.
        if let Some(names) = listing {
            for name in names {
                let Some(text) = name.to_str() else { continue };
                if AutoRun::root_patterns().any(|p| autorun::pattern_matches(p, text)) {
                    candidates.push(root.join(name));
                }
            }
        }
        // Git's internals, from the repository's structure.
        let layout = GitLayout::discover(host, root);
        for dir in &layout.git_dirs {
            if layout.submodules.contains(dir) {
                for (p, protection) in autorun::submodule_dir_paths() {
                    match protection {
                        autorun::Protection::ReadOnly => candidates.push(dir.join(p)),
                        autorun::Protection::RestoredAfterRun => restored.push(dir.join(p)),
                    }
                }
            } else {
                candidates.extend(autorun::git_dir_paths().map(|p| dir.join(p)));
            }
        }
        candidates.extend(layout.redirects.iter().cloned());
        candidates.extend(layout.whole);
        missing_redirects.extend(layout.missing_redirects);
    }
    for path in missing_redirects {
        if writable.iter().any(|r| is_within(&path, r)) {
            skipped.push(Skipped {
                path,
                reason: SkipReason::ProtectedMissing,
            });
        }
    }
    candidates.sort();
    candidates.dedup();
    for path in candidates {
        let Some(canonical) = host.canonicalize(&path) else {
            if writable.iter().any(|r| is_within(&path, r)) {
                skipped.push(Skipped {
                    path,
                    reason: SkipReason::ProtectedMissing,
                });
            }
            continue;
        };
        let Some(root) = writable.iter().find(|r| is_within(&canonical, r)) else {
            skipped.push(Skipped {
                path,
                reason: SkipReason::ProtectedOutsideWritable,
            });
            continue;
        };
        let kind = match host.kind(&canonical) {
            Some(EntryKind::Dir) => EntryKind::Dir,
            _ => EntryKind::File,
        };
        protected.push(ProtectedPath {
            path: canonical,
            kind,
            root: root.clone(),
        });
    }
    protected.sort();
    protected.dedup_by(|a, b| a.path == b.path);
    (protected, skipped)
}

/// The files of `candidates` that exist inside a writable root, canonical, to be put back after
/// the run.
pub(super) fn resolve_restored(
    host: &dyn HostFacts,
    candidates: Vec<PathBuf>,
    writable: &[PathBuf],
) -> Vec<ProtectedPath> {
    let mut restored: Vec<ProtectedPath> = Vec::new();
    for path in candidates {
        let Some(canonical) = host.canonicalize(&path) else {
            continue;
        };
        if host.kind(&canonical) != Some(EntryKind::File) {
            continue;
        }
        if let Some(root) = writable.iter().find(|r| is_within(&canonical, r)) {
            restored.push(ProtectedPath {
                path: canonical,
                kind: EntryKind::File,
                root: root.clone(),
            });
        }
    }
    restored.sort();
    restored.dedup_by(|a, b| a.path == b.path);
    restored
}

/// cordon's own directories for this invocation: the defaults below the home directory (in its
/// canonical and its given spelling) and the invocation's own, each absolute and free of NUL.
pub(super) fn own_state_dirs(
    invocation: &Invocation,
    home: &Path,
    home_raw: &Path,
) -> Result<Vec<PathBuf>, PolicyError> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for rel in defaults::OWN_STATE_IN_HOME {
        dirs.push(home.join(rel));
        if home_raw.is_absolute() {
            dirs.push(home_raw.join(rel));
        }
    }
    for dir in &invocation.own_state {
        check_no_nul(dir)?;
        if !dir.is_absolute() {
            return Err(PolicyError::RelativeInvocationPath {
                what: "cordon state directory",
                path: dir.clone(),
            });
        }
        dirs.push(dir.clone());
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// `path` with its longest existing ancestor canonicalized and the rest appended, when the rest
/// is plain names (a missing path has no canonical form of its own).
fn resolve_missing(host: &dyn HostFacts, path: &Path) -> Option<PathBuf> {
    let mut rest: Vec<&OsStr> = Vec::new();
    let mut base = path;
    loop {
        if let Some(canonical) = host.canonicalize(base) {
            let mut out = canonical;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return Some(out);
        }
        match base.components().next_back() {
            Some(Component::Normal(name)) => rest.push(name),
            _ => return None,
        }
        base = base.parent()?;
    }
}

/// cordon's own configuration and state directories that lie inside a writable root: protected
/// when they exist, listed for a placeholder ([`SkipReason::OwnStateMissing`]) when they do not.
/// Outside every writable root they are read-only already and not listed.
pub(super) fn resolve_own_state(
    host: &dyn HostFacts,
    dirs: &[PathBuf],
    writable: &[PathBuf],
    protected: &[ProtectedPath],
) -> Resolved<ProtectedPath> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for dir in dirs {
        match host.canonicalize(dir) {
            Some(canonical) => {
                let Some(root) = writable.iter().find(|r| is_within(&canonical, r)) else {
                    continue;
                };
                if protected.iter().any(|p| p.path == canonical) {
                    continue;
                }
                let kind = match host.kind(&canonical) {
                    Some(EntryKind::Dir) => EntryKind::Dir,
                    _ => EntryKind::File,
                };
                out.push(ProtectedPath {
                    path: canonical,
                    kind,
                    root: root.clone(),
                });
            }
            None => {
                let Some(path) = resolve_missing(host, dir) else {
                    continue;
                };
                if writable.iter().any(|r| is_within(&path, r)) {
                    skipped.push(Skipped {
                        path,
                        reason: SkipReason::OwnStateMissing,
                    });
                }
            }
        }
    }
    (out, skipped)
}
