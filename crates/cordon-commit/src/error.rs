//! What can stop a commit, a review action or a recovery.

use std::path::PathBuf;

/// Why a commit, an `apply`, a `drop` or a recovery could not be done. The host's tree is then
/// as it was before (nothing was sealed) or a journal is left that [`crate::recover`] rolls
/// forward.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// A file system call failed on a path cordon had to read or write.
    #[error("{what} {path}: {source}")]
    Io {
        /// What cordon was doing.
        what: &'static str,
        /// The path it was doing it to.
        path: PathBuf,
        /// The system's answer.
        #[source]
        source: std::io::Error,
    },
    /// The layer is deeper than the bound the walk allows.
    #[error("the layer's path {path} is deeper than {limit} levels: refused, nothing applied")]
    TooDeep {
        /// The path below the root.
        path: PathBuf,
        /// The bound.
        limit: usize,
    },
    /// The layer (or a deleted host directory) holds more entries than the bound allows.
    #[error("the change set has more than {limit} entries (at {path}): refused, nothing applied")]
    TooMany {
        /// Where the walk was when it passed the bound.
        path: PathBuf,
        /// The bound.
        limit: usize,
    },
    /// A path that must be absolute is not.
    #[error("{what} {path} is not an absolute path")]
    NotAbsolute {
        /// Which argument.
        what: &'static str,
        /// Its value.
        path: PathBuf,
    },
    /// The state directory is inside the writable root: what is kept aside would be in the
    /// workspace.
    #[error(
        "the state directory {state} is inside the writable root {root}: refused, nothing applied"
    )]
    StateInsideRoot {
        /// The state directory.
        state: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// A run's name is not one cordon made (only `[0-9a-z-]`).
    #[error("run {run:?} is not a run name (runs are listed by `cordon changes`)")]
    BadRunName {
        /// The name given.
        run: String,
    },
    /// No such run in the workspace's state.
    #[error("no run {run} in {state}")]
    NoSuchRun {
        /// The run's name.
        run: String,
        /// The workspace's state directory.
        state: PathBuf,
    },
    /// A path given to `apply` is not a held or pending change of the run.
    #[error("{path} is not a held or pending change of run {run}")]
    NotHeld {
        /// The path given.
        path: PathBuf,
        /// The run's name.
        run: String,
    },
    /// A run's manifest or journal cannot be read back.
    #[error("the record {path} is damaged: {why}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl CommitError {
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> CommitError {
        let path = path.into();
        move |source| CommitError::Io { what, path, source }
    }

    pub(crate) fn errno(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(rustix::io::Errno) -> CommitError {
        let path = path.into();
        move |e| CommitError::Io {
            what,
            path,
            source: e.into(),
        }
    }
}
