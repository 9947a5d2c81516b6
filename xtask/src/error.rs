//! Everything a task can fail with. Each message says what was refused and what to do.

use std::path::PathBuf;

use crate::cmd::CmdError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Command(#[from] CmdError),

    #[error("bench: {0}")]
    Bench(String),

    #[error("dist: {0}")]
    Dist(String),

    #[error("ci: {0}")]
    Ci(String),

    #[error("escape-suite: {0}")]
    Escape(String),

    #[error(
        "bubblewrap is not installed ({path} is missing) and this is not root, so it cannot be \
         installed from here; install it (`sudo apt-get install bubblewrap`, or your \
         distribution's `bubblewrap` package) and run again. The sandbox tests need it and are \
         never skipped"
    )]
    BubblewrapMissing { path: &'static str },

    #[error("`apt-get install bubblewrap` succeeded but {path} still does not exist")]
    BubblewrapNotInstalled { path: &'static str },

    #[error("`cargo metadata` printed JSON that does not have the expected shape: {0}")]
    Metadata(#[source] serde_json::Error),

    #[error("cannot read the manifest {path}: {source}")]
    ManifestRead {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("cannot parse the manifest {path}: {source}")]
    ManifestParse {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },

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
