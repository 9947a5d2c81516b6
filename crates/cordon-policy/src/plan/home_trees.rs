//! What the jail sees of a hidden home directory (host posture): the vetted toolchain trees, what
//! the `PATH` entries below it show (`shown`) and the `[filesystem] read` grants, read-only; the
//! masks below it that no visible tree holds left to the private home; and the host's git
//! identity.

use std::path::{Path, PathBuf};

use super::host::{EntryKind, HostFacts};
use super::parts::{Bind, CredentialMask, HomeTree, RelocatedStore, SkipReason, Skipped, Symlink};
use super::{Invocation, Plan, home, shown};
use crate::error::PolicyError;
use crate::model::modes::{HomeMode, Posture};
use crate::model::policy::Policy;
use crate::paths::{DisplayPath, check_no_nul, is_within};

impl Plan {
    /// The `[filesystem] read` grants: refused when one is `/`, the home directory or one of its
    /// ancestors, or lies in a mask; bound read-only where the posture hides them (below the
    /// hidden home on the host posture, anywhere on the minimal one).
    pub(super) fn add_read_grants(
        &mut self,
        policy: &Policy,
        host: &dyn HostFacts,
    ) -> Result<(), PolicyError> {
        for spec in policy.read() {
            let requested = spec.under(&self.home, &self.workspace);
            check_no_nul(&requested)?;
            let refuse = |why: String| PolicyError::ReadGrantRefused {
                path: spec.to_string(),
                why,
            };
            // Lexically first, so a grant of a mask that does not exist here is refused too.
            let named_masks = policy
                .masks()
                .iter()
                .map(|m| m.under(&self.home, &self.workspace))
                .chain(self.masks.iter().map(|m| m.requested.clone()))
                .chain(
                    self.skipped
                        .iter()
                        .filter(|s| s.reason == SkipReason::MaskMissing)
                        .map(|s| s.path.clone()),
                );
            for m in named_masks {
                if is_within(&requested, &m) {
                    return Err(refuse(format!(
                        "it lies in the credential mask {}",
                        DisplayPath(m)
                    )));
                }
            }
            let Some(target) = host.canonicalize(&requested) else {
                continue;
            };
            if target == Path::new("/") {
                return Err(refuse("it resolves to the whole filesystem".into()));
            }
            if self.home.starts_with(&target) {
                return Err(refuse(format!(
                    "it resolves to {}, the home directory or one of its ancestors",
                    DisplayPath(target)
                )));
            }
            if let Some(m) = self
                .masks
                .iter()
                .find(|m| is_within(&target, &m.target) || is_within(&requested, &m.requested))
            {
                return Err(refuse(format!(
                    "it lies in the credential mask {}",
                    DisplayPath(m.requested.clone())
                )));
            }
            let hidden = match self.posture {
                Posture::Minimal => true,
                Posture::Host => {
                    self.home_access == HomeMode::Hidden && is_within(&target, &self.home)
                }
            };
            if hidden {
                self.read_only.push(Bind {
                    source: target.clone(),
                    dest: target.clone(),
                });
                self.home_trees.push(HomeTree {
                    path: target,
                    why: format!("granted by filesystem.read {spec}"),
                });
            }
        }
        self.read_only.sort();
        self.read_only.dedup();
        Ok(())
    }

