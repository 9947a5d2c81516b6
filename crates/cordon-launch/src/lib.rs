//! cordon's launcher: the part that runs things.
//!
//! [`Launcher::run`] takes a resolved [`Plan`](cordon_policy::Plan) and a command line and follows
//! this order: build the child environment ([`cordon_env`]), pick the first backend
//! whose probe *proved* enforcement ([`Backend::probe`]; no such backend means a refusal, or an
//! unsandboxed run only when `unavailable = "warn"` was set explicitly), guard the plan
//! ([`Plan::guard`](cordon_policy::Plan::guard)) and make the placeholders it lists (after a
//! refusal when the roots' git objects are shared by hard link with another repository), spawn the
//! backend's jail in its own process group with the policy's resource limits and no inherited
//! descriptor but stdio and what the backend needs, let the in-jail stage check that the jail
//! holds before the payload runs, then supervise: a wall-clock timeout kills the whole tree,
//! output is capped in memory, and the exit code, duration, backend, policy hash and recognised
//! denials come back as a [`RunResult`], with what the sweep found once the jail is gone (an
//! auto-run file the command created, moved aside; a file put back as it was).
//!
//! A harness that runs many commands prepares a session once ([`Launcher::prepare`]: the walk of
//! the writable roots) and runs each command with [`Launcher::run_prepared`], which checks the
//! roots in constant time and, on bubblewrap, builds each next jail while the caller works on the
//! last result, so a command is handed to a jail that is already built and checked.
//!
//! Not for: deciding policy (that is `cordon-policy`), deciding what a bubblewrap jail contains
//! (that is `cordon-bwrap` with the plan's guard: the launcher only makes the placeholders they
//! list), judging commands (the floor), or printing.
//!
//! # Where things are
//!
//! - `launcher/`: [`Launcher`], [`Launcher::plan`], [`Launcher::run`] (its phases are
//!   `launcher/start.rs`), [`Launcher::explain`] (the same phases, dry), the jail after its
//!   spawn and the result. `session/`: [`Preparation`], [`Launcher::run_prepared`] and the jail
//!   built ahead.
//! - `features/`: the pipeline (`features/mod.rs`: the phases and the `Feature` trait) and one
//!   module per feature: the auto-run registry's placeholders and sweep, the git configuration
//!   broker, hard-linked objects, the proxy's bridge, the second wall, limits (with `pids.rs`
//!   and `memory.rs`), the environment table, the private caches.
//! - `backend/`: the [`Backend`] trait, the probe, and the bubblewrap, Landlock and Seatbelt
//!   backends.
//! - `stage/`: what runs inside the jail before the payload, and the binary's modes.
//! - `host/`: the raw system calls (`sys.rs`, the only `unsafe` code here), process groups and
//!   supervision, what a run holds on the host, placeholders, and the session reaper that
//!   removes it all when the launcher is killed.
//! - `dirs.rs` ([`CordonDirs`]: cordon's own directories), `violations.rs`, `error.rs`,
//!   `weaken/` (the mutants run's weakenings, chosen in one place).
//!
//! The wings depend downward only, and no module imports one that imports it back
//! (`tests/module_graph.rs` checks both).
//!
//! The bubblewrap and Landlock backends, the session (its walk is Linux's `openat2`) and root's
//! `pids` group are compiled only on Linux, with the default `linux-backends` feature (the
//! `linux_backends` cfg, set by `build.rs`); their crates (`cordon-bwrap`, `cordon-landlock`,
//! `cordon-seccomp`, `cordon-scan`) are Linux-only dependencies. What is left is the Seatbelt
//! backend's graph, and CI compiles exactly that on Linux (`cargo check -p cordon-launch
//! --no-default-features`). It has never been compiled for macOS here (no macOS target is
//! installed), so system calls that exist only on Linux may remain outside the gate.
//!
//! # Example
//!
//! A binary that embeds the stage must call [`run_if_stage`] first thing in `main`; then it can
//! run a command (`examples/echo.rs` is this, runnable):
//!
//! ```no_run
//! use cordon_launch::{Forward, Launcher, RunRequest, RunStatus};
//! use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};
//!
//! let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
//! cordon_launch::run_if_stage(&args); // never returns inside a jail
//!
//! let home = std::env::var_os("HOME");
//! let plan = Plan::resolve(
//!     &Policy::for_profile(Profile::Shell),
//!     &Invocation::at(std::env::current_dir()?),
//!     &RealHost::new(home.clone()),
//! )?;
//! let config = Launcher::default_config(std::env::current_exe()?, home, None);
//! let launcher = Launcher::linux(config);
//! let result = launcher.run(&RunRequest {
//!     plan: &plan,
//!     argv: &["echo".into(), "hi".into()],
//!     host_env: &cordon_env::host_snapshot(),
//!     forward: Forward::No,
//!     inherit_stdin: false,
//! })?;
//! assert_eq!(result.status, RunStatus::Exited);
//! assert_eq!(result.stdout.text, "hi\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Off Linux the session (and the jails it builds ahead) is not compiled; what only it used stays.
#![cfg_attr(not(linux_backends), allow(dead_code))]

