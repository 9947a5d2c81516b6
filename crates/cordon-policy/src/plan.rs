//! `Plan`: a policy resolved against one invocation on one host. Generators (bubblewrap, Seatbelt,
//! Landlock) take a `Plan` and nothing else.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_env::EnvPolicy;
use serde::Serialize;

use crate::defaults;
use crate::error::PolicyError;
use crate::home::{self, HomeMode};
use crate::host::{EntryKind, HostFacts};
use crate::model::{Limits, Network, Posture, Unavailable};
use crate::paths::{PathSpec, check_no_nul, is_within, serialize_path, serialize_paths};
use crate::policy::{Policy, PolicyHash};
use crate::profile::Profile;
use crate::{autorun, gitdirs};

/// One command's place on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The working directory, absolute.
    pub cwd: PathBuf,
    /// The workspace root, absolute; `None` means the cwd is the workspace.
    pub workspace: Option<PathBuf>,
    /// cordon's own configuration and state directories beyond the defaults below the home
    /// directory ([`defaults::OWN_STATE_IN_HOME`]), absolute: where `XDG_CONFIG_HOME` and
    /// `XDG_CACHE_HOME` put them ([`crate::config::own_state_dirs`]). Read-only in every jail.
    pub own_state: Vec<PathBuf>,
    /// The launcher's environment variables the plan reads ([`home::is_read`]): the ones that
    /// move credential stores ([`home::RELOCATING_VARIABLES`]) and `PATH`.
    pub env: BTreeMap<String, OsString>,
    /// cordon's toolchain-cache directory (`<cordon's cache directory>/tools`, absolute), or
    /// `None` for no private caches. A workspace's cache below it is used when it exists (the
    /// CLI creates it before a run; [`crate::caches`]).
    pub caches: Option<PathBuf>,
}

impl Invocation {
    /// A command run at `cwd`, which is also its workspace.
    pub fn at(cwd: impl Into<PathBuf>) -> Invocation {
        Invocation {
            cwd: cwd.into(),
            workspace: None,
            own_state: Vec::new(),
            env: BTreeMap::new(),
            caches: None,
        }
    }

    /// The same invocation with the launcher's environment (normally the whole process
    /// environment): only the variables [`home::is_read`] names are kept.
    pub fn with_host_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Invocation
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        for (k, v) in vars {
            let k: OsString = k.into();
            if let Some(name) = k.to_str().filter(|n| home::is_read(n)) {
                self.env.insert(name.to_owned(), v.into());
            }
        }
        self
    }

    /// The same invocation with private toolchain caches below `base` (absolute).
    pub fn with_caches(mut self, base: impl Into<PathBuf>) -> Invocation {
        self.caches = Some(base.into());
        self
    }

    /// The same invocation with cordon's own directories `dirs` (absolute) kept read-only too.
    pub fn with_own_state(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Invocation {
        self.own_state.extend(dirs);
        self
    }
}

/// A read-only bind of `source` at `dest`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Bind {
    /// Host path.
    #[serde(serialize_with = "serialize_path")]
    pub source: PathBuf,
    /// Path in the jail.
    #[serde(serialize_with = "serialize_path")]
    pub dest: PathBuf,
}

/// A symlink created in the jail (minimal posture: `/bin -> usr/bin`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Symlink {
    /// Where the link is.
    #[serde(serialize_with = "serialize_path")]
    pub link: PathBuf,
    /// What it points to, as stored on the host.
    #[serde(serialize_with = "serialize_path")]
    pub target: PathBuf,
}

/// A path inside a writable root that stays read-only.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ProtectedPath {
    /// Canonical path.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// Directory or file.
    pub kind: EntryKind,
    /// The writable root it lies in.
    #[serde(serialize_with = "serialize_path")]
    pub root: PathBuf,
}

/// A credential mask: a directory becomes an empty unreadable tmpfs, anything else `/dev/null`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CredentialMask {
    /// The canonical target: a mask on a symlink masks what it points to.
    #[serde(serialize_with = "serialize_path")]
    pub target: PathBuf,
    /// The path the policy named.
    #[serde(serialize_with = "serialize_path")]
    pub requested: PathBuf,
    /// Directory, or file for anything that is not a directory.
    pub kind: EntryKind,
}

