//! The floor's error type: what a file tool or an approval was refused, and why.

use std::path::PathBuf;

use crate::escalation::Requester;
use crate::verdict::Rule;

/// Why the floor refused a path, a descriptor-relative open or an approval.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FloorError {
    /// A NUL byte in a path.
    #[error("path {path:?} contains a NUL byte")]
    NulByte {
        /// The path.
        path: PathBuf,
    },
    /// A `..` component: after symlinks it may not mean what it says.
    #[error("{path} has a `..` component; file tools must name the path itself")]
    ParentComponent {
        /// The path.
        path: PathBuf,
    },
    /// Outside every writable root.
    #[error("{path} is outside the writable set {writable}")]
    OutsideWritable {
        /// The path, made absolute.
        path: PathBuf,
        /// The writable roots, listed.
        writable: String,
    },
    /// The writable root itself, not a file in it.
    #[error("{path} is a writable root itself, not a file in it")]
    IsRoot {
        /// The path.
        path: PathBuf,
    },
    /// Inside a protected path (control directory, `.git/hooks`, `.git/config`, `deny_write`).
    #[error("{path} lies in the protected path {protected}, which stays read-only")]
    Protected {
        /// The path.
        path: PathBuf,
        /// The protected path it lies in.
        protected: PathBuf,
    },
    /// Inside a credential mask.
    #[error("{path} lies in the credential mask {mask}")]
    Masked {
        /// The path.
        path: PathBuf,
        /// The mask.
        mask: PathBuf,
    },
    /// A symlink on the way to the path.
    #[error(
        "{path} goes through the symlink {link}; file tools write only along paths without symlinks"
    )]
    Symlink {
        /// The path.
        path: PathBuf,
        /// The first symlink on the way.
        link: PathBuf,
    },
    /// A symlink met by a beneath-root open (the kernel does not say which component).
    #[error("a component of {path} is a symlink; beneath-root opens follow none")]
    SymlinkBeneath {
        /// The relative path.
        path: PathBuf,
    },
    /// A file with other hard links: writing it writes them too, possibly outside the root.
    #[error("{path} has {links} hard links; a write could reach a file outside the writable set")]
    HardLinked {
        /// The path.
        path: PathBuf,
        /// The link count.
        links: u64,
    },
    /// `open_beneath` was given an absolute or empty path.
    #[error("{path:?} must be a non-empty relative path for a beneath-root open")]
    NotRelative {
        /// The path.
        path: PathBuf,
    },
    /// The path resolved outside the root (`..` past it, or an absolute symlink).
    #[error("{path} resolves outside the root")]
    EscapesRoot {
        /// The relative path.
        path: PathBuf,
    },
    /// No `openat2` on this kernel.
    #[error(
        "this kernel has no openat2 (Linux 5.6 or later is needed); a beneath-root open is refused \
         rather than done without RESOLVE_BENEATH"
    )]
    Openat2Unsupported,
    /// Any other failure to open or inspect.
    #[error("cannot open {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Only an interactive owner may approve or use an escalation.
    #[error(
        "a {requester} context cannot escalate; only the interactive owner may approve a retry"
    )]
    EscalationNotAllowed {
        /// Who asked.
        requester: Requester,
    },
    /// The floor refuses the command; no approval relaxes the floor.
    #[error("the floor refuses `{command}` ({rule}); no approval relaxes the floor")]
    FloorRefused {
        /// The normalized command.
        command: String,
        /// The rule.
        rule: Rule,
    },
    /// The denial was made under another policy than the one the approval relaxes.
    #[error("the denial was made under policy {denied}, not under {base}")]
    DenialPolicyMismatch {
        /// The denial's policy hash.
        denied: String,
        /// The base policy's hash.
        base: String,
    },
    /// The relaxed policy changes the environment filter.
    #[error("the relaxed policy changes the environment filter; an approval keeps it")]
    EscalationChangesEnvironment,
    /// The relaxed policy would run the command without a jail.
    #[error(
        "the relaxed policy would run without a jail (unavailable = \"warn\"); an approval keeps the jail"
    )]
    EscalationLeavesJail,
    /// A complex shell expression may be approved once, never remembered.
    #[error("`{command}` is a complex shell expression; it can be approved once, never remembered")]
    ComplexNotRememberable {
        /// The normalized command.
        command: String,
    },
}
