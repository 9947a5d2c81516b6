//! The CLI's error type and its mapping to exit codes.

use crate::exit;

/// Why a subcommand could not do its job.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The policy, a configuration file or a path was refused.
    #[error(transparent)]
    Policy(#[from] cordon_policy::PolicyError),
    /// The environment policy was refused.
    #[error(transparent)]
    Env(#[from] cordon_env::EnvError),
    /// The current directory could not be read.
    #[error("cannot determine the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// SIGTERM, SIGINT and SIGHUP could not be set up to end the jail.
    #[error("cannot handle termination signals: {0}")]
    Signals(std::io::Error),
    /// Reading `serve`'s requests failed.
    #[error("cannot read the requests: {0}")]
    Input(std::io::Error),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// The launcher could not run the command.
    #[error(transparent)]
    Launch(#[from] cordon_launch::LaunchError),
    /// A weakening named in `CORDON_MUTANT` is unknown (mutants builds only).
    #[cfg(all(feature = "mutants", debug_assertions))]
    #[error("CORDON_MUTANT: {0}")]
    Weakening(String),
    /// A private toolchain cache could not be prepared, shown or cleared.
    #[error(transparent)]
    Cache(#[from] cordon_launch::CacheError),
    /// The async runtime `cordon mcp` serves on could not start.
    #[error("cannot start the MCP server's runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP session failed (the handshake, or the transport).
    #[error("the MCP session on stdio failed: {0}")]
    Mcp(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A commit, `apply`, `drop` or recovery failed, or named a run or path that is not one.
    #[error(transparent)]
    Commit(#[from] cordon_commit::CommitError),
    /// JSON serialization failed.
    #[error("cannot encode JSON output: {0}")]
    Json(#[from] serde_json::Error),
}

impl CliError {
    /// The exit code this error maps to (docs/cli.md).
    pub fn exit_code(&self) -> u8 {
        exit::CANNOT_RUN
    }
}
