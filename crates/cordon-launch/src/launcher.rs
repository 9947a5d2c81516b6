//! `Launcher`: policy plan + environment + backend + supervision, in the order of DESIGN.md.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cordon_env::ChildEnv;
use cordon_policy::paths::is_within;
use cordon_policy::{EntryKind, Plan, Posture, Unavailable};
use serde::Serialize;

use crate::backend::{Backend, BackendReport, BwrapBackend, BwrapConfig};
use crate::error::LaunchError;
use crate::landlock::{LandlockBackend, LandlockConfig};
use crate::preparation::Preparation;
use crate::probe::ProbeOutcome;
use crate::stage::{self, SelfCheck};
use crate::supervise::{self, Exit, Forward, Supervision};
use crate::violations::{self, Violation};
use crate::{exit_codes, sys};

/// One command to run.
#[derive(Debug)]
pub struct RunRequest<'a> {
    /// The resolved plan.
    pub plan: &'a Plan,
    /// Program and arguments.
    pub argv: &'a [OsString],
    /// The host environment to filter (normally `cordon_env::host_snapshot()`).
    pub host_env: &'a [(OsString, OsString)],
    /// Whether output is also streamed live to this process's stdio.
    pub forward: Forward,
    /// Whether stdin is passed through (else `/dev/null`).
    pub inherit_stdin: bool,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// The payload ran and exited; `exit_code` is its status (128+N when bubblewrap reports a
    /// payload killed by signal N).
    Exited,
    /// The launcher's child was killed by a signal.
    Signaled,
    /// The wall-clock timeout passed; the whole tree was killed.
    Timeout,
    /// Nothing ran: no enforcing backend, or the jail failed its self-check or did not start.
    Refused,
}

/// A captured stream.
#[derive(Debug, Clone, Serialize)]
pub struct Stream {
    /// The kept bytes as text (lossy UTF-8).
    pub text: String,
    /// True when the cap cut it short.
    pub truncated: bool,
    /// Bytes written in all.
    pub bytes: u64,
}

/// The structured result of one run (the `--json` schema of `cordon run`, docs/cli.md).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// How it ended.
    pub status: RunStatus,
    /// The exit code cordon itself exits with.
    pub exit_code: i32,
    /// The signal, when `signaled`.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: Stream,
    /// Standard error.
    pub stderr: Stream,
    /// Wall-clock milliseconds from spawn to exit (for a jail built ahead of its command, from
    /// the moment it was given the command).
    pub duration_ms: f64,
    /// The backend that enforced, if any.
    pub backend: Option<String>,
    /// False only when `unavailable = "warn"` let the command run without a jail.
    pub sandboxed: bool,
    /// The policy hash (with the seccomp filter version folded in).
    pub policy_hash: String,
    /// Denials recognised in stderr.
    pub violations: Vec<Violation>,
    /// Why nothing ran, when refused.
    pub refusal: Option<String>,
    /// Warnings the caller must surface (running unsandboxed, say).
    pub warnings: Vec<String>,
    /// Environment variables dropped, counted by reason (never names of values).
    pub env_dropped: BTreeMap<String, usize>,
    /// Landlock's part: `backend` when it is the backend, the ABI of the second wall the stage
    /// applied inside bubblewrap (`ABI 7`), or why it was unavailable; `null` otherwise.
    pub landlock: Option<String>,
    /// True when the command was handed to a jail built ahead of it (a prepared session,
    /// warm.rs); false for a jail built for it while the caller waited, or none.
    pub built_ahead: bool,
}

/// Composes backends and supervision.
pub struct Launcher {
    backends: Vec<Box<dyn Backend>>,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.backends.iter().map(|b| b.name()).collect();
        f.debug_struct("Launcher")
            .field("backends", &names)
            .finish()
    }
}

/// Which backends a Linux launcher may use (`cordon run --backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// bubblewrap when its probe proves enforcement, else Landlock when its own probe does.
    #[default]
    Auto,
    /// bubblewrap only.
    Bwrap,
    /// The Landlock backend only.
    Landlock,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<BackendChoice, String> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "bwrap" | "bubblewrap" => Ok(BackendChoice::Bwrap),
            "landlock" => Ok(BackendChoice::Landlock),
            other => Err(format!(
                "unknown backend {other:?}: expected auto, bwrap or landlock"
            )),
        }
    }
}

