//! The bubblewrap backend: bubblewrap found in a trusted place, probed once, and handed the
//! argument list `cordon-bwrap` builds from the guarded plan (through a descriptor).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use cordon_bwrap::{Descriptors, Features, Request};

use cordon_seccomp::{CompiledFilter, FilterSpec};

use crate::backend::probe::{self, ProbeKey};
use crate::backend::{Backend, BackendReport, JailSpec, Prepared, ProbeOutcome, locate};
use crate::error::LaunchError;
use crate::host::sys;

/// Where the bubblewrap backend looks and what it binds as the stage.
#[derive(Debug, Clone)]
pub struct BwrapConfig {
    /// Candidate paths, tried in order (default: [`locate::TRUSTED_BWRAP_PATHS`]).
    pub candidates: Vec<String>,
    /// The binary that contains the stage (the cordon binary).
    pub stage_binary: PathBuf,
    /// The home directory, for the probe's plan.
    pub home: Option<OsString>,
    /// The per-user probe cache file, if any.
    pub cache_file: Option<PathBuf>,
    /// How long the probe may take.
    pub probe_timeout: Duration,
}

/// bubblewrap, found in a trusted location, described once.
#[derive(Debug)]
pub struct BwrapBackend {
    config: BwrapConfig,
    found: Result<Found, String>,
    outcome: OnceLock<ProbeOutcome>,
    /// The mutants run's weakening (none outside it).
    weak: crate::weaken::Weak,
}

#[derive(Debug)]
struct Found {
    path: PathBuf,
    key: ProbeKey,
    features: Features,
    version_output: String,
    help_output: String,
    from_cache: Option<ProbeOutcome>,
}

impl BwrapBackend {
    /// Locates bubblewrap and learns its features (from the cache file when its key matches).
    pub fn discover(config: BwrapConfig) -> BwrapBackend {
        let candidates: Vec<&str> = config.candidates.iter().map(String::as_str).collect();
        let found = match locate::find_bwrap(&candidates) {
            Err(rejected) => Err(format!(
                "no trusted bubblewrap: {}",
                rejected
                    .iter()
                    .map(|r| format!("{}: {}", r.path.display(), r.why))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            Ok(path) => describe(&path, config.cache_file.as_deref()),
        };
        BwrapBackend {
            config,
            found,
            outcome: OnceLock::new(),
            weak: crate::weaken::Weak::default(),
        }
    }

    fn run_probe(&self, found: &Found) -> ProbeOutcome {
        let not = |detail: String| ProbeOutcome {
            enforcing: false,
            backend: "bubblewrap".into(),
            detail,
            source: "probe".into(),
        };
        let missing = found.features.missing_required();
        if !missing.is_empty() {
            return not(format!(
                "bubblewrap {} lacks required features: {}",
                found.features.version_text(),
                missing.join(", ")
            ));
        }
        if std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .is_ok_and(|v| v.trim() == "0")
        {
            return not("user namespaces are disabled (user.max_user_namespaces = 0)".into());
        }
        match probe::run_at(
            self,
            &std::env::temp_dir(),
            self.config.home.clone(),
            self.config.probe_timeout,
            "jail",
        ) {
            Ok(detail) => ProbeOutcome {
                enforcing: true,
                backend: "bubblewrap".into(),
                detail,
                source: "probe".into(),
            },
            Err(detail) => not(detail),
        }
    }
}

fn describe(path: &Path, cache_file: Option<&Path>) -> Result<Found, String> {
    let key = ProbeKey::for_binary(path);
    if let Some(entry) = cache_file.and_then(|f| probe::read_file_cache(f, &key)) {
        return Ok(Found {
            path: path.to_path_buf(),
            features: Features::parse(&entry.version_output, &entry.help_output),
            version_output: entry.version_output,
            help_output: entry.help_output,
            key,
            from_cache: Some(ProbeOutcome {
                source: "file-cache".into(),
                ..entry.outcome
            }),
        });
    }
    let ask = |flag: &str| -> Result<String, String> {
        let out = Command::new(path)
            .arg(flag)
            .env_clear()
            .output()
            .map_err(|e| format!("cannot run {} {flag}: {e}", path.display()))?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok(text)
    };
    let version_output = ask("--version")?;
    let help_output = ask("--help")?;
    Ok(Found {
        path: path.to_path_buf(),
        features: Features::parse(&version_output, &help_output),
        version_output,
        help_output,
        key,
        from_cache: None,
    })
}

/// The seccomp filter of a jail (`deny_sockets`: its network is its own namespace), compiled
/// once per process: bubblewrap installs it in a live jail, the stage in a layered one.
pub(crate) fn filter(deny_sockets: bool) -> Result<&'static CompiledFilter, LaunchError> {
    static DENY: OnceLock<Result<CompiledFilter, String>> = OnceLock::new();
    static ALLOW: OnceLock<Result<CompiledFilter, String>> = OnceLock::new();
    let cell = if deny_sockets { &DENY } else { &ALLOW };
    let compiled = cell.get_or_init(|| {
        // A denied network is bubblewrap's `--unshare-net` (cordon-bwrap emits it exactly
        // then): the jail's own namespace, whose loopback IPv4 and IPv6 sockets may use.
        FilterSpec::for_host(deny_sockets)
            .map(|spec| {
                if deny_sockets {
                    spec.with_own_network_namespace()
                } else {
                    spec
                }
            })
            .and_then(|spec| cordon_seccomp::compile(&spec))
            .map_err(|e| e.to_string())
    });
    compiled.as_ref().map_err(|e| LaunchError::Io {
        what: "building the seccomp filter".into(),
        source: std::io::Error::other(e.clone()),
    })
}

impl Backend for BwrapBackend {
    fn name(&self) -> &'static str {
        "bubblewrap"
    }

