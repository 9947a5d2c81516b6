//! The bound on the layer state of workspaces that are gone: each workspace's state directory
//! (`<layers>/<workspace key>/`: its spare, its commits' journals and records, runs kept for
//! review) records the workspace's path in a `workspace` file; a layered run prunes, at most
//! every ten minutes, the state of every workspace whose path no longer exists and whose state
//! nothing has touched for [`IDLE`] (a week: a workspace on a drive that is unplugged for a
//! day keeps its held changes).
//!
//! A state in use is never removed: not while its commit lock (`lock`) is held, nor while a
//! run's start marker is (a launcher whose workspace was removed under it). The directory is
//! renamed to `.gone-*` in the layers directory before it is removed, so a prune killed half way
//! leaves a name the next prune removes, never a half state under the workspace's key.
//! A state without the `workspace` file (made by an older cordon) is left alone: nothing says
//! whose it is.

use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::layer_abandoned::{RUN_PREFIX, STARTED, open_tree};

/// The file in a workspace's state directory that holds the workspace's path (its bytes).
pub(crate) const WORKSPACE_FILE: &str = "workspace";
/// How long a gone workspace's state must have been untouched before it is removed.
pub(crate) const IDLE: Duration = Duration::from_secs(7 * 24 * 3600);
/// How often, at most, a run looks for gone workspaces.
const CHECK_EVERY: Duration = Duration::from_secs(600);
/// The stamp (in the layers directory) whose modification time is the last prune.
const PRUNED_STAMP: &str = ".pruned";
/// The prefix of a state directory being removed, and of an overlay work directory a spare
/// gave up (`layer_abandoned::GONE_WORK_PREFIX`): no workspace key starts with a dot.
const GONE_PREFIX: &str = ".gone-";

/// Records `workspace` as the owner of `state` unless it is recorded already (one failed
/// exclusive create per run once it is).
pub(crate) fn record_workspace(state: &Path, workspace: &Path) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = state.join(WORKSPACE_FILE);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        && file
            .write_all(workspace.as_os_str().as_encoded_bytes())
            .is_err()
    {
        let _ = std::fs::remove_file(&path);
    }
}

/// At most every ten minutes (unless `force`): removes the state of every gone workspace
/// under `layers` idle for `idle`. Returns a line for people per state removed.
pub(crate) fn prune(layers: &Path, idle: Duration, force: bool) -> Vec<String> {
    let stamp = layers.join(PRUNED_STAMP);
    let recent = crate::host::stamp::touched_within(&stamp, CHECK_EVERY);
    if (recent && !force) || std::fs::write(&stamp, b"").is_err() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(layers) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        if entry.file_name().to_string_lossy().starts_with(GONE_PREFIX) {
            remove_state(&dir);
            continue;
        }
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(workspace) = gone_workspace(&dir, idle) else {
            continue;
        };
        let Some(_held) = unused(&dir) else {
            continue;
        };
        let kept = std::fs::read_dir(dir.join("runs"))
            .map(|r| r.count())
            .unwrap_or(0);
        let gone = layers.join(format!(
            "{GONE_PREFIX}{}",
            entry.file_name().to_string_lossy()
        ));
        if std::fs::rename(&dir, &gone).is_err() {
            continue;
        }
        remove_state(&gone);
        said.push(format!(
            "removed cordon's layer state of {}, a workspace that no longer exists ({kept} run record(s) with it)",
            workspace.display()
        ));
    }
    said
}

/// The recorded workspace of the state `dir` when that path no longer exists and `dir` has not
/// changed for `idle`.
fn gone_workspace(dir: &Path, idle: Duration) -> Option<PathBuf> {
    let bytes = std::fs::read(dir.join(WORKSPACE_FILE)).ok()?;
    let workspace = PathBuf::from(std::ffi::OsString::from_vec(bytes));
    let touched = std::fs::symlink_metadata(dir)
        .and_then(|m| m.modified())
        .ok()?;
    let age = SystemTime::now()
        .duration_since(touched)
        .unwrap_or_default();
    let missing = matches!(
        std::fs::symlink_metadata(&workspace),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    );
    (missing && age >= idle).then_some(workspace)
}

