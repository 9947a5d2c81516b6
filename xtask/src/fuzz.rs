//! `cargo xtask fuzz`: runs the libFuzzer targets in `fuzz/` (a cargo-fuzz project outside the
//! workspace) for a fixed time each, and the `fuzz-smoke` step of `cargo xtask ci`.
//!
//! Each target starts from its checked-in seeds (`fuzz/corpus/<target>/`, only read) and grows a
//! working corpus in `fuzz/work/<target>/` (ignored by git, kept between runs so that long runs
//! add up). A crash leaves its input in `fuzz/artifacts/<target>/` and fails the task with the
//! panic message and the command that reproduces it.
//!
//! cargo-fuzz needs nightly compiler flags. By default the pinned stable toolchain builds the
//! targets with `RUSTC_BOOTSTRAP=1`; `--toolchain nightly` uses rustup's nightly instead. Both
//! work; the pinned one needs no second toolchain and compiles the targets faster here (see
//! `fuzz/README.md` for the measurements). The targets are built without a sanitizer by
//! default: all the code they reach is safe Rust, and AddressSanitizer cost four times the
//! executions per second and half a gigabyte of memory per target.

use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use cordon_test_support::cmd::{Cmd, CmdError};
use cordon_test_support::error::Error;

use crate::ci::Ctx;

/// One fuzz target: its cargo-fuzz name and the dictionary it runs with.
pub struct Target {
    /// The `[[bin]]` name in `fuzz/Cargo.toml`.
    pub name: &'static str,
    /// The libFuzzer dictionary in `fuzz/dicts/`.
    pub dict: &'static str,
}

/// Every target, in the order they run.
pub const TARGETS: &[Target] = &[
    Target {
        name: "config_layers",
        dict: "config_layers.dict",
    },
    Target {
        name: "bwrap_args",
        dict: "plan.dict",
    },
    Target {
        name: "seatbelt_profile",
        dict: "plan.dict",
    },
    Target {
        name: "floor_check",
        dict: "floor_check.dict",
    },
    Target {
        name: "proxy_request",
        dict: "proxy_request.dict",
    },
    Target {
        name: "git_config",
        dict: "git_config.dict",
    },
];

/// Seconds per target in `cargo xtask ci fuzz-smoke`.
pub const SMOKE_SECONDS: u64 = 15;

/// Longest time one input may take before libFuzzer calls it a hang (a failure): inputs are
/// at most a few kilobytes, so anything near this is a quadratic blow-up.
const INPUT_TIMEOUT_SECS: u64 = 10;

/// Which compiler builds the targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Toolchain {
    /// The toolchain pinned by rust-toolchain.toml, with `RUSTC_BOOTSTRAP=1`.
    Pinned,
    /// rustup's `nightly`.
    Nightly,
}

/// Which sanitizer the targets are built with (cargo-fuzz's `--sanitizer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sanitizer {
    /// None: the fastest; the fuzzed code is safe Rust.
    None,
    /// AddressSanitizer.
    Address,
}

impl Sanitizer {
    fn flag(self) -> &'static str {
        match self {
            Sanitizer::None => "none",
            Sanitizer::Address => "address",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seconds per target.
    pub seconds: u64,
    /// Only these targets (all when empty).
    pub targets: Vec<String>,
    /// Which compiler.
    pub toolchain: Toolchain,
    /// Which sanitizer.
    pub sanitizer: Sanitizer,
}

/// The `fuzz-smoke` step: every target for [`SMOKE_SECONDS`], after checking the fuzz crate's
/// formatting (it is outside the workspace, so `cargo fmt --all` does not see it).
pub fn smoke(ctx: &Ctx) -> Result<(), Error> {
    let manifest = ctx.root().join("fuzz").join("Cargo.toml");
    ctx.cargo(["fmt", "--manifest-path"])
        .arg(manifest)
        .args(["--", "--check"])
        .run()?;
    run(
        ctx,
        &Options {
            seconds: SMOKE_SECONDS,
            targets: Vec::new(),
            toolchain: Toolchain::Pinned,
            sanitizer: Sanitizer::None,
        },
    )
}

/// Builds the selected targets, then runs each for `opts.seconds`; stops at the first crash.
pub fn run(ctx: &Ctx, opts: &Options) -> Result<(), Error> {
    crate::setup::cargo_fuzz(ctx)?;
    let selected: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| opts.targets.is_empty() || opts.targets.iter().any(|n| n == t.name))
        .collect();
    let fuzz_dir = ctx.root().join("fuzz");

