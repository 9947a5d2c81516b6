//! cordon-load, the load harness (`cargo xtask load` runs it): many jails at once, and nothing
//! left behind.
//!
//! M commands run N at a time. Most go through the library, one [`cordon_launch::Launcher`]
//! shared by N threads of this process, each command judged by the floor first as `cordon run`
//! does; the runs whose launcher is killed with SIGKILL go through the CLI. The mix (see [`mix`])
//! is fixed by a seed: ordinary commands, output floods, timeouts, floor refusals, background
//! children, private-`/tmp` checks, git workspaces with and without `.vscode`/`.claude` (some
//! shared by many concurrent jails, some private), and killed launchers.
//!
//! It fails on any run whose outcome is not the expected one, and on anything left behind,
//! judged on the host:
//!
//! - a process of any jail still alive (every payload carries a marker in its argv; `/proc/*/cmdline`
//!   is scanned; killed jails get [`host::KILLED_GRACE`]);
//! - a mount added to or missing from the host's `/proc/self/mountinfo`;
//! - a file or directory added, removed or changed in the load's directory (workspaces, homes;
//!   only the probe cache file may appear or change), or added under `/tmp`, `/var/tmp`,
//!   `/dev/shm`, `/run`, `/` or the `pids` control groups by one of this load's launchers;
//! - a descriptor more in this process at the end than after the warm-up;
//! - resident memory (`VmRSS`, `VmHWM`) that grew by more than [`MEMORY_GROWTH_LIMIT_KIB`]
//!   between the warm-up and the end (measured with one malloc arena, see there).
//!
//! Before the load, several CLIs start at once with no probe cache (a home of their own); all
//! must succeed and leave exactly one valid cache file ([`cache`]).

mod cache;
mod checks;
mod host;
mod mix;
mod report;
mod runner;

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use clap::Parser;
use cordon_floor::{Floor, FloorConfig};
use cordon_launch::Launcher;
use cordon_policy::{Policy, PolicyBuilder, Profile, Source};

use cordon_test_support::cmd::{Cmd, CmdError};
use mix::Workspace;
use runner::{Harness, cut};

/// The bubblewrap the load needs (never skipped when missing).
pub const BWRAP: &str = "/usr/bin/bwrap";

/// Bytes of stdout and of stderr each library run keeps: small, so that a flood's captured
/// output does not swamp the memory check.
pub const OUTPUT_CAP: u64 = 64 * 1024;

/// How much `VmRSS` or `VmHWM` may grow between the warm-up (the first half of the runs) and the
/// end.
///
/// A leak of 10 KB per run over the 250 runs after the default warm-up is 2.4 MiB, more than
/// twice this limit; leaks from about 4.2 KB per run cross it at 500 runs, 35 KB per run at
/// `--runs 60`. Measured without a leak (500 runs, 16 at a time, one malloc arena), resident
/// memory rises with the concurrency mix for about the first 250 runs (the heap's high-water mark:
/// +1.2 to +1.6 MiB after a warm-up of 50 runs) and then stays flat within 0.4 MiB, which is why
/// the warm-up is half. The load runs with one arena ([`ONE_ARENA`]): with glibc's default of one
/// arena per thread (16 workers and 4 threads per run here) it crept about 1 KiB per run for 4000
/// runs and once jumped 43 MiB, which says nothing about cordon.
pub const MEMORY_GROWTH_LIMIT_KIB: u64 = 1024;

/// The allocator setting the load runs under (it re-executes itself with it when unset).
const ONE_ARENA: (&str, &str) = ("MALLOC_ARENA_MAX", "1");

/// CLI processes started at once for the probe cache test.
const CACHE_STARTS: usize = 8;

/// Options of `cargo xtask load`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Commands run at the same time.
    pub jobs: usize,
    /// Commands in all.
    pub runs: usize,
    /// Seed of the mix.
    pub seed: u64,
    /// Also write the report as JSON here.
    pub json: Option<PathBuf>,
    /// Use this `cordon` binary instead of building one.
    pub cordon: Option<PathBuf>,
    /// Keep the load's directory.
    pub keep: bool,
}

/// Run many jails at once (library and CLI, some launchers SIGKILLed); fail on a wrong outcome
/// or anything left behind (processes, mounts, files, descriptors, memory).
#[derive(Debug, Parser)]
#[command(name = "cordon-load", version)]
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

