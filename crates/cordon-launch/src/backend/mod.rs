//! The `Backend` trait: what the launcher asks of a way of jailing a command.
//!
//! Each backend lives in a module of its own below this one: [`bwrap`] (bubblewrap, with the
//! Landlock second wall inside), [`landlock`] (Landlock and seccomp applied by the child itself,
//! where bubblewrap cannot run) and [`seatbelt`] (macOS's `sandbox-exec`). Between the trait and
//! the implementations sits the probe (`probe.rs`): every implementation proves it enforces by
//! running the stage in a throwaway jail of its own, the same way.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Command;

use cordon_policy::{ConfigBroker, GuardedPlan};
use serde::{Deserialize, Serialize};

use crate::error::LaunchError;

#[cfg(linux_backends)]
pub(crate) mod bwrap;
#[cfg(linux_backends)]
pub(crate) mod landlock;
pub(crate) mod locate;
#[cfg(linux_backends)]
pub(crate) mod namespaces;
pub(crate) mod probe;
pub(crate) mod seatbelt;

/// The outcome of probing one backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeOutcome {
    /// True only when the probe showed the jail holds.
    pub enforcing: bool,
    /// The backend probed.
    pub backend: String,
    /// What was seen, in words.
    pub detail: String,
    /// Where the answer came from: `probe`, `process-cache` or `file-cache`.
    pub source: String,
}

/// Why `backend`'s stage binary (cordon itself) cannot serve a jail of `plan`: it lies inside a
/// writable root (the jail could replace its own checker), or the backend executes it in place
/// and it lies inside a credential mask (which no jail opens). Anywhere else it runs: bubblewrap
/// binds it read-only at its own path, and the in-place backends grant the file alone (read and
/// execute in the Landlock rules, a literal read in the Seatbelt profile), not its directory.
/// Asked before every run and every probe.
pub(crate) fn stage_refusal(
    backend: &dyn Backend,
    plan: &cordon_policy::Plan,
) -> Option<LaunchError> {
    let stage = backend.stage_binary()?;
    let stage = std::fs::canonicalize(stage).unwrap_or_else(|_| stage.to_path_buf());
    let shown = stage.display().to_string();
    if let Some(root) = plan.writable.iter().find(|r| stage.starts_with(r)) {
        return Some(LaunchError::StageWritable {
            stage: shown,
            root: root.display().to_string(),
        });
    }
    if !backend.runs_stage_in_place() {
        return None;
    }
    if let Some(mask) = plan.masks.iter().find(|m| stage.starts_with(&m.target)) {
        return Some(LaunchError::StageHidden {
            stage: shown,
            backend: backend.name(),
            rule: format!("{} is a credential mask", mask.target.display()),
        });
    }
    None
}

/// Where `backend` finds its stage and whether a jail of `plan` can execute it: what `cordon
/// doctor` reports.
pub fn stage_report(backend: &dyn Backend, plan: &cordon_policy::Plan) -> Option<StageReport> {
    let binary = backend.stage_binary()?;
    let path = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    let how = if backend.runs_stage_in_place() {
        "executed in place at its host path; the jail may read and execute this file alone"
    } else {
        "bound read-only into the jail"
    };
    let refused = stage_refusal(backend, plan).map(|e| e.to_string());
    Some(StageReport {
        backend: backend.name(),
        path: path.display().to_string(),
        how,
        executable: refused.is_none(),
        refused,
    })
}

/// What `cordon doctor` says of one backend's stage binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageReport {
    /// The backend.
    pub backend: &'static str,
    /// The stage binary, resolved.
    pub path: String,
    /// How the binary reaches the jail.
    pub how: &'static str,
    /// Whether a jail of the current plan can execute it.
    pub executable: bool,
    /// Why not, when it cannot.
    pub refused: Option<String>,
}

/// What a backend builds one jail from: the complete plan, and what the launcher's features
/// made on the host and set for it.
#[derive(Debug, Clone, Copy)]
pub struct JailSpec<'a> {
    /// The plan, guarded (its placeholders are made before the command starts).
    pub plan: &'a GuardedPlan,
    /// The git configuration broker's shadows made on the host (bubblewrap binds them).
    pub brokers: &'a [ConfigBroker],
    /// Exactly the jail's environment.
    pub env: &'a BTreeMap<OsString, OsString>,
    /// What the stage is told to do.
    pub stage: StageCall<'a>,
    /// The writable roots under a copy-on-write layer, each with the run's layer directory
    /// (`features/layer.rs`); empty for a live run.
    pub layers: &'a [(std::path::PathBuf, std::path::PathBuf)],
    /// Inodes of host sockets the jail may reach although the network is denied (the proxy's
    /// listener on the host's loopback, for a backend whose supervisor judges addresses).
    pub granted_sockets: &'a [u64],
}

/// What a jail's stage is told to do.
#[derive(Debug, Clone, Copy)]
pub enum StageCall<'a> {
    /// Check the jail (`check`), then run the payload `argv`.
    Check {
        /// What the stage checks.
        check: &'a crate::stage::SelfCheck,
        /// The payload.
        argv: &'a [OsString],
    },
    /// Arguments made whole by the caller (the backend probe's).
    Args(&'a [OsString]),
}

