//! A workspace's runs after their commit: listing them, applying held or pending changes on the
//! user's consent, dropping a run, and recovering what a killed commit left.

use std::path::{Path, PathBuf};

use cordon_changes::ChangeKind;
use serde::Serialize;

use crate::beneath::Tree;
use crate::commit::apply_entries;
use crate::decide::{self, Decided};
use crate::error::CommitError;
use crate::journal::{self, Point};
use crate::report::{ChangeWord, CommitReport, Entry, Finding, Manifest, NodeWord, Status};
use crate::store::{self, JOURNAL, Lock, MANIFEST, RUNS};

/// One run that keeps something, for `cordon changes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run's name.
    pub run: String,
    /// Its writable root.
    #[serde(serialize_with = "crate::pathser::serialize")]
    pub root: PathBuf,
    /// Changes waiting for `apply` (review mode).
    pub pending: usize,
    /// Changes waiting for the user's consent.
    pub held: usize,
    /// Refused changes, kept for review.
    pub refused: usize,
    /// Conflicts: the host's version stayed.
    pub conflicts: usize,
    /// Changes already applied.
    pub applied: usize,
}

/// What recovery did to one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "action")]
#[non_exhaustive]
pub enum Recovered {
    /// A sealed journal was applied to its end.
    RolledForward {
        /// The run.
        run: String,
        /// What the finished commit did.
        report: Box<CommitReport>,
    },
    /// A commit killed before its record was written: discarded, the host untouched.
    Discarded {
        /// The run.
        run: String,
    },
    /// A commit killed before its journal was sealed: the host untouched, its changes wait
    /// for review (`apply` or `drop`).
    NotSealed {
        /// The run.
        run: String,
    },
}

