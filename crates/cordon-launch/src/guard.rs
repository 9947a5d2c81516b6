//! What a read-only bind of each protected path leaves open, closed before the jail starts.
//!
//! The escape suite found three ways around the protected paths of a plan, all inside a writable
//! root and all leading to code that host tools run later:
//!
//! - **Renaming a parent away.** A bind mount cannot be renamed, but the directory holding it can:
//!   `mv .git .git-old; mkdir -p .git/hooks` leaves the host with a fresh, writable hooks
//!   directory. Every directory between a writable root and a protected path is therefore *pinned*
//!   (bound onto itself, still writable): a mount point cannot be renamed or removed.
//! - **Redirecting git.** `.git/commondir` makes git read its config and hooks from anywhere, and a
//!   linked worktree's `.git` file names its administrative directory; either one walks around a
//!   protected `.git/config`. An existing `commondir`, `gitdir` or `.git` file is protected; a
//!   repository without `commondir` gets a placeholder reading `.` (git's own meaning: the
//!   repository itself), protected for the run and removed afterwards; so does a missing
//!   protected `config.worktree` (empty: no settings).
//! - **Creating what did not exist.** A protected directory that is missing cannot be bound, so the
//!   command could create `.vscode/tasks.json` or `.claude/settings.json`. Missing protected
//!   directories get an empty placeholder directory, protected for the run and removed afterwards
//!   when still empty. (Missing protected *files* such as `.envrc` are left alone: an empty file
//!   would show up in `git status` and be committed; the tools that read them ask before trusting
//!   a new one.)
//!
//! Placeholders are created with `O_EXCL`/`mkdir` semantics and removed only when they still are
//! exactly what was created, so a file a person writes during the run is never lost; their
//! lifetime — shared between concurrent jails, removed even when the launcher is killed — is
//! `leftovers.rs`.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use cordon_policy::paths::is_within;
use cordon_policy::{EntryKind, Plan, ProtectedPath, SkipReason};

use crate::leftovers::{Cleanup, Kind, Session};

/// Protected directories that get a placeholder when they are missing.
const PLACEHOLDER_DIRS: &[&str] = &[
    ".vscode",
    ".idea",
    ".devcontainer",
    ".husky",
    ".cordon",
    ".claude",
];

/// What `commondir` says when the repository is its own common directory.
pub(crate) const COMMONDIR_SELF: &[u8] = b".\n";

/// Protected files that get a placeholder when missing, with its content: git reads an empty
/// `config.worktree` as no settings.
const PLACEHOLDER_FILES: &[(&str, &[u8])] = &[("config.worktree", b"")];

fn is_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

fn is_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
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

/// The plan with the gaps closed, and the placeholders to remove after the run. With `create`
/// false nothing is created on the host (for `cordon explain`): existing paths are protected and
/// pinned, missing ones are left out.
pub(crate) fn apply(
    plan: &Plan,
    create: bool,
    session: Option<&'static Session>,
) -> (Plan, Cleanup) {
    let mut plan = plan.clone();
    let mut guard = Cleanup::new(session);
    let roots = plan.writable.clone();

    for root in &roots {
        let dot_git = root.join(".git");
        if is_dir(&dot_git) {
            let commondir = dot_git.join("commondir");
            if is_file(&commondir) {
                // Maybe another run's placeholder: hold it so that run cannot remove it under us.
                if create {
                    let _ = guard.placeholder(&commondir, Kind::File(COMMONDIR_SELF));
                }
                protect(&mut plan, commondir, EntryKind::File);
            } else if create
                && !commondir.exists()
                && guard
                    .placeholder(&commondir, Kind::File(COMMONDIR_SELF))
                    .unwrap_or(false)
            {
                protect(&mut plan, commondir, EntryKind::File);
            }
        } else if is_file(&dot_git) {
            // A linked worktree: its `.git` file names the administrative directory.
            protect(&mut plan, dot_git, EntryKind::File);
        }
        // A worktree's administrative directory made writable (the git-worktree profile).
        if is_file(&root.join("commondir")) {
            for name in ["commondir", "gitdir"] {
                if is_file(&root.join(name)) {
                    protect(&mut plan, root.join(name), EntryKind::File);
                }
            }
        }
    }

    for skipped in plan.skipped.clone() {
        let p = &skipped.path;
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let eligible = skipped.reason == SkipReason::ProtectedMissing
            && p.parent().is_some_and(is_dir)
            && root_of(&plan, p).is_some();
        if !eligible || !create {
            continue;
        }
        let (kind, entry) = if PLACEHOLDER_DIRS.contains(&name) {
            (Kind::Dir, EntryKind::Dir)
        } else if let Some((_, content)) = PLACEHOLDER_FILES.iter().find(|(n, _)| *n == name) {
            (Kind::File(content), EntryKind::File)
        } else {
            continue;
        };
        if guard.placeholder(p, kind).unwrap_or(false) {
            protect(&mut plan, p.clone(), entry);
        }
    }
    // A protected path that exists under a placeholder's name may be another run's placeholder:
    // hold it, so that run's cleanup waits for this jail (leftovers.rs).
    if create {
        let held_paths: Vec<(PathBuf, Kind)> = plan
            .protected
            .iter()
            .filter_map(|p| {
                let name = p.path.file_name()?.to_str()?;
                if PLACEHOLDER_DIRS.contains(&name) {
                    Some((p.path.clone(), Kind::Dir))
                } else {
                    let (_, c) = PLACEHOLDER_FILES.iter().find(|(n, _)| *n == name)?;
                    Some((p.path.clone(), Kind::File(c)))
                }
            })
            .collect();
        for (path, kind) in held_paths {
            if guard.holds(&path) {
                continue;
            }
            // Joined when it is still there; made again when another run's cleanup removed it
            // after the plan was resolved (the plan binds it, so it must exist at the mount).
            let _ = guard.placeholder(&path, kind);
        }
    }

    // Pin every directory between a writable root and a protected path.
    let mut pins: Vec<PathBuf> = Vec::new();
    for prot in &plan.protected {
        let Ok(rel) = prot.path.strip_prefix(&prot.root) else {
            continue;
        };
        let mut dir = prot.root.clone();
        let parts: Vec<Component<'_>> = rel.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            dir.push(part);
            if is_dir(&dir) && !pins.contains(&dir) {
                pins.push(dir.clone());
            }
        }
    }
    plan.writable.extend(pins);
    plan.writable.sort();
    plan.writable.dedup();
    plan.protected.sort();
    (plan, guard)
}

