//! The cold path: [`Launcher::run`] takes a plan and a command and goes through the environment, the first enforcing backend, the plan's guard and its
//! placeholders, the spawn, the stage's self-check and supervision, to a [`RunResult`]. The
//! session (a prepared walk, jails built ahead) is `session/`, built on [`Launcher::start`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::time::Duration;

use cordon_env::ChildEnv;
use cordon_policy::{GuardedPlan, Placeholder, Plan, RealHost, Unavailable};

#[cfg(linux_backends)]
use crate::backend::bwrap::{BwrapBackend, BwrapConfig};
#[cfg(linux_backends)]
use crate::backend::landlock::{LandlockBackend, LandlockConfig};
use crate::backend::seatbelt::{SeatbeltBackend, SeatbeltConfig};
use crate::backend::{Backend, BackendReport, ProbeOutcome, StageReport};
use crate::error::LaunchError;
use crate::host::cleanup::Cleanup;
use crate::host::reaper::Session;
use crate::host::supervise::{self, Forward, Supervision};
use crate::host::sys;
use crate::stage::{self, self_check};

mod jail;
pub(crate) mod result;
pub(crate) mod seen;

pub(crate) use jail::Jail;
pub use result::{NetworkReport, RunResult, RunStatus, Stream};
use result::{finish, refused};
use seen::Seen;

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

/// Composes backends and supervision.
pub struct Launcher {
    backends: Vec<Box<dyn Backend>>,
    /// The proxy rules of the last `proxy` plan, shared by every jail of that list (a
    /// session's jails among them), and the resolver they decide with.
    proxy_rules:
        std::sync::Mutex<Option<(Vec<String>, std::sync::Arc<crate::features::proxy::Rules>)>>,
    resolver: std::sync::Arc<dyn cordon_proxy::Resolver + Send + Sync>,
    /// One defence taken away (the escape suite's mutants run; never in a release build).
    #[cfg(all(feature = "mutants", debug_assertions))]
    weakening: Option<crate::weaken::Weakening>,
}