/// The run directories of the workspace state `state`, by name.
fn run_dirs(state: &Path) -> Result<Vec<(String, PathBuf)>, CommitError> {
    let base = state.join(RUNS);
    let list = match std::fs::read_dir(&base) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CommitError::io("listing", &base)(e)),
    };
    let mut out = Vec::new();
    for entry in list {
        let entry = entry.map_err(CommitError::io("listing", &base))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if store::valid_name(&name) && entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.push((name, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Finishes or discards what killed commits left in the workspace state `state` (taking its
/// lock): a sealed journal is rolled forward, a run without a record is removed, a run whose
/// journal was never sealed keeps its changes for review.
pub fn recover(state: &Path) -> Result<Vec<Recovered>, CommitError> {
    recover_with(state, &mut |_: Point| {})
}

/// [`recover`], calling `hook` at each point of a roll-forward (tests kill the process there).
pub fn recover_with(
    state: &Path,
    hook: &mut dyn FnMut(Point),
) -> Result<Vec<Recovered>, CommitError> {
    if !state.join(RUNS).is_dir() {
        return Ok(Vec::new());
    }
    let _lock = Lock::take(state)?;
    recover_hooked(state, hook)
}

pub(crate) fn recover_locked(state: &Path) -> Result<Vec<Recovered>, CommitError> {
    recover_hooked(state, &mut |_: Point| {})
}

fn recover_hooked(
    state: &Path,
    hook: &mut dyn FnMut(Point),
) -> Result<Vec<Recovered>, CommitError> {
    let mut done = Vec::new();
    for (run, dir) in run_dirs(state)? {
        if dir.join(JOURNAL).is_file() {
            let report = journal::roll_forward(&dir, hook)?;
            done.push(Recovered::RolledForward {
                run,
                report: Box::new(report),
            });
        } else if !dir.join(MANIFEST).is_file() {
            std::fs::remove_dir_all(&dir).map_err(CommitError::io("removing", &dir))?;
            done.push(Recovered::Discarded { run });
        } else {
            let mut unsealed = false;
            for tmp in [format!("{JOURNAL}.tmp"), format!("{MANIFEST}.tmp")] {
                let path = dir.join(tmp);
                if path.exists() {
                    std::fs::remove_file(&path).map_err(CommitError::io("removing", &path))?;
                    unsealed = true;
                }
            }
            if unsealed {
                done.push(Recovered::NotSealed { run });
            }
        }
    }
    Ok(done)
}

/// The runs of the workspace state `state` that keep something (pending, held, refused or
/// conflicting changes).
pub fn list_runs(state: &Path) -> Result<Vec<RunSummary>, CommitError> {
    let mut out = Vec::new();
    for (run, dir) in run_dirs(state)? {
        let Ok(manifest) = store::read_manifest(&dir) else {
            continue;
        };
        let count = |s: Status| manifest.entries.iter().filter(|e| e.status == s).count();
        out.push(RunSummary {
            run,
            root: manifest.root.clone(),
            pending: count(Status::Pending),
            held: count(Status::Held),
            refused: count(Status::Refused),
            conflicts: count(Status::Conflict),
            applied: count(Status::Applied),
        });
    }
    Ok(out)
}

/// The record of run `run`, and its directory (for `cordon diff`).
pub fn read_run(state: &Path, run: &str) -> Result<(Manifest, PathBuf), CommitError> {
    let dir = store::run_dir(state, run)?;
    Ok((store::read_manifest(&dir)?, dir))
}

/// Removes run `run` and everything it keeps.
pub fn drop_run(state: &Path, run: &str) -> Result<(), CommitError> {
    let _lock = Lock::take(state)?;
    recover_locked(state)?;
    let dir = store::run_dir(state, run)?;
    std::fs::remove_dir_all(&dir).map_err(CommitError::io("removing", &dir))
}

fn kind_of(c: ChangeWord) -> ChangeKind {
    match c {
        ChangeWord::Added => ChangeKind::Added,
        ChangeWord::Modified => ChangeKind::Modified,
        ChangeWord::Deleted => ChangeKind::Deleted,
    }
}

/// Applies the held and pending changes of run `run` at or below `paths` (every one when
/// `paths` is empty), with the directories they need, on the user's consent. Each is judged
/// again for conflicts against the host as it is now; refused changes are never applied.
pub fn apply_held(state: &Path, run: &str, paths: &[PathBuf]) -> Result<CommitReport, CommitError> {
    let _lock = Lock::take(state)?;
    recover_locked(state)?;
    let dir = store::run_dir(state, run)?;
    let mut manifest = store::read_manifest(&dir)?;
    let waiting = |e: &Entry| matches!(e.status, Status::Held | Status::Pending);
    let mut chosen: Vec<bool> = manifest
        .entries
        .iter()
        .map(|e| waiting(e) && (paths.is_empty() || paths.iter().any(|p| e.path.starts_with(p))))
        .collect();
    for p in paths {
        let found = manifest
            .entries
            .iter()
            .zip(&chosen)
            .any(|(e, c)| *c && e.path.starts_with(p));
        if !found {
            return Err(CommitError::NotHeld {
                path: p.clone(),
                run: run.into(),
            });
        }
    }
    // The directories a chosen change needs come with it.
    let needed: std::collections::HashSet<PathBuf> = manifest
        .entries
        .iter()
        .zip(&chosen)
        .filter(|(_, c)| **c)
        .flat_map(|(e, _)| {
            e.path
                .ancestors()
                .skip(1)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .collect();
    for (e, c) in manifest.entries.iter().zip(chosen.iter_mut()) {
        if waiting(e) && e.node == NodeWord::Dir && needed.contains(&e.path) {
            *c = true;
        }
    }
    let root = Tree::open(&manifest.root)?;
    let mut out: Vec<Decided> = Vec::with_capacity(chosen.len());
    for (e, c) in manifest.entries.iter().zip(&chosen) {
        let status = match (c, e.status) {
            (true, _) => Status::Pending,
            (false, Status::Pending) => Status::Held,
            (false, s) => s,
        };
        let mut d = Decided {
            status,
            finding: e.finding.clone(),
            rewrite: None,
            mode: None,
        };
        if *c {
            let host = root.lookup(&e.path)?;
            let is_dir = e.node == NodeWord::Dir;
            if let Some(why) = decide::conflict(kind_of(e.change), is_dir, host, manifest.started) {
                d.status = Status::Conflict;
                d.finding = Some(Finding::commit("conflict", why));
            }
        }
        out.push(d);
    }
    let paths_ref: Vec<&Path> = manifest.entries.iter().map(|e| e.path.as_path()).collect();
    let kinds: Vec<ChangeKind> = manifest.entries.iter().map(|e| kind_of(e.change)).collect();
    decide::propagate(&paths_ref, &kinds, &mut out);
    for ((e, c), d) in manifest.entries.iter_mut().zip(chosen.iter_mut()).zip(&out) {
        if *c && d.status != Status::Pending {
            *c = false;
            if d.status == Status::Conflict {
                e.status = Status::Conflict;
                e.finding = d.finding.clone();
            }
        }
    }
    store::write_json(&dir, MANIFEST, &manifest)?;
    let selected: Vec<&Entry> = manifest
        .entries
        .iter()
        .zip(&chosen)
        .filter(|(_, c)| **c)
        .map(|(e, _)| e)
        .collect();
    apply_entries(&dir, &manifest, &selected, &mut |_: Point| {})
}
