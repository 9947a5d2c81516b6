//! Command-line grammar (clap). Parsing only; no behaviour here.

use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Run commands in a kernel-enforced jail, and refuse when the jail is not proven to hold.
#[derive(Debug, Parser)]
#[command(name = "cordon", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command in the jail; refuse when the jail is not proven to hold.
    Run(RunArgs),
    /// Report the backend, its probe, the filter version, user namespaces, limits and counts.
    Doctor(DoctorArgs),
    /// Run many commands in one session: one JSON argument array per line on stdin, one JSON
    /// result per line on stdout (schema in docs/cli.md), each in a jail of its own.
    Serve(ServeArgs),
    /// Serve MCP on stdio: one tool, `run`, that runs each call's argv in a jail of its own for
    /// the workspace `--cwd` (docs/cli.md).
    Mcp(McpArgs),
    /// Print what `run` would use (bubblewrap's arguments, or the Seatbelt profile and
    /// sandbox-exec's arguments with `--platform macos`); run nothing.
    Explain(ExplainArgs),
    /// Show the effective policy.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Run named checks over a configuration; exits 1 when one fails.
    Audit(AuditArgs),
    /// Print the floor's verdict on a command; exits 126 when the floor refuses it.
    Check(CheckArgs),
    /// Show or clear cordon's private toolchain caches (one per workspace).
    Cache(CacheArgs),
    /// List the workspace's runs that keep changes (pending review, held, refused, conflicts).
    Changes(ChangesArgs),
    /// Show what a run keeps: each change, why it is kept, and its difference from the host.
    Diff(RunRef),
    /// Apply a run's held and pending changes (those at or below PATH...), on your consent.
    Apply(ApplyArgs),
    /// Discard a run and everything it keeps.
    Drop(RunRef),
    /// Finish or discard what a killed commit left (also done by every commit).
    Recover(ChangesArgs),
}

/// Options of `cordon changes` and `cordon recover`.
#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// A run of a workspace (`cordon diff`, `cordon drop`).
#[derive(Debug, Args)]
pub struct RunRef {
    /// The run's name, as `cordon changes` lists it.
    pub run: String,
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Options of `cordon apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The run and where it is.
    #[command(flatten)]
    pub run: RunRef,
    /// Paths relative to the workspace root (default: every held and pending change).
    pub paths: Vec<PathBuf>,
}

/// Options of `cordon cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do.
    #[arg(value_enum)]
    pub command: CacheCommand,
    /// The workspace whose cache `clear` removes and `show` marks (default: the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// `clear`: every workspace's cache, not only this one's.
    #[arg(long)]
    pub all: bool,
    /// `show`: print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// `cordon cache show|clear`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CacheCommand {
    /// List every workspace's cache, its size and the bound.
    Show,
    /// Remove this workspace's cache (or, with `--all`, every one).
    Clear,
}

/// `cordon policy …`.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the effective policy, where each value came from, and how it resolves on this host.
    Show(ShowArgs),
}

/// Parses a profile name with the policy crate's own table, so the two can never disagree.
fn parse_profile(name: &str) -> Result<cordon_policy::Profile, String> {
    cordon_policy::Profile::from_name(name).map_err(|e| e.to_string())
}

/// The profile names, for `--help`.
fn profile_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        cordon_policy::Profile::ALL.map(cordon_policy::Profile::name),
    )
}

/// Options of `cordon policy show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Profile (default: the global file's, else `shell`).
    #[arg(long, value_parser = profile_names().try_map(|n: String| parse_profile(&n)))]
    pub profile: Option<cordon_policy::Profile>,
    /// Working directory and workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Options of `cordon check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Judge this shell command line (what a harness would pass to `bash -c`).
    #[arg(
        long,
        value_name = "COMMAND",
        conflicts_with = "command",
        required_unless_present = "command"
    )]
    pub shell: Option<String>,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    /// The program and its arguments, as `run` would get them.
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<std::ffi::OsString>,
}

/// Options of `cordon audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Audit this file alone (as a project file when it is named `.cordon.toml`, else as a
    /// global file). Default: the global file and the current directory's `.cordon.toml`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Audit as for a caller that adds this writable root, as `run --write` does (repeatable).
    #[arg(long = "write", value_name = "DIR")]
    pub write: Vec<PathBuf>,
    /// Audit as for a caller that runs with `--live` (the `workspace-live` check fails).
    #[arg(long)]
    pub live: bool,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// `--network`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NetworkArg {
    /// No network (the default of every profile).
    Deny,
    /// The jail's own network, and a proxy outside it that reaches only `--allow-host`
    /// destinations (and the configuration's `network.allow`).
    Proxy,
    /// The host's network.
    Allow,
}

