//! The plan's filesystem as bubblewrap mount operations, in the one order that is safe.
//!
//! # The order is the security property
//!
//! bubblewrap applies mount operations in the order given, and a later mount hides whatever an
//! earlier one put at or below its destination. So a private `/tmp` emitted after the bind of a
//! workspace under `/tmp` would hide the workspace, and a credential mask emitted before the bind
//! of the writable root it sits in would be covered by that bind and expose the credential.
//!
//! Every operation therefore gets one sort key, `(destination components, rank)`:
//!
//! 1. **Destination, compared component by component.** A path sorts before every path below
//!    it, so parents are always mounted before their children and a child is never shadowed:
//!    `/tmp` before `/tmp/ws`, a writable root before the protected paths and masks inside it,
//!    the minimal posture's private `HOME` before `~/.rustup`. Unrelated trees keep a stable,
//!    reviewable order. Components, not bytes, so that a subtree stays together: `/a`, `/a/b`,
//!    `/a-b` (bytes would give `/a`, `/a-b`, `/a/b`).
//! 2. **Rank, for operations at the same destination**, from the blank slate to the final word:
//!    [`Rank::Fresh`] (the host root, private tmpfs, `/dev`, `/proc`) < [`Rank::ReadOnly`] <
//!    [`Rank::Writable`] < [`Rank::Protected`] < [`Rank::Stage`] < [`Rank::Mask`]. The last
//!    operation at a path wins, so: a grant replaces a blank; a writable root (the caller's
//!    explicit grant) wins over a read-only tree at the same path; a protected path re-binds its
//!    writable root read-only; a credential mask beats everything.
//!
//! The full operation is the last tie-breaker, so the output does not depend on the order of the
//! plan's lists.
//!
//! Two rules complete it:
//!
//! - **Nothing is mounted below a mask.** A directory mask is an empty, read-only tmpfs: it hides
//!   all that lies below it, and bubblewrap could not create a mount point inside it anyway. So
//!   any operation strictly below a mask is dropped — this only ever removes access.
//! - **The hidden home is the workspace's private home.** In the host posture the home
//!   directory is hidden (the plan's `home_access`): with a private home
//!   (`Plan::private_home`), cordon's directory is bound writable at the home's path first, and
//!   every tree shown below the home is bound into it; without one, the home is a private
//!   tmpfs that `--remount-ro HOME` makes read-only after every mount (not recursive: the
//!   workspace bound below it stays writable, the vetted trees stay read-only binds).
//! - **The minimal posture seals its root.** After every mount, `--remount-ro /` makes bubblewrap's
//!   root tmpfs read-only, so a write outside the writable set and the private directories fails
//!   there as it does on the host posture's read-only root. It comes after everything because
//!   bubblewrap creates the mount points of the operations above inside that root.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path};

use cordon_policy::DisplayPath;
use cordon_policy::{EntryKind, Plan, Posture};

use crate::error::BwrapError;
use crate::{STAGE_DIR, STAGE_PATH};

/// A bind of a layered jail's hidden layer paths ([`crate::build_layered`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct LayerBind {
    pub(crate) source: std::path::PathBuf,
    pub(crate) dest: std::path::PathBuf,
    pub(crate) writable: bool,
}

/// What an operation does at its destination, in the order operations at one path are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    /// A new filesystem: the host root, a private tmpfs, `/dev`, `/proc`.
    Fresh,
    /// A read-only bind of a vetted tree, or a symlink.
    ReadOnly,
    /// A writable root.
    Writable,
    /// A protected path re-bound read-only inside its writable root.
    Protected,
    /// A brokered repository's `commondir`, bound over its protected placeholder.
    Brokered,
    /// cordon's in-jail stage.
    Stage,
    /// A credential mask.
    Mask,
}

