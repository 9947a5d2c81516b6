//! Everything a task can fail with. Each message says what was refused and what to do.

use std::path::PathBuf;

use crate::cmd::CmdError;

/// Why a task (of xtask, or of a harness package) failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command it ran failed.
    #[error(transparent)]
    Command(#[from] CmdError),

    /// `cargo xtask bench` could not measure.
    #[error("bench: {0}")]
    Bench(String),

    /// `cargo xtask dist` could not build or copy the static binary.
    #[error("dist: {0}")]
    Dist(String),

    /// A step of `cargo xtask ci` failed outside the commands it runs.
    #[error("ci: {0}")]
    Ci(String),

    /// `cargo xtask escape-suite` failed: a cell, a column, or the suite's own set-up.
    #[error("escape-suite: {0}")]
    Escape(String),

    /// `cargo xtask workloads` failed: a fetch, a digest, a set-up step, or a comparison of the
    /// host's and the jail's runs.
    #[error("workloads: {0}")]
    Workloads(String),

    /// `cargo xtask ci packages` failed outside the commands it runs: a tool missing, a built
    /// package not where it should be.
    #[error("packages: {0}")]
    Packages(String),

    /// bubblewrap is missing and cannot be installed from here.
    #[error(
        "bubblewrap is not installed ({path} is missing) and this is not root, so it cannot be \
         installed from here; install it (`sudo apt-get install bubblewrap`, or your \
         distribution's `bubblewrap` package) and run again. The sandbox tests need it and are \
         never skipped"
    )]
    BubblewrapMissing {
        /// Where bubblewrap should be.
        path: &'static str,
    },

    /// bubblewrap was installed and is still missing.
    #[error("`apt-get install bubblewrap` succeeded but {path} still does not exist")]
    BubblewrapNotInstalled {
        /// Where bubblewrap should be.
        path: &'static str,
    },

    /// `cargo metadata` answered something else than expected.
    #[error("`cargo metadata` printed JSON that does not have the expected shape: {0}")]
    Metadata(#[source] serde_json::Error),

    /// A workspace member's manifest could not be read.
    #[error("cannot read the manifest {path}: {source}")]
    ManifestRead {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },

    /// A workspace member's manifest is not valid TOML.
    #[error("cannot parse the manifest {path}: {source}")]
    ManifestParse {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: Box<toml::de::Error>,
    },

    /// Test commands of the `test` step failed (all of them are run first).
    #[error("{} test command(s) failed:\n{}", .0.len(), list(.0))]
    Tests(Vec<CmdError>),
}

fn list(failures: &[CmdError]) -> String {
    failures
        .iter()
        .map(|f| format!("  - {f}"))
        .collect::<Vec<_>>()
        .join("\n")
}
