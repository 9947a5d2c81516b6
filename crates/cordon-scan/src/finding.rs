//! What the scan refuses: one [`Finding`] per path, each naming the rule it breaks.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// One thing in a writable root that makes the jail unsafe.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    /// The path on the host.
    pub path: PathBuf,
    /// The writable root it lies in.
    pub root: PathBuf,
    /// What it is, and so which rule it breaks.
    pub kind: FindingKind,
}

/// The kinds of finding. Each is a rule: none of these may lie in a writable root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
#[non_exhaustive]
pub enum FindingKind {
    /// A mount point strictly beneath the root: what is mounted there (possibly read-only
    /// elsewhere, possibly another filesystem) would become writable through the root's bind.
    NestedMount {
        /// The filesystem type from the mount table, when the mount table named it.
        fstype: Option<String>,
    },
    /// A regular file with more links than the scan saw inside the roots: some other link lies
    /// outside them, so a write through this one reaches a file outside the workspace.
    OutsideHardLink {
        /// `st_nlink`.
        links: u64,
        /// How many of those links the scan found inside the roots.
        seen: u64,
    },
    /// A Unix socket: connectable through any bind, even a read-only one.
    Socket,
    /// A FIFO: a channel to whatever host process holds its other end.
    Fifo,
    /// A block device node.
    BlockDevice,
    /// A character device node.
    CharDevice,
    /// A directory (or entry) the scan could not read: what it holds is unknown, so it fails
    /// closed.
    Unscannable {
        /// What the kernel said.
        error: String,
    },
}

impl FindingKind {
    /// A short stable name for the rule, as `doctor` and `--json` show it.
    pub fn rule(&self) -> &'static str {
        match self {
            FindingKind::NestedMount { .. } => "nested-mount",
            FindingKind::OutsideHardLink { .. } => "outside-hard-link",
            FindingKind::Socket => "socket",
            FindingKind::Fifo => "fifo",
            FindingKind::BlockDevice => "block-device",
            FindingKind::CharDevice => "char-device",
            FindingKind::Unscannable { .. } => "unscannable",
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        let root = self.root.display();
        match &self.kind {
            FindingKind::NestedMount { fstype } => {
                write!(f, "{path} is a mount point")?;
                if let Some(t) = fstype {
                    write!(f, " ({t})")?;
                }
                write!(
                    f,
                    " beneath writable root {root}; rule nested-mount: a mount inside a writable \
                     root would be writable through it"
                )
            }
            FindingKind::OutsideHardLink { links, seen } => write!(
                f,
                "{path} has {links} hard links but only {seen} lie inside the writable roots; \
                 rule outside-hard-link: a write through it would change a file outside {root}"
            ),
            FindingKind::Socket => write!(
                f,
                "{path} is a Unix socket in writable root {root}; rule socket: a jailed command \
                 could connect to the host process serving it"
            ),
            FindingKind::Fifo => write!(
                f,
                "{path} is a FIFO in writable root {root}; rule fifo: a jailed command could talk \
                 to the host process holding its other end"
            ),
            FindingKind::BlockDevice => write!(
                f,
                "{path} is a block device in writable root {root}; rule block-device: device \
                 nodes do not belong in a workspace"
            ),
            FindingKind::CharDevice => write!(
                f,
                "{path} is a character device in writable root {root}; rule char-device: device \
                 nodes do not belong in a workspace"
            ),
            FindingKind::Unscannable { error } => write!(
                f,
                "{path} in writable root {root} could not be scanned ({error}); rule unscannable: \
                 what it holds is unknown, so the scan fails closed"
            ),
        }
    }
}
