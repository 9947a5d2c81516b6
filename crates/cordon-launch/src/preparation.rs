//! Once per session: the walk of the writable roots that no single command may pay for.
//!
//! An agent runs hundreds of commands in a repository of hundreds of thousands of files; a
//! peer's users measured half a second per command because it walked the tree every time.
//! [`Launcher::prepare`](crate::Launcher::prepare) walks each writable root once (`cordon-scan`)
//! and refuses, naming the path and the rule, what a jail could use to reach beyond its roots: a
//! nested mount, a hard link whose other names lie outside, a socket, a FIFO, a device. Each
//! command run with [`Launcher::run_prepared`](crate::Launcher::run_prepared) then only checks,
//! in constant time, that every root is still the directory that was walked.
//!
//! Inside a jail nothing of the kind can be made: `link(2)` across mounts fails (`EXDEV`),
//! `mknod` is refused, a socket file needs a socket, which a jail without network cannot create
//! (seccomp), and `mkfifo` only reaches the jail's own processes. What appears between commands
//! appears from the host, and is the host's to answer for.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_policy::Plan;
use cordon_policy::paths::is_within;
use cordon_scan::{Counts, DenyGlobs, Finding, SessionScan};
use serde::Serialize;

use crate::error::LaunchError;

/// How many findings a report lists (all of them count).
pub const REPORTED: usize = 5;

/// What one preparation walked and found.
#[derive(Debug, Clone)]
pub struct Preparation {
    scan: SessionScan,
    took: Duration,
    /// The session's next jail, built ahead of its command (warm.rs); shared by clones, killed
    /// when the last is dropped.
    pub(crate) warm: Arc<crate::warm::Slot>,
}

/// What `doctor` and `--json` show of a preparation.
#[derive(Debug, Clone, Serialize)]
pub struct PreparationReport {
    /// The roots walked.
    pub roots: Vec<PathBuf>,
    /// What was counted.
    pub counts: Counts,
    /// How many findings make cordon refuse.
    pub findings_total: usize,
    /// The first few of them (at most [`REPORTED`]), each with its rule.
    pub findings: Vec<String>,
    /// How long the walk took, in milliseconds.
    pub took_ms: f64,
}

/// The plan's writable roots with any root inside another left out (the walk counts every file
/// once).
fn outermost(plan: &Plan) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = plan.writable.clone();
    roots.sort();
    roots.dedup();
    let all = roots.clone();
    roots.retain(|r| !all.iter().any(|o| o != r && is_within(r, o)));
    roots
}

impl Preparation {
    /// Walks `plan`'s writable roots once, without judging (`doctor`; `Launcher::prepare` judges).
    pub fn walk(plan: &Plan) -> Result<Preparation, LaunchError> {
        let start = Instant::now();
        let scan = cordon_scan::scan(&outermost(plan), &DenyGlobs::none())?;
        Ok(Preparation {
            scan,
            took: start.elapsed(),
            warm: Arc::default(),
        })
    }

    /// What was found that makes cordon refuse.
    pub fn findings(&self) -> &[Finding] {
        self.scan.findings()
    }

    /// Fails with the findings, if any.
    pub fn refusal(&self) -> Result<(), LaunchError> {
        self.scan.refusal().map_err(LaunchError::from)
    }

    /// The report `doctor` shows.
    pub fn report(&self) -> PreparationReport {
        PreparationReport {
            roots: self.scan.roots().to_vec(),
            counts: self.scan.counts(),
            findings_total: self.scan.findings().len(),
            findings: self
                .scan
                .findings()
                .iter()
                .take(REPORTED)
                .map(|f| format!("{} ({})", f, f.kind.rule()))
                .collect(),
            took_ms: self.took.as_secs_f64() * 1000.0,
        }
    }

    /// The per-command check, in constant time: `plan`'s roots are among those walked and each
    /// is still the same directory. `Err` says what changed.
    pub fn check(&self, plan: &Plan) -> Result<(), String> {
        let walked = self.scan.roots();
        if let Some(r) = plan
            .writable
            .iter()
            .find(|r| !walked.iter().any(|w| is_within(r, w)))
        {
            return Err(format!(
                "the writable root {} was not part of the session's preparation; prepare again",
                r.display()
            ));
        }
        self.scan
            .snapshot()
            .check()
            .map_err(|e| format!("{e}; prepare again"))
    }

    /// Waits up to `timeout` until the jail this session built ahead of its next command has
    /// passed (or failed) its checks; false when none is waiting or it took longer. A harness
    /// does not need this (a command handed to a jail still being built waits for it); it
    /// lets a benchmark keep the build out of what it times next.
    pub fn wait_for_waiting_jail(&self, timeout: Duration) -> bool {
        self.warm.wait_for_report(timeout)
    }

    /// Kills the jail this session built ahead of its next command, if one is waiting (the
    /// next [`Launcher::run_prepared`](crate::Launcher::run_prepared) builds its own, and a
    /// new one after it). Dropping the last clone of the preparation does the same.
    pub fn discard_waiting_jail(&self) {
        self.warm.clear();
    }

    /// The roots walked.
    pub fn roots(&self) -> &[PathBuf] {
        self.scan.roots()
    }
}
