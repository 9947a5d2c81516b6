//! Runs whose launcher died before their commit (issue #30's crash rule): found by the next
//! layered run in the workspace and by `cordon recover`, never applied, kept for review.
//!
//! A run's layer directory (`features/layer.rs`) is made under a temporary name, its start
//! marker locked (`flock`, held by the launcher until it has committed), and only then named
//! `jail-*`. So a `jail-*` directory whose marker can be locked has lost its launcher: the
//! launcher was killed (or the machine died) while the jail ran or before the commit began, and
//! bubblewrap's `--die-with-parent` ended the jail with it. The host's tree was never touched
//! (the commit had not started; one that had is a journal, `cordon_commit::recover`). What the
//! command wrote is judged and kept as a run pending review (`cordon_commit::Mode::Review`):
//! the command's ending is unknown, so nothing of it is applied without the user (`cordon apply
//! RUN` or `cordon drop RUN`). Its layer directory is then removed. A temporary directory
//! (`new-*`) left by a launcher killed while making it is removed once it is a minute old and
//! unlocked: no jail ever ran on it; one being removed is renamed `gone-*` first, and a
//! `gone-*` left by a killed removal goes too. A run that changed nothing leaves its layer directory as a
//! spare (`spare-*`) that the next run takes by a rename, instead of removing it.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

/// The name of the start marker in a run's layer directory.
pub(crate) const STARTED: &str = "started";
/// Made in a root's layer directory (`N/`) before its commit begins: from then on the commit's
/// journal decides (`cordon_commit::recover`), and its upper is not reviewed again.
pub(crate) const COMMITTING: &str = "committing";
/// The prefix of a run's layer directory once its jail may run.
pub(crate) const RUN_PREFIX: &str = "jail-";
/// The prefix of a run's layer directory while the launcher makes it.
pub(crate) const NEW_PREFIX: &str = "new-";
/// The prefix of a layer directory being removed.
pub(crate) const GONE_PREFIX: &str = "gone-";
/// The prefix of an unchanged run's layer directory kept for the next run.
pub(crate) const SPARE_PREFIX: &str = "spare-";
/// How old an unlocked temporary directory must be before it is taken for abandoned.
const NEW_GRACE: Duration = Duration::from_secs(60);

/// What recovery did with one abandoned run's layer.
#[derive(Debug, Clone, Serialize)]
pub struct Abandoned {
    /// The run's layer directory (removed unless `error` says why not).
    pub layer: PathBuf,
    /// For each root the command changed, what was kept for review (`cordon changes`).
    pub kept: Vec<cordon_commit::CommitReport>,
    /// Roots whose commit had begun when the launcher died: their journal finished or
    /// discarded them (`cordon_commit::recover`, which runs first), their upper is dropped.
    pub mid_commit: Vec<PathBuf>,
    /// Why (part of) it could not be kept, if so: the layer directory then stays.
    pub error: Option<String>,
}

/// Opens and locks a run's start marker without waiting: `None` while its launcher holds it
/// (or it cannot be opened).
fn lock_marker(path: &Path) -> Option<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_nofollow())
        .open(path)
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(file)
}

/// Whether a run's start marker exists and its launcher holds it.
pub(crate) fn marker_held(path: &Path) -> bool {
    path.exists() && lock_marker(path).is_none()
}

fn libc_nofollow() -> i32 {
    i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0)
}

/// Creates and locks a new run's start marker (held until the returned file is dropped).
pub(crate) fn create_marker(path: &Path, roots: &[u8]) -> std::io::Result<File> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc_nofollow())
        .open(path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    file.write_all(roots)?;
    Ok(file)
}