fn main() -> ExitCode {
    let args = LoadArgs::parse();
    let opts = Options {
        jobs: args.jobs,
        runs: args.runs,
        seed: args.seed,
        json: args.json,
        cordon: args.cordon,
        keep: args.keep,
    };
    match run(&cordon_test_support::workspace_root(), &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Why the load could not run, or what it found.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// bubblewrap is missing.
    #[error(
        "bubblewrap is missing at {0}: the load needs it and is never skipped \
         (`cargo xtask ci setup` installs it)"
    )]
    NoBubblewrap(&'static str),
    /// `--jobs` or `--runs` is zero.
    #[error("--jobs and --runs must be at least 1 (got --jobs {jobs} --runs {runs})")]
    BadOptions {
        /// `--jobs`.
        jobs: usize,
        /// `--runs`.
        runs: usize,
    },
    /// Building the `cordon` binary failed.
    #[error(transparent)]
    Build(#[from] CmdError),
    /// Laying out the load's directory failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// To which file or directory.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The JSON report could not be written.
    #[error("cannot write the JSON report {}: {why}", path.display())]
    Json {
        /// Where it was to go.
        path: PathBuf,
        /// Why it could not.
        why: String,
    },
    /// Runs had the wrong outcome, or something was left behind.
    #[error("{count} failure(s) under load (listed above); the first: {first}")]
    Failed {
        /// How many failures.
        count: usize,
        /// The first of them, shortened.
        first: String,
    },
    /// The run again with one malloc arena failed.
    #[error("the load re-run with {}={} ({program}) {status}", ONE_ARENA.0, ONE_ARENA.1)]
    Rerun {
        /// This program.
        program: String,
        /// How that run ended, or why it could not start.
        status: String,
    },
}

/// glibc reads `MALLOC_ARENA_MAX` once, at start-up: without it, this runs the same command
/// again with it set and returns that run's verdict.
fn rerun_with_one_arena() -> Option<Result<(), LoadError>> {
    if std::env::var_os(ONE_ARENA.0).is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let status = std::process::Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env(ONE_ARENA.0, ONE_ARENA.1)
        .status();
    Some(match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(LoadError::Rerun {
            program: exe.display().to_string(),
            status: format!("failed ({s})"),
        }),
        Err(e) => Err(LoadError::Rerun {
            program: exe.display().to_string(),
            status: format!("could not start: {e}"),
        }),
    })
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + use<> {
    let path = path.to_owned();
    move |source| LoadError::Io { what, path, source }
}

/// The load's directory layout.
pub struct Layout {
    /// The load's own directory, `target/load/run-<pid>`.
    pub base: PathBuf,
    bin: PathBuf,
    home: PathBuf,
    /// Homes of their own (no probe cache) for [`mix::Kind::KilledProbing`] runs.
    homes: PathBuf,
    ws: PathBuf,
}

/// Runs the load; `Err` when anything failed.
pub fn run(root: &Path, opts: &Options) -> Result<(), LoadError> {
    if let Some(verdict) = rerun_with_one_arena() {
        return verdict;
    }
    if opts.jobs == 0 || opts.runs == 0 {
        return Err(LoadError::BadOptions {
            jobs: opts.jobs,
            runs: opts.runs,
        });
    }
    if !Path::new(BWRAP).exists() {
        return Err(LoadError::NoBubblewrap(BWRAP));
    }
    let target = cordon_test_support::target_dir(root);
    let built = match &opts.cordon {
        Some(path) => path.clone(),
        None => {
            Cmd::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
                .args(["build", "--locked", "-p", "cordon"])
                .current_dir(root)
                .run()?;
            target.join("debug").join("cordon")
        }
    };
    let session = host::session_digits();
    let layout = lay_out(&target, &built)?;
    let plan = mix::build(opts.runs, opts.seed, &session);
    for p in &plan {
        if matches!(p.workspace, Workspace::Own | Workspace::GitOwn) {
            workspace(&layout.ws.join(p.dir_name()), &p.workspace)?;
        }
        if let Some(name) = p.own_home() {
            let home = layout.homes.join(name);
            std::fs::create_dir_all(&home).map_err(io("create", &home))?;
        }
    }
    cache::prepare(&layout.base, CACHE_STARTS).map_err(io("create", &cache::home(&layout.base)))?;
    println!(
        "load: {} runs, {} at a time, seed {}, session {session}, in {}",
        opts.runs,
        opts.jobs,
        opts.seed,
        layout.base.display()
    );

    let before = checks::Before::take(&layout);
    let mut cli_pids = Vec::new();
    let (cache_problems, cache_report) = cache::concurrent_start(
        &layout.bin,
        &layout.base,
        CACHE_STARTS,
        &session,
        &mut cli_pids,
    );
    let mut failures: Vec<String> = cache_problems
        .into_iter()
        .map(|p| format!("probe cache: {p}"))
        .collect();
    for f in &failures {
        eprintln!("  {f}");
    }

    let harness = harness(&layout, cli_pids);
    let warmup = opts.jobs.max(opts.runs / 2).min(opts.runs);
    // The memory curve is sampled while runs are in flight (every 5 % of them); the verdict
    // compares two quiet moments, after the warm-up and at the end.
    let sink = runner::Sink::new(opts.runs, (opts.runs / 20).max(1));
    let started = Instant::now();
    runner::execute(&harness, &plan[..warmup], opts.jobs, &sink);
    harness.discard_waiting_jails();
    let fds_warm = host::descriptors();
    let warm = host::memory(warmup);
    runner::execute(&harness, &plan[warmup..], opts.jobs, &sink);
    let wall = started.elapsed();
    harness.discard_waiting_jails();
    let fds_end = host::descriptors();
    let end = host::memory(opts.runs);
    // The sessions end before anything is looked for: what they built must be gone with them.
    harness.end_sessions();
    let (mut outcomes, curve) = sink.into_parts();
    outcomes.sort_by_key(|o| o.index);
    for o in &outcomes {
        for p in &o.problems {
            failures.push(format!(
                "run {} ({}, {}): {p}",
                o.index,
                o.kind.name(),
                plan[o.index].dir_name()
            ));
        }
    }

    // Anything still alive: a jail of this load (its marker), or a process running the load's
    // copy of cordon (a launcher's reaper) — except the session reaper of this process's own
    // launcher, which lives as long as the launcher does (one, not more).
    let me = std::process::id();
    let own_reapers = host::reapers_of(me);
    if own_reapers.len() > 1 {
        failures.push(format!(
            "{} reapers are children of the one library launcher's process: {}",
            own_reapers.len(),
            own_reapers
                .iter()
                .map(|(pid, cmd)| format!("[{pid}] {}", cut(cmd, 100)))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let exempt: Vec<u32> = match own_reapers.as_slice() {
        [(pid, _)] => vec![*pid],
        _ => Vec::new(),
    };
    for needle in [session.clone(), format!("{}/", layout.base.display())] {
        let (alive, _) = host::wait_gone_except(&needle, host::KILLED_GRACE, &exempt);
        for (pid, cmd) in &alive {
            failures.push(format!(
                "process {pid} of this load still alive after the end: {}",
                cut(cmd, 200)
            ));
        }
        runner::kill_all(&alive);
    }
    failures.extend(checks::launcher_process((&fds_warm, &fds_end), (warm, end)));
    let pids: Vec<u32> = harness
        .cli_pids
        .lock()
        .map(|p| p.clone())
        .unwrap_or_default()
        .into_iter()
        .chain([std::process::id()])
        .collect();
    failures.extend(before.leftovers(&layout, &plan, &session, &pids));

    let report = report::Report {
        seed: opts.seed,
        jobs: opts.jobs,
        runs: opts.runs,
        warmup_runs: warmup,
        wall_s: wall.as_secs_f64(),
        runs_per_s: opts.runs as f64 / wall.as_secs_f64().max(1e-9),
        kinds: report::kind_stats(&outcomes),
        process: report::ProcessCheck {
            fds_after_warmup: fds_warm.len(),
            fds_at_end: fds_end.len(),
            after_warmup: warm,
            at_end: end,
            growth_limit_kib: MEMORY_GROWTH_LIMIT_KIB,
            malloc_arena_max: std::env::var("MALLOC_ARENA_MAX").ok(),
            curve,
        },
        probe_cache: cache_report,
        failures: failures.clone(),
    };
    println!("\n{}", report.table());
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Json {
            path: path.clone(),
            why: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|e| LoadError::Json {
            path: path.clone(),
            why: e.to_string(),
        })?;
    }
    if opts.keep {
        println!("kept {}", layout.base.display());
    } else {
        let _ = std::fs::remove_dir_all(&layout.base);
    }
    if failures.is_empty() {
        println!("load: every run as expected, nothing left behind");
        return Ok(());
    }
    println!("FAILURES ({}):", failures.len());
    for f in &failures {
        println!("  - {f}");
    }
    Err(LoadError::Failed {
        count: failures.len(),
        first: cut(&failures[0], 300),
    })
}

/// Creates the load's directory: the `cordon` binary (a copy, so a rebuild during the load
/// cannot change it), a home with a credential to mask, and the shared workspaces.
fn lay_out(target: &Path, built: &Path) -> Result<Layout, LoadError> {
    let base = target
        .join("load")
        .join(format!("run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let layout = Layout {
        bin: base.join("bin").join("cordon"),
        home: base.join("home"),
        homes: base.join("homes"),
        ws: base.join("ws"),
        base,
    };
    for dir in [
        &layout.base.join("bin"),
        &layout.home.join(".ssh"),
        &layout.ws,
    ] {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    std::fs::copy(built, &layout.bin).map_err(io("copy the cordon binary to", &layout.bin))?;
    std::fs::set_permissions(&layout.bin, std::fs::Permissions::from_mode(0o755))
        .map_err(io("chmod", &layout.bin))?;
    let key = layout.home.join(".ssh").join("id_load");
    std::fs::write(&key, "LOAD-SENTINEL-KEY\n").map_err(io("write", &key))?;
    workspace(&layout.ws.join("shared-git"), &Workspace::SharedGit)?;
    workspace(&layout.ws.join("shared-git-ide"), &Workspace::SharedGitIde)?;
    Ok(layout)
}

/// Lays out one workspace: a plain directory, or a git repository (with `.vscode` and `.claude`
/// for [`Workspace::SharedGitIde`]).
fn workspace(dir: &Path, kind: &Workspace) -> Result<(), LoadError> {
    let mut files: Vec<(&str, &str)> = vec![("README", "a workspace of the load\n")];
    if *kind != Workspace::Own {
        files.extend([
            (".git/HEAD", "ref: refs/heads/main\n"),
            (".git/config", "[core]\n\trepositoryformatversion = 0\n"),
            (".git/description", "load\n"),
        ]);
        for d in [".git/hooks", ".git/objects", ".git/refs/heads"] {
            std::fs::create_dir_all(dir.join(d)).map_err(io("create", dir))?;
        }
    }
    if *kind == Workspace::SharedGitIde {
        files.extend([
            (".vscode/settings.json", "{}\n"),
            (".claude/settings.json", "{}\n"),
        ]);
    }
    for (rel, content) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&path, content).map_err(io("write", &path))?;
    }
    Ok(())
}

fn harness(layout: &Layout, cli_pids: Vec<u32>) -> Harness {
    let home = layout.home.clone().into_os_string();
    let launcher = Launcher::linux(Launcher::default_config(
        layout.bin.clone(),
        Some(home.clone()),
        None,
    ));
    let floor = Floor::new(FloorConfig {
        home: Some(layout.home.clone()),
        ..FloorConfig::default()
    });
    let policy = |timeout: Option<u64>| -> Policy {
        let mut b = PolicyBuilder::new(Profile::Shell);
        let mut limits = *b.current().limits();
        limits.output_cap_bytes = OUTPUT_CAP;
        if timeout.is_some() {
            limits.timeout_secs = timeout;
        }
        b.set_limits(limits, "load", Source::Caller);
        b.build()
    };
    Harness {
        launcher,
        floor,
        cordon: layout.bin.clone(),
        home: layout.home.clone(),
        ws_root: layout.ws.clone(),
        homes: layout.homes.clone(),
        host_env: vec![
            ("HOME".into(), home),
            ("PATH".into(), OsString::from(runner::STD_PATH)),
            ("LANG".into(), "C.UTF-8".into()),
        ],
        normal: policy(None),
        timing_out: policy(Some(1)),
        cli_pids: Mutex::new(cli_pids),
        output_cap: OUTPUT_CAP,
        sessions: Mutex::default(),
    }
}
