//! The `landlock` backend: a jail made of what the kernel already has, with no helper program.
//!
//! Where bubblewrap cannot run (a container without user namespaces, a host whose security module
//! blocks them), the child itself applies, between `fork` and `exec`: the parent-death signal,
//! for root the loss of every capability (bounding set, ambient set, `SECBIT_NOROOT`), then
//! no-new-privileges and the Landlock ruleset built from the plan (`cordon-landlock`), and last
//! the seccomp filter without a PID namespace. Then it executes the stage, which checks the
//! jail from inside like it does under bubblewrap and, where Landlock scopes signals (ABI 6),
//! stays as the jail's init (`stage/init.rs`): it ends every process of the jail when the run
//! ends, whatever its process group, so the filter lets `setsid` and `setpgid` through. On an
//! older kernel the filter refuses them and the run is ended by its process group.
//!
//! What this backend cannot do, and `docs/backends.md` lists from the escape suite: host
//! processes stay visible in `/proc` (not signalable, not traceable); there is no private `/tmp`
//! (a fresh directory per run is the command's `TMPDIR`, readable and writable only by it, removed
//! afterwards); there is no network namespace (TCP is refused by Landlock, every socket by
//! seccomp); and a writable root that holds protected paths (every workspace: `.git/config`,
//! the placeholders) can be written only below its existing entries — nothing can be created,
//! removed or renamed directly in it or in `.git`, because a Landlock grant on a directory
//! reaches everything beneath it.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use cordon_landlock::{Abi, FsLister, Options, Rules, Ruleset};

use cordon_seccomp::FilterSpec;

use crate::backend::probe::{self, ProbeKey};
use crate::backend::{Backend, BackendReport, JailSpec, Prepared, ProbeOutcome};
use crate::error::LaunchError;
use crate::host::cleanup::Tree;
use crate::host::sys;

const NAME: &str = "landlock";

/// The terminal multiplexer, which the supervisor opens for the jail (never Landlock).
const PTMX: &str = "/dev/ptmx";

/// What the Landlock backend needs.
#[derive(Debug, Clone)]
pub struct LandlockConfig {
    /// The binary that contains the stage (the cordon binary).
    pub stage_binary: PathBuf,
    /// The home directory, for the probe's plan.
    pub home: Option<OsString>,
    /// The per-user probe cache file, if any.
    pub cache_file: Option<PathBuf>,
    /// How long the probe may take.
    pub probe_timeout: Duration,
    /// Where each run's private temporary directory is made.
    pub temp_root: PathBuf,
}

/// The Landlock backend, its ABI detected once.
#[derive(Debug)]
pub struct LandlockBackend {
    config: LandlockConfig,
    /// The stage binary without symlinks, resolved once: the file the ruleset grants.
    stage: Result<PathBuf, String>,
    abi: Result<Abi, String>,
    outcome: OnceLock<ProbeOutcome>,
    /// One defence taken away (the escape suite's mutants run; never in a release build).
    weak: crate::weaken::Weak,
}

fn not(detail: String) -> ProbeOutcome {
    ProbeOutcome {
        enforcing: false,
        backend: NAME.into(),
        detail,
        source: "probe".into(),
    }
}

/// Makes `<root>/cordon-tmp-<pid>-<nonce>`, mode 0700, registered with the session reaper before
/// it exists; returns it with its canonical path.
fn make_scratch(root: &Path, binary: &Path) -> Result<(Tree, PathBuf), LaunchError> {
    let root = std::fs::canonicalize(root)
        .map_err(LaunchError::io(format!("resolving {}", root.display())))?;
    let dir = root.join(format!(
        "cordon-tmp-{}-{}",
        std::process::id(),
        crate::host::token::nonce()
    ));
    let tree = Tree::make(&dir, Some(binary), |d| {
        std::fs::DirBuilder::new().mode(0o700).create(d)
    })
    .map_err(LaunchError::io(format!(
        "creating the private temporary directory {}",
        dir.display()
    )))?;
    Ok((tree, dir))
}

