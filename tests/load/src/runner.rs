//! Running one planned command and judging its outcome: through the library (one shared
//! [`Launcher`], the floor asked first as `cordon run` does) or through the CLI, whose launcher is
//! then killed with SIGKILL.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cordon_floor::{Floor, Verdict};
use cordon_launch::Forward;
use cordon_launch::{Launcher, Preparation, RunRequest, RunResult, RunStatus};
use cordon_policy::{Invocation, Plan, Policy, RealHost};

use super::host::{self, KILLED_GRACE, Memory};
use super::mix::{FLOOD_BYTES, Kind, Planned, Workspace};

/// `PATH` for every jail and CLI (root's own may point into `/root`).
pub const STD_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// How long a killed-ready run waits for its payload's `ready` before giving up: only a guard
/// against a launcher that never starts, far above any real start-up.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// Everything the runs share.
pub struct Harness {
    /// The one launcher every library run goes through.
    pub launcher: Launcher,
    /// The floor, configured as the CLI configures it.
    pub floor: Floor,
    /// The `cordon` binary for CLI runs (also the library launcher's stage).
    pub cordon: PathBuf,
    /// The home directory of every run.
    pub home: PathBuf,
    /// Where the workspaces are.
    pub ws_root: PathBuf,
    /// Where the homes of [`Kind::KilledProbing`] runs are.
    pub homes: PathBuf,
    /// The host environment the library filters (the same variables the CLI runs get).
    pub host_env: Vec<(OsString, OsString)>,
    /// The load's policy.
    pub normal: Policy,
    /// The same with a 1 s timeout.
    pub timing_out: Policy,
    /// Process ids of every CLI launcher started (for attributing what they leave).
    pub cli_pids: Mutex<Vec<u32>>,
    /// The output cap of both policies.
    pub output_cap: u64,
    /// One prepared session per shared workspace (`Launcher::prepare`, made on first use):
    /// library runs there go through `run_prepared`, so they claim the jail the session built
    /// ahead (cordon-launch's warm.rs) when it fits, from many threads at once.
    pub sessions: Mutex<HashMap<PathBuf, Arc<Preparation>>>,
}

impl Harness {
    /// Kills every jail the sessions built ahead (a quiet moment's descriptors and memory must
    /// not count them).
    pub fn discard_waiting_jails(&self) {
        if let Ok(sessions) = self.sessions.lock() {
            for prep in sessions.values() {
                prep.discard_waiting_jail();
            }
        }
    }

    /// Ends every session (and so its waiting jail).
    pub fn end_sessions(&self) {
        let ended: Vec<Arc<Preparation>> = match self.sessions.lock() {
            Ok(mut sessions) => sessions.drain().map(|(_, p)| p).collect(),
            Err(_) => Vec::new(),
        };
        drop(ended);
    }

    /// The session of the shared workspace `work`, prepared for `plan` on first use; `None`
    /// for a workspace of its own (a jail waiting there would hold placeholders in it after the
    /// run, which the per-run check forbids) or when the walk refuses.
    fn session(&self, p: &Planned, work: &Path, plan: &Plan) -> Option<Arc<Preparation>> {
        if matches!(p.workspace, Workspace::Own | Workspace::GitOwn) {
            return None;
        }
        let mut sessions = self.sessions.lock().ok()?;
        if let Some(prep) = sessions.get(work) {
            return Some(Arc::clone(prep));
        }
        let prep = Arc::new(self.launcher.prepare(plan).ok()?);
        sessions.insert(work.to_path_buf(), Arc::clone(&prep));
        Some(prep)
    }
}

/// How one run went.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub index: usize,
    pub kind: Kind,
    /// Floor verdict and launcher run (library), or spawn to killed-and-gone (CLI).
    pub latency: Duration,
    /// For killed jails: how long their processes took to disappear.
    pub gone_after: Option<Duration>,
    /// Every way the outcome differed from the expected one; empty when it was as expected.
    pub problems: Vec<String>,
    /// What to add to the problems, if there are any (a killed CLI's timing and output).
    context: Option<String>,
}

