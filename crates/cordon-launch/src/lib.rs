//! cordon's launcher: the part that runs things.
//!
//! [`Launcher::run`] takes a resolved [`Plan`](cordon_policy::Plan) and a command line and follows
//! the order of DESIGN.md: build the child environment ([`cordon_env`]), pick the first backend
//! whose probe *proved* enforcement ([`Backend::probe`]; no such backend means a refusal, or an
//! unsandboxed run only when `unavailable = "warn"` was set explicitly), spawn it in its own
//! process group with the policy's resource limits and no inherited descriptor but stdio and what
//! the backend needs, let the in-jail [`stage`] check that the jail holds before the payload runs,
//! then supervise: a wall-clock timeout kills the whole tree, output is capped in memory, and the
//! exit code, duration, backend, policy hash and recognised denials come back as a [`RunResult`].
//!
//! A harness that runs many commands prepares a session once ([`Launcher::prepare`]: the walk of
//! the writable roots) and runs each command with [`Launcher::run_prepared`], which checks the
//! roots in constant time and, on bubblewrap, builds each next jail while the caller works on the
//! last result, so a command is handed to a jail that is already built and checked.
//!
//! The bubblewrap backend finds `bwrap` only in trusted root-owned locations ([`locate`]), passes
//! every argument through a descriptor (`--args`), and hands the seccomp program over on another.
//!
//! Not for: deciding policy (that is `cordon-policy`), judging commands (the floor), or printing.
//! Linux only.
//!
//! A binary that embeds the stage must call [`stage::run_if_stage`] first thing in `main`:
//!
//! ```no_run
//! let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
//! cordon_launch::stage::run_if_stage(&args); // never returns inside a jail
//! // ... the program's own work ...
//! ```

mod backend;
mod error;
pub mod exit_codes;
mod guard;
pub mod landlock;
mod launcher;
pub mod leftovers;
pub mod locate;
#[cfg(all(feature = "mutants", debug_assertions))]
mod mutant;
mod pids;
pub mod preparation;
pub mod probe;
pub mod seatbelt;
pub mod stage;
pub mod supervise;
mod sys;
pub mod violations;
mod warm;

pub use backend::{Backend, BackendReport, BwrapBackend, BwrapConfig, Prepared};
pub use error::LaunchError;
pub use landlock::{LandlockBackend, LandlockConfig};
pub use launcher::{
    BackendChoice, Launcher, RunRequest, RunResult, RunStatus, Stream, WAYS_OUT, policy_hash,
    self_check,
};
pub use preparation::{Preparation, PreparationReport};
pub use probe::ProbeOutcome;
pub use seatbelt::{SeatbeltBackend, SeatbeltConfig};
pub use sys::prepare_child;