/// What the supervisor enforces for `plan`: writes below the writable roots and the run's
/// temporary directory, the plan's protected paths (those that do not exist yet too) refused,
/// its credential masks refused whatever the call, `/dev/shm` taken to `shm`.
fn supervisor_rules(
    plan: &cordon_policy::Plan,
    temp: &Path,
    shm: &Path,
    devices: &[PathBuf],
    granted_sockets: &[u64],
    self_check: Option<std::net::SocketAddr>,
) -> cordon_supervisor::Rules {
    use cordon_policy::SkipReason;
    let mut writable = plan.writable.clone();
    writable.push(temp.to_path_buf());
    let mut protected: Vec<PathBuf> = plan
        .protected
        .iter()
        .chain(&plan.restored)
        .map(|p| p.path.clone())
        .collect();
    let mut masked: Vec<PathBuf> = plan
        .masks
        .iter()
        .flat_map(|m| [m.target.clone(), m.requested.clone()])
        .collect();
    for s in &plan.skipped {
        match s.reason {
            SkipReason::MaskMissing | SkipReason::HiddenWithHome => masked.push(s.path.clone()),
            // A missing auto-run name at a root's top may be made, as under bubblewrap's
            // live runs: the sweep moves it aside after the run (`features/sweep.rs`).
            SkipReason::ProtectedMissing if is_root_auto_run(plan, &s.path) => {}
            SkipReason::ProtectedMissing | SkipReason::OwnStateMissing => {
                protected.push(s.path.clone());
            }
            SkipReason::ProtectedOutsideWritable => {}
        }
    }
    // A new terminal of the jail's own in the host's devpts: the supervisor opens it, and
    // the slave only for the caller holding its master (cordon-supervisor's terminals.rs).
    let devices = devices
        .iter()
        .cloned()
        .chain([PathBuf::from(PTMX)])
        .collect();
    cordon_supervisor::Rules {
        writable,
        devices,
        protected,
        masked,
        shm: Some(shm.to_path_buf()),
        // The filter denies sockets whenever the network is not allowed (see `prepare`): the
        // supervisor then judges every address.
        network: (plan.network != cordon_policy::Network::Allowed).then(|| {
            cordon_supervisor::Network {
                granted_sockets: granted_sockets.to_vec(),
                self_check,
            }
        }),
    }
}

/// Whether `path` is an auto-run name of the registry's root scope in one of the plan's roots.
fn is_root_auto_run(plan: &cordon_policy::Plan, path: &Path) -> bool {
    plan.writable.iter().any(|root| {
        path.strip_prefix(root)
            .ok()
            .and_then(Path::to_str)
            .is_some_and(cordon_policy::AutoRun::is_root_name)
    })
}

impl LandlockBackend {
    /// Detects the kernel's Landlock ABI.
    pub fn discover(config: LandlockConfig) -> LandlockBackend {
        let stage = std::fs::canonicalize(&config.stage_binary).map_err(|e| e.to_string());
        LandlockBackend {
            config,
            stage,
            abi: Abi::detect().map_err(|e| e.to_string()),
            outcome: OnceLock::new(),
            weak: crate::weaken::Weak::default(),
        }
    }
}