impl StageCall<'_> {
    /// The stage's arguments (`crate::stage::check_args`); `adjust` adds to the check what
    /// only the backend knows (the Landlock backend's sentinel port and init mode).
    pub fn args(&self, adjust: impl FnOnce(&mut crate::stage::SelfCheck)) -> Vec<OsString> {
        match self {
            StageCall::Check { check, argv } => {
                let mut check = (*check).clone();
                adjust(&mut check);
                crate::stage::check_args(&check, argv)
            }
            StageCall::Args(args) => args.to_vec(),
        }
    }
}

/// A command ready to spawn, and the descriptors it must inherit.
#[derive(Debug)]
pub struct Prepared {
    /// The command (bubblewrap, or the payload itself when unsandboxed).
    pub command: Command,
    /// Descriptors the command inherits; drop them after the spawn.
    pub hold: Vec<OwnedFd>,
    /// The full argument list, for `cordon explain`.
    pub shown: Vec<OsString>,
    /// A private temporary directory made for the run on the host (the Landlock backend),
    /// removed when dropped (the launcher keeps it until the run's end).
    pub scratch: Option<crate::host::cleanup::Tree>,
    /// Why the command could not start although the list was built (bubblewrap's argument
    /// limit): the launcher refuses it; `cordon explain` still shows the list.
    pub startable: Result<(), LaunchError>,
    /// The supervisor to start with the command (the Landlock backend); `None` for a backend
    /// whose jail needs none.
    pub supervisor: Option<crate::host::supervise::Handover>,
}

/// What `cordon doctor` reports of a backend.
#[derive(Debug, Clone, Serialize)]
pub struct BackendReport {
    /// Backend name.
    pub name: &'static str,
    /// The binary used, if any.
    pub binary: Option<String>,
    /// Its version text.
    pub version: Option<String>,
    /// Features detected, as `flag: used/required`.
    pub features: Vec<String>,
    /// Missing best-effort features.
    pub degradations: Vec<String>,
    /// Why it cannot be used at all, if so.
    pub unusable: Option<String>,
}

/// A way of jailing a command.
pub trait Backend: Send + Sync {
    /// Stable name (`bubblewrap`).
    fn name(&self) -> &'static str;
    /// Proves (or disproves) that this backend enforces on this host; cached.
    fn probe(&self) -> ProbeOutcome;
    /// Builds the command that runs the spec's stage call (its arguments, then the payload)
    /// in the jail its plan describes, with exactly its `env`. The descriptors in `status` (the
    /// status pipe, the second wall's rules) are inherited by the stage.
    fn prepare(&self, spec: &JailSpec<'_>, status: Vec<OwnedFd>) -> Result<Prepared, LaunchError>;
    /// What `doctor` shows.
    fn report(&self) -> BackendReport;
    /// The binary that runs as the stage inside the jail (the cordon binary), if any. The launcher
    /// refuses a plan whose writable roots contain it: the jail could replace its own checker.
    fn stage_binary(&self) -> Option<&Path>;
    /// Whether the stage applies a Landlock ruleset as a second wall inside this jail (rules
    /// computed with paths as the jail sees them; bubblewrap binds at the host's paths).
    fn second_wall(&self) -> bool {
        false
    }
    /// Whether the jail executes the stage binary at its host path under the jail's own rules
    /// (the Landlock and Seatbelt backends, which grant that one file), rather than a copy bound
    /// from outside the jail (bubblewrap).
    fn runs_stage_in_place(&self) -> bool {
        false
    }
    /// Whether a `proxy` network can be bridged into this backend's jail: the jail has a
    /// network namespace of its own in which the stage can listen (bubblewrap). Elsewhere a
    /// proxy network is refused (docs/limits.md says why).
    fn bridges_proxy(&self) -> bool {
        false
    }
    /// Whether a `proxy` network can be served from a listener on the host's loopback, which
    /// only this backend's jail may reach among host sockets: its supervisor judges every
    /// address (the Landlock backend) and grants that one listener ([`JailSpec::granted_sockets`]).
    fn proxies_from_host(&self) -> bool {
        false
    }
    /// Whether the git configuration broker serves this backend's jails: the backend binds a
    /// broker's shadow over its repository's `commondir` (bubblewrap). Elsewhere `.git/config`
    /// stays read-only for the run.
    fn brokers_git_config(&self) -> bool {
        false
    }
    /// Whether Landlock is this backend's jail itself (the Landlock backend), rather than a
    /// second wall inside another (the result's `landlock` field says `backend`).
    fn is_landlock(&self) -> bool {
        false
    }
    /// Whether this backend's jail can be built before its command is known: its stage runs
    /// inside the jail and can wait for the command after its checks (warm.rs).
    fn builds_ahead(&self) -> bool {
        false
    }
    /// Whether this backend's jail can put the writable roots under a copy-on-write layer
    /// (bubblewrap; `features/layer.rs`). The others run live.
    fn layers(&self) -> bool {
        false
    }
    /// Takes one defence away, for the escape suite's mutants run only (never in a release
    /// build); a backend that has nothing to weaken ignores it.
    #[cfg(all(feature = "mutants", debug_assertions))]
    fn weaken(&mut self, _weakening: crate::weaken::Weakening) {}
}