/// A tree below the home directory that the jail sees although the home is hidden, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct HomeTree {
    /// Canonical path (bound read-only).
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// Why it is visible.
    pub why: String,
}

/// A credential store that an environment variable of the launcher moved, and what the plan
/// does with it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RelocatedStore {
    /// The variable.
    pub variable: String,
    /// The path it names (for a tool home: the store inside it).
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// `masked`, `missing` (nothing there: nothing to hide; Seatbelt still denies the name),
    /// `hidden with the home` (below the hidden home, outside every visible tree), or why it
    /// was left alone.
    pub outcome: String,
}

/// Why a mask or protected path is not in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// The masked path does not exist (nothing to hide; start-up is unaffected).
    MaskMissing,
    /// The protected path does not exist at launch, so it cannot be bound read-only; see
    /// docs/limits.md.
    ProtectedMissing,
    /// The protected path resolves outside every writable root, so it is read-only already.
    ProtectedOutsideWritable,
    /// One of cordon's own configuration or state directories does not exist but lies inside a
    /// writable root: [`Plan::guard`] lists a placeholder (an empty read-only directory) where
    /// its first missing component would be, so the jail cannot create it.
    OwnStateMissing,
    /// The masked path lies below the hidden home directory, outside every tree the jail sees
    /// there: the private home already hides it, and a mount would only cost time.
    HiddenWithHome,
}

/// A mask or protected path left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Skipped {
    /// The path.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// Why.
    pub reason: SkipReason,
}

/// The workspace's private toolchain cache in a plan: a writable root of cordon's, and the
/// variables that point the tools into it (also in `env.owned`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CachePlan {
    /// The cache root (canonical), also in `writable`.
    #[serde(serialize_with = "serialize_path")]
    pub root: PathBuf,
    /// What cordon creates in it and sets.
    pub layout: crate::caches::CacheLayout,
}

/// A policy resolved on one host for one invocation: plain data, every path canonical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Profile.
    pub profile: Profile,
    /// Posture.
    pub posture: Posture,
    /// Network.
    pub network: Network,
    /// `network.allow` entries (normalized), what a `proxy` network reaches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network_allow: Vec<String>,
    /// Canonical home directory.
    #[serde(serialize_with = "serialize_path")]
    pub home: PathBuf,
    /// Whether the home directory is hidden (a private directory in `private_dirs`, host
    /// posture) or visible as on the host.
    pub home_access: HomeMode,
    /// What the jail sees of the hidden home (each also in `read_only`), and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub home_trees: Vec<HomeTree>,
    /// Credential stores the launcher's environment moved ([`home::RELOCATING_VARIABLES`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relocated: Vec<RelocatedStore>,
    /// Canonical workspace root.
    #[serde(serialize_with = "serialize_path")]
    pub workspace: PathBuf,
    /// Canonical working directory.
    #[serde(serialize_with = "serialize_path")]
    pub cwd: PathBuf,
    /// Read-only binds beyond the posture's base (minimal: the vetted trees).
    pub read_only: Vec<Bind>,
    /// Symlinks to recreate (minimal posture).
    pub symlinks: Vec<Symlink>,
    /// Directories replaced by private empty ones (tmpfs).
    #[serde(serialize_with = "serialize_paths")]
    pub private_dirs: Vec<PathBuf>,
    /// Writable roots: canonical, sorted, none inside another.
    #[serde(serialize_with = "serialize_paths")]
    pub writable: Vec<PathBuf>,
    /// Granted roots that lie inside another one (the workspace inside a `--write` parent, a
    /// configured root inside the workspace), so not in `writable`: canonical, sorted. Each keeps
    /// its own protected paths, and [`Plan::guard`] treats it as a root.
    #[serde(
        serialize_with = "serialize_paths",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub inner_roots: Vec<PathBuf>,
    /// Paths inside writable roots that stay read-only.
    pub protected: Vec<ProtectedPath>,
    /// Files inside writable roots that the command may rewrite but that are put back as they
    /// were at launch after the run ([`crate::autorun::Protection::RestoredAfterRun`]: a
    /// submodule's `config`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<ProtectedPath>,
    /// Credential masks that exist on this host.
    pub masks: Vec<CredentialMask>,
    /// Masks and protected paths left out, with the reason.
    pub skipped: Vec<Skipped>,
    /// The workspace's private toolchain cache, when the invocation has one, the posture is
    /// the host's, and its root exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caches: Option<CachePlan>,
    /// Environment policy.
    pub env: EnvPolicy,
    /// Limits.
    pub limits: Limits,
    /// What to do without an enforcing backend.
    pub unavailable: Unavailable,
    /// The policy's hash.
    pub policy_hash: PolicyHash,
}