    fn probe(&self) -> ProbeOutcome {
        if self.weak.any() {
            // Skipped, and so never cached: the weakened jail would fail it.
            return ProbeOutcome {
                enforcing: true,
                backend: "bubblewrap".into(),
                detail: "MUTANT: probe skipped".into(),
                source: "mutant".into(),
            };
        }
        self.outcome
            .get_or_init(|| {
                let found = match &self.found {
                    Ok(f) => f,
                    Err(why) => {
                        return ProbeOutcome {
                            enforcing: false,
                            backend: "bubblewrap".into(),
                            detail: why.clone(),
                            source: "probe".into(),
                        };
                    }
                };
                if let Some(o) = probe::cached(&found.key) {
                    return o;
                }
                if let Some(o) = &found.from_cache {
                    probe::remember(&found.key, o);
                    return o.clone();
                }
                let outcome = self.run_probe(found);
                probe::record(
                    &found.key,
                    &outcome,
                    self.config.cache_file.as_deref(),
                    &found.version_output,
                    &found.help_output,
                );
                outcome
            })
            .clone()
    }

    fn prepare(&self, spec: &JailSpec<'_>, status: Vec<OwnedFd>) -> Result<Prepared, LaunchError> {
        let (plan, env) = (spec.plan, spec.env);
        let stage_argv = &spec.stage.args(|_| {});
        // A host socket removed since the plan was read (a session's plan, a jail built ahead)
        // cannot be masked, nor reached: left out, so the jail still starts.
        let pruned = plan.without_gone_sockets(|p| std::fs::symlink_metadata(p).is_ok());
        let plan = pruned.as_ref().unwrap_or(plan);
        let found = self.found.as_ref().map_err(|why| LaunchError::Io {
            what: "bubblewrap".into(),
            source: std::io::Error::other(why.clone()),
        })?;
        // A layered jail's filter is the stage's to install (`features/layer.rs` hands it).
        let seccomp_fd = if spec.layers.is_empty() {
            // A proxy network is a denied one with a bridge: the jail's own namespace.
            let compiled = filter(plan.network != cordon_policy::Network::Allowed)?;
            Some(
                sys::memfd_with("cordon-seccomp", compiled.bytes())
                    .map_err(LaunchError::io("creating the seccomp descriptor"))?,
            )
        } else {
            None
        };
        let layers: Vec<cordon_bwrap::LayerRoot> = spec
            .layers
            .iter()
            .map(|(root, dir)| cordon_bwrap::LayerRoot {
                root: root.clone(),
                dir: dir.clone(),
            })
            .collect();
        // Everything the jail contains is cordon-bwrap's (with the plan's guard): the launcher
        // adds nothing to the list.
        let built = cordon_bwrap::build_layered(
            &Request {
                plan,
                brokers: spec.brokers,
                features: &found.features,
                env,
                fds: Descriptors {
                    seccomp: seccomp_fd.as_ref().map_or(-1, sys::raw),
                },
                stage: Some(&self.config.stage_binary),
                argv: stage_argv,
            },
            &layers,
        )?;
        // What bubblewrap would refuse at start-up (about 2,900 masks, a path it cannot mount)
        // is refused, named; `cordon explain` still shows the list.
        let startable = built.startable().map_err(LaunchError::from);
        // The mutants run's weakened options (the identity outside it).
        let (bytes, options) = self.weak.bwrap_options(&built)?;
        let mut shown: Vec<OsString> = vec![found.path.clone().into_os_string()];
        shown.extend(options);
        shown.push("--".into());
        shown.extend(built.command().iter().cloned());
        let args_fd = sys::memfd_with("cordon-bwrap-args", &bytes)
            .map_err(LaunchError::io("creating the arguments descriptor"))?;
        let mut command = Command::new(&found.path);
        command
            .args(built.command_line(sys::raw(&args_fd)))
            .env_clear();
        let mut hold: Vec<OwnedFd> = seccomp_fd.into_iter().chain([args_fd]).collect();
        hold.extend(status);
        let mut keep: Vec<i32> = hold.iter().map(sys::raw).collect();
        keep.extend(self.weak.kept_fds());
        let dies = self.weak.dies_with_launcher();
        sys::prepare_child_with(&mut command, &plan.limits, &keep, dies);
        Ok(Prepared {
            command,
            hold,
            shown,
            scratch: None,
            startable,
            supervisor: None,
        })
    }