/// One mount operation, borrowing the plan's paths.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mount<'a> {
    /// `--ro-bind / /`: the host posture's read-only root.
    HostRoot,
    /// `--tmpfs P`: a private, empty directory.
    Private(&'a Path),
    /// `--bind SOURCE HOME`: the workspace's private home (cordon's directory) at the home's
    /// path, writable; what is bound below the home is bound into it, so every mount point
    /// bubblewrap creates there is made in cordon's directory.
    PrivateHome { source: &'a Path, dest: &'a Path },
    /// `--dev /dev`.
    Dev,
    /// `--perms 1777 --tmpfs /dev/shm`: a sized private `/dev/shm` (bubblewrap's own is a
    /// directory of the `/dev` tmpfs, which `--size` cannot bound). Only with a size.
    SharedMemory,
    /// `--proc /proc`.
    Proc,
    /// `--ro-bind SOURCE DEST`.
    ReadOnly { source: &'a Path, dest: &'a Path },
    /// `--symlink TARGET LINK`.
    Symlink { target: &'a Path, link: &'a Path },
    /// `--bind P P`.
    Writable(&'a Path),
    /// `--ro-bind P P` after the writable root holding `P`.
    Protected(&'a Path),
    /// `--ro-bind POINTER COMMONDIR`: the jail's git reads a brokered repository's
    /// configuration from cordon's shadow (`cordon_policy::ConfigBroker`).
    Brokered { pointer: &'a Path, dest: &'a Path },
    /// `--bind SOURCE DEST`: a directory of a brokered repository bound into its shadow.
    BrokeredDir { source: &'a Path, dest: &'a Path },
    /// `--ro-bind STAGE` at [`STAGE_PATH`].
    Stage(&'a Path),
    /// `--bind`/`--ro-bind` of a copy-on-write layer's directory or lower root at its hidden
    /// place in the stage's directory (`crate::LAYER_DIR`), for the stage alone.
    Layer(&'a LayerBind),
    /// `--perms 0000 --tmpfs P --remount-ro P`: empty, unreadable, and read-only so that the
    /// jail (which owns the tmpfs) cannot `chmod` it back or stash files in it.
    MaskDir(&'a Path),
    /// `--ro-bind /dev/null P`.
    MaskFile(&'a Path),
}

impl<'a> Mount<'a> {
    pub(crate) fn dest(&self) -> &'a Path {
        match *self {
            Mount::HostRoot => Path::new("/"),
            Mount::Dev => Path::new("/dev"),
            Mount::SharedMemory => Path::new("/dev/shm"),
            Mount::Proc => Path::new("/proc"),
            Mount::Stage(_) => Path::new(STAGE_PATH),
            Mount::Layer(l) => &l.dest,
            Mount::Private(p)
            | Mount::Writable(p)
            | Mount::Protected(p)
            | Mount::MaskDir(p)
            | Mount::MaskFile(p) => p,
            Mount::ReadOnly { dest, .. } | Mount::PrivateHome { dest, .. } => dest,
            Mount::Symlink { link, .. } => link,
            Mount::Brokered { dest, .. } | Mount::BrokeredDir { dest, .. } => dest,
        }
    }

    pub(crate) fn rank(&self) -> Rank {
        match self {
            Mount::HostRoot
            | Mount::Private(_)
            | Mount::PrivateHome { .. }
            | Mount::Dev
            | Mount::SharedMemory
            | Mount::Proc => Rank::Fresh,
            Mount::ReadOnly { .. } | Mount::Symlink { .. } => Rank::ReadOnly,
            Mount::Writable(_) => Rank::Writable,
            Mount::Protected(_) => Rank::Protected,
            Mount::Brokered { .. } | Mount::BrokeredDir { .. } => Rank::Brokered,
            Mount::Stage(_) | Mount::Layer(_) => Rank::Stage,
            Mount::MaskDir(_) | Mount::MaskFile(_) => Rank::Mask,
        }
    }

    fn is_mask(&self) -> bool {
        self.rank() == Rank::Mask
    }

    /// The bubblewrap arguments of this operation: one step, one line in a rendering.
    pub(crate) fn args(&self) -> Vec<OsString> {
        let dest = self.dest().as_os_str();
        match *self {
            Mount::HostRoot => step("--ro-bind", &[dest, dest]),
            Mount::Private(_) | Mount::SharedMemory => step("--tmpfs", &[dest]),
            Mount::Dev => step("--dev", &[dest]),
            Mount::Proc => step("--proc", &[dest]),
            Mount::ReadOnly { source, .. } | Mount::Stage(source) => {
                step("--ro-bind", &[source.as_os_str(), dest])
            }
            Mount::Symlink { target, .. } => step("--symlink", &[target.as_os_str(), dest]),
            Mount::Writable(_) => step("--bind", &[dest, dest]),
            Mount::Protected(_) => step("--ro-bind", &[dest, dest]),
            Mount::Brokered { pointer, .. } => step("--ro-bind", &[pointer.as_os_str(), dest]),
            Mount::BrokeredDir { source, .. } | Mount::PrivateHome { source, .. } => {
                step("--bind", &[source.as_os_str(), dest])
            }
            Mount::MaskDir(_) => [
                step("--perms", &[OsStr::new("0000")]),
                step("--tmpfs", &[dest]),
                step("--remount-ro", &[dest]),
            ]
            .concat(),
            Mount::MaskFile(_) => step("--ro-bind", &[OsStr::new("/dev/null"), dest]),
            Mount::Layer(l) => step(
                if l.writable { "--bind" } else { "--ro-bind" },
                &[l.source.as_os_str(), dest],
            ),
        }
    }

    /// The modifiers bubblewrap applies to the next tmpfs, each its own step so that every
    /// mount step still starts with its mount option: the size of a private tmpfs, and the
    /// mode of the shared-memory one.
    fn modifiers(&self, tmp_size: Option<u64>) -> Vec<Vec<OsString>> {
        let mut out = Vec::new();
        if matches!(self, Mount::SharedMemory) {
            out.push(step("--perms", &[OsStr::new("1777")]));
        }
        if let (Some(size), Mount::Private(_) | Mount::SharedMemory) = (tmp_size, self) {
            out.push(vec!["--size".into(), size.to_string().into()]);
        }
        out
    }

    fn describe(&self) -> String {
        let parts: Vec<String> = self
            .args()
            .iter()
            .map(|a| DisplayPath(a.into()).to_string())
            .collect();
        parts.join(" ")
    }
}

fn step(flag: &str, operands: &[&OsStr]) -> Vec<OsString> {
    let mut args = vec![OsString::from(flag)];
    args.extend(operands.iter().map(|o| o.to_os_string()));
    args
}

/// The sort key described in the module documentation. The operation's arguments, compared
/// byte for byte, come last: two spellings of one path (`//a` and `/a`) compare equal by
/// component, and without this the spelling `dedup` keeps would depend on the plan's order.
type SortKey<'a> = (Vec<&'a OsStr>, Rank, Mount<'a>, Vec<OsString>);

fn sort_key<'a>(m: &Mount<'a>) -> SortKey<'a> {
    let components = m
        .dest()
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    (components, m.rank(), m.clone(), m.args())
}

/// The plan's filesystem (and the stage, when given) as ordered mount operations, followed by
/// the minimal posture's seal. Paths must have been checked by [`check_paths`].
///
/// With `tmp_size`, every private tmpfs (and a private `/dev/shm`) gets that size.
pub(crate) fn ordered<'a>(
    plan: &'a Plan,
    brokers: &'a [cordon_policy::ConfigBroker],
    stage: Option<&'a Path>,
    tmp_size: Option<u64>,
    layers: &'a [LayerBind],
) -> Result<Vec<Vec<OsString>>, BwrapError> {
    let mut mounts = plan_mounts(plan);
    for b in brokers {
        mounts.push(Mount::Brokered {
            pointer: &b.pointer,
            dest: &b.commondir,
        });
        mounts.extend(
            b.binds
                .iter()
                .map(|(source, dest)| Mount::BrokeredDir { source, dest }),
        );
    }
    if tmp_size.is_some() {
        mounts.push(Mount::SharedMemory);
    }
    if let Some(m) = mounts.iter().find(|m| m.dest().starts_with(STAGE_DIR)) {
        return Err(BwrapError::ReservedPath {
            path: DisplayPath(m.dest().to_path_buf()).to_string(),
        });
    }
    if let Some(source) = stage {
        mounts.push(Mount::Stage(source));
    }
    mounts.extend(layers.iter().map(Mount::Layer));

    mounts.sort_by_cached_key(sort_key);
    mounts.dedup();
    let mut kept: Vec<Mount<'a>> = Vec::with_capacity(mounts.len());
    // The masks kept so far, looked up by each strict ancestor of a destination: linear in the
    // number of mounts (a plan may hold ten thousand masks), where scanning `kept` was quadratic.
    // `Path` hashes and compares by component, as `starts_with` does.
    let mut masks: HashSet<&'a Path> = HashSet::new();
    for m in mounts {
        let dest = m.dest();
        let below_a_mask = dest.ancestors().skip(1).any(|a| masks.contains(a));
        if !below_a_mask {
            if m.is_mask() {
                masks.insert(dest);
            }
            kept.push(m);
        }
    }

    if stage.is_some() {
        check_stage_parent(plan.posture, &kept)?;
    }

    let mut steps: Vec<Vec<OsString>> = Vec::with_capacity(kept.len() + 8);
    for m in &kept {
        steps.extend(m.modifiers(tmp_size));
        steps.push(m.args());
    }
    if plan.posture == Posture::Minimal {
        steps.push(vec!["--remount-ro".into(), "/".into()]);
    }
    if let Some(home) = sealed_home(plan) {
        steps.push(vec!["--remount-ro".into(), home.as_os_str().to_owned()]);
    }
    Ok(steps)
}

/// The host posture's hidden home without a private home (no cache base, or one cordon could
/// not make): a private tmpfs made read-only once every mount point below it exists
/// (`--remount-ro` is not recursive, so the workspace and the vetted trees bound into it keep
/// their own modes), so a write there fails instead of vanishing at the end of the run. With a
/// private home nothing is sealed: the home is the workspace's own, and persists.
fn sealed_home(plan: &Plan) -> Option<&Path> {
    (plan.posture == Posture::Host
        && plan.home_access == cordon_policy::HomeMode::Hidden
        && plan.private_dirs.contains(&plan.home)
        && plan.private_home().is_none())
    .then_some(plan.home.as_path())
}

fn plan_mounts(plan: &Plan) -> Vec<Mount<'_>> {
    let mut mounts = vec![Mount::Dev, Mount::Proc];
    if plan.posture == Posture::Host {
        mounts.push(Mount::HostRoot);
    }
    // The private home replaces the home's tmpfs, and is bound at the home's path only (its own
    // path lies below the home: a second view of it there would only add mount points).
    let private_home = plan.private_home();
    mounts.extend(plan.private_dirs.iter().map(|p| match private_home {
        Some(source) if *p == plan.home => Mount::PrivateHome { source, dest: p },
        _ => Mount::Private(p),
    }));
    mounts.extend(plan.read_only.iter().map(|b| Mount::ReadOnly {
        source: &b.source,
        dest: &b.dest,
    }));
    // Below a private home the launcher makes the links in it before the jail starts: the home
    // persists, and bubblewrap 0.8 refuses `--symlink` where a link already is.
    mounts.extend(
        plan.symlinks
            .iter()
            .filter(|s| private_home.is_none() || !s.link.starts_with(&plan.home))
            .map(|s| Mount::Symlink {
                target: &s.target,
                link: &s.link,
            }),
    );
    mounts.extend(
        plan.writable
            .iter()
            .filter(|p| Some(p.as_path()) != private_home)
            .map(|p| Mount::Writable(p)),
    );
    mounts.extend(plan.protected.iter().map(|p| Mount::Protected(&p.path)));
    mounts.extend(plan.masks.iter().map(|m| match m.kind {
        EntryKind::Dir => Mount::MaskDir(&m.target),
        _ => Mount::MaskFile(&m.target),
    }));
    // A host socket the view shows: `connect(2)` ignores a read-only bind, so `/dev/null` goes
    // over it.
    mounts.extend(plan.host_sockets.iter().map(|p| Mount::MaskFile(p)));
    mounts
}

/// The stage's mount point is created inside the deepest mount above it. That must be a private
/// tmpfs (or, on the minimal posture, bubblewrap's own root tmpfs): anything else would mean a
/// file created on the host, or a stage hidden by a mask.
fn check_stage_parent(posture: Posture, kept: &[Mount<'_>]) -> Result<(), BwrapError> {
    let stage = Path::new(STAGE_PATH);
    let covering = kept
        .iter()
        .rfind(|m| m.rank() != Rank::Stage && stage.starts_with(m.dest()));
    match covering {
        Some(Mount::Private(_)) => Ok(()),
        None if posture == Posture::Minimal => Ok(()),
        Some(m) => Err(BwrapError::StageNotPrivate {
            covering: m.describe(),
        }),
        None => Err(BwrapError::StageNotPrivate {
            covering: "the host's root".to_owned(),
        }),
    }
}

/// Refuses a path that is relative, has a `..` component, or holds a NUL byte.
pub(crate) fn check_canonical(what: &'static str, path: &Path) -> Result<(), BwrapError> {
    check_no_nul(what, path.as_os_str())?;
    let canonical =
        path.is_absolute() && !path.components().any(|c| matches!(c, Component::ParentDir));
    if canonical {
        Ok(())
    } else {
        Err(BwrapError::NotCanonical {
            what,
            path: DisplayPath(path.to_path_buf()).to_string(),
        })
    }
}

pub(crate) fn check_no_nul(what: &'static str, value: &OsStr) -> Result<(), BwrapError> {
    use std::os::unix::ffi::OsStrExt;
    if value.as_bytes().contains(&0) {
        return Err(BwrapError::NulByte {
            what,
            value: DisplayPath(value.into()).to_string().replace('\0', "\\x00"),
        });
    }
    Ok(())
}

/// Checks every path of the plan that becomes a bubblewrap argument.
pub(crate) fn check_paths(plan: &Plan) -> Result<(), BwrapError> {
    check_canonical("cwd", &plan.cwd)?;
    for p in &plan.private_dirs {
        check_canonical("private directory", p)?;
    }
    for b in &plan.read_only {
        check_canonical("read-only source", &b.source)?;
        check_canonical("read-only destination", &b.dest)?;
    }
    for s in &plan.symlinks {
        check_canonical("symlink", &s.link)?;
        // The target is stored as on the host and may be relative (`usr/bin`); it is a
        // positional operand of `--symlink`, so it cannot be read as an option.
        check_no_nul("symlink target", s.target.as_os_str())?;
    }
    for p in &plan.writable {
        check_canonical("writable root", p)?;
    }
    for p in &plan.protected {
        check_canonical("protected path", &p.path)?;
    }
    for m in &plan.masks {
        check_canonical("credential mask", &m.target)?;
    }
    for p in &plan.host_sockets {
        check_canonical("host socket", p)?;
    }
    Ok(())
}