/// The ways out printed with every "no enforcing backend" refusal.
pub const WAYS_OUT: &str = "ways out: install bubblewrap (apt-get install bubblewrap) and allow user namespaces, \
or run on a kernel with Landlock enabled (the `landlock` backend); \
or set `[backend] unavailable = \"warn\"` in your global configuration to run without a jail, which is reported on every run";

impl Launcher {
    /// A launcher over these backends, tried in order.
    pub fn new(backends: Vec<Box<dyn Backend>>) -> Launcher {
        Launcher { backends }
    }

    /// The Linux launcher: bubblewrap, else the Landlock backend (`BackendChoice::Auto`).
    pub fn linux(config: BwrapConfig) -> Launcher {
        Launcher::linux_with(config, BackendChoice::Auto)
    }

    /// The Linux launcher with the backends `choice` allows, in order of preference.
    pub fn linux_with(config: BwrapConfig, choice: BackendChoice) -> Launcher {
        let landlock = || {
            Box::new(LandlockBackend::discover(LandlockConfig {
                stage_binary: config.stage_binary.clone(),
                home: config.home.clone(),
                cache_file: config.cache_file.as_ref().map(|f| {
                    let name = f
                        .file_name()
                        .map(|n| format!("landlock-{}", n.to_string_lossy()))
                        .unwrap_or_else(|| "landlock-probe.json".into());
                    f.with_file_name(name)
                }),
                probe_timeout: config.probe_timeout,
                temp_root: std::env::temp_dir(),
            })) as Box<dyn Backend>
        };
        let backends: Vec<Box<dyn Backend>> = match choice {
            BackendChoice::Auto => {
                vec![Box::new(BwrapBackend::discover(config.clone())), landlock()]
            }
            BackendChoice::Bwrap => vec![Box::new(BwrapBackend::discover(config.clone()))],
            BackendChoice::Landlock => vec![landlock()],
        };
        Launcher::new(backends)
    }

    /// Default configuration for a launcher whose stage is `stage_binary`.
    pub fn default_config(
        stage_binary: PathBuf,
        home: Option<OsString>,
        xdg_cache_home: Option<OsString>,
    ) -> BwrapConfig {
        BwrapConfig {
            candidates: crate::locate::TRUSTED_BWRAP_PATHS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            stage_binary,
            cache_file: crate::probe::cache_file(xdg_cache_home.as_deref(), home.as_deref()),
            home,
            probe_timeout: Duration::from_secs(10),
        }
    }

    /// Probes every backend (cached) and returns the first enforcing one with all outcomes.
    pub fn select(&self) -> (Option<&dyn Backend>, Vec<ProbeOutcome>) {
        let mut outcomes = Vec::new();
        for b in &self.backends {
            let o = b.probe();
            let enforcing = o.enforcing;
            outcomes.push(o);
            if enforcing {
                return (Some(b.as_ref()), outcomes);
            }
        }
        (None, outcomes)
    }

    /// What `doctor` shows of each backend.
    pub fn reports(&self) -> Vec<BackendReport> {
        self.backends.iter().map(|b| b.report()).collect()
    }

    /// The argument list `run` would use, without probing or running anything.
    pub fn explain(
        &self,
        plan: &Plan,
        argv: &[OsString],
        host_env: &[(OsString, OsString)],
    ) -> Result<Vec<OsString>, LaunchError> {
        if argv.is_empty() {
            return Err(LaunchError::EmptyCommand);
        }
        let env = ChildEnv::build(host_env.iter().cloned(), &plan.env)?;
        let backend = self.backends.first().ok_or_else(|| LaunchError::Io {
            what: "explain".into(),
            source: std::io::Error::other("no backend on this platform"),
        })?;
        let (guarded, _guard) = crate::guard::apply(plan, false, None);
        let plan = &guarded;
        let check = self_check(plan, -1);
        let prepared = backend.prepare(
            plan,
            &env.vars,
            &stage::check_args(&check, argv),
            Vec::new(),
        )?;
        Ok(prepared.shown)
    }

    /// Walks `plan`'s writable roots once for the session (preparation.rs): refuses, naming the
    /// path and the rule, a nested mount, a hard link reaching outside, a socket, a FIFO or a
    /// device in them. Commands then run with [`Launcher::run_prepared`], which checks only
    /// that the roots are unchanged.
    pub fn prepare(&self, plan: &Plan) -> Result<Preparation, LaunchError> {
        let prep = Preparation::walk(plan)?;
        prep.refusal()?;
        Ok(prep)
    }

