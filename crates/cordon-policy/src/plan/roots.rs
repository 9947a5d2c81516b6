//! Writable roots and their checks: the cwd and workspace resolved, every granted root checked
//! against the path rules (no broad or system root, no root inside a credential mask, a project
//! file's roots inside the workspace), the linked worktrees among them, and the merged set.

use std::path::{Path, PathBuf};

use super::host::{EntryKind, HostFacts};
use super::parts::CredentialMask;
use crate::defaults;
use crate::error::PolicyError;
use crate::model::policy::Policy;
use crate::paths::{check_no_nul, is_within};

/// Who granted a root: the rules name it in their errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Workspace,
    Configured,
    Confined,
}

/// The kernel's PATH_MAX: a path of this many bytes or more (without its NUL) names nothing.
const PATH_MAX: usize = 4096;

/// The roots `policy` grants for `workspace` (the workspace first), each checked against the path
/// rules, and the linked worktrees among them; with `git_admin_writable`, a worktree's
/// administrative directory and the shared object and ref stores that exist are granted too.
pub(super) fn granted_roots(
    policy: &Policy,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
    masks: &[CredentialMask],
) -> Result<(Vec<PathBuf>, Vec<Worktree>), PolicyError> {
    let mut candidates: Vec<(PathBuf, Origin)> = vec![(workspace.to_path_buf(), Origin::Workspace)];
    for w in policy.writable() {
        let origin = if w.confined_to_workspace {
            Origin::Confined
        } else {
            Origin::Configured
        };
        candidates.push((w.path.under(home, workspace), origin));
    }
    let mut roots = Vec::new();
    for (path, origin) in &candidates {
        roots.push(check_root(host, path, *origin, home, workspace, masks)?);
    }
    let worktrees: Vec<Worktree> = roots
        .iter()
        .filter_map(|r| linked_worktree(host, r))
        .collect();
    if policy.git_admin_writable() {
        for wt in &worktrees {
            let mut admin = vec![wt.admin.clone()];
            admin.extend(["objects", "refs", "logs"].map(|d| wt.common.join(d)));
            for dir in admin {
                if host.resolved_kind(&dir) == Some(EntryKind::Dir) {
                    roots.push(check_root(
                        host,
                        &dir,
                        Origin::Configured,
                        home,
                        workspace,
                        masks,
                    )?);
                }
            }
        }
    }
    Ok((roots, worktrees))
}

/// A root the caller did not name (cordon's private cache) checked like a configured one.
pub(super) fn check_own_root(
    host: &dyn HostFacts,
    path: &Path,
    home: &Path,
    workspace: &Path,
    masks: &[CredentialMask],
) -> Result<PathBuf, PolicyError> {
    check_root(host, path, Origin::Configured, home, workspace, masks)
}

/// `path` (the cwd or the workspace) canonical: absolute, shorter than `PATH_MAX`, a directory.
pub(super) fn resolve_dir(
    host: &dyn HostFacts,
    path: &Path,
    what: &'static str,
) -> Result<PathBuf, PolicyError> {
    check_no_nul(path)?;
    if !path.is_absolute() {
        return Err(PolicyError::RelativeInvocationPath {
            what,
            path: path.to_path_buf(),
        });
    }
    let len = path.as_os_str().len();
    if len >= PATH_MAX {
        return Err(PolicyError::PathTooLong {
            what,
            path: path.to_path_buf(),
            len,
        });
    }
    match host.canonicalize(path) {
        Some(c) if host.kind(&c) == Some(EntryKind::Dir) => Ok(c),
        _ => Err(PolicyError::CwdMissing {
            path: path.to_path_buf(),
        }),
    }
}

/// `path` as a writable root: canonical, a directory, and allowed by the path rules.
fn check_root(
    host: &dyn HostFacts,
    path: &Path,
    origin: Origin,
    home: &Path,
    workspace: &Path,
    masks: &[CredentialMask],
) -> Result<PathBuf, PolicyError> {
    check_no_nul(path)?;
    let canonical = host
        .canonicalize(path)
        .ok_or_else(|| PolicyError::RootMissing {
            path: path.to_path_buf(),
        })?;
    if host.kind(&canonical) != Some(EntryKind::Dir) {
        return Err(PolicyError::RootNotDirectory { path: canonical });
    }
    let broad = |why: String| PolicyError::BroadRoot {
        path: canonical.clone(),
        why,
    };
    let suffix = if origin == Origin::Workspace {
        " (the workspace is the cwd)"
    } else {
        ""
    };
    if home.starts_with(&canonical) {
        return Err(broad(format!(
            "it is the home directory or one of its ancestors{suffix}"
        )));
    }
    if let Some(tree) = defaults::SYSTEM_TREES
        .iter()
        .find(|t| is_within(&canonical, Path::new(t)))
    {
        return Err(broad(format!("it lies in the system tree {tree}{suffix}")));
    }
    if defaults::BROAD_DIRS
        .iter()
        .any(|d| canonical == Path::new(d))
    {
        return Err(broad(format!("it is a shared top-level directory{suffix}")));
    }
    if origin == Origin::Confined && !is_within(&canonical, workspace) {
        return Err(PolicyError::RootOutsideWorkspace {
            root: canonical,
            workspace: workspace.to_path_buf(),
            origin: "the project file".into(),
        });
    }
    if let Some(mask) = masks
        .iter()
        .find(|m| is_within(&canonical, &m.target) || is_within(&canonical, &m.requested))
    {
        return Err(PolicyError::RootInsideMask {
            root: canonical,
            mask: mask.requested.clone(),
        });
    }
    Ok(canonical)
}

/// Sorts, dedups and drops every path that lies inside another one of the list.
pub(super) fn minimal_cover(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.iter().any(|kept| is_within(&p, kept)) {
            out.push(p);
        }
    }
    out
}

/// A linked git worktree: its `.git` is a file naming an administrative directory.
pub(super) struct Worktree {
    /// The administrative directory (`.git/worktrees/<name>` of the main repository).
    pub(super) admin: PathBuf,
    /// The common directory it shares with the main repository.
    pub(super) common: PathBuf,
}

fn linked_worktree(host: &dyn HostFacts, root: &Path) -> Option<Worktree> {
    let dot_git = root.join(".git");
    if host.kind(&dot_git) != Some(EntryKind::File) {
        return None;
    }
    let text = host.read_small_text(&dot_git)?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let admin = host.canonicalize(&root.join(gitdir))?;
    let common = match host.read_small_text(&admin.join("commondir")) {
        Some(c) => host.canonicalize(&admin.join(c.trim()))?,
        None => admin.clone(),
    };
    Some(Worktree { admin, common })
}
