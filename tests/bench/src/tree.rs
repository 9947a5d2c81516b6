//! The 100,000-file workspace the repository-size rows run in, and the scan against `find`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_test_support::error::Error;

/// Regular files in the large workspace.
pub const FILES: usize = 100_000;

/// Directories of the large workspace: `src/m*/p*/q*`, 10 × 10 × 10 leaves of 100 files.
const FANOUT: usize = 10;
const PER_LEAF: usize = FILES / (FANOUT * FANOUT * FANOUT);

/// The deny globs of the "with globs" scan row: credential-shaped names.
pub const DENY_GLOBS: &[&str] = &[
    "**/.env",
    "**/.env.*",
    "**/*.pem",
    "**/*.key",
    "**/id_rsa*",
    "**/id_ed25519*",
    "**/.npmrc",
    "**/.pypirc",
    "**/.netrc",
    "**/credentials.json",
    "**/secrets/**",
    "**/.git-credentials",
];

/// Builds the large workspace under `root`: 100,000 regular files in 1,111 directories, a few of
/// them `.env` files, plus a symlink and a hard link whose both ends are inside (so nothing in it
/// is a finding).
pub fn build(root: &Path) -> Result<Built, Error> {
    let io = |what: &Path, e: std::io::Error| {
        Error::Bench(format!(
            "building the workspace at {}: {}: {e}",
            root.display(),
            what.display()
        ))
    };
    let start = Instant::now();
    let mut files: u64 = 0;
    let mut dirs: u64 = 1;
    for m in 0..FANOUT {
        for p in 0..FANOUT {
            for q in 0..FANOUT {
                let leaf = root.join(format!("src/m{m}/p{p}/q{q}"));
                std::fs::create_dir_all(&leaf).map_err(|e| io(&leaf, e))?;
                for f in 0..PER_LEAF {
                    let name = if f == 0 && q == 0 {
                        ".env".to_owned()
                    } else {
                        format!("f{f}.rs")
                    };
                    let file = leaf.join(name);
                    std::fs::File::create(&file).map_err(|e| io(&file, e))?;
                    files += 1;
                }
            }
        }
    }
    // src, src/m*, src/m*/p*, src/m*/p*/q*
    dirs += (1 + FANOUT + FANOUT * FANOUT + FANOUT * FANOUT * FANOUT) as u64;
    let link = root.join("README.md");
    std::fs::hard_link(root.join("src/m0/p0/q1/f1.rs"), &link).map_err(|e| io(&link, e))?;
    let sym = root.join("latest");
    std::os::unix::fs::symlink("src/m9/p9/q9", &sym).map_err(|e| io(&sym, e))?;
    Ok(Built {
        description: format!(
            "{} regular files in {} directories",
            super::thousands(files),
            super::thousands(dirs)
        ),
        took: start.elapsed(),
    })
}

/// The workspace as built.
pub struct Built {
    /// What it holds, for the report.
    pub description: String,
    /// How long building it took.
    pub took: Duration,
}

/// `find` with the predicates the scan refuses on.
fn find_command(root: &Path) -> Command {
    let mut c = Command::new("find");
    c.arg(root).args([
        "-xdev", "(", "-type", "s", "-o", "-type", "p", "-o", "-type", "b", "-o", "-type", "c",
        "-o", "(", "-type", "f", "-links", "+1", ")", ")", "-print",
    ]);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    c
}

/// Medians of `find`, the scan, the scan on one core and the scan with globs, interleaved over
/// `rounds`.
pub struct ScanTimes {
    pub find: Duration,
    pub scan: Duration,
    pub scan_one_core: Duration,
    pub scan_globs: Duration,
    /// CPU time (user and system) of find's one thread.
    pub find_cpu: Duration,
    /// CPU time (user and system) of the scan, every worker thread included.
    pub scan_cpu: Duration,
    pub rounds: usize,
    /// The last scan, for the snapshot row and the report.
    pub session: cordon_scan::SessionScan,
}

