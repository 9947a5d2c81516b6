//! The vocabulary: a change set in, a verdict per change out, and what the judge may read.

use std::path::{Path, PathBuf};

/// One writable root's changes, as the layer recorded them. Paths are relative to `root`, normal
/// components only (a path with `..`, a root or a `.` component is refused, `path-not-plain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    /// The writable root on the host (canonical): where a symbolic link's absolute target is
    /// compared, never read.
    pub root: PathBuf,
    /// The changes, in the layer's order; [`judge`](crate::judge) answers in the same order.
    pub changes: Vec<Change>,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Relative to the root.
    pub path: PathBuf,
    /// Added, modified or deleted.
    pub kind: ChangeKind,
    /// What the command left at the path (for [`ChangeKind::Deleted`]: what the host had).
    pub node: Node,
}

/// What the command did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The host had nothing at the path.
    Added,
    /// The host had something at the path and the command left something else (content, mode
    /// or kind).
    Modified,
    /// The command removed what the host had; `node` is what the host had.
    Deleted,
}

/// A file-system node, as far as the judge needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A regular file: its permission bits (`st_mode & 0o7777`) and size.
    File {
        /// Permission bits, set-id bits included.
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A directory.
    Dir {
        /// Permission bits, set-id bits included.
        mode: u32,
    },
    /// A symbolic link and its target, as written (never followed).
    Symlink {
        /// The target text.
        target: PathBuf,
    },
    /// Anything else.
    Special(Special),
}

/// The nodes that are neither files, directories nor symbolic links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}

/// What the judge may read. Paths are relative to the change set's root, as in [`Change`].
/// Bytes are capped by the caller-supplied limit: an implementation returns `None` for a file
/// that is absent, unreadable, not a regular file, or longer than `limit` (the judge never acts
/// on a prefix).
pub trait Contents {
    /// The command's version of the file at `path`.
    fn new_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>>;
    /// The host's version of the file at `path` before the command.
    fn old_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>>;
    /// What the host has at `path` (before the command), not followed if a symbolic link.
    fn old_node(&self, path: &Path) -> Option<Node>;
}

/// The judge's answer for one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Apply the change as the command made it.
    Apply,
    /// Apply these bytes instead of the command's (a git configuration with the keys that run
    /// commands dropped), with the mode [`allowed_mode`](crate::allowed_mode) gives the node's.
    ApplyRewritten {
        /// What to write.
        bytes: Vec<u8>,
        /// What was dropped, one finding per key.
        dropped: Vec<Finding>,
    },
    /// Apply the change with this mode instead of the command's (set-id and world-writable
    /// bits stripped).
    ApplyMode {
        /// The mode to apply.
        mode: u32,
        /// What was stripped, and why.
        why: String,
    },
    /// Never applied; kept for review in cordon's state; a violation.
    Refuse(Finding),
    /// Needs the user's consent (an edit of an existing auto-run file the user owns, a new
    /// project configuration file not known to be inert, a deletion inside a git directory).
    Hold(Finding),
}

impl Verdict {
    /// Whether the change reaches the host without the user's word (apply, rewritten or with a
    /// mode).
    pub fn applies(&self) -> bool {
        matches!(
            self,
            Verdict::Apply | Verdict::ApplyRewritten { .. } | Verdict::ApplyMode { .. }
        )
    }

    /// The finding of a refusal or a hold.
    pub fn finding(&self) -> Option<&Finding> {
        match self {
            Verdict::Refuse(f) | Verdict::Hold(f) => Some(f),
            _ => None,
        }
    }
}

/// Why a change was refused, held or rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// A stable kebab-case id ([`RULE_IDS`](crate::RULE_IDS) lists them).
    pub rule: &'static str,
    /// The program that would run what the change holds (`git`, `direnv`, `cargo`, …), or
    /// `cordon` for a structural refusal.
    pub program: String,
    /// One sentence: what the change would have done on the host.
    pub why: String,
    /// The configuration key a `git-config-key` finding dropped (`core.fsmonitor`).
    pub key: Option<String>,
}

impl Finding {
    pub(crate) fn new(
        rule: &'static str,
        program: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            program: program.into(),
            why: why.into(),
            key: None,
        }
    }

    /// This finding about one configuration key.
    pub(crate) fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}