/// Where the workers put what they learn: every outcome (allocated up front, so that the memory
/// check sees the launcher rather than this bookkeeping) and a memory sample every `every` runs.
pub struct Sink {
    outcomes: Mutex<Vec<Outcome>>,
    curve: Mutex<Vec<Memory>>,
    every: usize,
}

impl Sink {
    pub fn new(runs: usize, every: usize) -> Sink {
        Sink {
            outcomes: Mutex::new(Vec::with_capacity(runs)),
            curve: Mutex::new(Vec::with_capacity(runs / every.max(1) + 1)),
            every: every.max(1),
        }
    }

    fn push(&self, o: Outcome) {
        let done = match self.outcomes.lock() {
            Ok(mut r) => {
                r.push(o);
                r.len()
            }
            Err(_) => return,
        };
        if done.is_multiple_of(self.every)
            && let Ok(mut c) = self.curve.lock()
        {
            c.push(host::memory(done));
        }
    }

    /// The outcomes, and the memory samples.
    pub fn into_parts(self) -> (Vec<Outcome>, Vec<Memory>) {
        (
            self.outcomes.into_inner().unwrap_or_default(),
            self.curve.into_inner().unwrap_or_default(),
        )
    }
}

/// Runs `runs` with `jobs` workers into `sink`; failures are printed as they happen.
pub fn execute(h: &Harness, runs: &[Planned], jobs: usize, sink: &Sink) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                while let Some(p) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let o = run_one(h, p);
                    for problem in &o.problems {
                        eprintln!(
                            "  run {} ({}, {}): {problem}",
                            o.index,
                            o.kind.name(),
                            p.dir_name()
                        );
                    }
                    sink.push(o);
                }
            });
        }
    });
}

fn run_one(h: &Harness, p: &Planned) -> Outcome {
    let work = h.ws_root.join(p.dir_name());
    let mut o = Outcome {
        index: p.index,
        kind: p.kind,
        latency: Duration::ZERO,
        gone_after: None,
        problems: Vec::new(),
        context: None,
    };
    let own = matches!(p.workspace, Workspace::Own | Workspace::GitOwn);
    let before = own.then(|| host::listing(&work, None));
    let ended = if p.kind.through_cli() {
        run_cli(h, p, &work, &mut o)
    } else {
        run_library(h, p, &work, &mut o)
    };
    if let Some(before) = before {
        own_workspace_restored(p, &work, &before, ended, &mut o.problems);
    }
    // Kept only with problems: the outcomes of every run stay in memory until the end, and
    // the memory check should see the launcher, not the harness's bookkeeping.
    if let Some(context) = o.context.take()
        && !o.problems.is_empty()
    {
        o.problems.push(context);
    }
    o
}