/// The jail's options, shared by `run`, `explain` and `serve`.
#[derive(Debug, Args)]
pub struct JailOptions {
    /// Profile (default: the global file's, else `shell`).
    #[arg(long, value_parser = profile_names().try_map(|n: String| parse_profile(&n)))]
    pub profile: Option<cordon_policy::Profile>,
    /// Working directory and workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// An extra writable root (repeatable).
    #[arg(long = "write", value_name = "DIR")]
    pub write: Vec<PathBuf>,
    /// Network.
    #[arg(long, value_enum)]
    pub network: Option<NetworkArg>,
    /// A destination the proxy network reaches: `HOST`, `*.DOMAIN`, `HOST:PORT`, `IP:PORT`
    /// (repeatable; added to the configuration's `network.allow`).
    #[arg(long = "allow-host", value_name = "PATTERN")]
    pub allow_host: Vec<String>,
    /// Linux backend: `auto` uses bubblewrap, else Landlock, whichever's probe proves it
    /// enforces first; `bwrap` and `landlock` use only that one (refused when it does not).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    /// An explicit variable set inside the jail (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A host variable passed by name, unless it reads as a credential (repeatable).
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Wall-clock timeout in seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// A path below the hidden home shown read-only (repeatable; like `[filesystem] read`).
    #[arg(long = "read", value_name = "PATH")]
    pub read: Vec<PathBuf>,
    /// `hidden` (default): the home directory is private but for the allowlist; `visible`: the
    /// real home read-only minus the masks (reported by `cordon audit` when configured).
    #[arg(long, value_enum)]
    pub home: Option<HomeArg>,
    /// The command writes the workspace as it runs, with today's protections (a dev server a
    /// person watches): no copy-on-write layer.
    #[arg(long, conflicts_with_all = ["layer", "review"])]
    pub live: bool,
    /// The command's writes go to a private copy-on-write layer, committed when it ends (the
    /// default under bubblewrap; given, a backend that makes no layer refuses instead of
    /// running live).
    #[arg(long)]
    pub layer: bool,
    /// The command's layer is judged and kept for review, nothing applied: `--json` lists it,
    /// `cordon apply`/`cordon drop` decide.
    #[arg(long)]
    pub review: bool,
}

impl JailOptions {
    /// The workspace mode these options ask for (the default's when neither flag is given).
    pub fn workspace_mode(&self) -> cordon_policy::WorkspaceMode {
        if self.live {
            cordon_policy::WorkspaceMode::Live
        } else if self.review {
            cordon_policy::WorkspaceMode::Review
        } else if self.layer {
            cordon_policy::WorkspaceMode::Layer
        } else {
            cordon_policy::WorkspaceMode::default()
        }
    }
}

/// `--home`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HomeArg {
    /// A private home but for the vetted trees, PATH trees and read grants.
    Hidden,
    /// The real home, read-only, minus the credential masks.
    Visible,
}

/// Options shared by `run` and `explain`: the jail's, and the command.
#[derive(Debug, Args)]
pub struct RunOptions {
    /// How the jail is made.
    #[command(flatten)]
    pub jail: JailOptions,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub command: Vec<std::ffi::OsString>,
}

/// Options of `cordon serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// How every command's jail is made.
    #[command(flatten)]
    pub jail: JailOptions,
}

/// Options of `cordon mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// How every call's jail is made.
    #[command(flatten)]
    pub jail: JailOptions,
}

/// Options of `cordon run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to run, and how.
    #[command(flatten)]
    pub options: RunOptions,
    /// Print one JSON object instead of streaming output (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// `--backend`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BackendArg {
    /// bubblewrap, else Landlock.
    Auto,
    /// bubblewrap only.
    Bwrap,
    /// Landlock and seccomp only, no helper program (see docs/backends.md for its limits).
    Landlock,
}

impl BackendArg {
    /// The launcher's choice.
    pub fn choice(self) -> cordon_launch::BackendChoice {
        match self {
            BackendArg::Auto => cordon_launch::BackendChoice::Auto,
            BackendArg::Bwrap => cordon_launch::BackendChoice::Bwrap,
            BackendArg::Landlock => cordon_launch::BackendChoice::Landlock,
        }
    }
}

/// `--platform`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlatformArg {
    /// bubblewrap arguments.
    Linux,
    /// The Seatbelt profile and the sandbox-exec arguments (printed on any OS).
    Macos,
}

impl PlatformArg {
    /// The platform cordon runs on, as `--platform` spells it: the default of `explain`.
    pub const NATIVE: &'static str = if cfg!(target_os = "macos") {
        "macos"
    } else {
        "linux"
    };
}

/// Options of `cordon explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Which platform's artifact to print.
    #[arg(long, value_enum, default_value = PlatformArg::NATIVE)]
    pub platform: PlatformArg,
    /// What would run, and how.
    #[command(flatten)]
    pub options: RunOptions,
}

/// Options of `cordon doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Profile whose limits and counts are reported (default: the global file's, else `shell`).
    #[arg(long, value_parser = profile_names().try_map(|n: String| parse_profile(&n)))]
    pub profile: Option<cordon_policy::Profile>,
    /// Print one JSON object (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}