    /// [`Launcher::run`] for a prepared session: refused (nothing runs) when a writable root is
    /// not one the preparation walked or was replaced since; a constant-time check.
    ///
    /// With a backend whose jail can wait for its command (bubblewrap), each call also builds
    /// the session's next jail before it returns, and the next call whose request fits (same
    /// plan, host environment and output handling, stdin not passed through) hands its command
    /// to that jail instead of building one (warm.rs): the launch then costs little more than
    /// the payload's own `exec`. Each command still gets a jail of its own, self-checked before
    /// the payload runs. [`Preparation::discard_waiting_jail`] or dropping the preparation ends a
    /// waiting jail.
    pub fn run_prepared(
        &self,
        req: &RunRequest<'_>,
        prep: &Preparation,
    ) -> Result<RunResult, LaunchError> {
        if let Err(why) = prep.check(req.plan) {
            return Ok(refused(
                format!("the session's preparation no longer holds: {why}"),
                policy_hash(req.plan),
                BTreeMap::new(),
            ));
        }
        let backend = match self.select().0 {
            Some(b) if b.builds_ahead() && crate::warm::eligible(req) => b.name(),
            _ => return self.run(req),
        };
        let (result, held) = match prep.warm.take_fitting(backend, req) {
            Some(mut jail) => match jail.command(req.argv) {
                Ok(()) => {
                    let (result, held) = jail.conclude_keeping();
                    let result = result.map(|mut r| {
                        r.built_ahead = r.status != RunStatus::Refused;
                        r
                    });
                    (result, held)
                }
                Err(e) => {
                    jail.discard();
                    (Err(e), None)
                }
            },
            None => match self.start(req, false) {
                Ok(Start::Jail(jail)) => jail.conclude_keeping(),
                Ok(Start::Refused(refusal)) => (Ok(refusal), None),
                Err(e) => (Err(e), None),
            },
        };
        // The next command's jail, built once this one's processes are gone: its host-side
        // part here, bubblewrap's part and the stage's checks while the caller works on this
        // result. It joins the placeholders this run still holds (`held`, released after), so
        // they are not removed and made again for every command. A refusal is not kept; the
        // next command runs cold and meets it again.
        // Several threads sharing one session: a jail that fits may already wait (another
        // thread's), and building a second one would only have one discarded.
        if !prep.warm.holds_fitting(backend, req)
            && let Ok(Start::Jail(next)) = self.start(req, true)
        {
            prep.warm.put(backend, req, next);
        }
        drop(held);
        result
    }

    /// Runs one command: environment, backend, spawn, self-check, supervision, result.
    pub fn run(&self, req: &RunRequest<'_>) -> Result<RunResult, LaunchError> {
        match self.start(req, false)? {
            Start::Refused(result) => Ok(result),
            Start::Jail(jail) => jail.conclude(),
        }
    }

