//! cordon's task runner, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! Tasks are ordinary Rust rather than shell scripts, and CI calls the same tasks a developer
//! does: `.ci/run` is `cargo xtask ci`. Each task is a subcommand below; `ci` is a list of
//! steps in `ci.rs`.

mod bench;
mod ci;
mod cmd;
mod dist;
mod error;
mod escape;
mod fuzz;
mod load;
mod setup;
mod workspace;

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
    Bench(BenchArgs),
    /// Build the `cordon` binary to install, statically linked (target/dist/cordon): what the
    /// launch benchmarks measure.
    Dist,
    /// Run real attacks through `cordon run` in every column; `--mutants` proves the suite can fail.
    EscapeSuite(EscapeArgs),
    /// Run the libFuzzer targets in fuzz/ for N seconds each (cargo-fuzz); a crash fails.
    Fuzz(FuzzArgs),
    /// Run many jails at once (library and CLI, some launchers SIGKILLed); fail on a wrong outcome
    /// or anything left behind (processes, mounts, files, descriptors, memory).
    Load(LoadArgs),
}

#[derive(Debug, Args)]
struct LoadArgs {
    /// Commands run at the same time.
    #[arg(long, default_value_t = 16)]
    jobs: usize,
    /// Commands in all.
    #[arg(long, default_value_t = 500)]
    runs: usize,
    /// Seed of the mix (which kinds, which workspaces, in which order).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Use this cordon binary instead of building one (e.g. when running as an unprivileged user).
    #[arg(long, value_name = "PATH")]
    cordon: Option<std::path::PathBuf>,
    /// Keep the load's directory (target/load/run-<pid>) afterwards.
    #[arg(long)]
    keep: bool,
}

#[derive(Debug, Args)]
struct EscapeArgs {
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Run the cases against deliberately weakened launchers; fail unless each is caught.
    #[arg(long)]
    mutants: bool,
    /// Only these columns (root/host, root/minimal, user/host, user/minimal, root/landlock, user/landlock); default: all.
    #[arg(long, value_delimiter = ',')]
    columns: Vec<String>,
    /// Only the cases whose id starts with one of these prefixes.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Cases run in parallel (most of a case is waiting on the kernel, not computing).
    #[arg(long, default_value_t = escape::DEFAULT_JOBS)]
    jobs: usize,
    /// Keep the case directories (under /var/lib/cordon-escape when root).
    #[arg(long)]
    keep: bool,
    /// With --mutants: only these weakenings.
    #[arg(long, value_delimiter = ',')]
    mutant: Vec<String>,
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
struct BenchArgs {
    /// Samples per command.
    #[arg(long, default_value_t = 200)]
    runs: usize,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Do not rewrite docs/benchmarks.md.
    #[arg(long)]
    no_docs: bool,
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
        Task::Bench(args) => match bench::run_with(
            &ci::Ctx::from_env().root,
            &bench::Options {
                runs: args.runs,
                json: args.json,
                write_docs: !args.no_docs,
            },
        ) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("\nerror: {e}");
                ExitCode::FAILURE
            }
        },
        Task::Dist => match dist::build(&ci::Ctx::from_env().root) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("\nerror: {e}");
                ExitCode::FAILURE
            }
        },
        Task::EscapeSuite(args) => {
            let opts = escape::Options {
                json: args.json,
                mutants: args.mutants,
                columns: args.columns,
                only: args.only,
                jobs: args.jobs,
                keep: args.keep,
                mutant: args.mutant,
            };
            match escape::run(&ci::Ctx::from_env().root, &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("\nerror: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Task::Load(args) => {
            let opts = load::Options {
                jobs: args.jobs,
                runs: args.runs,
                seed: args.seed,
                json: args.json,
                cordon: args.cordon,
                keep: args.keep,
            };
            match load::run(&ci::Ctx::from_env().root, &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("\nerror: {e}");
                    ExitCode::FAILURE
                }
            }
        }
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
        Task::Ci(args) => match ci::run(&ci::Ctx::from_env(), &args.steps) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failed) => {
                eprintln!("\nerror: {failed}");
                ExitCode::FAILURE
            }
        },
    }
}
