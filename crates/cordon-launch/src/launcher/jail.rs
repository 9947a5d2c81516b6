//! A spawned jail and what judging its end needs: the launcher's half of one run after the
//! spawn (its command for a jail built ahead, its end, its verdict, its cleanup).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::LaunchError;
use crate::features::{Feature, Outcome};
use crate::host::supervise::{self, Exit};
use crate::host::sys;
use crate::launcher::result::{RunResult, finish, refused};
use crate::launcher::seen::Seen;
use crate::{stage, violations};

/// A spawned jail and what judging its end needs. Dropped without [`Jail::conclude`] or
/// [`Jail::discard`], its process group is left to the session reaper.
pub(crate) struct Jail {
    /// The result's `workspace`: `layer`, `review` or `live`.
    pub(crate) workspace: &'static str,
    pub(crate) running: supervise::Running,
    /// The launcher's end of the command channel of a jail built ahead of its command.
    pub(crate) command: Option<std::os::fd::OwnedFd>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) outside: PathBuf,
    pub(crate) backend: &'static str,
    /// Whether the backend's jail is Landlock itself (the result's `landlock` says `backend`).
    pub(crate) landlock_backend: bool,
    pub(crate) policy_hash: String,
    pub(crate) env_dropped: BTreeMap<String, usize>,
    pub(crate) warnings: Vec<String>,
    /// For a jail built ahead: what its guard read of the workspace (warm.rs).
    pub(crate) seen: Option<Seen>,
    /// The plan's paths, to say which rule each denial the command printed met.
    pub(crate) judge: Box<crate::violations::JailRules>,
    /// The run's features, for their phases after the jail's end (`features/mod.rs`).
    pub(crate) features: Vec<Box<dyn Feature>>,
    /// What was made on the host for the run, removed when dropped (after the jail's end, and
    /// after the features: declared last).
    pub(crate) cleanup: crate::host::cleanup::Cleanup,
}

impl std::fmt::Debug for Jail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jail")
            .field("backend", &self.backend)
            .field("awaiting", &self.command.is_some())
            .finish_non_exhaustive()
    }
}

impl Jail {
    /// Whether the jail's first process has already ended (a jail built ahead of its command
    /// that failed its self-check, or was killed).
    pub(crate) fn has_ended(&self) -> bool {
        self.running.has_exited()
    }

    /// Waits up to `timeout` for the stage's report (its checks passed or failed); whether it
    /// came.
    pub(crate) fn wait_for_report(&self, timeout: Duration) -> bool {
        self.running.wait_for_report(timeout)
    }

    /// Gives a jail built ahead of its command the command, and starts its clock (and its
    /// timeout) now. `Err` when an argument holds a NUL byte: nothing was sent.
    pub(crate) fn command(&mut self, argv: &[OsString]) -> Result<(), LaunchError> {
        if argv.is_empty() {
            return Err(LaunchError::EmptyCommand);
        }
        if let Some(index) = argv.iter().position(|a| a.as_bytes().contains(&0)) {
            return Err(LaunchError::NulInArgument { index });
        }
        let bytes = stage::encode_command(argv).ok_or(LaunchError::EmptyCommand)?;
        let Some(fd) = self.command.take() else {
            return Ok(());
        };
        for f in &mut self.features {
            f.command_given();
        }
        self.running.restart_clock();
        // A stage that already ended (it failed its self-check) closed its end: the write fails
        // with EPIPE, never SIGPIPE, and what the stage said is judged at the end.
        let _ = sys::send_all(&fd, &bytes);
        Ok(())
    }

    /// Waits for the end and judges it: the self-check's verdict, the host-side check of the
    /// outside write, the result.
    pub(crate) fn conclude(self) -> Result<RunResult, LaunchError> {
        let (result, cleanup) = self.conclude_keeping();
        drop(cleanup);
        result
    }