    /// Everything of [`Launcher::run`] up to and including the spawn. With `awaiting`, the stage
    /// reads the command from a descriptor once its checks pass ([`Jail::command`]), so the jail
    /// can be built before the command is known (warm.rs); `req.argv` is then not used.
    pub(crate) fn start(&self, req: &RunRequest<'_>, awaiting: bool) -> Result<Start, LaunchError> {
        if req.argv.is_empty() && !awaiting {
            return Err(LaunchError::EmptyCommand);
        }
        #[cfg(all(feature = "mutants", debug_assertions))]
        let (mutant, mutated) = crate::mutant::active()?.map_or((None, None), |m| {
            (Some(m), Some(crate::mutant::plan(m, req.plan)))
        });
        #[cfg(all(feature = "mutants", debug_assertions))]
        let req = &RunRequest {
            plan: mutated.as_ref().unwrap_or(req.plan),
            ..*req
        };
        let env = ChildEnv::build(req.host_env.iter().cloned(), &req.plan.env)?;
        let env_dropped = env
            .dropped_counts()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let policy_hash = policy_hash(req.plan);
        let (backend, outcomes) = self.select();
        let Some(backend) = backend else {
            let detail = outcomes
                .iter()
                .map(|o| format!("{}: {}", o.backend, o.detail))
                .collect::<Vec<_>>()
                .join("; ");
            if req.plan.unavailable == Unavailable::Warn && !awaiting {
                return run_unsandboxed(req, &env, policy_hash, env_dropped, detail)
                    .map(Start::Refused);
            }
            return Ok(Start::Refused(refused(
                format!("no backend enforces the policy on this host ({detail}); {WAYS_OUT}"),
                policy_hash,
                env_dropped,
            )));
        };

        if let Some(refusal) = stage_inside_writable(backend, req.plan) {
            return Ok(Start::Refused(refused(
                refusal.to_string(),
                policy_hash,
                env_dropped,
            )));
        }
        // Close what a read-only bind of each protected path leaves open (guard.rs). What it
        // creates on the host is in `cleanup`, removed at the end of the run (leftovers.rs). Made
        // after the probe, so a launcher killed while probing leaves nothing in the workspace.
        let session = crate::leftovers::session(backend.stage_binary());
        let (guarded, mut cleanup) = crate::guard::apply(req.plan, true, session);
        // For a jail built ahead, what the guard just read, looked at again when a command
        // claims it: taken right after the guard, as close to its reads as a cold run's mounts.
        let seen = awaiting.then(|| crate::warm::Seen::of(req.plan));
        let req = &RunRequest {
            plan: &guarded,
            ..*req
        };
        let (status_read, status_write) =
            sys::pipe().map_err(LaunchError::io("creating the status pipe"))?;
        let mut check = self_check(req.plan, sys::raw(&status_write));
        let mut inherit = vec![status_write];
        let mut command_write = None;
        if awaiting {
            let (read, write) =
                sys::socket_pair().map_err(LaunchError::io("creating the command channel"))?;
            check.command_fd = Some(sys::raw(&read));
            inherit.push(read);
            command_write = Some(write);
        }
        // The second wall: Landlock rules the stage applies inside the jail (cordon-landlock).
        // The second wall's rules go to the stage on a socket *after* the spawn: they are
        // computed while bubblewrap builds the jail, and the stage reads them once it runs.
        let mut rules_channel = None;
        if backend.second_wall() {
            let (read, write) = sys::socket_pair()
                .map_err(LaunchError::io("creating the Landlock rules channel"))?;
            check.landlock_fd = Some(sys::raw(&read));
            inherit.push(read);
            rules_channel = Some(write);
        }
        let timeout = req.plan.limits.timeout_secs.map(Duration::from_secs);
        #[cfg(all(feature = "mutants", debug_assertions))]
        let (check, env, timeout) = match mutant {
            Some(m) => (
                crate::mutant::self_check(m, check.status_fd),
                ChildEnv {
                    vars: crate::mutant::env(m, &env.vars, req.host_env),
                    ..env
                },
                crate::mutant::timeout(m, timeout),
            ),
            None => (check, env, timeout),
        };
        let stage_argv = stage::check_args(&check, req.argv);
        let mut prepared = backend.prepare(req.plan, &env.vars, &stage_argv, inherit)?;
        std::mem::replace(&mut prepared.startable, Ok(()))?;
        if let Some(tree) = prepared.scratch.take() {
            cleanup.tree(tree);
        }
        // Root is exempt from RLIMIT_NPROC: a pids control group bounds its jail (pids.rs).
        let pids_warning = crate::pids::confine(
            &mut prepared.command,
            req.plan.limits.processes,
            &mut cleanup,
        )
        .err()
        .map(|why| format!("the process limit is not enforced for root: {why}"));
        // Known to the session reaper before it exists (leftovers.rs): the self-check's path is
        // in the jail's command line until the payload runs.
        cleanup.mark_jail(check.outside.as_os_str().as_bytes());
        let running = supervise::spawn(
            prepared.command,
            Supervision {
                timeout,
                output_cap: req.plan.limits.output_cap_bytes,
                forward: req.forward,
                status: Some(status_read),
                inherit_stdin: req.inherit_stdin,
                hold: prepared.hold,
                session: cleanup.session(),
                from_long_lived_thread: awaiting,
            },
        )
        .map_err(LaunchError::io("starting the jail"))?;
        let warnings = requested_but_dropped(&env)
            .into_iter()
            .chain(pids_warning)
            .collect();
        let rules_channel = rules_channel.filter(|_| check.landlock_fd.is_some());
        let jail = Jail {
            running,
            command: command_write,
            cleanup,
            timeout,
            outside: check.outside,
            backend: backend.name(),
            policy_hash,
            env_dropped,
            warnings,
            rules: None,
            seen,
        };
        let mut jail = jail;
        if let Some(channel) = rules_channel {
            if awaiting {
                // Off the caller's path: the jail waits for its command anyway. A failure is
                // kept for `conclude`, and the stage, reading no rules, refuses.
                let plan = req.plan.clone();
                jail.rules = Some(std::thread::spawn(move || {
                    send_rules(&plan, &channel).map_err(|e| e.to_string())
                }));
            } else if let Err(e) = send_rules(req.plan, &channel) {
                jail.discard();
                return Err(e);
            }
        }
        Ok(Start::Jail(jail))
    }
}