    let started = Instant::now();
    let mut build = vec!["build", "--sanitizer", opts.sanitizer.flag()];
    if selected.len() == 1 {
        build.extend(selected.iter().map(|t| t.name));
    }
    CargoFuzz::new(opts, build).cmd(ctx).run()?;
    println!(
        "fuzz: targets built in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let count = selected.len();
    for target in selected {
        let work = fuzz_dir.join("work").join(target.name);
        let artifacts = fuzz_dir.join("artifacts").join(target.name);
        for dir in [&work, &artifacts] {
            fs::create_dir_all(dir).map_err(|source| CmdError::Spawn {
                cmdline: format!("mkdir -p {}", dir.display()),
                source,
            })?;
        }
        let mut args: Vec<OsString> = ["run", "--sanitizer", opts.sanitizer.flag(), target.name]
            .map(OsString::from)
            .into();
        args.push(work.clone().into());
        args.push(fuzz_dir.join("corpus").join(target.name).into());
        args.push("--".into());
        args.push(format!("-max_total_time={}", opts.seconds).into());
        args.push(format!("-timeout={INPUT_TIMEOUT_SECS}").into());
        let dict = fuzz_dir.join("dicts").join(target.dict);
        args.push(format!("-dict={}", dict.display()).into());
        args.push("-print_final_stats=1".into());
        // Beside the corpus, not in it: libFuzzer reads every file of the corpus directory.
        let log = fuzz_dir.join("work").join(format!("{}.log", target.name));
        let stats = run_logged(ctx, &CargoFuzz::new(opts, args), &log)?;
        println!(
            "fuzz: {:<17} {:>9} runs {:>7} exec/s  corpus {:>5}  peak rss {} MB",
            target.name,
            stats.runs,
            stats.exec_per_sec,
            count_files(&work),
            stats.peak_rss_mb
        );
    }
    println!(
        "fuzz: {count} target(s), {:.1}s in all (build included), no crash",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// One `cargo fuzz` command line with the chosen toolchain, runnable both as a [`Cmd`] (echoed,
/// stdio inherited) and with its output sent to a log.
struct CargoFuzz {
    args: Vec<OsString>,
    env: (&'static str, &'static str),
}

impl CargoFuzz {
    fn new<A: Into<OsString>>(opts: &Options, args: impl IntoIterator<Item = A>) -> CargoFuzz {
        let mut all = vec![OsString::from("fuzz")];
        all.extend(args.into_iter().map(Into::into));
        // cargo-fuzz runs `cargo` through rustup, which reads rust-toolchain.toml; the pinned
        // stable compiler accepts cargo-fuzz's `-Z` flags only with RUSTC_BOOTSTRAP.
        let env = match opts.toolchain {
            Toolchain::Pinned => ("RUSTC_BOOTSTRAP", "1"),
            Toolchain::Nightly => ("RUSTUP_TOOLCHAIN", "nightly"),
        };
        CargoFuzz { args: all, env }
    }

    fn cmd(&self, ctx: &Ctx) -> Cmd {
        ctx.cargo(&self.args).env(self.env.0, self.env.1)
    }

    fn command(&self, ctx: &Ctx) -> Command {
        // The cargo `Ctx::cargo` runs: the one that started xtask.
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .args(&self.args)
            .env(self.env.0, self.env.1)
            .current_dir(ctx.root());
        command
    }
}

/// libFuzzer's final statistics (`-print_final_stats=1`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Inputs executed.
    pub runs: u64,
    /// Average executions per second.
    pub exec_per_sec: u64,
    /// Peak resident set size, MB.
    pub peak_rss_mb: u64,
}

/// Reads the `stat::NAME: VALUE` lines libFuzzer prints when it stops.
pub fn parse_stats(log: &str) -> Stats {
    let mut stats = Stats::default();
    for line in log.lines() {
        let Some((key, value)) = line.strip_prefix("stat::").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        match key {
            "number_of_executed_units" => stats.runs = value,
            "average_exec_per_sec" => stats.exec_per_sec = value,
            "peak_rss_mb" => stats.peak_rss_mb = value,
            _ => {}
        }
    }
    stats
}

/// Runs `fuzz` with its output in `log` (libFuzzer prints a line per new input); on failure,
/// prints the end of the log, which holds the panic, the input and how to reproduce it.
fn run_logged(ctx: &Ctx, fuzz: &CargoFuzz, log: &Path) -> Result<Stats, Error> {
    let cmdline = fuzz.cmd(ctx).to_string();
    println!("$ {cmdline} > {}", log.display());
    let spawn_error = |source| CmdError::Spawn {
        cmdline: cmdline.clone(),
        source,
    };
    let file = fs::File::create(log).map_err(spawn_error)?;
    let err_file = file.try_clone().map_err(spawn_error)?;
    let status = fuzz
        .command(ctx)
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err_file))
        .status()
        .map_err(spawn_error)?;
    let text = fs::read(log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    if !status.success() {
        println!("---- the end of {} ----", log.display());
        for line in crash_report(&text) {
            println!("{line}");
        }
        println!("----");
        return Err(CmdError::Failed { cmdline, status }.into());
    }
    Ok(parse_stats(&text))
}

/// The part of a failed run's log worth reading: from the last panic (else the last 60 lines)
/// to the end, without backtrace frames or the recommended-dictionary lines, leaving the panic
/// message, the input and the command that reproduces it.
pub fn crash_report(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.contains("panicked at"))
        .unwrap_or(lines.len().saturating_sub(60));
    lines[start..]
        .iter()
        .copied()
        .filter(|l| {
            let t = l.trim_start();
            let frame = t
                .split_once(':')
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
                || t.starts_with("at ");
            !frame && !l.starts_with('"')
        })
        .collect()
}