mod backend;
mod dirs;
mod error;
pub mod exit_codes;
mod features;
mod host;
mod launcher;
#[cfg(linux_backends)]
mod session;
mod stage;
mod violations;
mod weaken;

pub use backend::seatbelt::{SeatbeltBackend, SeatbeltConfig};

/// What the Seatbelt backend shows and reads without running (`cordon explain --platform
/// macos`, denials in the system log's words); generated and tested on every OS.
pub mod seatbelt {
    pub use crate::backend::seatbelt::{Explained, NAME, explain, recognise, to_violation};
}
pub use backend::locate::TRUSTED_BWRAP_PATHS;
#[cfg(linux_backends)]
pub use backend::namespaces::{
    FALLBACK_LACKS, NamespaceDiagnosis, NamespaceFacts, diagnose as diagnose_namespaces,
};
#[cfg(linux_backends)]
pub use backend::probe::probe_cache_holds;
pub use backend::{
    Backend, BackendReport, JailSpec, Prepared, ProbeOutcome, StageCall, StageReport,
};
#[cfg(linux_backends)]
pub use backend::{
    bwrap::{BwrapBackend, BwrapConfig},
    landlock::{LandlockBackend, LandlockConfig},
};
pub use dirs::CordonDirs;
pub use error::LaunchError;
pub use features::caches::{CacheEntry, CacheError};
pub use host::heads::CachingHost;
/// The workspaces' private toolchain caches on the host (`cordon cache show|clear`).
pub mod caches {
    pub use crate::features::caches::{clear, entries, prepare};
}
pub use features::env::{EnvRow, EnvSource};
#[cfg(linux_backends)]
pub use features::layer_abandoned::{
    Abandoned, describe as describe_abandoned, describe_recovered, recover_abandoned,
};
pub use features::proxy::{Destination, PORT as PROXY_PORT};
pub use features::{Changes, RootChanges};
pub use host::ending::{end_all as end_all_jails, end_jails_on_signals, termination_signal};
pub use host::reaper::{REAPER_NAME, start_session_forked};
pub use host::sockets::listening_unix_sockets;
pub use host::supervise::{Forward, Handover};
pub use host::sys::prepare_child;
pub use launcher::{
    BackendChoice, Explanation, Launcher, NetworkReport, RunRequest, RunResult, RunStatus, Stream,
    WAYS_OUT, policy_hash,
};
#[cfg(linux_backends)]
pub use session::{Preparation, PreparationReport};
pub use stage::entry::run_if_stage;
pub use violations::{Violation, ViolationKind};
#[cfg(all(feature = "mutants", debug_assertions))]
pub use weaken::Weakening;

/// Where the jail's memory group would be made for this user (the launcher's own memory
/// control group), or why none can be (`cordon doctor` reports it).
pub fn memory_group() -> Result<std::path::PathBuf, String> {
    #[cfg(linux_backends)]
    {
        features::memory::locate().map(|g| g.parent)
    }
    #[cfg(not(linux_backends))]
    {
        Err("this build has no Linux backend, so no memory control group".into())
    }
}