pub fn scan_vs_find(root: &Path, rounds: usize) -> Result<ScanTimes, Error> {
    let globs = cordon_scan::DenyGlobs::new(DENY_GLOBS)
        .map_err(|e| Error::Bench(format!("deny globs: {e}")))?;
    let none = cordon_scan::DenyGlobs::none();
    let roots = [PathBuf::from(root)];
    let scan = |globs: &cordon_scan::DenyGlobs| {
        cordon_scan::scan(&roots, globs)
            .map_err(|e| Error::Bench(format!("scan of {}: {e}", root.display())))
    };
    let (mut find_t, mut scan_t, mut globs_t) = (Vec::new(), Vec::new(), Vec::new());
    let mut one_t = Vec::new();
    let (mut find_cpu, mut scan_cpu) = (Vec::new(), Vec::new());
    let mut last = None;
    for round in 0..rounds + 2 {
        let (took, cpu) = run_find(root)?;
        if round >= 2 {
            find_t.push(took);
            find_cpu.push(cpu);
        }

        let cpu_start = process_cpu();
        let start = Instant::now();
        let session = scan(&none)?;
        let took = start.elapsed();
        if round >= 2 {
            scan_t.push(took);
            scan_cpu.push(process_cpu().saturating_sub(cpu_start));
        }
        check_clean(&session)?;

        // The same walk with every worker confined to one core: what the walk costs without
        // the second core's help.
        let (session, took) = on_one_core(|| {
            let start = Instant::now();
            scan(&none).map(|s| (s, start.elapsed()))
        })??;
        if round >= 2 {
            one_t.push(took);
        }
        check_clean(&session)?;

        let start = Instant::now();
        let session = scan(&globs)?;
        let took = start.elapsed();
        if round >= 2 {
            globs_t.push(took);
        }
        check_clean(&session)?;
        if session.deny_matches().len() != FANOUT * FANOUT {
            return Err(Error::Bench(format!(
                "the deny globs matched {} paths, expected the {} `.env` files",
                session.deny_matches().len(),
                FANOUT * FANOUT
            )));
        }
        last = Some(session);
    }
    let session = last.ok_or_else(|| Error::Bench("no scan rounds ran".into()))?;
    Ok(ScanTimes {
        find: super::median(&mut find_t),
        scan: super::median(&mut scan_t),
        scan_one_core: super::median(&mut one_t),
        find_cpu: super::median(&mut find_cpu),
        scan_cpu: super::median(&mut scan_cpu),
        scan_globs: super::median(&mut globs_t),
        rounds,
        session,
    })
}

/// The bench tree holds nothing the scan refuses, and every file was seen.
fn check_clean(session: &cordon_scan::SessionScan) -> Result<(), Error> {
    session
        .refusal()
        .map_err(|e| Error::Bench(format!("the bench tree should be clean: {e}")))?;
    let c = session.counts();
    // The hard link README.md is a second entry for one of the files.
    if c.files != FILES as u64 + 1 {
        return Err(Error::Bench(format!(
            "the scan saw {} regular files, expected {}",
            c.files,
            FILES + 1
        )));
    }
    Ok(())
}

/// Runs `find` once: wall-clock time, and its CPU time, read from `/proc/PID/schedstat` while it
/// is a zombie (exited, not yet reaped), in nanoseconds.
fn run_find(root: &Path) -> Result<(Duration, Duration), Error> {
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    let start = Instant::now();
    let mut child = find_command(root)
        .spawn()
        .map_err(|e| Error::Bench(format!("cannot run find: {e}")))?;
    let pid = Pid::from_child(&child);
    waitid(
        WaitId::Pid(pid),
        WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
    )
    .map_err(|e| Error::Bench(format!("waiting for find: {e}")))?;
    let took = start.elapsed();
    let schedstat = std::fs::read_to_string(format!("/proc/{}/schedstat", child.id()))
        .map_err(|e| Error::Bench(format!("reading find's schedstat: {e}")))?;
    let status = child
        .wait()
        .map_err(|e| Error::Bench(format!("waiting for find: {e}")))?;
    if !status.success() {
        return Err(Error::Bench(format!("find failed: {status}")));
    }
    let ns = schedstat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| Error::Bench(format!("find's schedstat is {schedstat:?}")))?;
    Ok((took, Duration::from_nanos(ns)))
}

/// CPU time of this process so far, every thread included (also threads that have exited).
fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Runs `f` on a new thread allowed on one CPU only; threads it starts inherit that.
fn on_one_core<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, Error> {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let allowed = sched_getaffinity(None)
                    .map_err(|e| Error::Bench(format!("sched_getaffinity: {e}")))?;
                let first = (0..CpuSet::MAX_CPU)
                    .find(|&cpu| allowed.is_set(cpu))
                    .ok_or_else(|| Error::Bench("this thread may run on no CPU".into()))?;
                let mut one = CpuSet::new();
                one.set(first);
                sched_setaffinity(None, &one)
                    .map_err(|e| Error::Bench(format!("sched_setaffinity: {e}")))?;
                Ok(f())
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