    /// [`Jail::conclude`], handing back what was made on the host for the run instead of
    /// removing it: the caller drops it when it suits (after the next jail joined it).
    pub(crate) fn conclude_keeping(
        mut self,
    ) -> (
        Result<RunResult, LaunchError>,
        Option<crate::host::cleanup::Cleanup>,
    ) {
        let cleanup =
            std::mem::replace(&mut self.cleanup, crate::host::cleanup::Cleanup::new(None));
        (self.judge(), Some(cleanup))
    }

    fn judge(mut self) -> Result<RunResult, LaunchError> {
        // A jail that never got its command is told there is none.
        drop(self.command.take());
        let supervised = self
            .running
            .wait(self.timeout)
            .map_err(LaunchError::io("supervising the jail"))?;
        let (policy_hash, env_dropped) = (self.policy_hash, self.env_dropped);
        // The jail's processes are gone: a feature may say the command counts as not run.
        if let Some(reason) = self.features.iter_mut().find_map(|f| f.refusal()) {
            return Ok(refused(reason, policy_hash, env_dropped));
        }
        if std::fs::symlink_metadata(&self.outside).is_ok() {
            // Judged on the host: the self-check file must never exist here.
            let _ = std::fs::remove_file(&self.outside);
            return Ok(refused(
                format!(
                    "the self-check write outside the writable set reached the host ({})",
                    self.outside.display()
                ),
                policy_hash,
                env_dropped,
            ));
        }
        // A jail built ahead with a layer said it was ready before its command came.
        let mut status_lines = supervised
            .status_line
            .lines()
            .map(str::trim)
            .skip_while(|l| *l == crate::stage::READY_LINE.trim());
        let status_line = status_lines.next().unwrap_or("");
        let landlock = match self.landlock_backend {
            true => Some("backend".to_owned()),
            false => status_lines
                .find_map(|l| l.strip_prefix("landlock "))
                .map(str::to_owned),
        };
        if status_line != "ok" && supervised.exit != Exit::TimedOut {
            let stderr = crate::host::token::first_line(&supervised.stderr.bytes);
            let reason = match status_line.strip_prefix("fail ") {
                Some(reason) => {
                    format!("the jail failed its self-check, the command was not run: {reason}")
                }
                None => format!(
                    "the jail did not start, the command was not run: {}",
                    if stderr.is_empty() {
                        "(no message)"
                    } else {
                        &stderr
                    }
                ),
            };
            let mut result = refused(reason, policy_hash, env_dropped);
            result.backend = Some(self.backend.into());
            result.violations = violations::recognise(&supervised.stderr.bytes);
            violations::annotate(&mut result.violations, &self.judge);
            return Ok(result);
        }
        // The jail's processes are gone: each feature judges what the command left.
        let mut outcome = Outcome::default();
        for f in &mut self.features {
            f.after(self.judge.writable(), &mut outcome);
        }
        let supervisor = supervised.supervisor.clone();
        let mut result = finish(
            supervised,
            Some(self.backend.into()),
            true,
            policy_hash,
            env_dropped,
            self.warnings,
        );
        result.landlock = landlock;
        violations::annotate(&mut result.violations, &self.judge);
        if let Some(record) = outcome.network {
            result
                .violations
                .extend(record.denied.iter().map(violations::Violation::from_proxy));
            result.network = Some(crate::launcher::result::NetworkReport {
                mode: "proxy",
                refused: record.denied.len(),
                destinations: record.destinations.into_values().collect(),
            });
        }
        if let Some(summary) = supervisor {
            result.violations.extend(
                summary
                    .refusals
                    .iter()
                    // The stage's own self-check write, refused as it must be.
                    .filter(|r| r.path != self.outside)
                    .map(violations::Violation::from_supervisor),
            );
        }
        result.violations.extend(outcome.violations);
        result.warnings.extend(outcome.warnings);
        result.workspace = Some(self.workspace);
        result.changes = outcome.changes;
        Ok(result)
    }

    /// Kills the jail and waits for it (a jail built ahead of a command that did not come);
    /// what was made for it goes with it.
    pub(crate) fn discard(mut self) {
        drop(self.command.take());
        self.running.discard();
        drop(self.features);
        drop(self.cleanup);
    }
}
