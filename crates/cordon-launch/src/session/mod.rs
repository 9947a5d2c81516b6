//! The session: a walk of the writable roots once ([`Launcher::prepare`]), and each command
//! run with [`Launcher::run_prepared`] in a jail built ahead of it (`warm.rs`).
//!
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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_policy::Plan;
use cordon_scan::{Counts, DenyGlobs, Finding, SessionScan};
use serde::Serialize;

use crate::error::LaunchError;
use crate::launcher::result::refused;
use crate::launcher::{Launcher, RunRequest, RunResult, RunStatus, Start, policy_hash};

mod warm;

/// How many findings a report lists (all of them count).
pub const REPORTED: usize = 5;

/// What one preparation walked and found.
#[derive(Debug, Clone)]
pub struct Preparation {
    scan: SessionScan,
    took: Duration,
    /// The session's next jail, built ahead of its command (warm.rs); shared by clones, killed
    /// when the last is dropped.
    pub(crate) warm: Arc<warm::Slot>,
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
    /// The first few of them (at most `REPORTED`, 5), each with its rule.
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
    roots.retain(|r| !all.iter().any(|o| o != r && r.starts_with(o)));
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
            .find(|r| !walked.iter().any(|w| r.starts_with(w)))
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

impl Launcher {
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
            Some(b) if b.builds_ahead() && warm::eligible(req, b) => b.name(),
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
}