impl Plan {
    /// Resolves `policy` for `invocation` on `host`, enforcing the path rules.
    pub fn resolve(
        policy: &Policy,
        invocation: &Invocation,
        host: &dyn HostFacts,
    ) -> Result<Plan, PolicyError> {
        let home_raw = host.home_dir().ok_or(PolicyError::HomeUnknown)?;
        let home_raw_for_own_state = home_raw.clone();
        let home = host.canonicalize(&home_raw).unwrap_or(home_raw);

        let cwd = resolve_dir(host, &invocation.cwd, "cwd")?;
        let workspace = match &invocation.workspace {
            Some(w) => resolve_dir(host, w, "workspace")?,
            None => cwd.clone(),
        };

        let masks = resolve_masks(policy, host, &home, &workspace)?;
        let mut skipped = masks.1;
        let mut masks = masks.0;
        let (moved, mut relocated, moved_skips) = resolve_relocated(invocation, host, &home)?;
        skipped.extend(moved_skips);

        let mut candidates: Vec<(PathBuf, Origin)> = vec![(workspace.clone(), Origin::Workspace)];
        for w in policy.writable() {
            let origin = if w.confined_to_workspace {
                Origin::Confined
            } else {
                Origin::Configured
            };
            candidates.push((w.path.under(&home, &workspace), origin));
        }
        let mut roots = Vec::new();
        for (path, origin) in &candidates {
            roots.push(check_root(host, path, *origin, &home, &workspace, &masks)?);
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
                            &home,
                            &workspace,
                            &masks,
                        )?);
                    }
                }
            }
        }
        // A moved store that holds a writable root the caller granted is left alone, reported:
        // masking it would hide the root. The default masks inside it still apply.
        let mut moved = moved;
        moved.retain(|(variable, m)| {
            let Some(root) = roots.iter().find(|r| is_within(r, &m.target)) else {
                return true;
            };
            if let Some(r) = relocated
                .iter_mut()
                .find(|r| r.variable == *variable && r.path == m.requested)
            {
                r.outcome = format!(
                    "left alone: it holds the writable root {}",
                    crate::paths::DisplayPath(root.clone())
                );
            }
            false
        });
        let caches = resolve_caches(policy, invocation, host, &home, &workspace, &masks);
        let mut granted = roots.clone();
        granted.extend(caches.as_ref().map(|c| c.root.clone()));
        granted.sort();
        granted.dedup();
        let writable = minimal_cover(granted.clone());
        let inner_roots: Vec<PathBuf> = granted
            .iter()
            .filter(|r| !writable.contains(r))
            .cloned()
            .collect();

        if !writable.iter().any(|r| is_within(&cwd, r)) {
            return Err(PolicyError::CwdOutsideWritable { cwd, writable });
        }

        let mut restored_candidates: Vec<PathBuf> = Vec::new();
        // cordon's cache root holds nothing the host runs: no protected paths below it.
        let mut user_granted = roots;
        user_granted.sort();
        user_granted.dedup();
        let (protected, protected_skips) = resolve_protected(
            policy,
            host,
            &home,
            &workspace,
            &Roots {
                granted: &user_granted,
                writable: &writable,
                worktrees: &worktrees,
            },
            &mut restored_candidates,
        );
        let mut restored: Vec<ProtectedPath> = Vec::new();
        for path in restored_candidates {
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
        skipped.extend(protected_skips);
        let mut protected = protected;
        let own_state = own_state_dirs(invocation, &home, &home_raw_for_own_state)?;
        let (own, own_skips) = resolve_own_state(host, &own_state, &writable, &protected);
        protected.extend(own);
        protected.sort();
        protected.dedup_by(|a, b| a.path == b.path);
        skipped.extend(own_skips);
        skipped.sort();
        skipped.dedup();

        masks.extend(moved.into_iter().map(|(_, m)| m));
        masks.sort();
        masks.dedup_by(|a, b| a.target == b.target);

        let mut plan = Plan {
            profile: policy.profile(),
            posture: policy.posture(),
            network: policy.network(),
            network_allow: policy.network_allow().iter().cloned().collect(),
            home,
            home_access: policy.home(),
            home_trees: Vec::new(),
            relocated: Vec::new(),
            workspace,
            cwd,
            read_only: Vec::new(),
            symlinks: Vec::new(),
            private_dirs: Vec::new(),
            writable,
            inner_roots,
            protected,
            restored,
            masks,
            skipped,
            env: policy.env().clone(),
            caches,
            limits: *policy.limits(),
            unavailable: policy.unavailable(),
            policy_hash: policy.hash(),
        };
        if let Some(c) = &plan.caches {
            plan.env.owned = c.layout.vars.clone();
        }
        plan.add_base(host);
        plan.add_read_grants(policy, host)?;
        // A home inside a writable root is the caller's to write: it stays as it is.
        let home_in_root = plan.writable.iter().any(|r| is_within(&plan.home, r));
        if plan.posture == Posture::Host && plan.home_access == HomeMode::Hidden && !home_in_root {
            plan.hide_home(host, invocation, &mut relocated);
        }
        relocated.sort();
        plan.relocated = relocated;
        Ok(plan)
    }

    /// Variables cordon itself sets in the jail, after the environment filter (which refuses
    /// them as configuration values): with the home hidden, `GIT_CONFIG_GLOBAL=/dev/null`, so
    /// git reads no global configuration (the identity comes in its own variables) and does not
    /// stop at an unreadable `~/.gitconfig` where the home is hidden by Landlock rules (an
    /// `EACCES`, which git treats as fatal) rather than by a mount.
    pub fn jail_env(&self) -> Vec<(&'static str, &'static str)> {
        if self.posture == Posture::Host
            && self.home_access == HomeMode::Hidden
            && self.private_dirs.contains(&self.home)
        {
            vec![("GIT_CONFIG_GLOBAL", "/dev/null")]
        } else {
            Vec::new()
        }
    }

    /// The `[filesystem] read` grants: refused when one is `/`, the home directory or one of its
    /// ancestors, or lies in a mask; bound read-only where the posture hides them (below the
    /// hidden home on the host posture, anywhere on the minimal one).
    fn add_read_grants(
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
                        crate::paths::DisplayPath(m)
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
                    crate::paths::DisplayPath(target)
                )));
            }
            if let Some(m) = self
                .masks
                .iter()
                .find(|m| is_within(&target, &m.target) || is_within(&requested, &m.requested))
            {
                return Err(refuse(format!(
                    "it lies in the credential mask {}",
                    crate::paths::DisplayPath(m.requested.clone())
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

    /// The host posture's hidden home: a private directory, the vetted toolchain trees and the
    /// trees of `PATH` entries below it read-only, the host's git identity in the environment,
    /// and the masks below it that no visible tree holds left out (the private home hides them).
    fn hide_home(
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
        let vetted: Vec<PathBuf> = home::VETTED_HOME_TREES
            .iter()
            .map(|t| home.join(t.path))
            .collect();
        if let Some(path) = invocation.env.get("PATH") {
            for entry in std::env::split_paths(path) {
                // An entry inside a vetted tree (`~/.cargo/bin`) is served by that tree: its
                // top-level tree (`~/.cargo`, with its configuration) is not shown for it.
                if vetted.iter().any(|v| is_within(&entry, v)) {
                    continue;
                }
                for spelling in [Some(entry.clone()), host.canonicalize(&entry)]
                    .into_iter()
                    .flatten()
                {
                    if let Some(tree) = home::path_tree(&home, &spelling) {
                        wanted.push((
                            tree,
                            format!(
                                "the tree of PATH entry {}",
                                crate::paths::DisplayPath(entry.clone())
                            ),
                        ));
                    }
                }
            }
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

    fn add_base(&mut self, host: &dyn HostFacts) {
        for dir in defaults::PRIVATE_DIRS {
            let dir = Path::new(dir);
            let exists = host.resolved_kind(dir) == Some(EntryKind::Dir);
            // On the host posture the root is the host's, read-only: bubblewrap can only mount a
            // private directory where one exists. On the minimal posture the root is empty.
            if self.posture == Posture::Minimal || exists {
                let dir = host.canonicalize(dir).unwrap_or_else(|| dir.to_path_buf());
                self.private_dirs.push(dir);
            }
        }
        match self.posture {
            Posture::Host => {
                if self.network == Network::Allowed {
                    // A resolv.conf that points into /run would vanish under the private /run.
                    let resolv = Path::new("/etc/resolv.conf");
                    if let Some(target) = host.canonicalize(resolv)
                        && self.private_dirs.iter().any(|d| is_within(&target, d))
                    {
                        self.read_only.push(Bind {
                            source: target.clone(),
                            dest: target,
                        });
                    }
                }
            }
            Posture::Minimal => {
                self.private_dirs.push(self.home.clone());
                let mut wanted: Vec<PathBuf> = defaults::MINIMAL_SYSTEM_TREES
                    .iter()
                    .map(PathBuf::from)
                    .collect();
                wanted.extend(
                    defaults::MINIMAL_HOME_TREES
                        .iter()
                        .map(|t| self.home.join(t)),
                );
                let mut symlinks = Vec::new();
                let mut binds: Vec<PathBuf> = Vec::new();
                for path in wanted {
                    match host.kind(&path) {
                        Some(EntryKind::Symlink) => {
                            if let (Some(target), Some(stored)) =
                                (host.canonicalize(&path), host.read_link(&path))
                            {
                                symlinks.push(Symlink {
                                    link: path,
                                    target: stored,
                                });
                                binds.push(target);
                            }
                        }
                        Some(_) => binds.push(path),
                        None => {}
                    }
                }
                let binds = minimal_cover(binds);
                self.read_only = binds
                    .into_iter()
                    .map(|p| Bind {
                        source: p.clone(),
                        dest: p,
                    })
                    .collect();
                symlinks.sort();
                self.symlinks = symlinks;
            }
        }
        self.private_dirs.sort();
        self.private_dirs.dedup();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Workspace,
    Configured,
    Confined,
}

/// The kernel's PATH_MAX: a path of this many bytes or more (without its NUL) names nothing.
const PATH_MAX: usize = 4096;

fn resolve_dir(
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
fn minimal_cover(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
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

type Resolved<T> = (Vec<T>, Vec<Skipped>);

fn resolve_masks(
    policy: &Policy,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
) -> Result<Resolved<CredentialMask>, PolicyError> {
    let mut masks = Vec::new();
    let mut skipped = Vec::new();
    for spec in policy.masks() {
        let requested = spec.under(home, workspace);
        check_no_nul(&requested)?;
        let Some(target) = host.canonicalize(&requested) else {
            skipped.push(Skipped {
                path: requested,
                reason: SkipReason::MaskMissing,
            });
            continue;
        };
        if target == Path::new("/") {
            return Err(PolicyError::MaskIsRoot { path: requested });
        }
        let kind = match host.kind(&target) {
            Some(EntryKind::Dir) => EntryKind::Dir,
            _ => EntryKind::File,
        };
        masks.push(CredentialMask {
            target,
            requested,
            kind,
        });
    }
    masks.sort();
    masks.dedup_by(|a, b| a.target == b.target);
    Ok((masks, skipped))
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

type Moved = Vec<(&'static str, CredentialMask)>;

/// The stores the launcher's environment moves ([`home::relocated_stores`]), as masks with their
/// variable; what was left alone is in the report with the reason, a missing one also in
/// `skipped` (as [`SkipReason::MaskMissing`], so Seatbelt still denies the name).
fn resolve_relocated(
    invocation: &Invocation,
    host: &dyn HostFacts,
    home: &Path,
) -> Result<(Moved, Vec<RelocatedStore>, Vec<Skipped>), PolicyError> {
    let mut moved = Vec::new();
    let mut report = Vec::new();
    let mut skipped = Vec::new();
    let stores = home::relocated_stores(|name| invocation.env.get(name).cloned());
    for (variable, requested) in stores {
        check_no_nul(&requested)?;
        let entry = |outcome: &str| RelocatedStore {
            variable: variable.to_owned(),
            path: requested.clone(),
            outcome: outcome.to_owned(),
        };
        let broad = |p: &Path| {
            home.starts_with(p)
                || defaults::BROAD_DIRS.iter().any(|d| p == Path::new(d))
                || defaults::SYSTEM_TREES.iter().any(|d| p == Path::new(d))
        };
        if broad(&requested) {
            report.push(entry(
                "left alone: it is the home directory, an ancestor of it, or a top-level directory",
            ));
            continue;
        }
        let Some(target) = host.canonicalize(&requested) else {
            report.push(entry("missing"));
            skipped.push(Skipped {
                path: requested.clone(),
                reason: SkipReason::MaskMissing,
            });
            continue;
        };
        if broad(&target) {
            report.push(entry("left alone: it resolves to the home directory, an ancestor of it, or a top-level directory"));
            continue;
        }
        let kind = match host.kind(&target) {
            Some(EntryKind::Dir) => EntryKind::Dir,
            _ => EntryKind::File,
        };
        report.push(entry("masked"));
        moved.push((
            variable,
            CredentialMask {
                target,
                requested: requested.clone(),
                kind,
            },
        ));
    }
    Ok((moved, report, skipped))
}

/// A linked git worktree: its `.git` is a file naming an administrative directory.
struct Worktree {
    admin: PathBuf,
    common: PathBuf,
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

/// The roots a plan's protected paths are resolved under.
struct Roots<'a> {
    /// Every granted root, one inside another too.
    granted: &'a [PathBuf],
    /// The merged writable roots.
    writable: &'a [PathBuf],
    /// The linked worktrees among them.
    worktrees: &'a [Worktree],
}

fn resolve_protected(
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
    let listings: Vec<Option<Vec<std::ffi::OsString>>> =
        granted.iter().map(|root| host.list_dir(root)).collect();
    for spec in policy.protected() {
        match spec {
            // Under every granted root, not only the merged ones: a root that holds another
            // (`--write` a parent of the workspace) must not swallow the inner root's `.git`.
            PathSpec::Relative(rel) => {
                let one_name = rel.components().count() == 1
                    && matches!(
                        rel.components().next(),
                        Some(std::path::Component::Normal(_))
                    );
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
                if autorun::root_patterns().any(|p| autorun::pattern_matches(p, text)) {
                    candidates.push(root.join(name));
                }
            }
        }
        // Git's internals, from the repository's structure.
        let layout = gitdirs::discover(host, root);
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

/// The workspace's private toolchain cache: in the host posture only (the minimal posture is
/// for untrusted documents and servers, which get no state that outlives a run), when its root
/// exists as a directory (not a link), and only when it is a root the path rules accept and lies
/// neither inside the workspace nor around it. Otherwise none, and tools see a read-only home.
fn resolve_caches(
    policy: &Policy,
    invocation: &Invocation,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
    masks: &[CredentialMask],
) -> Option<CachePlan> {
    if policy.posture() != Posture::Host {
        return None;
    }
    let base = invocation.caches.as_ref().filter(|b| b.is_absolute())?;
    let base = host.canonicalize(base)?;
    let wanted = crate::caches::layout(&base, workspace, home, policy.network(), host).ok()?;
    if host.kind(&wanted.root) != Some(EntryKind::Dir) {
        return None;
    }
    let root = check_root(
        host,
        &wanted.root,
        Origin::Configured,
        home,
        workspace,
        masks,
    )
    .ok()?;
    if root != wanted.root || is_within(&root, workspace) || is_within(workspace, &root) {
        return None;
    }
    Some(CachePlan {
        root,
        layout: wanted,
    })
}

/// cordon's own directories for this invocation: the defaults below the home directory (in its
/// canonical and its given spelling) and the invocation's own, each absolute and free of NUL.
fn own_state_dirs(
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
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
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
            Some(std::path::Component::Normal(name)) => rest.push(name),
            _ => return None,
        }
        base = base.parent()?;
    }
}

/// cordon's own configuration and state directories that lie inside a writable root: protected
/// when they exist, listed for a placeholder ([`SkipReason::OwnStateMissing`]) when they do not.
/// Outside every writable root they are read-only already and not listed.
fn resolve_own_state(
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