    #[cfg(all(feature = "mutants", debug_assertions))]
    fn weaken(&mut self, weakening: crate::weaken::Weakening) {
        self.weak = crate::weaken::Weak::of(weakening);
    }

    fn brokers_git_config(&self) -> bool {
        true
    }

    fn stage_binary(&self) -> Option<&Path> {
        Some(&self.config.stage_binary)
    }

    fn second_wall(&self) -> bool {
        true
    }

    fn builds_ahead(&self) -> bool {
        true
    }

    fn layers(&self) -> bool {
        true
    }

    fn bridges_proxy(&self) -> bool {
        true
    }

    fn report(&self) -> BackendReport {
        match &self.found {
            Err(why) => BackendReport {
                name: "bubblewrap",
                binary: None,
                version: None,
                features: Vec::new(),
                degradations: Vec::new(),
                unusable: Some(why.clone()),
            },
            Ok(f) => {
                let missing = f.features.missing_required();
                BackendReport {
                    name: "bubblewrap",
                    binary: Some(f.path.display().to_string()),
                    version: Some(f.features.version_text()),
                    features: cordon_bwrap::FEATURE_USES
                        .iter()
                        .map(|u| {
                            let has = f.features.supports(u.flag).unwrap_or(false);
                            format!(
                                "{} {} ({:?})",
                                u.flag,
                                if has { "yes" } else { "no" },
                                u.need
                            )
                        })
                        .collect(),
                    degradations: f
                        .features
                        .degradations()
                        .iter()
                        .map(|s| (*s).to_owned())
                        .collect(),
                    unusable: (!missing.is_empty())
                        .then(|| format!("missing required features: {}", missing.join(", "))),
                }
            }
        }
    }
}