/// The state's commit lock, taken, when no commit and no run holds the state.
fn unused(dir: &Path) -> Option<cordon_commit::Lock> {
    let lock = cordon_commit::Lock::try_take(dir)?;
    let live = std::fs::read_dir(dir).ok()?.flatten().any(|e| {
        e.file_name().to_string_lossy().starts_with(RUN_PREFIX)
            && super::layer_abandoned::marker_held(&e.path().join(STARTED))
    });
    (!live).then_some(lock)
}

/// Removes a renamed state directory, or an overlay work directory a spare gave up
/// (`.gone-work-*`), its directories of mode 0 opened first (the overlay's, at most six levels
/// down a state: run, root, `work`, `work`, `incompat`, `volatile`).
fn remove_state(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_err() {
        open_tree(dir, 6);
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn state(layers: &Path, key: &str, workspace: &Path) -> PathBuf {
        let dir = layers.join(key);
        std::fs::create_dir_all(dir.join("spare-1/0/upper")).unwrap();
        std::fs::create_dir_all(dir.join("spare-1/0/work/work/incompat/volatile")).unwrap();
        std::fs::create_dir_all(dir.join("runs/1-1-0/kept")).unwrap();
        record_workspace(&dir, workspace);
        dir
    }

    #[test]
    fn the_state_of_a_gone_idle_workspace_goes_and_every_other_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let layers = tmp.path().join("layers");
        let present = tmp.path().join("present");
        std::fs::create_dir_all(&present).unwrap();
        let gone = state(&layers, "gone-ws-1", &tmp.path().join("deleted"));
        let kept = state(&layers, "present-2", &present);
        let unrecorded = layers.join("old-3");
        std::fs::create_dir_all(&unrecorded).unwrap();
        // An overlay work directory a spare gave up, its directories mode 0 as the overlay
        // makes them: removed by any prune, whatever its age.
        let given_up = layers.join(".gone-work-1");
        std::fs::create_dir_all(given_up.join("incompat/volatile")).unwrap();
        std::fs::write(given_up.join("incompat/volatile/dirty"), "").unwrap();
        for d in ["incompat/volatile", "incompat", ""] {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o000);
            std::fs::set_permissions(given_up.join(d), mode).unwrap();
        }
        // Not idle long enough: stays.
        assert!(prune(&layers, IDLE, true).is_empty());
        assert!(gone.exists());
        assert!(!given_up.exists(), "a given-up work directory stayed");
        // Recorded once: a second record does not change it.
        record_workspace(&kept, Path::new("/elsewhere"));
        assert_eq!(
            std::fs::read(kept.join(WORKSPACE_FILE)).unwrap(),
            present.as_os_str().as_encoded_bytes()
        );
        let said = prune(&layers, Duration::ZERO, true);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("deleted") && said[0].contains("1 run record"),
            "{said:?}"
        );
        assert!(!gone.exists());
        assert!(kept.exists() && unrecorded.exists());
        let left: Vec<_> = std::fs::read_dir(&layers)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(GONE_PREFIX))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        // Ten minutes between prunes unless forced.
        let again = state(&layers, "gone-ws-4", &tmp.path().join("deleted-too"));
        assert!(prune(&layers, Duration::ZERO, false).is_empty());
        assert!(again.exists());
    }

    #[test]
    fn a_state_in_use_is_not_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let layers = tmp.path().join("layers");
        let committing = state(&layers, "a-1", &tmp.path().join("a"));
        let running = state(&layers, "b-2", &tmp.path().join("b"));
        let lock = std::fs::File::create(committing.join("lock")).unwrap();
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
        std::fs::create_dir_all(running.join("jail-9")).unwrap();
        let marker = super::super::layer_abandoned::create_marker(
            &running.join("jail-9").join(STARTED),
            b"",
        )
        .unwrap();
        assert!(prune(&layers, Duration::ZERO, true).is_empty());
        assert!(committing.exists() && running.exists());
        drop((lock, marker));
        assert_eq!(prune(&layers, Duration::ZERO, true).len(), 2);
        assert!(!committing.exists() && !running.exists());
    }
}
