//! What a run gives back: the structured result (the `--json` schema of `cordon run`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::exit_codes;
use crate::host::supervise::{self, Exit};
use crate::violations::{self, Violation};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// The payload ran and exited; `exit_code` is its status (128+N when bubblewrap reports a
    /// payload killed by signal N).
    Exited,
    /// The launcher's child was killed by a signal.
    Signaled,
    /// The wall-clock timeout passed; the whole tree was killed.
    Timeout,
    /// Nothing ran: no enforcing backend, or the jail failed its self-check or did not start.
    Refused,
}

/// A captured stream.
#[derive(Debug, Clone, Serialize)]
pub struct Stream {
    /// The kept bytes as text (lossy UTF-8).
    pub text: String,
    /// True when the cap cut it short.
    pub truncated: bool,
    /// Bytes written in all.
    pub bytes: u64,
}

/// The structured result of one run (the `--json` schema of `cordon run`, docs/cli.md).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// How it ended.
    pub status: RunStatus,
    /// The exit code cordon itself exits with.
    pub exit_code: i32,
    /// The signal, when `signaled`.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: Stream,
    /// Standard error.
    pub stderr: Stream,
    /// Wall-clock milliseconds from spawn to exit (for a jail built ahead of its command, from
    /// the moment it was given the command).
    pub duration_ms: f64,
    /// The backend that enforced, if any.
    pub backend: Option<String>,
    /// False only when `unavailable = "warn"` let the command run without a jail.
    pub sandboxed: bool,
    /// The policy hash (with the seccomp filter version folded in).
    pub policy_hash: String,
    /// Denials recognised in stderr.
    pub violations: Vec<Violation>,
    /// Why nothing ran, when refused.
    pub refusal: Option<String>,
    /// Warnings the caller must surface (running unsandboxed, say).
    pub warnings: Vec<String>,
    /// Environment variables dropped, counted by reason (never names of values).
    pub env_dropped: BTreeMap<String, usize>,
    /// Landlock's part: `backend` when it is the backend, the ABI of the second wall the stage
    /// applied inside bubblewrap (`ABI 7`), or why it was unavailable; `null` otherwise.
    pub landlock: Option<String>,
    /// True when the command was handed to a jail built ahead of it (a prepared session,
    /// warm.rs); false for a jail built for it while the caller waited, or none.
    pub built_ahead: bool,
    /// For a `proxy` network: what the proxy allowed (each refusal is a `network-denied`
    /// violation); `null` for any other network.
    pub network: Option<NetworkReport>,
    /// How the command's writes reached its writable roots: `layer` (a private copy-on-write
    /// layer, the changes in `changes`, committed), `review` (the same, judged and kept, not
    /// applied) or `live` (written through as they happened: `--live`, or a backend that makes
    /// no layer); `null` when nothing ran.
    pub workspace: Option<&'static str>,
    /// What the command's copy-on-write layer holds; `null` for a live run.
    pub changes: Option<crate::features::Changes>,
}

/// What a `proxy` network's proxy did during one run.
#[derive(Debug, Clone, Serialize)]
pub struct NetworkReport {
    /// `proxy`.
    pub mode: &'static str,
    /// Every destination connected to, by `host:port` order: connections and bytes each way.
    pub destinations: Vec<crate::features::proxy::Destination>,
    /// How many requests were refused (each also in `violations`, up to the proxy's cap).
    pub refused: usize,
}

fn stream(c: &supervise::Captured) -> Stream {
    Stream {
        text: String::from_utf8_lossy(&c.bytes).into_owned(),
        truncated: c.truncated,
        bytes: c.total,
    }
}

pub(crate) fn finish(
    s: supervise::Supervised,
    backend: Option<String>,
    sandboxed: bool,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
    warnings: Vec<String>,
) -> RunResult {
    let (status, exit_code, signal) = match s.exit {
        Exit::Code(c) => (RunStatus::Exited, c, None),
        Exit::Signal(sig) => (RunStatus::Signaled, 128 + sig, Some(sig)),
        Exit::TimedOut => (RunStatus::Timeout, i32::from(exit_codes::TIMEOUT), None),
    };
    RunResult {
        status,
        exit_code,
        signal,
        violations: violations::recognise(&s.stderr.bytes),
        stdout: stream(&s.stdout),
        stderr: stream(&s.stderr),
        duration_ms: s.duration.as_secs_f64() * 1000.0,
        backend,
        sandboxed,
        policy_hash,
        refusal: None,
        warnings,
        env_dropped,
        landlock: None,
        built_ahead: false,
        network: None,
        workspace: Some("live"),
        changes: None,
    }
}

pub(crate) fn refused(
    reason: String,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
) -> RunResult {
    RunResult {
        status: RunStatus::Refused,
        exit_code: i32::from(exit_codes::REFUSED),
        signal: None,
        stdout: Stream {
            text: String::new(),
            truncated: false,
            bytes: 0,
        },
        stderr: Stream {
            text: String::new(),
            truncated: false,
            bytes: 0,
        },
        duration_ms: 0.0,
        backend: None,
        sandboxed: false,
        policy_hash,
        violations: Vec::new(),
        refusal: Some(reason),
        warnings: Vec::new(),
        env_dropped,
        landlock: None,
        built_ahead: false,
        network: None,
        workspace: None,
        changes: None,
    }
}