/// Computes the second wall's rules for `plan` and sends them to the stage on `channel`. A
/// stage that already ended gives EPIPE, which is not an error here: its own report is judged
/// at the end, and a stage that read a cut-short list refuses to run anything.
fn send_rules(plan: &Plan, channel: &std::os::fd::OwnedFd) -> Result<(), LaunchError> {
    let rules = cordon_landlock::Rules::from_plan(
        plan,
        &cordon_landlock::Options::inside_bubblewrap(),
        &cordon_landlock::FsLister,
    )?;
    let _ = sys::send_all(channel, &rules.encode());
    Ok(())
}

/// What [`Launcher::start`] gives: a refusal (nothing runs), or a spawned jail.
pub(crate) enum Start {
    Refused(RunResult),
    Jail(Jail),
}

/// A spawned jail and what judging its end needs. Dropped without [`Jail::conclude`] or
/// [`Jail::discard`], its process group is left to the session reaper.
pub(crate) struct Jail {
    running: supervise::Running,
    /// The launcher's end of the command channel of a jail built ahead of its command.
    command: Option<std::os::fd::OwnedFd>,
    /// What was made on the host for the run, removed when dropped (after the jail's end).
    cleanup: crate::leftovers::Cleanup,
    timeout: Option<Duration>,
    outside: PathBuf,
    backend: &'static str,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
    warnings: Vec<String>,
    /// For a jail built ahead: the thread computing and sending its second wall's rules.
    rules: Option<std::thread::JoinHandle<Result<(), String>>>,
    /// For a jail built ahead: what its guard read of the workspace (warm.rs).
    pub(crate) seen: Option<crate::warm::Seen>,
}

impl std::fmt::Debug for Jail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jail")
            .field("backend", &self.backend)
            .field("awaiting", &self.command.is_some())
            .finish_non_exhaustive()
    }
}

impl Jail {
    /// Whether the jail's first process has already ended (a jail built ahead of its command
    /// that failed its self-check, or was killed).
    pub(crate) fn has_ended(&self) -> bool {
        self.running.has_exited()
    }

    /// Waits up to `timeout` for the stage's report (its checks passed or failed); whether it
    /// came.
    pub(crate) fn wait_for_report(&self, timeout: Duration) -> bool {
        self.running.wait_for_report(timeout)
    }

    /// Gives a jail built ahead of its command the command, and starts its clock (and its
    /// timeout) now. `Err` when an argument holds a NUL byte: nothing was sent.
    pub(crate) fn command(&mut self, argv: &[OsString]) -> Result<(), LaunchError> {
        if argv.is_empty() {
            return Err(LaunchError::EmptyCommand);
        }
        if let Some(index) = argv.iter().position(|a| a.as_bytes().contains(&0)) {
            return Err(LaunchError::NulInArgument { index });
        }
        let bytes = stage::encode_command(argv).ok_or(LaunchError::EmptyCommand)?;
        let Some(fd) = self.command.take() else {
            return Ok(());
        };
        self.running.restart_clock();
        // A stage that already ended (it failed its self-check) closed its end: the write fails
        // with EPIPE, never SIGPIPE, and what the stage said is judged at the end.
        let _ = sys::send_all(&fd, &bytes);
        Ok(())
    }

    /// Waits for the end and judges it: the self-check's verdict, the host-side check of the
    /// outside write, the result.
    pub(crate) fn conclude(self) -> Result<RunResult, LaunchError> {
        let (result, cleanup) = self.conclude_keeping();
        drop(cleanup);
        result
    }

