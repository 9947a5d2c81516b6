//! The plan: a policy resolved against one invocation on one host. Generators (bubblewrap,
//! Seatbelt, Landlock) take a [`Plan`] (bubblewrap a [`GuardedPlan`](guard::GuardedPlan)) and
//! nothing else.
//!
//! [`Plan::resolve`] is here; each of its steps is a module of its own: the writable roots and
//! their checks (`roots`), the credential masks and the stores the environment moved (`masks`),
//! the protected paths and cordon's own directories (`protected`), the posture's base (`base`),
//! what the jail sees of a hidden home (`home_trees`, from the lists of `home` and what `PATH`
//! shows, `shown`), and the private
//! toolchain cache (`caches`). The plan's parts are in `parts`; the host is asked through
//! `host`, git's structure read by `gitdirs`, and [`Plan::guard`] (`guard`) closes what
//! read-only binds leave open.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use cordon_env::EnvPolicy;
use serde::Serialize;

use crate::defaults;
use crate::error::PolicyError;
use crate::model::modes::{HomeMode, Limits, Network, Posture, Unavailable, WorkspaceMode};
use crate::model::policy::{Policy, PolicyHash};
use crate::model::profile::Profile;
use crate::paths::{is_within, serialize_path, serialize_paths};

mod base;
pub(crate) mod caches;
pub(crate) mod gitdirs;
pub(crate) mod guard;
pub(crate) mod home;
mod home_trees;
pub(crate) mod host;
mod masks;
pub(crate) mod parts;
mod protected;
mod roots;
mod shown;
pub(crate) mod sockets;

use host::HostFacts;
use parts::{
    Bind, CachePlan, CredentialMask, HomeTree, ProtectedPath, RelocatedStore, Skipped, Symlink,
};
use protected::Roots;