/// What `cordon explain` shows: exactly what a run would hand the backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The backend's full argument list (bubblewrap's path, its options, `--`, the stage and
    /// the command), or the Landlock backend's rules as `#` lines and the stage's command.
    pub args: Vec<OsString>,
    /// The placeholders the run makes (or joins) before the jail starts, each bound read-only
    /// in the list; those marked `created_for_the_run` do not exist yet.
    pub placeholders: Vec<Placeholder>,
    /// The git configuration broker's shadow directories the run makes (docs/git-config.md),
    /// each named here as a run would name it (a nonce differs), not made.
    pub broker_shadows: Vec<std::path::PathBuf>,
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
        Launcher {
            backends,
            proxy_rules: std::sync::Mutex::new(None),
            resolver: std::sync::Arc::new(crate::features::proxy::SystemResolver),
            #[cfg(all(feature = "mutants", debug_assertions))]
            weakening: None,
        }
    }

    /// This launcher with `resolver` answering its proxy's name lookups instead of the host's
    /// resolver (a harness's own, or a test's fixed answers).
    pub fn with_resolver(
        mut self,
        resolver: std::sync::Arc<dyn cordon_proxy::Resolver + Send + Sync>,
    ) -> Launcher {
        self.resolver = resolver;
        self.proxy_rules = std::sync::Mutex::new(None);
        self
    }

    /// The proxy rules for `entries`, parsed once per list.
    fn proxy_rules(
        &self,
        entries: &[String],
    ) -> Result<std::sync::Arc<crate::features::proxy::Rules>, LaunchError> {
        let mut cached = self.proxy_rules.lock().map_err(|_| LaunchError::Io {
            what: "the proxy rules".into(),
            source: std::io::Error::other("a thread panicked holding them"),
        })?;
        if let Some((list, rules)) = cached.as_ref()
            && list.as_slice() == entries
        {
            return Ok(std::sync::Arc::clone(rules));
        }
        let rules = std::sync::Arc::new(
            crate::features::proxy::Rules::new(
                entries,
                Box::new(SharedResolver(std::sync::Arc::clone(&self.resolver))),
            )
            .map_err(|e| LaunchError::Io {
                what: "the proxy rules".into(),
                source: std::io::Error::other(e.to_string()),
            })?,
        );
        *cached = Some((entries.to_vec(), std::sync::Arc::clone(&rules)));
        Ok(rules)
    }

    /// The macOS launcher: the Seatbelt backend alone.
    pub fn macos(config: SeatbeltConfig) -> Launcher {
        Launcher::new(vec![Box::new(SeatbeltBackend::discover(config))])
    }

    /// This launcher with one defence taken away, for the escape suite's mutants run: the
    /// probe and the self-check are skipped and the weakening applied to every jail, cold or
    /// built ahead. Exists only in a debug build with the `mutants` feature.
    #[cfg(all(feature = "mutants", debug_assertions))]
    pub fn weakened(mut self, weakening: crate::weaken::Weakening) -> Launcher {
        for backend in &mut self.backends {
            backend.weaken(weakening);
        }
        self.weakening = Some(weakening);
        self
    }

    /// The Linux launcher: bubblewrap, else the Landlock backend (`BackendChoice::Auto`).
    #[cfg(linux_backends)]
    pub fn linux(config: BwrapConfig) -> Launcher {
        Launcher::linux_with(config, BackendChoice::Auto)
    }

    /// The Linux launcher with the backends `choice` allows, in order of preference.
    #[cfg(linux_backends)]
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
    #[cfg(linux_backends)]
    pub fn default_config(
        stage_binary: std::path::PathBuf,
        home: Option<OsString>,
        xdg_cache_home: Option<OsString>,
    ) -> BwrapConfig {
        BwrapConfig {
            candidates: crate::backend::locate::TRUSTED_BWRAP_PATHS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            stage_binary,
            cache_file: crate::backend::probe::cache_file(
                xdg_cache_home.as_deref(),
                home.as_deref(),
            ),
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

    /// Where each backend finds its stage binary and whether a jail of `plan` can execute it
    /// (what `doctor` shows; nothing is probed or run).
    pub fn stage_reports(&self, plan: &Plan) -> Vec<StageReport> {
        self.backends
            .iter()
            .filter_map(|b| crate::backend::stage_report(b.as_ref(), plan))
            .collect()
    }

    /// The argument list `run` would hand the first backend, and the placeholders it would make
    /// for it, without probing, creating or running anything. Only the self-check's unique path
    /// (a nonce) and descriptor numbers differ from a run's.
    pub fn explain(
        &self,
        plan: &Plan,
        argv: &[OsString],
        host_env: &[(OsString, OsString)],
    ) -> Result<Explanation, LaunchError> {
        if argv.is_empty() {
            return Err(LaunchError::EmptyCommand);
        }
        let env = child_env(plan, host_env)?;
        let backend = self.backends.first().ok_or_else(|| LaunchError::Io {
            what: "explain".into(),
            source: std::io::Error::other("no backend on this platform"),
        })?;
        // The same guard as a run's, so the list is the one a run hands the backend: the
        // placeholders it would make are listed, marked, and not made.
        let mut guarded = plan.guard(&RealHost::new(None));
        let mut broker_shadows = Vec::new();
        if backend.name() == "bubblewrap" {
            for git_dir in guarded.broker_candidates() {
                let shadow = crate::features::git::shadow_name(&git_dir);
                let bound = crate::features::git::bound_dirs(&git_dir);
                guarded.add_broker(&git_dir, shadow.clone(), &bound);
                broker_shadows.push(shadow);
            }
        }
        let mut check = self_check(&guarded, -1);
        let mut env = env;
        if plan.network == cordon_policy::Network::Proxy {
            check.proxy_fd = Some(-1);
            for (name, value) in crate::features::proxy::env_vars() {
                env.vars.insert(name.into(), value.into());
            }
        }
        let prepared = backend.prepare(
            &guarded,
            &env.vars,
            &stage::check_args(&check, argv),
            Vec::new(),
        )?;
        Ok(Explanation {
            args: prepared.shown,
            placeholders: guarded.placeholders().to_vec(),
            broker_shadows,
        })
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
        let mutated = self.weakening.map(|w| crate::weaken::plan(w, req.plan));
        #[cfg(all(feature = "mutants", debug_assertions))]
        let req = &RunRequest {
            plan: mutated.as_ref().unwrap_or(req.plan),
            ..*req
        };
        let env = child_env(req.plan, req.host_env)?;
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

        if let Some(refusal) = crate::backend::stage_refusal(backend, req.plan) {
            return Ok(Start::Refused(refused(
                refusal.to_string(),
                policy_hash,
                env_dropped,
            )));
        }
        let proxied = req.plan.network == cordon_policy::Network::Proxy;
        if proxied && !backend.bridges_proxy() {
            return Ok(Start::Refused(refused(
                format!(
                    "network mode \"proxy\" needs a jail with a network namespace of its own (bubblewrap); the {} backend shares the host's network, where a proxy port would be reachable by every process of the host: use --backend bwrap, or network mode \"deny\"",
                    backend.name()
                ),
                policy_hash,
                env_dropped,
            )));
        }
        let proxy_rules = if proxied {
            Some(self.proxy_rules(&req.plan.network_allow)?)
        } else {
            None
        };
        // What a read-only bind of each protected path leaves open is closed in the plan
        // (`Plan::guard`); the launcher only makes the placeholders it lists. They are in
        // `cleanup`, removed at the end of the run (cleanup.rs). Made after the probe, so a
        // launcher killed while probing leaves nothing in the workspace.
        let session = crate::host::reaper::session(backend.stage_binary());
        #[cfg(all(feature = "mutants", debug_assertions))]
        if !crate::weaken::dies_with_launcher(self.weakening)
            && let Some(session) = session
        {
            session.kill_nothing();
        }
        // Objects shared by hard link with another repository (a local clone's): refused
        // before anything is made (objects.rs).
        if let Some(shared) = crate::features::objects::shared_object(req.plan) {
            return Ok(Start::Refused(refused(
                shared.to_string(),
                policy_hash,
                env_dropped,
            )));
        }
        let (mut guarded, mut cleanup) = make_placeholders(req.plan, session);
        // For a jail built ahead, what the guard just read, looked at again when a command
        // claims it: taken right after the guard, as close to its reads as a cold run's mounts.
        let seen = awaiting.then(|| Seen::of(req.plan));
        // The git configuration broker (gitbroker.rs): bubblewrap binds each repository's
        // pointer at its `commondir`, so the jail's git edits a copy of `.git/config`.
        let brokers = if backend.name() == "bubblewrap" {
            crate::features::git::prepare(&mut guarded, &mut cleanup, backend.stage_binary())
        } else {
            Vec::new()
        };
        // What to look for (and put back) after the run, read before the jail exists.
        let sweep = Box::new(crate::features::sweep::Sweep::of(&guarded));
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
        let rules_channel = if backend.second_wall() {
            let (read, write) = sys::socket_pair()
                .map_err(LaunchError::io("creating the Landlock rules channel"))?;
            check.landlock_fd = Some(sys::raw(&read));
            inherit.push(read);
            Some(write)
        } else {
            None
        };
        // The proxy's bridge: the stage sends its listener on this socket (proxy.rs), and the
        // proxy variables point every tool at it; the host's own are never passed.
        let mut env = env;
        let proxy_channel = if proxy_rules.is_some() {
            let (read, write) =
                sys::socket_pair().map_err(LaunchError::io("creating the proxy channel"))?;
            check.proxy_fd = Some(sys::raw(&read));
            inherit.push(read);
            for (name, value) in crate::features::proxy::env_vars() {
                env.vars.insert(name.into(), value.into());
            }
            Some(write)
        } else {
            None
        };
        let timeout = req.plan.limits.timeout_secs.map(Duration::from_secs);
        #[cfg(all(feature = "mutants", debug_assertions))]
        let (check, env, timeout) = match self.weakening {
            Some(w) => (
                crate::weaken::self_check(w, &check),
                ChildEnv {
                    vars: crate::weaken::env(w, &env.vars, req.host_env),
                    ..env
                },
                crate::weaken::timeout(w, timeout),
            ),
            None => (check, env, timeout),
        };
        let stage_argv = stage::check_args(&check, req.argv);
        let mut prepared = backend.prepare(&guarded, &env.vars, &stage_argv, inherit)?;
        std::mem::replace(&mut prepared.startable, Ok(()))?;
        if let Some(tree) = prepared.scratch.take() {
            cleanup.tree(tree);
        }
        // Root is exempt from RLIMIT_NPROC: a pids control group bounds its jail (pids.rs).
        #[cfg(not(linux_backends))]
        let pids_warning: Option<String> = None;
        #[cfg(linux_backends)]
        let pids_warning = crate::features::pids::confine(
            &mut prepared.command,
            req.plan.limits.processes,
            &mut cleanup,
        )
        .err()
        .map(|why| format!("the process limit is not enforced for root: {why}"));
        // The whole jail's memory, private temporary files included (memory.rs). Said in the
        // result for root, who always can; an unprivileged user's host says so in `doctor`.
        #[cfg(not(linux_backends))]
        let memory_warning: Option<String> = None;
        #[cfg(linux_backends)]
        let memory_warning = crate::features::memory::confine(
            &mut prepared.command,
            req.plan.limits.memory_bytes,
            &mut cleanup,
        )
        .err()
        .filter(|_| rustix::process::geteuid().is_root())
        .map(|why| format!("the memory limit is not enforced: {why}"));
        // Known to the session reaper before it exists (leftovers.rs): the self-check's path is
        // in the jail's command line until the payload runs.
        cleanup.mark_jail(check.outside.as_os_str().as_bytes());
        // The proxy waits for the stage's listener from before the spawn: a spawn that fails
        // drops it, which ends its thread.
        let proxy = match (proxy_rules, proxy_channel) {
            (Some(rules), Some(channel)) => Some(
                crate::features::proxy::start(rules, channel)
                    .map_err(LaunchError::io("starting the jail's proxy"))?,
            ),
            _ => None,
        };
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
            .chain(memory_warning)
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
            judge: Box::new(crate::violations::JailRules::new(req.plan, backend.name())),
            proxy,
            sweep,
            brokers,
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
#[cfg(not(linux_backends))]
fn send_rules(_plan: &Plan, _channel: &std::os::fd::OwnedFd) -> Result<(), LaunchError> {
    // No backend with a second wall exists off Linux: `second_wall()` is false for each.
    Ok(())
}

#[cfg(linux_backends)]
fn send_rules(plan: &Plan, channel: &std::os::fd::OwnedFd) -> Result<(), LaunchError> {
    // The stage is bound at STAGE_PATH; it stays executable under the second wall (bubblewrap's
    // private /run already lets it run, so this adds a rule only if that ever changes).
    let rules = cordon_landlock::Rules::from_plan(
        plan,
        &cordon_landlock::Options::inside_bubblewrap().with_executable(cordon_bwrap::STAGE_PATH),
        &cordon_landlock::FsLister,
    )?;
    let _ = sys::send_all(channel, &rules.encode());
    Ok(())
}

/// The launcher's resolver, shared with the rules built from it.
struct SharedResolver(std::sync::Arc<dyn cordon_proxy::Resolver + Send + Sync>);

impl cordon_proxy::Resolver for SharedResolver {
    fn resolve(&self, name: &str) -> Result<Vec<std::net::IpAddr>, String> {
        self.0.resolve(name)
    }
}

/// What [`Launcher::start`] gives: a refusal (nothing runs), or a spawned jail.
pub(crate) enum Start {
    Refused(RunResult),
    Jail(Jail),
}

/// Guards `plan` (`Plan::guard`) and makes (or joins) the placeholders the guard lists, each
/// registered with `session`. A placeholder that could not be made (the user cannot write there,
/// something of another kind appeared) leaves its path unprotected, as it would be without the
/// guard: nothing can be bound there, and the jail's user could not have made it either when it
/// is the permission that is missing.
fn make_placeholders(plan: &Plan, session: Option<&'static Session>) -> (GuardedPlan, Cleanup) {
    let mut guarded = plan.guard(&RealHost::new(None));
    let mut cleanup = Cleanup::new(session);
    for p in guarded.placeholders().to_vec() {
        let held = cleanup.placeholder(&p.path, p.kind).unwrap_or(false);
        if !held && p.created_for_the_run {
            guarded.without_placeholder(&p.path);
        }
    }
    (guarded, cleanup)
}

/// A warning for each `pass` name that was asked for and not passed: the caller expected it.
fn requested_but_dropped(env: &ChildEnv) -> Vec<String> {
    env.dropped
        .iter()
        .filter(|d| d.requested)
        .map(|d| format!("pass-env {} was not passed: {}", d.name, d.reason))
        .collect()
}

/// The policy hash with the seccomp filter version folded in.
pub fn policy_hash(plan: &Plan) -> String {
    // The plan carries the policy's hash; fold the filter version into it the same way.
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(plan.policy_hash.0.as_bytes());
    #[cfg(linux_backends)]
    h.update(format!("\nseccomp={}", cordon_seccomp::FILTER_VERSION).as_bytes());
    let d = h.finalize();
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// The jail's environment: the host's filtered by the plan's policy. Each backend adds what the
/// plan sets itself ([`Plan::jail_env`]), so the launcher adds nothing to a jail.
fn child_env(plan: &Plan, host_env: &[(OsString, OsString)]) -> Result<ChildEnv, LaunchError> {
    Ok(ChildEnv::build(host_env.iter().cloned(), &plan.env)?)
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