fn count_files(dir: &Path) -> usize {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .count()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_stats_are_read_from_the_log() {
        let log = "#100 DONE cov: 3\nDone 91653 runs in 61 second(s)\n\
                   stat::number_of_executed_units: 91653\n\
                   stat::average_exec_per_sec:     1502\n\
                   stat::new_units_added:          77\n\
                   stat::peak_rss_mb:              41\n";
        assert_eq!(
            parse_stats(log),
            Stats {
                runs: 91653,
                exec_per_sec: 1502,
                peak_rss_mb: 41
            }
        );
        assert_eq!(parse_stats("no stats"), Stats::default());
    }

    #[test]
    fn a_crash_report_starts_at_the_panic_and_drops_frames() {
        let log = "#1 NEW cov: 1\n\"dict\" # Uses: 1\nthread '<unnamed>' panicked at t.rs:4:2:\n\
                   assertion failed\nstack backtrace:\n   0: rust_begin_unwind\n             \
                   at /rustc/x.rs:1:1\n==1== ERROR: libFuzzer: deadly signal\n\"x\" # Uses: 2\n\
                   Reproduce with:\n\tcargo fuzz run t crash-1\n";
        assert_eq!(
            crash_report(log),
            [
                "thread '<unnamed>' panicked at t.rs:4:2:",
                "assertion failed",
                "stack backtrace:",
                "==1== ERROR: libFuzzer: deadly signal",
                "Reproduce with:",
                "\tcargo fuzz run t crash-1",
            ]
        );
    }

    #[test]
    fn every_target_has_a_bin_seeds_and_a_dictionary() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let manifest = fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
        for t in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{}\"", t.name)),
                "{} is not a [[bin]] of fuzz/Cargo.toml",
                t.name
            );
            assert!(root.join("fuzz/dicts").join(t.dict).is_file(), "{}", t.dict);
            assert!(
                count_files(&root.join("fuzz/corpus").join(t.name)) > 0,
                "{} has no seeds",
                t.name
            );
        }
    }
}
