//! cordon's task runner, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! Tasks are ordinary Rust rather than shell scripts, and CI calls the same tasks a developer
//! does: `.ci/run` is `cargo xtask ci`. Each task is a subcommand below; `ci` is a list of
//! steps in `ci.rs`. The escape suite, the load, the bench and the workloads are packages of
//! their own under `tests/` (`harnesses.rs`): xtask depends on no cordon crate, so it builds in
//! seconds.

mod ci;
mod fuzz;
mod harnesses;
mod packages;
mod relocated;
mod setup;
mod workspace;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "cordon's development tasks",
    version
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Run every check CI runs, step by step (see --list), stopping at the first failure.
    Ci(CiArgs),
    /// Time cordon (CLI, library, in-process steps, a 100k-file workspace, the session walk)
    /// against plain bubblewrap with the same isolation; writes docs/benchmarks.md (--json FILE).
    #[command(disable_help_flag = true)]
    Bench(Passthrough),
    /// Build the `cordon` binary to install, statically linked (target/dist/cordon): what the
    /// launch benchmarks measure.
    Dist,
    /// Run real attacks through `cordon run` in every column; `--mutants` proves the suite can fail.
    #[command(disable_help_flag = true)]
    EscapeSuite(Passthrough),
    /// Run the libFuzzer targets in fuzz/ for N seconds each (cargo-fuzz); a crash fails.
    Fuzz(FuzzArgs),
    /// Run many jails at once (library and CLI, some launchers SIGKILLed); fail on a wrong outcome
    /// or anything left behind (processes, mounts, files, descriptors, memory).
    #[command(disable_help_flag = true)]
    Load(Passthrough),
    /// Real upstream projects' test suites (Python, Node, Rust, C) and the probes test suites
    /// need, on the host and in a bubblewrap jail, as root and as the unprivileged user; fails
    /// on a difference (docs/workloads.md). Without --all: the probes and the CI subset.
    #[command(disable_help_flag = true)]
    Workloads(Passthrough),
}

/// A harness package's own arguments, passed through unchanged (`--help` lists them).
#[derive(Debug, Args)]
struct Passthrough {
    /// The harness's own flags, e.g. `--help`.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<OsString>,
}

#[derive(Debug, Args)]
struct FuzzArgs {
    /// Seconds per target.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Only these targets (repeatable, or comma-separated); default: all.
    #[arg(long = "target", value_delimiter = ',', value_parser = fuzz_target_names())]
    targets: Vec<String>,
    /// Which compiler builds the targets.
    #[arg(long, value_enum, default_value_t = fuzz::Toolchain::Pinned)]
    toolchain: fuzz::Toolchain,
    /// Sanitizer to build with.
    #[arg(long, value_enum, default_value_t = fuzz::Sanitizer::None)]
    sanitizer: fuzz::Sanitizer,
}

fn fuzz_target_names() -> PossibleValuesParser {
    PossibleValuesParser::new(fuzz::TARGETS.iter().map(|t| t.name))
}

#[derive(Debug, Args)]
struct CiArgs {
    /// Run only these steps (in pipeline order) instead of all of them.
    #[arg(value_name = "STEP", value_parser = step_names())]
    steps: Vec<String>,

    /// List the steps and exit.
    #[arg(long)]
    list: bool,
}

fn step_names() -> PossibleValuesParser {
    PossibleValuesParser::new(ci::STEPS.iter().map(|step| step.name))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.task {
        Task::Ci(args) if args.list => {
            for step in ci::STEPS {
                println!("{:<14} {}", step.name, step.about);
            }
            ExitCode::SUCCESS
        }
        Task::Bench(args) => run_harness(&harnesses::BENCH, &args),
        Task::Dist => match cordon_test_support::dist::build(&ci::Ctx::from_env().root) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("\nerror: {e}");
                ExitCode::FAILURE
            }
        },
        Task::EscapeSuite(args) => run_harness(&harnesses::ESCAPE, &args),
        Task::Load(args) => run_harness(&harnesses::LOAD, &args),
        Task::Fuzz(args) => {
            let opts = fuzz::Options {
                seconds: args.seconds,
                targets: args.targets,
                toolchain: args.toolchain,
                sanitizer: args.sanitizer,
            };
            match fuzz::run(&ci::Ctx::from_env(), &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("\nerror: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Task::Workloads(args) => run_harness(&harnesses::WORKLOADS, &args),
        Task::Ci(args) => match ci::run(&ci::Ctx::from_env(), &args.steps) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failed) => {
                eprintln!("\nerror: {failed}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Runs a harness package with the arguments given, in the environment xtask got.
fn run_harness(harness: &harnesses::Harness, args: &Passthrough) -> ExitCode {
    let ctx = ci::Ctx::from_env();
    match ctx.cargo_as_called(harness.cargo_args(&args.args)).run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}