/// Recovers every abandoned run in the workspace's layer state directory `state`: see the
/// module documentation. Live runs (their marker locked) are left alone. Nothing here applies
/// anything to a root. Call it after `cordon_commit::recover`, which finishes or discards the
/// commits that had begun.
pub fn recover_abandoned(state: &Path) -> Vec<Abandoned> {
    let Ok(entries) = std::fs::read_dir(state) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let dir = entry.path();
        if name.starts_with(NEW_PREFIX) {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > NEW_GRACE);
            let started = dir.join(STARTED);
            if old && (!started.exists() || lock_marker(&started).is_some()) {
                remove_layer(&dir);
            }
            continue;
        }
        if name.starts_with(GONE_PREFIX) {
            remove_layer(&dir);
            continue;
        }
        if !name.starts_with(RUN_PREFIX) {
            continue;
        }
        let started = dir.join(STARTED);
        if !started.exists() {
            // Every `jail-*` has its marker from its making: one without is a removal from
            // before the `gone-*` rename, killed half way.
            remove_layer(&dir);
            continue;
        }
        let Some(_lock) = lock_marker(&started) else {
            continue;
        };
        done.push(keep_for_review(state, &dir, &started));
    }
    done
}

fn keep_for_review(state: &Path, dir: &Path, started: &Path) -> Abandoned {
    let mut abandoned = Abandoned {
        layer: dir.to_path_buf(),
        kept: Vec::new(),
        mid_commit: Vec::new(),
        error: None,
    };
    let decode = |b: Vec<u8>| {
        if b.is_empty() {
            Some(Vec::new())
        } else {
            crate::stage::decode_command(&b)
        }
    };
    let roots = match std::fs::read(started).map(decode) {
        Ok(Some(r)) => r,
        Ok(None) => {
            abandoned.error = Some(format!("{} is malformed", started.display()));
            return abandoned;
        }
        Err(e) => {
            abandoned.error = Some(format!("reading {}: {e}", started.display()));
            return abandoned;
        }
    };
    for (i, root) in roots.iter().enumerate() {
        if dir.join(i.to_string()).join(COMMITTING).exists() {
            abandoned.mid_commit.push(PathBuf::from(root));
            continue;
        }
        let upper = dir.join(i.to_string()).join("upper");
        if std::fs::read_dir(&upper).map_or(true, |mut e| e.next().is_none()) {
            continue;
        }
        match cordon_commit::commit_root(
            Path::new(root),
            &upper,
            state,
            started,
            cordon_commit::Mode::Review,
        ) {
            Ok(report) => abandoned.kept.push(report),
            Err(e) => {
                abandoned.error = Some(format!(
                    "keeping the changes to {}: {e}",
                    Path::new(root).display()
                ));
                return abandoned;
            }
        }
    }
    remove_layer(dir);
    abandoned
}

/// Takes a spare layer directory of `state` (one an unchanged run left) by renaming it to
/// `to`; `false` when there is none or another run took it first.
pub(crate) fn take_spare(state: &Path, to: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(state) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().starts_with(SPARE_PREFIX)
            && std::fs::rename(e.path(), to).is_ok()
    })
}

/// Keeps the layer directory of a run that changed nothing as a spare for the next run (its
/// uppers are empty); removes it when it cannot be readied or renamed. The overlay empties its
/// work directory (`N/work/work`) when mounted, but refuses one that holds the mark of a
/// `volatile` mount (`incompat/volatile`): each `N/work/work` is moved out of the way instead,
/// into cordon's layers directory as `.gone-work-*`, which the next prune removes
/// (`layer_prune.rs`). A rename costs less than the removals (the overlay then makes a new one
/// instead of emptying the old), which no command should wait for.
pub(crate) fn park_spare(state: &Path, run_dir: &Path, layers: &[(PathBuf, PathBuf)]) {
    let readied = state.parent().is_some_and(|base| {
        layers
            .iter()
            .all(|(_, layer)| retire_work_dir(&layer.join("work"), base).is_ok())
    });
    let spare = state.join(format!("{SPARE_PREFIX}{}", crate::host::token::nonce()));
    if !readied || std::fs::rename(run_dir, &spare).is_err() {
        remove_layer(run_dir);
    }
}

