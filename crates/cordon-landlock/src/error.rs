//! The crate's one error type.

use std::io;

use crate::access::Access;

/// What went wrong building, decoding or creating a Landlock ruleset. Every variant names the
/// value it refused and the rule.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandlockError {
    /// The kernel has no Landlock system calls.
    #[error(
        "Landlock is not supported by this kernel (landlock_create_ruleset answered ENOSYS): it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK"
    )]
    Unsupported,
    /// Landlock is built in but not enabled.
    #[error(
        "Landlock is built into this kernel but disabled (landlock_create_ruleset answered EOPNOTSUPP): add `landlock` to the `lsm=` kernel boot parameter"
    )]
    Disabled,
    /// Asking for the ABI version failed in another way.
    #[error("asking the kernel for the Landlock ABI version failed: {source}")]
    AbiQuery {
        /// The system call's error.
        source: io::Error,
    },
    /// A directory holding a masked or protected path could not be listed, so its other entries
    /// cannot be granted one by one.
    #[error(
        "cannot list {dir}, which holds a masked or protected path whose neighbours must be granted one by one: {source}"
    )]
    List {
        /// The directory.
        dir: String,
        /// Why listing failed.
        source: io::Error,
    },
    /// A directory listing returned a name that is not one path component.
    #[error("the listing of {dir} returned {name:?}, which is not a single path component")]
    BadEntry {
        /// The directory.
        dir: String,
        /// The name as given.
        name: String,
    },
    /// Protected paths were left to bubblewrap's mounts, but the rules are for use without
    /// bubblewrap, where nothing else would hold them.
    #[error(
        "protected paths are left to bubblewrap's read-only mounts, but these rules are applied without bubblewrap: nothing would keep {path} read-only"
    )]
    ProtectedUnheld {
        /// The first protected path that would be left writable.
        path: String,
    },
    /// A file the rules must keep executable lies inside a credential mask.
    #[error(
        "{path} must stay executable, but it lies inside a credential mask, which the jail never reads"
    )]
    ExecutableMasked {
        /// The executable.
        path: String,
    },
    /// Encoded rules are malformed.
    #[error("encoded Landlock rules are malformed at byte {offset}: {reason}")]
    Decode {
        /// Where decoding stopped.
        offset: usize,
        /// What was wrong there.
        reason: String,
    },
    /// A rule's path cannot be used.
    #[error("Landlock rule path {path} is refused: {why}")]
    BadPath {
        /// The path, displayed losslessly.
        path: String,
        /// The rule it breaks.
        why: &'static str,
    },
    /// A path that must exist (a writable root or the private temporary directory) cannot be
    /// opened.
    #[error(
        "{path} must be writable in the sandbox but cannot be opened (O_PATH, no symlinks): {source}"
    )]
    RequiredUnavailable {
        /// The path.
        path: String,
        /// Why it could not be opened.
        source: io::Error,
    },
    /// `landlock_create_ruleset` failed.
    #[error("landlock_create_ruleset handling filesystem rights {fs} failed: {source}")]
    CreateRuleset {
        /// The filesystem rights it was asked to handle.
        fs: Access,
        /// The system call's error.
        source: io::Error,
    },
    /// A path could not be examined after it was opened.
    #[error("cannot examine {path} after opening it: {source}")]
    Stat {
        /// The path.
        path: String,
        /// The error.
        source: io::Error,
    },
    /// `landlock_add_rule` failed.
    #[error("landlock_add_rule granting {access} beneath {path} failed: {source}")]
    AddRule {
        /// The path.
        path: String,
        /// The rights.
        access: Access,
        /// The system call's error.
        source: io::Error,
    },
}
