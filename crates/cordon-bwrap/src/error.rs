//! The one error type of this crate.

use crate::STAGE_DIR;

/// Why no argument list was produced. Every variant names the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BwrapError {
    /// The bubblewrap found lacks options cordon cannot enforce a policy without.
    #[error(
        "bubblewrap {found} lacks {}, which cordon needs to enforce a policy; install bubblewrap {} or newer",
        missing.join(", "),
        crate::features::MIN_VERSION_TEXT
    )]
    MissingFeatures {
        /// The version bubblewrap reported, or `an unknown version`.
        found: String,
        /// The missing options, such as `--perms`.
        missing: Vec<&'static str>,
    },

    /// An argument contains a NUL byte: the `--args` data is NUL-separated, so it would be split
    /// into two arguments (and no kernel call can name such a path anyway).
    #[error("refused to pass {what} {value} to bubblewrap: it contains a NUL byte")]
    NulByte {
        /// What the argument is: `path`, `argument`, `environment value`, ...
        what: &'static str,
        /// The argument, shown losslessly with the NUL as `\x00`.
        value: String,
    },

    /// There is no command to run.
    #[error("no command to run: the argument vector is empty or its program is an empty string")]
    EmptyCommand,

    /// The jail needs more arguments than bubblewrap reads (each masked file takes three):
    /// bubblewrap would refuse it at start-up.
    #[error(
        "the jail needs {count} bubblewrap arguments, and bubblewrap reads at most {}: each masked file takes 3 (about 2,900 masks fit); mask a directory instead of its files",
        crate::MAX_ARGUMENTS
    )]
    TooManyArguments {
        /// How many: the `--args` data and the command line after it.
        count: usize,
    },

    /// A path bubblewrap would mount is too long for it: it names each through its own prefix
    /// (`/oldroot` for a source, `/newroot` for a destination), and the whole must stay under
    /// the kernel's PATH_MAX.
    #[error(
        "{what} {path} is {len} bytes long; bubblewrap mounts at most {}-byte paths (it prefixes each with /oldroot or /newroot, within the kernel's 4096)",
        crate::MAX_MOUNT_PATH
    )]
    PathTooLong {
        /// What the path is to bubblewrap: `mount source`, `mount destination`.
        what: &'static str,
        /// The path.
        path: String,
        /// Its length in bytes.
        len: usize,
    },

    /// A path of the plan is relative or has a `..` component. The plan is supposed to hold
    /// canonical paths only; a relative one could be read as an option, and a `..` defeats the
    /// parent-before-child order.
    #[error("{what} {path} is not an absolute canonical path")]
    NotCanonical {
        /// Which field of the plan, such as `writable root`.
        what: &'static str,
        /// The path.
        path: String,
    },

    /// An environment variable name bubblewrap's `--setenv` cannot set.
    #[error(
        "environment variable name {name} cannot be set in the jail: a name must be non-empty and contain no `=`"
    )]
    InvalidEnvName {
        /// The name, shown losslessly.
        name: String,
    },

    /// A descriptor number that cannot be the one meant.
    #[error(
        "descriptor {fd} cannot carry the {what}: it must be 3 or higher (0, 1 and 2 are the command's stdio)"
    )]
    InvalidDescriptor {
        /// What the descriptor is for.
        what: &'static str,
        /// The number given.
        fd: i32,
    },

    /// A copy-on-write layer was asked for a path that is not one of the plan's writable roots,
    /// or without the stage that mounts it.
    #[error(
        "a copy-on-write layer was asked over {path}, which is not a writable root of the plan (or the jail has no stage to mount it)"
    )]
    LayerNotARoot {
        /// The path.
        path: String,
    },

    /// A path of the plan lies in the directory cordon reserves for its in-jail stage.
    #[error("{path} lies in {STAGE_DIR}, which cordon reserves for its in-jail stage")]
    ReservedPath {
        /// The path.
        path: String,
    },

    /// The stage cannot be bound at its fixed path without creating a file outside a private
    /// directory (on the host, or inside a mask).
    #[error(
        "the in-jail stage cannot be placed at {}: the deepest mount above it is {covering}, not a private tmpfs",
        crate::STAGE_PATH
    )]
    StageNotPrivate {
        /// The mount that would receive the stage's mount point, such as `--ro-bind / /`.
        covering: String,
    },
}