/// One command's place on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The working directory, absolute.
    pub cwd: PathBuf,
    /// The workspace root, absolute; `None` means the cwd is the workspace.
    pub workspace: Option<PathBuf>,
    /// cordon's own configuration and state directories beyond the defaults below the home
    /// directory (`~/.config/cordon`, `~/.cache/cordon`), absolute: where `XDG_CONFIG_HOME` and
    /// `XDG_CACHE_HOME` put them ([`Invocation::xdg_own_state`]). Read-only in every jail.
    pub own_state: Vec<PathBuf>,
    /// The launcher's environment variables the plan reads: the ones that move credential
    /// stores (`GNUPGHOME`, `KUBECONFIG`, `CARGO_HOME`, …, surveyed in
    /// docs/credential-stores.md) and `PATH`.
    pub env: BTreeMap<String, OsString>,
    /// cordon's toolchain-cache directory (`<cordon's cache directory>/tools`, absolute), or
    /// `None` for no private caches. A workspace's cache below it is used when it exists (the
    /// CLI creates it before a run; [`CacheLayout`](crate::CacheLayout)).
    pub caches: Option<PathBuf>,
    /// The host's listening Unix sockets bound by absolute path, as the launcher read them from
    /// `/proc/net/unix` before the plan ([`listening_paths`](crate::listening_paths)): those
    /// the jail's view shows are masked ([`Plan::host_sockets`]).
    pub host_sockets: Vec<PathBuf>,
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
            host_sockets: Vec::new(),
        }
    }

    /// The same invocation with the launcher's environment (normally the whole process
    /// environment): only the variables the plan reads ([`Invocation::env`]) are kept.
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

    /// The same invocation with the host's listening Unix sockets `paths` (see
    /// [`Invocation::host_sockets`]).
    pub fn with_host_sockets(mut self, paths: Vec<PathBuf>) -> Invocation {
        self.host_sockets = paths;
        self
    }

    /// The same invocation with cordon's own directories `dirs` (absolute) kept read-only too.
    pub fn with_own_state(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Invocation {
        self.own_state.extend(dirs);
        self
    }

    /// cordon's own directories that `XDG_CONFIG_HOME` and `XDG_CACHE_HOME` name (each one's
    /// `cordon` directory), for [`Invocation::with_own_state`]: the global configuration and the
    /// probe cache live there, and no jail may write them. Relative values are ignored, as the
    /// XDG specification requires; the defaults below the home directory are always added by
    /// [`Plan::resolve`].
    pub fn xdg_own_state(
        xdg_config_home: Option<&OsStr>,
        xdg_cache_home: Option<&OsStr>,
    ) -> Vec<PathBuf> {
        [xdg_config_home, xdg_cache_home]
            .into_iter()
            .flatten()
            .map(Path::new)
            .filter(|p| p.is_absolute())
            .map(|p| p.join("cordon"))
            .collect()
    }
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
    /// Credential stores the launcher's environment moved ([`Invocation::env`]).
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
    /// were at launch after the run (a submodule's `config`, which `git submodule update`
    /// rewrites on every run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<ProtectedPath>,
    /// Credential masks that exist on this host.
    pub masks: Vec<CredentialMask>,
    /// The host's listening Unix sockets where the jail's view shows them (jail paths): each is
    /// masked, since a read-only bind does not stop `connect(2)`. From
    /// [`Invocation::host_sockets`]; a socket bound later, or by a relative name, is not here.
    #[serde(
        serialize_with = "serialize_paths",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub host_sockets: Vec<PathBuf>,
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
    /// How the command's writes reach the writable roots: through a copy-on-write layer, or
    /// live. Not part of the policy (nor of the plan's serialized form): the caller chooses it
    /// per run (`--live`), and the run's result names it.
    #[serde(skip)]
    pub workspace_mode: WorkspaceMode,
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

        let cwd = roots::resolve_dir(host, &invocation.cwd, "cwd")?;
        let workspace = match &invocation.workspace {
            Some(w) => roots::resolve_dir(host, w, "workspace")?,
            None => cwd.clone(),
        };

        let (mut masks, mut skipped) = masks::resolve_masks(policy, host, &home, &workspace)?;
        let (moved, mut relocated, moved_skips) =
            masks::resolve_relocated(invocation, host, &home)?;
        skipped.extend(moved_skips);

        let (roots, worktrees) = roots::granted_roots(policy, host, &home, &workspace, &masks)?;
        let moved = masks::clear_of_roots(moved, &mut relocated, &roots);
        // A home inside a writable root is the caller's to write: it stays as it is.
        let home_in_root = roots.iter().any(|r| is_within(&home, r));
        let caches = caches::resolve_caches(
            policy,
            invocation,
            host,
            &home,
            &workspace,
            &masks,
            home_in_root,
        );
        let mut granted = roots.clone();
        granted.extend(caches.as_ref().map(|c| c.root.clone()));
        granted.extend(caches.as_ref().and_then(|c| c.home.clone()));
        granted.sort();
        granted.dedup();
        let writable = roots::minimal_cover(granted.clone());
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
        let (mut protected, protected_skips) = protected::resolve_protected(
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
        let restored = protected::resolve_restored(host, restored_candidates, &writable);
        skipped.extend(protected_skips);
        let own_state = protected::own_state_dirs(invocation, &home, &home_raw_for_own_state)?;
        let (own, own_skips) =
            protected::resolve_own_state(host, &own_state, &writable, &protected);
        protected.extend(own);
        protected.sort();
        protected.dedup_by(|a, b| a.path == b.path);
        skipped.extend(own_skips);
        skipped.sort();
        skipped.dedup();

        masks.extend(moved.into_iter().map(|(_, m)| m));
        masks.extend(shown::stored_masks(&home, &granted, host));
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
            host_sockets: Vec::new(),
            skipped,
            env: policy.env().clone(),
            caches,
            limits: *policy.limits(),
            unavailable: policy.unavailable(),
            workspace_mode: WorkspaceMode::default(),
            policy_hash: policy.hash(),
        };
        if let Some(c) = &plan.caches {
            plan.env.owned = c.layout.vars.clone();
        }
        plan.add_base(host);
        // Every other workspace's cache and private home is hidden: the base that holds them is
        // a private directory (its own cache and home are bound into it), so no jail reads what
        // another workspace's jail left in its home (histories, a tool's login).
        if let Some(base) = plan.caches.as_ref().and_then(|c| c.root.parent())
            && !is_within(&plan.workspace, base)
            && !is_within(&plan.cwd, base)
        {
            plan.private_dirs.push(base.to_path_buf());
        }
        plan.add_read_grants(policy, host)?;
        if plan.posture == Posture::Host && plan.home_access == HomeMode::Hidden && !home_in_root {
            plan.hide_home(host, invocation, &mut relocated);
        } else if plan.posture == Posture::Host
            && let Some(path) = invocation.env.get("PATH")
        {
            plan.mask_path_prefixes(host, path);
        }
        relocated.sort();
        plan.relocated = relocated;
        plan.host_sockets = sockets::visible_sockets(&plan, invocation, host);
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

    /// The workspace's private home on the host, when the jail's home is one: the host posture
    /// hides the real home and the workspace has a private home (`caches.home`). bubblewrap
    /// binds it writable at [`Plan::home`]; a backend without a mount namespace names it in
    /// `HOME`. `None`: the home is as the posture makes it without one (read-only or visible).
    pub fn private_home(&self) -> Option<&Path> {
        if self.posture == Posture::Host
            && self.home_access == HomeMode::Hidden
            && self.private_dirs.contains(&self.home)
        {
            self.caches.as_ref().and_then(|c| c.home.as_deref())
        } else {
            None
        }
    }

    /// The top-level system trees: no writable root of a plan lies in one of them (nor is one of
    /// them), whoever granted it.
    pub const SYSTEM_TREES: &'static [&'static str] = defaults::SYSTEM_TREES;
}
