//! The parts a [`Plan`](crate::Plan) is made of: binds, symlinks, protected paths, masks, the
//! trees of a hidden home, relocated stores, what was left out and why, the private cache.

use std::path::PathBuf;

use serde::Serialize;

use super::caches::CacheLayout;
use super::host::EntryKind;
use crate::paths::serialize_path;

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
    /// writable root: [`Plan::guard`](crate::Plan::guard) lists a placeholder (an empty
    /// read-only directory) where its first missing component would be, so the jail cannot
    /// create it.
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
    pub layout: CacheLayout,
    /// The workspace's private home (canonical, `layout.home`), also in `writable`, when the
    /// plan hides the real home and the directory exists: the jail's home, writable.
    #[serde(
        serialize_with = "crate::paths::serialize_opt_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub home: Option<PathBuf>,
}

/// What a resolving step gives: what it kept and what it left out.
pub(super) type Resolved<T> = (Vec<T>, Vec<Skipped>);
