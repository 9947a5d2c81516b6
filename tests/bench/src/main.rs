//! cordon-bench, the benchmark (`cargo xtask bench` runs it): what cordon costs, side by side with
//! what it is built on, in one run.
//! Nothing here asserts a time; it measures, prints a table, and writes docs/benchmarks.md (and
//! JSON when asked).
//!
//! - **Launch** (`launch`): `/bin/true` bare, under bubblewrap with the seed's flags, under
//!   bubblewrap with exactly cordon's isolation, through `cordon run`, through
//!   `cordon_launch::Launcher::run_prepared` in process, and `cordon explain` — interleaved,
//!   medians.
//! - **Flat in repository size**: `cordon run` and `run_prepared` in an empty workspace and in
//!   one of 100,000 files (`tree`), in the same interleaved rounds.
//! - **Scan**: `cordon_scan::scan` of those 100,000 files against `find` with the same
//!   predicates, in wall-clock and CPU time, and `Launcher::prepare` (the session's walk).
//! - **The copy-on-write layer** (`layered`): 10,000 new files, an append to a 1 GiB file and a
//!   crate's `cargo build`, each with `--layer` against `--live`.
//! - **In-process steps** (`micro`): plan, environment, seccomp, bubblewrap arguments, Seatbelt
//!   with 1,000 globs, a floor verdict on a 10 KB command, and the per-command snapshot check.
//!
//! The in-process rows must time optimized code: `cargo xtask bench` runs this package with
//! `--release`, and a debug build (`cargo run -p cordon-bench`) builds a release one and runs the
//! bench there, with the same arguments.

mod launch;
mod layered;
mod micro;
mod report;
mod tree;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;
use report::{Machine, Report, Row, Section};

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Samples per launch case and batches per in-process step.
    pub runs: usize,
    /// Also write the report as JSON here.
    pub json: Option<PathBuf>,
    /// Rewrite docs/benchmarks.md (outside the load section).
    pub write_docs: bool,
    /// Time only the copy-on-write layer's workloads and print them (no docs, no JSON).
    pub layer_only: bool,
}

