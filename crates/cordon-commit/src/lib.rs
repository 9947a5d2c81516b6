//! cordon's commit engine: what a jailed command wrote into a copy-on-write layer over one
//! writable root, brought onto the host judged and crash-safe.
//!
//! The command wrote into an overlayfs upper directory; the host did not change while it ran.
//! [`commit_root`] reads that upper directory as a change set ([`read_layer`]: whiteouts are
//! deletions, opaque directories delete what they hide, only the upper is walked), has
//! `cordon-changes` judge every change, and then:
//!
//! - moves every change's new version aside into the run's directory in the workspace's state
//!   (`runs/<run>/kept/`), records the run (`run.json`), writes and syncs a journal of
//!   idempotent operations and seals it, and only then touches the host: renames onto the root
//!   (a copy beside the target and a rename when not on one file system), `mkdir`, `unlink`,
//!   `rmdir`, every parent resolved beneath the root without following a link;
//! - keeps aside, never in the workspace, what was refused, held for the user's consent, or
//!   changed on the host after the command started (a conflict: the host's version stays);
//! - never writes through: a hard-linked host file is replaced by a rename (its other names keep
//!   their content), links are committed as links, fifos, sockets and devices never, set-id bits
//!   are stripped, and files another user owns are copied into files of this user's.
//!
//! A commit killed at any instant leaves the host as before it (nothing sealed: [`recover`]
//! discards it, or keeps it for review) or is finished by [`recover`] (a sealed journal is rolled
//! forward). Jails committing into one workspace take turns on a lock in its state directory.
//! [`apply_held`] and [`drop_run`] act on what a run keeps; [`list_runs`] lists the runs.
//!
//! It is not the judge (`cordon-changes` decides what a change means), it does not make or mount
//! the layer (the launcher's stage does), and it knows no jail.
//!
//! ```no_run
//! use std::path::Path;
//! use cordon_commit::{Mode, commit_root};
//!
//! let report = commit_root(
//!     Path::new("/home/u/proj"),
//!     Path::new("/home/u/.cache/cordon/layers/proj-1/upper"),
//!     Path::new("/home/u/.cache/cordon/state/proj-1"),
//!     Path::new("/home/u/.cache/cordon/layers/proj-1/started"),
//!     Mode::Apply,
//! )?;
//! println!("{} added, {} held", report.added.len(), report.held.len());
//! # Ok::<(), cordon_commit::CommitError>(())
//! ```

mod beneath;
mod commit;
mod decide;
mod error;
mod journal;
mod layer;
mod pathser;
mod report;
mod runs;
mod store;

pub use commit::{CommitOptions, commit_root, commit_root_with};
pub use error::CommitError;
pub use journal::Point;
pub use layer::{Limits, read_layer};
pub use report::{
    ChangeWord, CommitReport, DroppedKey, Entry, Finding, Listed, Manifest, Mode, NodeWord, Status,
};
pub use runs::{
    Recovered, RunSummary, apply_held, drop_run, list_runs, read_run, recover, recover_with,
};
pub use store::Lock;

/// The directory below a run's directory that keeps the command's versions of its changes, by
/// their paths below the root (for `cordon diff`).
pub const KEPT_DIR: &str = store::KEPT;