    /// [`Jail::conclude`], handing back what was made on the host for the run instead of
    /// removing it: the caller drops it when it suits (after the next jail joined it).
    pub(crate) fn conclude_keeping(
        mut self,
    ) -> (
        Result<RunResult, LaunchError>,
        Option<crate::leftovers::Cleanup>,
    ) {
        let cleanup = std::mem::replace(&mut self.cleanup, crate::leftovers::Cleanup::new(None));
        (self.judge(), Some(cleanup))
    }

    fn judge(mut self) -> Result<RunResult, LaunchError> {
        // A jail that never got its command is told there is none.
        drop(self.command.take());
        let supervised = self
            .running
            .wait(self.timeout)
            .map_err(LaunchError::io("supervising the jail"))?;
        let (policy_hash, env_dropped) = (self.policy_hash, self.env_dropped);
        let rules_failed = self
            .rules
            .take()
            .and_then(|t| t.join().ok())
            .and_then(Result::err);
        if let Some(why) = rules_failed {
            return Ok(refused(
                format!(
                    "the second wall's rules could not be computed, the command was not run: {why}"
                ),
                policy_hash,
                env_dropped,
            ));
        }
        if std::fs::symlink_metadata(&self.outside).is_ok() {
            // Judged on the host: the self-check file must never exist here.
            let _ = std::fs::remove_file(&self.outside);
            return Ok(refused(
                format!(
                    "the self-check write outside the writable set reached the host ({})",
                    self.outside.display()
                ),
                policy_hash,
                env_dropped,
            ));
        }
        let mut status_lines = supervised.status_line.lines().map(str::trim);
        let status_line = status_lines.next().unwrap_or("");
        let landlock = match self.backend {
            "landlock" => Some("backend".to_owned()),
            _ => status_lines
                .find_map(|l| l.strip_prefix("landlock "))
                .map(str::to_owned),
        };
        if status_line != "ok" && supervised.exit != Exit::TimedOut {
            let stderr = crate::backend::first_line(&supervised.stderr.bytes);
            let reason = match status_line.strip_prefix("fail ") {
                Some(reason) => {
                    format!("the jail failed its self-check, the command was not run: {reason}")
                }
                None => format!(
                    "the jail did not start, the command was not run: {}",
                    if stderr.is_empty() {
                        "(no message)"
                    } else {
                        &stderr
                    }
                ),
            };
            let mut result = refused(reason, policy_hash, env_dropped);
            result.backend = Some(self.backend.into());
            result.violations = violations::recognise(&supervised.stderr.bytes);
            return Ok(result);
        }
        let mut result = finish(
            supervised,
            Some(self.backend.into()),
            true,
            policy_hash,
            env_dropped,
            self.warnings,
        );
        result.landlock = landlock;
        Ok(result)
    }

    /// Kills the jail and waits for it (a jail built ahead of a command that did not come);
    /// what was made for it goes with it.
    pub(crate) fn discard(mut self) {
        drop(self.command.take());
        self.running.discard();
        if let Some(t) = self.rules.take() {
            let _ = t.join();
        }
        drop(self.cleanup);
    }
}

/// A warning for each `pass` name that was asked for and not passed: the caller expected it.
fn requested_but_dropped(env: &ChildEnv) -> Vec<String> {
    env.dropped
        .iter()
        .filter(|d| d.requested)
        .map(|d| format!("pass-env {} was not passed: {}", d.name, d.reason))
        .collect()
}

/// The refusal when the backend's stage binary (cordon itself) lies inside a writable root.
fn stage_inside_writable(backend: &dyn Backend, plan: &Plan) -> Option<LaunchError> {
    let stage = backend.stage_binary()?;
    let stage = std::fs::canonicalize(stage).unwrap_or_else(|_| stage.to_path_buf());
    let root = plan.writable.iter().find(|r| stage.starts_with(r))?;
    Some(LaunchError::StageWritable {
        stage: stage.display().to_string(),
        root: root.display().to_string(),
    })
}