/// Time cordon (CLI, library, in-process steps, a 100k-file workspace, the session walk)
/// against plain bubblewrap with the same isolation; writes docs/benchmarks.md (--json FILE).
#[derive(Debug, Parser)]
#[command(name = "cordon-bench", version)]
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
    /// Time only the workloads under the copy-on-write layer and print them; writes nothing.
    #[arg(long)]
    layer_only: bool,
}

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    match run_with(
        &cordon_test_support::workspace_root(),
        &Options {
            runs: args.runs,
            json: args.json,
            write_docs: !args.no_docs,
            layer_only: args.layer_only,
        },
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the benchmark.
pub fn run_with(root: &Path, opts: &Options) -> Result<(), Error> {
    if opts.runs == 0 {
        return Err(Error::Bench("--runs must be at least 1".into()));
    }
    if !Path::new(launch::BWRAP).exists() {
        return Err(Error::Bench(format!(
            "{} is missing: run `cargo xtask ci setup` first",
            launch::BWRAP
        )));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = cordon_test_support::target_dir(root);
    // Two invocations, not one: building both packages at once would unify their dependencies'
    // features and give a `cordon` binary unlike the one `-p cordon` builds.
    Cmd::new(&cargo)
        .args(["build", "--release", "--locked", "-p", "cordon"])
        .current_dir(root)
        .run()?;
    if cfg!(debug_assertions) {
        Cmd::new(&cargo)
            .args(["build", "--release", "--locked", "-p", "cordon-bench"])
            .current_dir(root)
            .run()?;
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        // Same working directory, so a relative `--json FILE` means the same file.
        return Cmd::new(target.join("release/cordon-bench"))
            .args(&args)
            .run()
            .map_err(Error::from);
    }
    // The binary to install (static, `cargo xtask dist`) runs every case; the dynamically
    // linked `cargo build --release` one gets a CLI row of its own.
    let cordon = cordon_test_support::dist::build(root)?;
    let dynamic = target.join("release/cordon");
    let base = std::env::temp_dir().join(format!("cordon-bench-{}", std::process::id()));
    if opts.layer_only {
        let outcome = layer_only(&cordon, &base, opts);
        let _ = std::fs::remove_dir_all(&base);
        return outcome;
    }
    let outcome = measure(&cordon, &dynamic, &base, opts);
    let _ = std::fs::remove_dir_all(&base);
    let report = outcome?;
    report.print();
    if let Some(path) = &opts.json {
        report.write_json(path)?;
        println!("wrote {}", path.display());
    }
    if opts.write_docs {
        let docs = root.join("docs/benchmarks.md");
        report.write_docs(&docs)?;
        println!("wrote {}", docs.display());
    }
    Ok(())
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// `100000` → `100,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn make_dir(dir: &Path) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::canonicalize(dir))
        .map_err(|e| Error::Bench(format!("cannot create {}: {e}", dir.display())))
}

/// `--layer-only`: the layer's rows, printed (the 100,000-file workspace is built for them).
fn layer_only(cordon: &Path, base: &Path, opts: &Options) -> Result<(), Error> {
    let empty = make_dir(&base.join("empty"))?;
    let large = make_dir(&base.join("large"))?;
    tree::build(&large)?;
    let rounds = (opts.runs / 10).clamp(3, 10);
    for pair in layered::run(cordon, base, (&empty, &large), rounds)?.chunks(2) {
        let reference = pair[0].1.as_secs_f64().max(1e-12);
        for (name, d, samples) in pair {
            println!(
                "{name:70} {:9.2} ms  {:5.2}x  ({samples} samples)",
                d.as_secs_f64() * 1e3,
                d.as_secs_f64() / reference
            );
        }
    }
    Ok(())
}

fn measure(cordon: &Path, dynamic: &Path, base: &Path, opts: &Options) -> Result<Report, Error> {
    let load_before = load_average();
    let files = make_dir(&base.join("files"))?;
    let empty = make_dir(&base.join("empty"))?;
    let large = make_dir(&base.join("large"))?;
    let sessions = make_dir(&base.join("sessions"))?;
    println!("building the 100,000-file workspace in {}", large.display());
    let tree_text = tree::build(&large)?;
    // The same again for the library's session: a session's jails hold placeholders in its
    // workspace, which the CLI's runs there would otherwise find made already.
    let large_session = make_dir(&base.join("large-session"))?;
    tree::build(&large_session)?;
    println!(
        "{} (built in {:.1} s)",
        tree_text.description,
        tree_text.took.as_secs_f64()
    );

    println!(
        "timing launches: {} rounds of {} cases",
        opts.runs,
        launch::CASES
    );
    let places = launch::Places {
        cordon,
        dynamic,
        empty: &empty,
        large: &large,
        large_session: &large_session,
        files: &files,
        sessions: &sessions,
    };
    let launches = launch::run(&places, opts.runs)?;
    let get = |name: &str| {
        launches
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| *d)
            .ok_or_else(|| Error::Bench(format!("no timing for {name}")))
    };
    let same = get(launch::SAME)?;

    let scan_rounds = (opts.runs / 10).clamp(5, 25);
    println!("timing the scan against find: {scan_rounds} rounds");
    let scans = tree::scan_vs_find(&large, scan_rounds)?;
    let prepare = launch::prepare_time(&places, &large, scan_rounds)?;

    println!("timing in-process steps: {} batches each", opts.runs);
    let bwrap_version = Cmd::new(launch::BWRAP).arg("--version").read()?;
    let bwrap_help = Cmd::new(launch::BWRAP).arg("--help").read()?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| Error::Bench("HOME is not set".into()))?;
    let stage = std::fs::canonicalize(cordon)
        .map_err(|e| Error::Bench(format!("{}: {e}", cordon.display())))?;
    let micros = micro::run(
        &micro::Inputs {
            home: &home,
            workspace: &empty,
            stage: &stage,
            bwrap_version: &bwrap_version,
            bwrap_help: &bwrap_help,
            snapshot: scans.session.snapshot(),
        },
        opts.runs,
    )?;

    println!("timing the proxy network: {} rounds of 4 cases", opts.runs);
    let proxied = launch::proxy(&places, opts.runs)?;
    let layer_rounds = (opts.runs / 10).clamp(3, 10);
    println!("timing workloads under the copy-on-write layer: {layer_rounds} rounds of 12 cases");
    let layered = layered::run(cordon, base, (&empty, &large), layer_rounds)?;
    let ratio = |d: Duration, to: Duration| d.as_secs_f64() / to.as_secs_f64().max(1e-12);
    let mut rows = Vec::new();
    for (name, d) in &launches {
        if matches!(*name, launch::CLI_LARGE | launch::LIBRARY_LARGE) {
            continue;
        }
        // The targets: the CLI within 15 % of bubblewrap, the library within 5 %.
        let target = match *name {
            launch::CLI => Some(1.15),
            launch::LIBRARY => Some(1.05),
            _ => None,
        };
        rows.push(Row {
            section: Section::Launch,
            what: (*name).to_owned(),
            median: *d,
            samples: opts.runs,
            ratio: ratio(*d, same),
            target,
            target_source: target.map(|_| "docs/limits.md"),
        });
    }
    // Each launcher in the large workspace against the same launcher in the empty one.
    for (empty_name, empty_row, large_name, large_row) in [
        (
            launch::CLI,
            launch::CLI_EMPTY,
            launch::CLI_LARGE,
            launch::CLI_LARGE,
        ),
        (
            launch::LIBRARY,
            launch::LIBRARY_EMPTY,
            launch::LIBRARY_LARGE,
            launch::LIBRARY_LARGE,
        ),
    ] {
        let reference = get(empty_name)?;
        for (what, d, target) in [
            (empty_row, reference, None),
            (large_row, get(large_name)?, Some(1.10)),
        ] {
            rows.push(Row {
                section: Section::RepoSize,
                what: what.to_owned(),
                median: d,
                samples: opts.runs,
                ratio: ratio(d, reference),
                target,
                target_source: target.map(|_| "issue #8"),
            });
        }
    }
    let c = scans.session.counts();
    for (what, d, target) in [
        ("find -xdev (same predicates)".to_owned(), scans.find, None),
        (
            format!(
                "cordon-scan ({} entries, {} directories)",
                thousands(c.entries),
                thousands(c.dirs)
            ),
            scans.scan,
            Some(1.0),
        ),
        (report::ONE_CORE_ROW.to_owned(), scans.scan_one_core, None),
        (
            format!("cordon-scan + {} deny globs", tree::DENY_GLOBS.len()),
            scans.scan_globs,
            None,
        ),
        (
            "Launcher::prepare (once per session)".to_owned(),
            prepare,
            None,
        ),
    ] {
        rows.push(Row {
            section: Section::Scan,
            what,
            median: d,
            samples: scans.rounds,
            ratio: ratio(d, scans.find),
            target,
            target_source: target.map(|_| "issue #8"),
        });
    }
    for (what, d) in [
        ("find -xdev (same predicates)", scans.find_cpu),
        ("cordon-scan, all workers", scans.scan_cpu),
    ] {
        rows.push(Row {
            section: Section::ScanCpu,
            what: what.to_owned(),
            median: d,
            samples: scans.rounds,
            ratio: ratio(d, scans.find_cpu),
            target: None,
            target_source: None,
        });
    }
    for t in micros {
        rows.push(Row {
            section: Section::Micro,
            what: t.what,
            median: t.median,
            samples: t.samples,
            ratio: ratio(t.median, same),
            target: None,
            target_source: None,
        });
    }

    // Each proxied row against the row before it (deny for `/bin/true`, allow for `curl`).
    for pair in proxied.chunks(2) {
        let reference = pair[0].1;
        for (name, d) in pair {
            rows.push(Row {
                section: Section::Proxy,
                what: (*name).to_owned(),
                median: *d,
                samples: opts.runs,
                ratio: ratio(*d, reference),
                target: None,
                target_source: None,
            });
        }
    }

    // Each layered row against the live one before it.
    for pair in layered.chunks(2) {
        let reference = pair[0].1;
        for (name, d, samples) in pair {
            rows.push(Row {
                section: Section::Layer,
                what: (*name).to_owned(),
                median: *d,
                samples: *samples,
                ratio: ratio(*d, reference),
                target: None,
                target_source: None,
            });
        }
    }

    Ok(Report {
        runs: opts.runs,
        scan_rounds,
        tree: tree_text.description.clone(),
        machine: machine(&bwrap_version, load_before),
        rows,
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            let parts: Vec<&str> = s.split_whitespace().take(3).collect();
            (parts.len() == 3).then(|| parts.join(" "))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn machine(bwrap_version: &str, load_before: String) -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown CPU".to_owned(), |(_, v)| v.trim().to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or_else(
            || "unknown memory".to_owned(),
            |kb| format!("{} GiB RAM", kb / (1024 * 1024)),
        );
    let uname = rustix::system::uname();
    let kernel = uname.release().to_string_lossy().into_owned();
    let euid = rustix::process::geteuid();
    let user = if euid.is_root() {
        "root".to_owned()
    } else {
        format!("uid {}", euid.as_raw())
    };
    let rustc = Cmd::new("rustc")
        .arg("--version")
        .read()
        .unwrap_or_else(|_| "rustc (unknown version)".into());
    let date = Cmd::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .read()
        .unwrap_or_else(|_| "(unknown date)".into());
    Machine {
        date,
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory,
        kernel,
        bwrap: bwrap_version.trim().to_owned(),
        rustc,
        user,
        load_before,
        load_after: load_average(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_separated() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(101_113), "101,113");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
    }
}