/// The prefix (in cordon's layers directory) of an overlay work directory moved out of a spare.
pub(crate) const GONE_WORK_PREFIX: &str = ".gone-work-";

/// Moves the overlay's inner work directory `work/work` to `base/.gone-work-*` (it is mode 0:
/// its owner may move it to another directory only once it may write it).
fn retire_work_dir(work: &Path, base: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let inner = work.join("work");
    match std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o700)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    }
    let gone = base.join(format!("{GONE_WORK_PREFIX}{}", crate::host::token::nonce()));
    std::fs::rename(&inner, gone)
}

/// Opens an overlay's work directory `work` for its owner: the overlay makes `work/work` and
/// the mark of a `volatile` mount below it (`incompat/volatile`) mode 0, which its owner
/// cannot enter to remove what they hold.
pub(crate) fn open_work_dir(work: &Path) {
    open_tree(&work.join("work"), 2);
}

/// Makes `dir` and the directories below it, `depth` levels down, enterable and writable by
/// their owner (links are not followed), so that they can be removed.
pub(crate) fn open_tree(dir: &Path, depth: usize) {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).is_err() || depth == 0
    {
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                open_tree(&e.path(), depth - 1);
            }
        }
    }
}

/// One line for people about what `cordon_commit::recover` did.
pub fn describe_recovered(r: &cordon_commit::Recovered) -> String {
    match r {
        cordon_commit::Recovered::RolledForward { run, .. } => {
            format!("the commit of run {run}, killed after its journal was sealed, was finished")
        }
        cordon_commit::Recovered::Discarded { run } => format!(
            "the commit of run {run}, killed before it was recorded, was discarded; the workspace was not changed by it"
        ),
        cordon_commit::Recovered::NotSealed { run } => format!(
            "the commit of run {run}, killed before its journal was sealed, was not applied; its changes wait for `cordon apply {run}` or `cordon drop {run}`"
        ),
        other => format!("recovered: {other:?}"),
    }
}

/// One line for people about an abandoned run: what was kept and how to act on it.
pub fn describe(a: &Abandoned) -> String {
    if let Some(e) = &a.error {
        return format!(
            "a run killed before its commit left {}; it could not be kept for review ({e}); the workspace was not changed",
            a.layer.display()
        );
    }
    let runs: Vec<&str> = a.kept.iter().map(|r| r.run.as_str()).collect();
    if !a.mid_commit.is_empty() && runs.is_empty() {
        return format!(
            "a run killed during its commit ({}) was finished or discarded by its journal",
            a.layer.display()
        );
    }
    if runs.is_empty() {
        return format!(
            "a run killed before its commit ({}) had changed nothing; its layer was removed",
            a.layer.display()
        );
    }
    format!(
        "a run killed before its commit ({}) was not applied; its changes are kept for review as {}: `cordon apply RUN` or `cordon drop RUN`",
        a.layer.display(),
        runs.join(", ")
    )
}

/// Removes a run's layer directory once committed or recovered (the overlay's work directories are mode 0).
pub(crate) fn remove_layer(run_dir: &Path) {
    // Renamed out of the `jail-*` names first: a removal killed half way leaves a `gone-*`
    // directory, which recovery removes, never a `jail-*` without its start marker.
    let gone = match (run_dir.parent(), run_dir.file_name()) {
        (Some(parent), Some(name)) if !name.to_string_lossy().starts_with(GONE_PREFIX) => {
            let gone = parent.join(format!("{GONE_PREFIX}{}", name.to_string_lossy()));
            if std::fs::rename(run_dir, &gone).is_ok() {
                gone
            } else {
                run_dir.to_path_buf()
            }
        }
        _ => run_dir.to_path_buf(),
    };
    let run_dir = gone.as_path();
    if let Ok(entries) = std::fs::read_dir(run_dir) {
        for e in entries.flatten() {
            open_work_dir(&e.path().join("work"));
        }
    }
    let _ = std::fs::remove_dir_all(run_dir);
}
