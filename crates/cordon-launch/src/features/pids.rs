//! A process limit that holds for root.
//!
//! `RLIMIT_NPROC` is never enforced for the real root user (the kernel exempts `INIT_USER`), and a
//! jail that root starts is root's on the host too, so a fork flood from a root-run jail was not
//! bounded at all (escape suite: `res/fork-flood`, root columns). For root, the launcher
//! therefore also puts the jail in a fresh `pids` control group whose `pids.max` is the policy's
//! process limit, counting the jail's tasks only. Unprivileged users keep `RLIMIT_NPROC`, which
//! the kernel enforces for them.
//!
//! cgroup v1 (a `pids` hierarchy) and v2 (the `pids` controller enabled at the root) are both
//! handled. Where neither is usable the run goes on with `RLIMIT_NPROC` alone and says so in the
//! result's warnings.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::host::cleanup::Cleanup;

/// The directory under which a `pids` group can be made, if any.
fn base() -> Option<PathBuf> {
    let v1 = Path::new("/sys/fs/cgroup/pids");
    if v1.join("cgroup.procs").exists() {
        return Some(v1.to_path_buf());
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control")).ok()?;
    enabled
        .split_whitespace()
        .any(|c| c == "pids")
        .then(|| v2.to_path_buf())
}

/// For root with a process limit: moves `command` into a new `pids` group at spawn, added to
/// `cleanup` (removed once the jail's tasks are gone, `leftovers.rs`). `Ok(())` also when nothing
/// is needed; `Err` with the reason when the limit cannot be enforced this way.
pub(crate) fn confine(
    command: &mut Command,
    limit: Option<u64>,
    cleanup: &mut Cleanup,
) -> Result<(), String> {
    let Some(limit) = limit else {
        return Ok(());
    };
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let base = base().ok_or("no pids control group hierarchy is available")?;
    join_new_group(command, &base, "pids.max", limit, cleanup)
}

/// Makes a fresh group `cordon-<pid>-<nonce>` in `base` (registered with `cleanup` before it
/// exists), writes `limit` to its `limit_file`, and has `command` join it between fork and exec.
/// The pids group and the memory group (`memory.rs`) are both made this way. Groups that
/// launchers killed earlier left in `base` are swept once per process.
pub(crate) fn join_new_group(
    command: &mut Command,
    base: &Path,
    limit_file: &str,
    limit: u64,
    cleanup: &mut Cleanup,
) -> Result<(), String> {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    if let Ok(mut swept) = SWEPT.lock()
        && !swept.iter().any(|b| b == base)
    {
        remove_stale(base);
        swept.push(base.to_path_buf());
    }
    let dir = base.join(format!(
        "cordon-{}-{}",
        std::process::id(),
        crate::host::token::nonce()
    ));
    // Registered before it exists, so a launcher killed right after still has it removed.
    cleanup.cgroup(dir.clone());
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join(limit_file), limit.to_string())
        .map_err(|e| format!("cannot set {limit_file} in {}: {e}", dir.display()))?;
    // On cgroup v1, moving only the calling thread (`tasks`, written by the single-threaded child
    // between fork and exec) skips the kernel's global thread-group lock, whose RCU wait made
    // every root-run command 15-20 ms slower through `cgroup.procs`. v2 has no `tasks` file.
    let join = if dir.join("tasks").exists() {
        "tasks"
    } else {
        "cgroup.procs"
    };
    let procs = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join(join))
        .map_err(|e| format!("cannot open {}/{join}: {e}", dir.display()))?;
    crate::host::sys::join_cgroup_before_exec(command, procs.into());
    Ok(())
}

/// Removes the empty groups of launchers that died without cleaning up (killed by a signal).
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cordon-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            // Fails, harmlessly, while the group still has tasks.
            let _ = std::fs::remove_dir(e.path());
        }
    }
}
