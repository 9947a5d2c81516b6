//! The launcher: its backends, [`Launcher::run`] (the pipeline's phases are `start.rs`, the
//! jail after its spawn `jail.rs`, the result `result.rs`) and [`Launcher::explain`], which runs
//! the same phases without making or spawning anything. The session (a prepared walk, jails
//! built ahead) is `session/`, built on [`Launcher::start`].

use std::ffi::OsString;

use cordon_policy::{Placeholder, Plan};

#[cfg(linux_backends)]
use crate::backend::bwrap::{BwrapBackend, BwrapConfig};
#[cfg(linux_backends)]
use crate::backend::landlock::{LandlockBackend, LandlockConfig};
use crate::backend::seatbelt::{SeatbeltBackend, SeatbeltConfig};
use crate::backend::{Backend, BackendReport, JailSpec, ProbeOutcome, StageReport};
use crate::error::LaunchError;
use crate::features::env::{EnvRow, JailEnv};
use crate::host::supervise::Forward;

mod jail;
pub(crate) mod result;
pub(crate) mod seen;
mod start;
mod unsandboxed;

pub(crate) use jail::Jail;
pub use result::{NetworkReport, RunResult, RunStatus, Stream};

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
    weak: crate::weaken::Weak,
    /// cordon's directory for the runs' copy-on-write layers (`features/layer.rs`):
    /// `<cordon's cache>/layers`.
    layers: Option<std::path::PathBuf>,
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
    /// The jail's features, in the order of the pipeline's phases.
    pub features: Vec<&'static str>,
    /// Every variable the jail gets, with who set it and why.
    pub env: Vec<EnvRow>,
    /// Why a run of this plan would be refused before anything is made, if it would.
    pub refusals: Vec<String>,
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
            weak: crate::weaken::Weak::default(),
            layers: None,
        }
    }

    /// This launcher with `dir` holding its runs' copy-on-write layers (each workspace and run
    /// a directory below it). [`Launcher::linux`] uses `<cordon's cache>/layers`.
    pub fn with_layers_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Launcher {
        self.layers = Some(dir.into());
        self
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
        self.weak = crate::weaken::Weak::of(weakening);
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
                cache_file: config
                    .cache_file
                    .as_deref()
                    .map(crate::dirs::landlock_cache_beside),
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
        // The layers live in cordon's cache, beside the probe's cache file: read-only at most
        // in every jail (the policy's own-state rule).
        let layers = config
            .cache_file
            .as_deref()
            .and_then(std::path::Path::parent)
            .map(crate::dirs::layers_in);
        let launcher = Launcher::new(backends);
        match layers {
            Some(dir) => launcher.with_layers_dir(dir),
            None => launcher,
        }
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
            cache_file: crate::dirs::CordonDirs::from_vars(
                home.as_deref(),
                None,
                xdg_cache_home.as_deref(),
            )
            .probe_cache(),
            home,
            probe_timeout: std::time::Duration::from_secs(10),
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
        let env = JailEnv::build(plan, host_env)?;
        let backend = self.backends.first().ok_or_else(|| LaunchError::Io {
            what: "explain".into(),
            source: std::io::Error::other("no backend on this platform"),
        })?;
        // The same pipeline as a run's, so the list is the one a run hands the backend: what a
        // run would make on the host is listed, marked, and not made.
        let (plan, mut refusals) = match start::on_backend(plan, backend.as_ref()) {
            Ok((plan, _)) => (plan, Vec::new()),
            Err(refusal) => (std::borrow::Cow::Borrowed(plan), vec![refusal]),
        };
        let run = self.run_of(&plan, backend.as_ref(), false, true)?;
        let (mut features, more) = crate::features::for_run(&run);
        refusals.extend(more);
        let start::Phases { host, args, .. } =
            start::host_and_arguments(&run, &mut features, None, env, None)?;
        let prepared = backend.prepare(
            &JailSpec {
                plan: &host.guarded,
                brokers: &host.brokers,
                env: args.env.vars(),
                stage: crate::backend::StageCall::Check {
                    check: &args.check,
                    argv,
                },
                layers: &host.layers,
                granted_sockets: &args.granted_sockets,
            },
            Vec::new(),
        )?;
        Ok(Explanation {
            args: prepared.shown,
            placeholders: host.guarded.placeholders().to_vec(),
            broker_shadows: host.named,
            features: crate::features::names(&features),
            env: args.env.rows(),
            refusals,
        })
    }

    /// Planning with its host side, for the CLI, `cordon serve` and Rust harnesses alike: the
    /// workspace's private toolchain cache made and bounded when `invocation` names a cache base
    /// (`features/caches.rs`), then the plan resolved against `host`. A cache that cannot be
    /// made is not a reason to refuse: the plan then has none (tools see a read-only home), and
    /// a warning says so. Returns the plan and the warnings for the caller.
    pub fn plan(
        policy: &cordon_policy::Policy,
        invocation: &cordon_policy::Invocation,
        host: &dyn cordon_policy::HostFacts,
    ) -> Result<(Plan, Vec<String>), cordon_policy::PolicyError> {
        let warnings = crate::features::caches::for_invocation(policy, invocation, host);
        // The host's listening sockets, read once here for every caller: the plan masks the
        // ones the jail would see.
        let invocation = invocation
            .clone()
            .with_host_sockets(crate::host::sockets::listening_unix_sockets());
        let plan = Plan::resolve(policy, &invocation, host)?;
        Ok((plan, warnings))
    }

    /// Runs one command: environment, backend, spawn, self-check, supervision, result.
    pub fn run(&self, req: &RunRequest<'_>) -> Result<RunResult, LaunchError> {
        match self.start(req, false)? {
            Start::Refused(result) => Ok(result),
            Start::Jail(jail) => jail.conclude(),
        }
    }
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