/// A workspace of its own must be exactly as before once the run returned (library), or within
/// [`KILLED_GRACE`] of its launcher being killed (CLI); and no process may still be working on it
/// (the launcher's reaper names the placeholders it removes in its argv).
fn own_workspace_restored(
    p: &Planned,
    work: &Path,
    before: &host::Listing,
    ended: Instant,
    problems: &mut Vec<String>,
) {
    let grace = if p.kind.through_cli() {
        KILLED_GRACE
    } else {
        Duration::ZERO
    };
    let needle = format!("{}/", work.display());
    loop {
        let changes = host::diff(before, &host::listing(work, None));
        let busy = host::processes_with(&needle);
        if changes.is_empty() && busy.is_empty() {
            return;
        }
        if ended.elapsed() >= grace {
            let when = if p.kind.through_cli() {
                "after its launcher was SIGKILLed"
            } else {
                "after the run returned"
            };
            if !changes.is_empty() {
                problems.push(format!(
                    "its own workspace {} not restored {} ms {when}: {}",
                    work.display(),
                    ended.elapsed().as_millis(),
                    changes
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            if !busy.is_empty() {
                problems.push(format!(
                    "process(es) still working on its workspace {} ms {when}: {}",
                    ended.elapsed().as_millis(),
                    brief_processes(&busy)
                ));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs through the library; returns when the run returned.
fn run_library(h: &Harness, p: &Planned, work: &Path, o: &mut Outcome) -> Instant {
    let argv = p.argv();
    let started = Instant::now();
    let verdict = h.floor.check_argv(&argv);
    if p.kind == Kind::FloorRefusal {
        o.latency = started.elapsed();
        match verdict.rule() {
            Some(rule) if rule.id() == "recursive-delete" => {}
            Some(rule) => o
                .problems
                .push(format!("refused by rule {rule}, expected recursive-delete")),
            None => o
                .problems
                .push("the floor allowed `rm -rf /` (the command was not run)".into()),
        }
        let sentinel = work.join(format!("refused-{}", p.name()));
        if std::fs::symlink_metadata(&sentinel).is_ok() {
            o.problems.push(format!(
                "{} exists: the refused command ran",
                sentinel.display()
            ));
        }
        return Instant::now();
    }
    if let Verdict::Refuse { .. } = verdict {
        o.latency = started.elapsed();
        o.problems
            .push(format!("the floor refused an ordinary command: {verdict}"));
        return Instant::now();
    }
    let policy = if p.kind == Kind::Timeout {
        &h.timing_out
    } else {
        &h.normal
    };
    let host = RealHost::new(Some(h.home.clone().into_os_string()));
    let plan = match Plan::resolve(policy, &Invocation::at(work), &host) {
        Ok(plan) => live(plan),
        Err(e) => {
            o.latency = started.elapsed();
            o.problems
                .push(format!("no plan for {}: {e}", work.display()));
            return Instant::now();
        }
    };
    let req = RunRequest {
        plan: &plan,
        argv: &argv,
        host_env: &h.host_env,
        forward: Forward::No,
        inherit_stdin: false,
    };
    let result = match h.session(p, work, &plan) {
        Some(prep) => h.launcher.run_prepared(&req, &prep),
        None => h.launcher.run(&req),
    };
    let returned = Instant::now();
    o.latency = started.elapsed();
    match result {
        Err(e) => o.problems.push(format!("the launcher failed: {e}")),
        Ok(r) => judge(p, &r, h.output_cap, &mut o.problems),
    }
    let grace = if p.kind.killed() {
        KILLED_GRACE
    } else {
        Duration::ZERO
    };
    let (alive, took) = host::wait_gone(&p.marker, grace);
    if p.kind.killed() {
        o.gone_after = Some(took);
    }
    if !alive.is_empty() {
        let (still, lingered) = host::wait_gone(&p.marker, KILLED_GRACE);
        o.problems.push(format!(
            "{} process(es) still alive {} ms after the run returned ({}): {}",
            alive.len(),
            took.as_millis(),
            if still.is_empty() {
                format!("gone {} ms later", lingered.as_millis())
            } else {
                format!(
                    "still there {} ms later, killed by the harness",
                    lingered.as_millis()
                )
            },
            brief_processes(&alive)
        ));
        kill_all(&still);
    }
    returned
}

/// The expected outcome of each library kind.
fn judge(p: &Planned, r: &RunResult, cap: u64, problems: &mut Vec<String>) {
    let mut fail = |what: String| problems.push(format!("{what}; got {}", describe(r)));
    if r.status != RunStatus::Refused
        && (!r.sandboxed || r.backend.as_deref() != Some("bubblewrap"))
    {
        fail("ran without the bubblewrap jail".into());
        return;
    }
    let exited_0 = r.status == RunStatus::Exited && r.exit_code == 0;
    let expect_stdout = |text: String| (exited_0 && r.stdout.text == text, text);
    let (ok, wanted) = match p.kind {
        Kind::Ordinary => expect_stdout(format!("ran {}\n", p.name())),
        Kind::Background => expect_stdout("started\n".into()),
        Kind::PrivateTmp => expect_stdout(format!("{}\n", p.name())),
        Kind::GitShared | Kind::GitSharedIde | Kind::GitOwn => expect_stdout("done\n".into()),
        Kind::Flood => (
            exited_0
                && r.stdout.truncated
                && r.stdout.bytes == FLOOD_BYTES
                && r.stdout.text.len() as u64 == cap,
            format!("exit 0, stdout truncated at {cap} of {FLOOD_BYTES} bytes"),
        ),
        Kind::Timeout => (
            r.status == RunStatus::Timeout && r.exit_code == 124,
            "status timeout, exit 124".into(),
        ),
        Kind::FloorRefusal | Kind::KilledReady | Kind::KilledEarly | Kind::KilledProbing => {
            (true, String::new())
        }
    };
    if !ok {
        fail(format!("expected {}", show(&wanted)));
    }
}

fn show(text: &str) -> String {
    if text.ends_with('\n') {
        format!("exit 0 and stdout {text:?}")
    } else {
        text.to_owned()
    }
}

/// A run's result in one line.
fn describe(r: &RunResult) -> String {
    let mut s = format!(
        "status {:?}, exit {}, stdout {:?} ({} B{}), stderr {:?}",
        r.status,
        r.exit_code,
        cut(&r.stdout.text, 160),
        r.stdout.bytes,
        if r.stdout.truncated {
            ", truncated"
        } else {
            ""
        },
        cut(&r.stderr.text, 200)
    );
    if let Some(refusal) = &r.refusal {
        s.push_str(&format!(", refusal: {}", cut(refusal, 300)));
    }
    s
}

/// At most `n` characters.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn brief_processes(list: &[(u32, String)]) -> String {
    list.iter()
        .map(|(pid, cmd)| format!("[{pid}] {}", cut(cmd, 120)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// SIGKILLs these processes, by id (they carry this load's marker: the harness started them).
pub fn kill_all(list: &[(u32, String)]) {
    for (pid, _) in list {
        if let Some(pid) = i32::try_from(*pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// `plan` in live mode. The load proves live mode's guarantees under concurrency and kills
/// (placeholders shared and removed, the workspace restored, nothing left behind); a layered
/// run keeps a killed run's layer in cordon's state by design, which
/// `crates/cordon/tests/cli/kill_layer.rs` kills at many instants.
pub fn live(mut plan: cordon_policy::Plan) -> cordon_policy::Plan {
    plan.workspace_mode = cordon_policy::WorkspaceMode::Live;
    plan
}

/// The CLI command for `argv` in `work`, with the load's environment (live, as [`live`]
/// says).
pub fn cli(
    cordon: &Path,
    home: &Path,
    work: &Path,
    options: &[&str],
    argv: &[OsString],
) -> Command {
    let mut cmd = Command::new(cordon);
    cmd.arg("run")
        .arg("--live")
        .args(options)
        .arg("--")
        .args(argv)
        .env_clear()
        .env("HOME", home)
        .env("PATH", STD_PATH)
        .env("LANG", "C.UTF-8")
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Reads a stream to the end on a thread.
pub fn slurp<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs through the CLI and kills it; returns when it was killed.
fn run_cli(h: &Harness, p: &Planned, work: &Path, o: &mut Outcome) -> Instant {
    let home = p
        .own_home()
        .map_or_else(|| h.home.clone(), |name| h.homes.join(name));
    let started = Instant::now();
    let spawned = cli(&h.cordon, &home, work, &[], &p.argv()).spawn();
    let mut child: Child = match spawned {
        Ok(c) => c,
        Err(e) => {
            o.problems
                .push(format!("cannot start {}: {e}", h.cordon.display()));
            return Instant::now();
        }
    };
    let pid = child.id();
    if let Ok(mut pids) = h.cli_pids.lock() {
        pids.push(pid);
    }
    let (ready_tx, ready_rx) = mpsc::channel();
    let stdout = child.stdout.take();
    let out = std::thread::spawn(move || {
        let mut all = String::new();
        if let Some(s) = stdout {
            let mut lines = BufReader::new(s);
            let mut line = String::new();
            while matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
                if line == "ready\n" {
                    let _ = ready_tx.send(());
                }
                all.push_str(&line);
                line.clear();
            }
        }
        all
    });
    let err = slurp(child.stderr.take());
    match p.kind {
        Kind::KilledReady => match ready_rx.recv_timeout(READY_DEADLINE) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => o.problems.push(format!(
                "the payload did not say ready within {} s",
                READY_DEADLINE.as_secs()
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => o
                .problems
                .push("the CLI closed its stdout without the payload saying ready".into()),
        },
        _ => std::thread::sleep(Duration::from_millis(p.kill_after_ms)),
    }
    if let Ok(Some(status)) = child.try_wait() {
        o.problems.push(format!(
            "the CLI ended by itself ({status}) before it was killed"
        ));
    }
    // Its reaper, if it has started one: it must finish its work and exit once its launcher is
    // gone.
    let reapers = host::reapers_of(pid);
    let _ = child.kill();
    let killed = Instant::now();
    let _ = child.wait();
    let (alive, took) = host::wait_gone(&p.marker, KILLED_GRACE);
    o.gone_after = Some(took);
    o.latency = started.elapsed();
    if !alive.is_empty() {
        o.problems.push(format!(
            "{} process(es) of the jail still alive {} ms after its launcher was SIGKILLed: {}",
            alive.len(),
            took.as_millis(),
            brief_processes(&alive)
        ));
        kill_all(&alive);
    }
    let reaper_alive = || -> Vec<(u32, String)> {
        reapers
            .iter()
            .filter(|(r, _)| host::reapers().iter().any(|(p, _)| p == r))
            .cloned()
            .collect()
    };
    let mut lingering = reaper_alive();
    while !lingering.is_empty() && killed.elapsed() < KILLED_GRACE {
        std::thread::sleep(Duration::from_millis(5));
        lingering = reaper_alive();
    }
    if !lingering.is_empty() {
        o.problems.push(format!(
            "the reaper of its launcher (pid {pid}) is still alive {} ms after the launcher was SIGKILLed: {}",
            killed.elapsed().as_millis(),
            brief_processes(&lingering)
        ));
    }
    let strays = || killed_launcher_strays(pid, &home);
    let settled = {
        let mut left = strays();
        while !left.is_empty() && killed.elapsed() < KILLED_GRACE {
            std::thread::sleep(Duration::from_millis(5));
            left = strays();
        }
        left
    };
    if !settled.is_empty() {
        o.problems.push(format!(
            "left behind {} ms after its launcher (pid {pid}) was SIGKILLed: {}",
            killed.elapsed().as_millis(),
            settled.join(", ")
        ));
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    o.context = Some(format!(
        "(the CLI was SIGKILLed {} ms after it was spawned{}; its stdout {:?}, stderr {:?})",
        killed.duration_since(started).as_millis(),
        if stdout.contains("ready\n") {
            ", after the payload said ready"
        } else {
            ", before the payload said ready"
        },
        cut(&stdout, 200),
        cut(&stderr, 400)
    ));
    killed
}

/// What a killed CLI launcher left outside its workspace: entries of `/tmp` named after it (a
/// probe site, say), and anything but the probe cache file in its home's cache directory (a
/// half-written `.probe-<pid>.tmp`, say).
fn killed_launcher_strays(pid: u32, home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/tmp") {
        for e in entries.flatten() {
            if host::names_launcher(&e.path(), &[pid]) {
                out.push(e.path().display().to_string());
            }
        }
    }
    let euid = rustix::process::geteuid().as_raw();
    let cache_file = format!("probe-{euid}.json");
    if let Ok(entries) = std::fs::read_dir(home.join(".cache").join("cordon")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // The private toolchain caches stay by design (docs/caches.md).
            if name != cache_file && name != "tools" {
                out.push(e.path().display().to_string());
            }
        }
    }
    out
}
