//! The launcher's one error type.

/// Why the launcher could not run a command. Refusals (no enforcing backend, failed self-check)
/// are not errors: they are results with status `refused`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The environment policy was refused.
    #[error(transparent)]
    Env(#[from] cordon_env::EnvError),
    /// The bubblewrap arguments could not be built.
    #[cfg(linux_backends)]
    #[error(transparent)]
    Bwrap(#[from] cordon_bwrap::BwrapError),
    /// The seccomp filter could not be built.
    #[cfg(linux_backends)]
    #[error(transparent)]
    Seccomp(#[from] cordon_seccomp::SeccompError),
    /// The session's walk of the writable roots refused them, or could not be made.
    #[cfg(linux_backends)]
    #[error(transparent)]
    Scan(#[from] cordon_scan::ScanError),
    /// The Landlock rules could not be built or created.
    #[cfg(linux_backends)]
    #[error(transparent)]
    Landlock(#[from] cordon_landlock::LandlockError),
    /// The stage binary (cordon itself) lies inside a writable root: the jailed command could
    /// replace the program that checks the next jail.
    #[error(
        "cordon's own binary {stage} lies inside the writable root {root}: a jailed command could replace it; install cordon outside the workspace"
    )]
    StageWritable {
        /// The stage binary.
        stage: String,
        /// The writable root it lies in.
        root: String,
    },
    /// The backend executes the stage binary at its host path inside the jail, and that path
    /// lies inside a credential mask, which no jail reads.
    #[error(
        "cordon's own binary {stage} cannot run in the {backend} backend's jail: {rule}; install cordon outside it (e.g. /usr/local/bin)"
    )]
    StageHidden {
        /// The stage binary.
        stage: String,
        /// The backend.
        backend: &'static str,
        /// The rule that hides it.
        rule: String,
    },
    /// The command line was empty.
    #[error("no command given: nothing to run")]
    EmptyCommand,
    /// An argument of the command holds a NUL byte, which no program can receive.
    #[error("argument {index} of the command holds a NUL byte, which no program can receive")]
    NulInArgument {
        /// Its position, 0 being the program.
        index: usize,
    },
    /// A system call the launcher needs failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

impl LaunchError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LaunchError {
        let what = what.into();
        move |source| LaunchError::Io { what, source }
    }
}