impl Backend for LandlockBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn probe(&self) -> ProbeOutcome {
        self.outcome
            .get_or_init(|| {
                let abi = match &self.abi {
                    Ok(abi) => *abi,
                    Err(why) => return not(format!("Landlock is not available: {why}")),
                };
                let key = ProbeKey::for_landlock(abi.version());
                let file = self.config.cache_file.as_deref();
                if let Some(o) = probe::lookup(&key, file) {
                    return o;
                }
                let outcome = match probe::run_at(
                    self,
                    &self.config.temp_root,
                    self.config.home.clone(),
                    self.config.probe_timeout,
                    "sandbox",
                ) {
                    Ok(detail) => ProbeOutcome {
                        enforcing: true,
                        backend: NAME.into(),
                        detail: format!("Landlock {abi}: {detail}"),
                        source: "probe".into(),
                    },
                    Err(detail) => not(detail),
                };
                probe::record(&key, &outcome, file, &abi.to_string(), "");
                outcome
            })
            .clone()
    }

    fn prepare(&self, spec: &JailSpec<'_>, status: Vec<OwnedFd>) -> Result<Prepared, LaunchError> {
        let (plan, env, call) = (spec.plan, spec.env, spec.stage);
        let granted_sockets = spec.granted_sockets;
        let abi = *self.abi.as_ref().map_err(|why| LaunchError::Io {
            what: "Landlock".into(),
            source: std::io::Error::other(why.clone()),
        })?;
        let (scratch, temp) = make_scratch(&self.config.temp_root, &self.config.stage_binary)?;
        // The stage runs in place, wherever it lies (a hidden /tmp, say): read and execute on
        // the binary itself, nothing else of its directory. stage_refusal has made sure no
        // writable root holds it.
        let stage = self.stage.as_ref().map_err(|why| LaunchError::Io {
            what: format!("resolving the stage {}", self.config.stage_binary.display()),
            source: std::io::Error::other(why.clone()),
        })?;
        let options = Options::alone(&temp).with_executable(stage);
        let rules = Rules::from_plan(plan, &options, &FsLister)?;
        let (ruleset, report) = Ruleset::create(&rules, abi)?;
        let supervised = !self.weak.unsupervised();
        let mut spec = FilterSpec::for_host(plan.network != cordon_policy::Network::Allowed)?
            .without_pid_namespace();
        if supervised {
            spec = spec.with_supervisor();
        }
        // Where the jail's signals are scoped the stage stays as its init and ends every
        // process of it whatever its group (stage/init.rs): sessions are let through.
        let init = report.signals_scoped;
        if init {
            spec = spec.with_sessions_reaped();
        }
        let filter = cordon_seccomp::compile(&spec)?;

        let mut vars = env.clone();
        vars.insert("TMPDIR".into(), temp.clone().into_os_string());
        for (name, value) in plan.jail_env() {
            vars.insert(name.into(), value.into());
        }
        // With the network denied the supervisor judges addresses; the stage proves it by
        // failing to reach this listener of the host's, held open for the run.
        let sentinel = if supervised && plan.network != cordon_policy::Network::Allowed {
            Some(
                std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(LaunchError::io(
                    "listening for the jail's network self-check",
                ))?,
            )
        } else {
            None
        };
        let sentinel_port = match &sentinel {
            Some(l) => Some(
                l.local_addr()
                    .map_err(LaunchError::io(
                        "listening for the jail's network self-check",
                    ))?
                    .port(),
            ),
            None => None,
        };
        let stage_argv = call.args(|check| {
            check.init = init;
            check.sentinel_port = sentinel_port;
        });
        let mut command = Command::new(&self.config.stage_binary);
        command
            .args(&stage_argv)
            .env_clear()
            .envs(&vars)
            .current_dir(&plan.cwd);
        let mut hold: Vec<OwnedFd> = status.into_iter().collect();
        let keep: Vec<i32> = hold.iter().map(sys::raw).collect();
        let dies = self.weak.dies_with_launcher();
        sys::prepare_child_with(&mut command, &plan.limits, &keep, dies);
        let root = rustix::process::geteuid().is_root();
        // The child sends its listener over a socket of its own (close-on-exec: the command
        // never holds it), dropped with `hold` after the spawn.
        let supervisor = if supervised {
            let (ours, theirs) =
                sys::socket_pair().map_err(LaunchError::io("creating the supervisor's socket"))?;
            let to = sys::raw(&theirs);
            hold.push(theirs);
            Some((ours, to))
        } else {
            None
        };
        sys::confine_alone(
            &mut command,
            ruleset,
            filter.bytes(),
            root,
            dies,
            supervisor.as_ref().map(|(_, to)| *to),
        );
        // The jail's own /dev/shm, inside the run's temporary directory (removed with it).
        let shm = temp.join(".shm");
        if supervisor.is_some() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&shm)
                .map_err(LaunchError::io(format!("creating {}", shm.display())))?;
        }
        let supervisor = supervisor.map(|(socket, _)| crate::host::supervise::Handover {
            socket,
            rules: supervisor_rules(
                plan,
                &temp,
                &shm,
                &options.devices,
                granted_sockets,
                sentinel.as_ref().and_then(|l| l.local_addr().ok()),
            ),
            sentinel,
        });

        let mut shown: Vec<OsString> = vec![
            format!("# {report}").into(),
            format!(
                "# seccomp filter v{} ({} instructions), without a PID namespace{}",
                cordon_seccomp::FILTER_VERSION,
                filter.instruction_count(),
                if root {
                    "; every capability dropped"
                } else {
                    ""
                }
            )
            .into(),
            format!("# TMPDIR={} (private to the run)", temp.display()).into(),
        ];
        for rule in &rules.paths {
            shown.push(format!("# allow {} {}", rule.access, rule.path.display()).into());
        }
        shown.push(self.config.stage_binary.clone().into_os_string());
        shown.extend(stage_argv.iter().cloned());
        Ok(Prepared {
            command,
            hold,
            shown,
            scratch: Some(scratch),
            startable: Ok(()),
            supervisor,
        })
    }

    fn report(&self) -> BackendReport {
        match &self.abi {
            Err(why) => BackendReport {
                name: NAME,
                binary: None,
                version: None,
                features: Vec::new(),
                degradations: Vec::new(),
                unusable: Some(format!("Landlock is not available: {why}")),
            },
            Ok(abi) => BackendReport {
                name: NAME,
                binary: None,
                version: Some(format!("Landlock {abi}")),
                features: vec![
                    format!("filesystem rules yes (ABI {})", abi.version()),
                    format!(
                        "tcp bind/connect {}",
                        if abi.supports_tcp() { "yes" } else { "no" }
                    ),
                    format!(
                        "signal and abstract-socket scoping {}",
                        if abi.supports_scopes() { "yes" } else { "no" }
                    ),
                ],
                degradations: [
                    "host processes stay visible in /proc".into(),
                    "no private /tmp: a per-run TMPDIR instead".into(),
                    "no network namespace: with the network denied the supervisor performs every bind, connect and addressed send, and the jail reaches only sockets it bound itself (and the proxy's listener); /proc/net lists the host's interfaces and sockets".into(),
                    "pseudo-terminals in the host's devpts: the supervisor opens a new one for the jail and its /dev/pts/N only for a process holding its master; another session's terminal is refused, and a program that takes its controlling terminal by opening it gets none".into(),
                    "a supervisor performs every call that changes a name or metadata (cordon-supervisor): /dev/shm is the run's own only for names opened for writing".into(),
                ]
                .into_iter()
                .chain((!abi.supports_scopes()).then(|| {
                    "no setsid or setpgid: without Landlock's signal scope (ABI 6) no process of the jail is out of the command's reach to end it, so the run is ended by its process group".into()
                }))
                .collect(),
                unusable: None,
            },
        }
    }

    #[cfg(all(feature = "mutants", debug_assertions))]
    fn weaken(&mut self, weakening: crate::weaken::Weakening) {
        self.weak = crate::weaken::Weak::of(weakening);
    }

    fn is_landlock(&self) -> bool {
        true
    }

    /// The supervisor judges every address: the proxy's listener on the host's loopback is
    /// the one host socket it lets the jail reach (a weakened, unsupervised jail has no proxy).
    fn proxies_from_host(&self) -> bool {
        !self.weak.unsupervised()
    }

    fn stage_binary(&self) -> Option<&Path> {
        Some(&self.config.stage_binary)
    }

    fn runs_stage_in_place(&self) -> bool {
        true
    }
}