/// The policy hash with the seccomp filter version folded in.
pub fn policy_hash(plan: &Plan) -> String {
    // The plan carries the policy's hash; fold the filter version into it the same way.
    let filter = cordon_seccomp::FILTER_VERSION.to_string();
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(plan.policy_hash.0.as_bytes());
    h.update(format!("\nseccomp={filter}").as_bytes());
    let d = h.finalize();
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn stream(c: &supervise::Captured) -> Stream {
    Stream {
        text: String::from_utf8_lossy(&c.bytes).into_owned(),
        truncated: c.truncated,
        bytes: c.total,
    }
}

fn finish(
    s: supervise::Supervised,
    backend: Option<String>,
    sandboxed: bool,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
    warnings: Vec<String>,
) -> RunResult {
    let (status, exit_code, signal) = match s.exit {
        Exit::Code(c) => (RunStatus::Exited, c, None),
        Exit::Signal(sig) => (RunStatus::Signaled, 128 + sig, Some(sig)),
        Exit::TimedOut => (RunStatus::Timeout, i32::from(exit_codes::TIMEOUT), None),
    };
    RunResult {
        status,
        exit_code,
        signal,
        violations: violations::recognise(&s.stderr.bytes),
        stdout: stream(&s.stdout),
        stderr: stream(&s.stderr),
        duration_ms: s.duration.as_secs_f64() * 1000.0,
        backend,
        sandboxed,
        policy_hash,
        refusal: None,
        warnings,
        env_dropped,
        landlock: None,
        built_ahead: false,
    }
}

fn refused(reason: String, policy_hash: String, env_dropped: BTreeMap<String, usize>) -> RunResult {
    RunResult {
        status: RunStatus::Refused,
        exit_code: i32::from(exit_codes::REFUSED),
        signal: None,
        stdout: Stream {
            text: String::new(),
            truncated: false,
            bytes: 0,
        },
        stderr: Stream {
            text: String::new(),
            truncated: false,
            bytes: 0,
        },
        duration_ms: 0.0,
        backend: None,
        sandboxed: false,
        policy_hash,
        violations: Vec::new(),
        refusal: Some(reason),
        warnings: Vec::new(),
        env_dropped,
        landlock: None,
        built_ahead: false,
    }
}

fn run_unsandboxed(
    req: &RunRequest<'_>,
    env: &ChildEnv,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
    detail: String,
) -> Result<RunResult, LaunchError> {
    let warning = format!(
        "RAN WITHOUT A JAIL: no backend enforces the policy on this host ({detail}), and the configuration says unavailable = \"warn\""
    );
    let mut command = Command::new(&req.argv[0]);
    command
        .args(&req.argv[1..])
        .env_clear()
        .envs(&env.vars)
        .current_dir(&req.plan.cwd);
    sys::prepare_child(&mut command, &req.plan.limits, &[]);
    let supervised = supervise::supervise(
        command,
        Supervision {
            timeout: req.plan.limits.timeout_secs.map(Duration::from_secs),
            output_cap: req.plan.limits.output_cap_bytes,
            forward: req.forward,
            status: None,
            inherit_stdin: req.inherit_stdin,
            hold: Vec::new(),
            session: None,
            from_long_lived_thread: false,
        },
    )
    .map_err(LaunchError::io(format!(
        "starting {}",
        req.argv[0].to_string_lossy()
    )))?;
    Ok(finish(
        supervised,
        None,
        false,
        policy_hash,
        env_dropped,
        vec![warning],
    ))
}

/// Chooses what the stage checks: a host-backed path outside the writable set whose creation must
/// fail, and the first credential mask.
pub fn self_check(plan: &Plan, status_fd: i32) -> SelfCheck {
    let name = format!(
        ".cordon-selfcheck-{}-{}",
        std::process::id(),
        crate::backend::nonce()
    );
    let hidden = |d: &Path| {
        plan.writable.iter().any(|w| is_within(d, w))
            || plan.private_dirs.iter().any(|p| is_within(d, p))
            || plan.masks.iter().any(|m| is_within(d, &m.target))
    };
    let candidates: Vec<PathBuf> = match plan.posture {
        Posture::Host => plan
            .workspace
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .chain([plan.home.clone(), PathBuf::from("/")])
            .collect(),
        Posture::Minimal => plan.read_only.iter().map(|b| b.dest.clone()).collect(),
    };
    let dir = candidates
        .into_iter()
        .find(|d| !hidden(d) && std::fs::metadata(d).is_ok_and(|m| m.is_dir()))
        .unwrap_or_else(|| PathBuf::from("/"));
    SelfCheck {
        status_fd,
        deny_network: plan.network == cordon_policy::Network::Denied,
        outside: dir.join(name),
        masked: plan
            .masks
            .first()
            .map(|m| (m.target.clone(), m.kind == EntryKind::Dir)),
        landlock_fd: None,
        command_fd: None,
    }
}