/// `--proc` leaves `/proc/sys` writable for a jail whose user is the host's root: its files
/// belong to root with mode 0644, the kernel's sysctl check is by owner alone (no capability),
/// and bubblewrap covers `/proc/sys` (and `irq`, `bus`) only when the directory itself is
/// writable, which a 0555 directory is not. A root-run jail could so set `kernel.core_pattern`
/// or `kernel.modprobe` for the whole host (escape suite: `kernel/tunables-and-devices`). Every
/// `--proc DEST` is therefore followed by read-only binds of `/proc/sys`, `/proc/irq` and
/// `/proc/bus` at `DEST/…` (what a reader sees in them depends on its own namespaces, not on the
/// proc instance, so the view is unchanged).
pub(crate) fn proc_sys_read_only(steps: &[Vec<OsString>]) -> Vec<Vec<OsString>> {
    let mut out = Vec::with_capacity(steps.len() + 3);
    for step in steps {
        out.push(step.clone());
        if step.first().is_some_and(|f| f == "--proc")
            && let Some(dest) = step.get(1)
        {
            for (flag, name) in [
                ("--ro-bind", "sys"),
                ("--ro-bind-try", "irq"),
                ("--ro-bind-try", "bus"),
            ] {
                out.push(vec![
                    flag.into(),
                    Path::new("/proc").join(name).into_os_string(),
                    Path::new(dest).join(name).into_os_string(),
                ]);
            }
        }
    }
    out
}

/// The `--args` descriptor's bytes: every option followed by a NUL byte.
pub(crate) fn nul_separated(steps: &[Vec<OsString>]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in steps.iter().flatten() {
        bytes.extend_from_slice(word.as_encoded_bytes());
        bytes.push(0);
    }
    bytes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use cordon_policy::{Invocation, Policy, Profile, RealHost};

    fn plan_for(home: &Path, work: &Path) -> Plan {
        let host = RealHost::new(Some(home.as_os_str().to_owned()));
        Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(work),
            &host,
        )
        .unwrap()
    }

    #[test]
    fn pins_parents_protects_commondir_and_cleans_up() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let work = home.join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        let plan = plan_for(&home, &work);
        let (guarded, guard) = apply(&plan, true, None);
        assert!(guarded.writable.contains(&work.join(".git")), "{guarded:?}");
        let protected: Vec<&Path> = guarded.protected.iter().map(|p| p.path.as_path()).collect();
        assert!(protected.contains(&work.join(".git/commondir").as_path()));
        assert!(protected.contains(&work.join(".vscode").as_path()));
        assert!(protected.contains(&work.join(".git/hooks").as_path()));
        assert_eq!(std::fs::read(work.join(".git/commondir")).unwrap(), b".\n");
        assert!(work.join(".vscode").is_dir());
        drop(guard);
        assert!(!work.join(".git/commondir").exists());
        assert!(!work.join(".vscode").exists());
    }

    #[test]
    fn a_placeholder_someone_wrote_into_is_kept() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let work = home.join("proj");
        std::fs::create_dir_all(&work).unwrap();
        let (_, guard) = apply(&plan_for(&home, &work), true, None);
        std::fs::write(work.join(".vscode/settings.json"), "{}").unwrap();
        drop(guard);
        assert!(work.join(".vscode/settings.json").exists());
    }

    #[test]
    fn proc_sys_irq_and_bus_are_bound_read_only_after_proc() {
        let steps: Vec<Vec<OsString>> = vec![
            vec!["--dev".into(), "/dev".into()],
            vec!["--proc".into(), "/proc".into()],
            vec!["--tmpfs".into(), "/run".into()],
        ];
        let out = proc_sys_read_only(&steps);
        let flat: Vec<String> = out
            .iter()
            .map(|s| {
                s.iter()
                    .map(|w| w.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            flat,
            [
                "--dev /dev",
                "--proc /proc",
                "--ro-bind /proc/sys /proc/sys",
                "--ro-bind-try /proc/irq /proc/irq",
                "--ro-bind-try /proc/bus /proc/bus",
                "--tmpfs /run",
            ]
        );
        assert_eq!(nul_separated(&out[..1]), b"--dev\0/dev\0");
    }

    #[test]
    fn a_linked_worktree_git_file_is_protected() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let work = home.join("wt");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join(".git"), "gitdir: /nonexistent\n").unwrap();
        let (guarded, _guard) = apply(&plan_for(&home, &work), true, None);
        assert!(
            guarded
                .protected
                .iter()
                .any(|p| p.path == work.join(".git"))
        );
    }
}