    /// The host posture's hidden home: a private directory, the vetted toolchain trees and what
    /// the `PATH` entries below it show read-only (with the configuration at their roots masked), the host's git identity in the environment,
    /// and the masks below it that no visible tree holds left out (the private home hides them).
    pub(super) fn hide_home(
        &mut self,
        host: &dyn HostFacts,
        invocation: &Invocation,
        relocated: &mut [RelocatedStore],
    ) {
        let home = self.home.clone();
        self.private_dirs.push(home.clone());
        let mut wanted: Vec<(PathBuf, String)> = home::VETTED_HOME_TREES
            .iter()
            .map(|t| (home.join(t.path), format!("{}: {}", t.tool, t.reason)))
            .collect();
        let roots: Vec<PathBuf> = self
            .writable
            .iter()
            .chain(&self.inner_roots)
            .cloned()
            .collect();
        if let Some(path) = invocation.env.get("PATH") {
            wanted.extend(shown::path_trees(&home, &roots, path, host));
        }
        // Relocated stores below the home are hidden with it unless a visible tree holds
        // them; every other mask wins over a tree it holds.
        let strong: Vec<&CredentialMask> = self
            .masks
            .iter()
            .filter(|m| {
                !is_within(&m.target, &home) || !relocated.iter().any(|r| r.path == m.requested)
            })
            .collect();
        let mut trees: Vec<HomeTree> = Vec::new();
        for (path, why) in wanted {
            let Some(target) = host.canonicalize(&path) else {
                continue;
            };
            if target == home || home.starts_with(&target) || target == Path::new("/") {
                continue;
            }
            if strong.iter().any(|m| is_within(&target, &m.target)) {
                continue;
            }
            // A tree inside a writable root is shown by the root, writable: a read-only bind
            // there would take a right away (`--write ~/go` and `go install`).
            if self
                .writable
                .iter()
                .chain(&self.inner_roots)
                .any(|r| is_within(&target, r))
            {
                continue;
            }
            // The first symlink on the way from the home directory (the tree itself, or a
            // directory above it: `~/.cargo -> /data/cargo` for `~/.cargo/bin`) is recreated in
            // the private home, so the tree's usual path still leads to it.
            if let Some(link) = first_symlink_below(host, &home, &path)
                && let Some(stored) = host.read_link(&link)
            {
                self.symlinks.push(Symlink {
                    link,
                    target: stored,
                });
            }
            if !trees.iter().any(|t| t.path == target) {
                trees.push(HomeTree { path: target, why });
            }
        }
        trees.sort();
        let mut cover: Vec<HomeTree> = Vec::new();
        for t in trees {
            if !cover.iter().any(|kept| is_within(&t.path, &kept.path)) {
                cover.push(t);
            }
        }
        for t in &cover {
            self.read_only.push(Bind {
                source: t.path.clone(),
                dest: t.path.clone(),
            });
        }
        // Configuration with credentials at the root of a shown tree (a global npm prefix's
        // `etc/npmrc`, a virtual environment's `pip.conf`) is masked.
        let paths: Vec<PathBuf> = cover.iter().map(|t| t.path.clone()).collect();
        self.masks
            .extend(shown::masks_in_trees(&home, &roots, &paths, host));
        self.masks.sort();
        self.masks.dedup_by(|a, b| a.target == b.target);
        self.home_trees.extend(cover);
        self.home_trees.sort();
        self.home_trees.dedup_by(|a, b| a.path == b.path);
        self.read_only.sort();
        self.read_only.dedup();
        self.symlinks.sort();
        self.symlinks.dedup();
        self.private_dirs.sort();
        self.private_dirs.dedup();

        // Masks below the hidden home that no visible tree or writable root holds.
        let visible: Vec<PathBuf> = self
            .read_only
            .iter()
            .map(|b| b.dest.clone())
            .chain(self.writable.iter().cloned())
            .chain(self.inner_roots.iter().cloned())
            .collect();
        let (kept, hidden): (Vec<CredentialMask>, Vec<CredentialMask>) =
            std::mem::take(&mut self.masks).into_iter().partition(|m| {
                !is_within(&m.target, &home) || visible.iter().any(|v| is_within(&m.target, v))
            });
        self.masks = kept;
        for m in hidden {
            if let Some(r) = relocated.iter_mut().find(|r| r.path == m.requested) {
                r.outcome = "hidden with the home".into();
            }
            self.skipped.push(Skipped {
                path: m.requested,
                reason: SkipReason::HiddenWithHome,
            });
        }
        self.skipped.sort();
        self.skipped.dedup();

        self.add_git_identity(host, invocation);
    }

    /// The host's git `user.name` and `user.email` (and nothing else of its configuration) as
    /// the author and committer variables, each only where the policy sets none and the
    /// repository's own configuration does not name one (git prefers the variables to it).
    fn add_git_identity(&mut self, host: &dyn HostFacts, invocation: &Invocation) {
        let mut files: Vec<PathBuf> = Vec::new();
        match invocation.env.get("GIT_CONFIG_GLOBAL").map(PathBuf::from) {
            Some(global) if global.is_absolute() => files.push(global),
            _ => {
                let xdg = invocation
                    .env
                    .get("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .unwrap_or_else(|| self.home.join(".config"));
                files.push(xdg.join("git/config"));
                files.push(self.home.join(".gitconfig"));
            }
        }
        let (mut name, mut email) = (None, None);
        for f in &files {
            if let Some(text) = host.read_small_text(f) {
                let (n, e) = home::git_identity(&text);
                name = n.or(name);
                email = e.or(email);
            }
        }
        let local = host
            .read_small_text(&self.workspace.join(".git/config"))
            .map(|t| home::git_identity(&t))
            .unwrap_or((None, None));
        let mut set = |vars: [&str; 2], value: Option<String>, local: &Option<String>| {
            if let (Some(value), None) = (value, local) {
                for var in vars {
                    self.env
                        .set
                        .entry(var.to_owned())
                        .or_insert_with(|| value.clone());
                }
            }
        };
        set(["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"], name, &local.0);
        set(["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"], email, &local.1);
    }
}

/// The first component of `path` below `home` that is a symlink, if any.
fn first_symlink_below(host: &dyn HostFacts, home: &Path, path: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(home).ok()?;
    let mut at = home.to_path_buf();
    for c in rest.components() {
        at.push(c);
        match host.kind(&at) {
            Some(EntryKind::Symlink) => return Some(at),
            Some(_) => {}
            None => return None,
        }
    }
    None
}
