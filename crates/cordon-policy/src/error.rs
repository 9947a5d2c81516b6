//! The one error type of this crate. Every variant names the value it refused and the rule.

use std::path::PathBuf;

use crate::paths::DisplayPath;

fn show(p: &std::path::Path) -> DisplayPath {
    DisplayPath(p.to_path_buf())
}

/// Why a policy, a configuration file or a plan was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A `network.allow` entry that is not a pattern (it names the entry and the rule).
    #[error(transparent)]
    Pattern(#[from] cordon_proxy::PatternError),
    /// `network.mode = "proxy"` with nothing in `network.allow`.
    #[error(
        "network.mode = \"proxy\" with an empty network.allow (mode set by {set_by}): name at least one destination (network.allow = [\"HOST\"], --allow-host HOST), or use mode \"deny\""
    )]
    ProxyWithoutDestinations {
        /// Where the mode was set.
        set_by: String,
    },
    /// A path was empty (or only `.`).
    #[error("an empty path is not allowed in a policy")]
    EmptyPath,
    /// A path contained a NUL byte.
    #[error("path {path:?} contains a NUL byte; no file can be named by it")]
    NulByte {
        /// The path, displayed losslessly.
        path: String,
    },
    /// A policy path used `..`.
    #[error("path {} uses `..`; write the path it means (rule: no parent components in policy paths)", show(.path))]
    ParentComponent {
        /// The path as written.
        path: PathBuf,
    },
    /// `~user/…` paths are not supported.
    #[error("path {} names another user's home; only `~` and `~/…` are supported", show(.path))]
    UnsupportedTilde {
        /// The path as written.
        path: PathBuf,
    },
    /// An invocation path was relative.
    #[error("{what} {} is relative; invocation paths must be absolute", show(.path))]
    RelativeInvocationPath {
        /// Which path (cwd, writable root).
        what: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// The home directory could not be determined.
    #[error(
        "the home directory is unknown (HOME is unset or not absolute); cordon needs it to place credential masks"
    )]
    HomeUnknown,
    /// A path of the invocation is longer than any system call takes (PATH_MAX, 4096 bytes with
    /// its NUL), so it cannot even be looked up.
    #[error(
        "{what} {} is {len} bytes long, past the kernel's PATH_MAX (at most 4095 bytes): no system call can name it",
        show(.path)
    )]
    PathTooLong {
        /// Which path (cwd, writable root).
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
    /// The working directory does not exist or is not a directory.
    #[error("cwd {} does not exist or is not a directory", show(.path))]
    CwdMissing {
        /// The requested cwd.
        path: PathBuf,
    },
    /// The working directory lies outside every writable root.
    #[error("cwd {} is outside the writable set {}", show(.cwd), DisplayPath::list(.writable))]
    CwdOutsideWritable {
        /// The canonical cwd.
        cwd: PathBuf,
        /// The canonical writable roots.
        writable: Vec<PathBuf>,
    },
    /// A writable root does not exist.
    #[error("writable root {} does not exist (rule: roots must exist; cordon never creates them)", show(.path))]
    RootMissing {
        /// The root as requested.
        path: PathBuf,
    },
    /// A writable root is not a directory.
    #[error("writable root {} is not a directory (rule: writable roots are directories)", show(.path))]
    RootNotDirectory {
        /// The canonical root.
        path: PathBuf,
    },
    /// A writable root is too broad or is a system tree.
    #[error("writable root {} is refused: {why}", show(.path))]
    BroadRoot {
        /// The canonical root.
        path: PathBuf,
        /// The rule it breaks.
        why: String,
    },
    /// A writable root lies inside a credential mask (making it writable would unmask it).
    #[error("writable root {} lies inside credential mask {} (rule: a root may not reopen a masked path)", show(.root), show(.mask))]
    RootInsideMask {
        /// The canonical root.
        root: PathBuf,
        /// The mask it lies in.
        mask: PathBuf,
    },
    /// A writable root that must stay inside the workspace resolved outside it.
    #[error("writable root {} from {origin} resolves outside the workspace {} (rule: project files may only add roots inside the workspace)", show(.root), show(.workspace))]
    RootOutsideWorkspace {
        /// The canonical root.
        root: PathBuf,
        /// The canonical workspace.
        workspace: PathBuf,
        /// Which layer added it.
        origin: String,
    },
    /// A mask would hide the whole filesystem.
    #[error("credential mask {} would hide the whole filesystem", show(.path))]
    MaskIsRoot {
        /// The mask.
        path: PathBuf,
    },
    /// Glob characters in a policy path.
    #[error(
        "path {path} contains glob characters; masks and protected paths name literal paths (Linux cannot mask files created later by a pattern)"
    )]
    GlobNotSupported {
        /// The path as written.
        path: String,
    },
    /// A `[filesystem] read` grant that would reopen what the home allowlist or a mask hides.
    #[error(
        "filesystem.read: {path} is refused: {why} (rule: a read grant names a tree of the home directory or elsewhere, never the whole home, `/`, or a masked path)"
    )]
    ReadGrantRefused {
        /// The grant as written (or resolved).
        path: String,
        /// The rule it breaks.
        why: String,
    },
    /// An unknown profile name.
    #[error("unknown profile {name:?}; known profiles: {known}")]
    UnknownProfile {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// A configuration file could not be read.
    #[error("cannot read configuration file {}: {source}", show(.file))]
    ConfigRead {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A configuration file is not valid TOML or has a value of the wrong type.
    #[error("configuration file {}: {message}", show(.file))]
    ConfigParse {
        /// The file.
        file: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// A configuration file has a key cordon does not know.
    #[error("configuration file {}: unknown key `{key}`", show(.file))]
    UnknownKey {
        /// The file.
        file: PathBuf,
        /// The dotted key.
        key: String,
    },
    /// A configuration value is not acceptable.
    #[error("configuration file {}: key `{key}`: {why}", show(.file))]
    InvalidValue {
        /// The file.
        file: PathBuf,
        /// The dotted key.
        key: String,
        /// The rule it breaks.
        why: String,
    },
    /// A project file tried to loosen the policy.
    #[error("project file {}: key `{key}` would loosen the policy: {why} (rule: a project file may only tighten)", show(.file))]
    ProjectLoosens {
        /// The project file.
        file: PathBuf,
        /// The dotted key.
        key: String,
        /// What it tried.
        why: String,
    },
    /// A caller override is not acceptable.
    #[error("override `{key}`: {why}")]
    InvalidOverride {
        /// The override.
        key: String,
        /// The rule it breaks.
        why: String,
    },
}
