//! `Plan`: a policy resolved against one invocation on one host. Generators (bubblewrap, Seatbelt,
//! Landlock) take a `Plan` and nothing else.

use std::path::{Path, PathBuf};

use cordon_env::EnvPolicy;
use serde::Serialize;

use crate::defaults;
use crate::error::PolicyError;
use crate::host::{EntryKind, HostFacts};
use crate::model::{Limits, Network, Posture, Unavailable};
use crate::paths::{PathSpec, check_no_nul, is_within, serialize_path, serialize_paths};
use crate::policy::{Policy, PolicyHash};
use crate::profile::Profile;

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
            caches: None,
        }
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
    /// Canonical home directory.
    #[serde(serialize_with = "serialize_path")]
    pub home: PathBuf,
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
        let masks = masks.0;

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

        // cordon's cache root holds nothing the host runs: no protected paths below it.
        let mut user_granted = roots;
        user_granted.sort();
        user_granted.dedup();
        let (protected, protected_skips) = resolve_protected(
            policy,
            host,
            &home,
            &workspace,
            &user_granted,
            &writable,
            &worktrees,
        );
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

        let mut plan = Plan {
            profile: policy.profile(),
            posture: policy.posture(),
            network: policy.network(),
            home,
            workspace,
            cwd,
            read_only: Vec::new(),
            symlinks: Vec::new(),
            private_dirs: Vec::new(),
            writable,
            inner_roots,
            protected,
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
        Ok(plan)
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

fn resolve_protected(
    policy: &Policy,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
    granted: &[PathBuf],
    writable: &[PathBuf],
    worktrees: &[Worktree],
) -> Resolved<ProtectedPath> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    for spec in policy.protected() {
        match spec {
            // Under every granted root, not only the merged ones: a root that holds another
            // (`--write` a parent of the workspace) must not swallow the inner root's `.git`.
            PathSpec::Relative(_) => {
                candidates.extend(granted.iter().map(|root| spec.under(home, root)));
            }
            _ => candidates.push(spec.under(home, workspace)),
        }
    }
    for wt in worktrees {
        candidates.push(wt.admin.join("config.worktree"));
        candidates.push(wt.common.join("hooks"));
        candidates.push(wt.common.join("config"));
    }
    let mut protected = Vec::new();
    let mut skipped = Vec::new();
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
