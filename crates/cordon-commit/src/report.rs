//! What a run changed and what became of each change: the run's manifest (kept in its state
//! directory, `run.json`) and the [`CommitReport`] made from it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Whether the commit applies what passes, or only returns it for review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Apply every change the judge passes; keep the rest aside.
    Apply,
    /// Apply nothing: every change is kept aside until `apply` or `drop`.
    Review,
}

/// What a change does to its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeWord {
    /// The host did not have the path.
    Added,
    /// The host had it; the command changed it.
    Modified,
    /// The command removed it.
    Deleted,
}

/// What the change's path is (for a deletion, what the host held).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeWord {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (committed as a link, never followed).
    Symlink,
    /// A fifo, socket or device: never committed.
    Special,
}

/// What became of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// On the host.
    Applied,
    /// Passed by the judge, kept aside until `apply` (review mode, or a commit never sealed).
    Pending,
    /// Needs the user's consent: kept aside until `apply`.
    Held,
    /// Refused: kept aside for review, never applied.
    Refused,
    /// The host changed the path after the command started: the host's version stays, the
    /// command's is kept aside.
    Conflict,
}

/// Why a change was refused, held or is a conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule (the judge's name, or one of the commit's: `conflict`, `special-file`,
    /// `inside-kept`, `holds-kept`, `name-not-utf8`).
    pub rule: String,
    /// The program that would have run it (empty when none).
    pub program: String,
    /// Why, in words.
    pub why: String,
    /// For a git configuration applied without some keys: each key dropped, with its why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<DroppedKey>,
}

/// One configuration key the commit dropped from a git configuration it applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedKey {
    /// The key as git spells it (`core.fsmonitor`).
    pub key: String,
    /// Why it was dropped, in words.
    pub why: String,
}

impl Finding {
    pub(crate) fn commit(rule: &str, why: String) -> Finding {
        Finding {
            rule: rule.to_owned(),
            program: String::new(),
            why,
            keys: Vec::new(),
        }
    }
}

/// One change of a run, as its manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The path, relative to the writable root.
    pub path: PathBuf,
    /// What the change does.
    pub change: ChangeWord,
    /// What the path is.
    pub node: NodeWord,
    /// The mode it gets (set-id bits already stripped), for files and directories.
    pub mode: Option<u32>,
    /// A link's target.
    #[serde(with = "crate::pathser::option")]
    pub target: Option<PathBuf>,
    /// The host held a directory at the path when the run was committed.
    pub host_dir: bool,
    /// What became of it.
    pub status: Status,
    /// Why, unless applied or pending.
    pub finding: Option<Finding>,
    /// The command's version is kept in the run's `kept/` directory.
    pub kept: bool,
}

/// A run's record, `run.json` in its directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The record's format.
    pub version: u32,
    /// The run's name.
    pub run: String,
    /// The writable root the changes belong to.
    #[serde(with = "crate::pathser")]
    pub root: PathBuf,
    /// The change time of the run's start marker (seconds, nanoseconds).
    pub started: (i64, u32),
    /// Every change.
    pub entries: Vec<Entry>,
}

/// One path in a [`CommitReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// The path, relative to the root.
    pub path: PathBuf,
    /// What it is.
    pub node: NodeWord,
    /// Why it is not applied (refused, held, conflicts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<Finding>,
}

/// What one commit (or `apply`) did: what it applied (or, in review mode, would apply), and what
/// it kept aside and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitReport {
    /// The run's name (its directory below the workspace's state `runs/`).
    pub run: String,
    /// The run's directory, while it keeps something.
    #[serde(serialize_with = "crate::pathser::option::serialize")]
    pub run_dir: Option<PathBuf>,
    /// Whether the changes below were applied to the host (`false` in review mode).
    pub applied: bool,
    /// Added paths.
    pub added: Vec<Listed>,
    /// Modified paths.
    pub modified: Vec<Listed>,
    /// Deleted paths.
    pub deleted: Vec<Listed>,
    /// Refused changes, kept for review and never applied.
    pub refused: Vec<Listed>,
    /// Held changes, waiting for the user's consent (`cordon apply RUN PATH`).
    pub held: Vec<Listed>,
    /// Paths the host changed after the command started: the host's version stays.
    pub conflicts: Vec<Listed>,
    /// How to apply what is held or pending (`cordon apply RUN [PATH...]`, in the workspace),
    /// when something is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply_with: Option<Vec<String>>,
}

impl CommitReport {
    /// The report of `manifest`: `applied` lists the applied changes, else the pending ones.
    /// `only`: list only these paths among the applied or pending ones.
    pub(crate) fn of(
        manifest: &Manifest,
        applied: bool,
        run_dir: Option<PathBuf>,
        only: Option<&[PathBuf]>,
    ) -> CommitReport {
        let mut report = CommitReport {
            run: manifest.run.clone(),
            run_dir,
            applied,
            added: Vec::new(),
            modified: Vec::new(),
            deleted: Vec::new(),
            refused: Vec::new(),
            held: Vec::new(),
            conflicts: Vec::new(),
            apply_with: None,
        };
        let only: Option<std::collections::HashSet<&PathBuf>> = only.map(|o| o.iter().collect());
        let wanted = if applied {
            Status::Applied
        } else {
            Status::Pending
        };
        for e in &manifest.entries {
            let listed = Listed {
                path: e.path.clone(),
                node: e.node,
                finding: e.finding.clone(),
            };
            let list = match e.status {
                s if s == wanted => {
                    if only.as_ref().is_some_and(|o| !o.contains(&e.path)) {
                        continue;
                    }
                    match e.change {
                        ChangeWord::Added => &mut report.added,
                        ChangeWord::Modified => &mut report.modified,
                        ChangeWord::Deleted => &mut report.deleted,
                    }
                }
                Status::Refused => &mut report.refused,
                Status::Held => &mut report.held,
                Status::Conflict => &mut report.conflicts,
                _ => continue,
            };
            list.push(listed);
        }
        let waiting = manifest
            .entries
            .iter()
            .any(|e| matches!(e.status, Status::Held | Status::Pending));
        if waiting {
            report.apply_with = Some(vec!["cordon".into(), "apply".into(), manifest.run.clone()]);
        }
        report
    }

    /// Whether anything was kept aside (refused, held, conflicts).
    pub fn kept_anything(&self) -> bool {
        !(self.refused.is_empty() && self.held.is_empty() && self.conflicts.is_empty())
    }
}
