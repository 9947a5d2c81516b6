//! A memory bound for the whole jail, where the host lets cordon make one.
//!
//! A jail's private `/tmp`, `/var/tmp`, `/run` and `/dev/shm` are memory (each sized by
//! `limits.tmp_bytes`), and nothing per process bounds what a command allocates: without a bound
//! one command can push the host into its OOM killer. The launcher therefore puts the jail in a
//! fresh memory control group, nested in its own (so the jail stays inside whatever bounds the
//! launcher), with the policy's `limits.memory_bytes` as its limit (`memory.limit_in_bytes` on
//! cgroup v1, `memory.max` on v2). The kernel charges a tmpfs page to the group of the process
//! that wrote it, so the private temporary files count too. At the limit the kernel reclaims and
//! then kills inside the group only.
//!
//! Making the group needs write access to the launcher's own memory group: root has it; an
//! unprivileged user has it only where the host delegates a cgroup v2 subtree with the memory
//! controller (a systemd user session). Elsewhere the jail's memory is bounded only by the tmpfs
//! sizes; `cordon doctor` says which holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::host::cleanup::Cleanup;

/// Where a memory group for the jail can be made, and which file sets its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryGroup {
    /// The launcher's own memory group (the new one is made inside it).
    pub parent: PathBuf,
    /// `memory.limit_in_bytes` (v1) or `memory.max` (v2).
    pub limit_file: &'static str,
}

/// The launcher's own memory group, when a group for the jail can be made in it.
pub fn locate() -> Result<MemoryGroup, String> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    // cgroup v1: a line `N:memory:/path` (the controller may share its hierarchy).
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
        if let (Some(controllers), Some(path)) = (controllers, path)
            && controllers.split(',').any(|c| c == "memory")
        {
            let parent = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
            return usable(parent, "memory.limit_in_bytes");
        }
    }
    // cgroup v2: `0::/path`, usable when the memory controller is enabled for its children.
    let path = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no memory control group hierarchy is available")?;
    let parent = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let enabled = std::fs::read_to_string(parent.join("cgroup.subtree_control")).map_err(|e| {
        format!(
            "cannot read {}/cgroup.subtree_control: {e}",
            parent.display()
        )
    })?;
    if !enabled.split_whitespace().any(|c| c == "memory") {
        return Err(format!(
            "the memory controller is not enabled below {}",
            parent.display()
        ));
    }
    usable(parent, "memory.max")
}

fn usable(parent: PathBuf, limit_file: &'static str) -> Result<MemoryGroup, String> {
    if rustix::fs::access(&parent, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(format!(
            "{} is not writable by this user (the host delegates no memory group)",
            parent.display()
        ));
    }
    Ok(MemoryGroup { parent, limit_file })
}

/// Moves `command` into a new memory group limited to `limit` bytes at spawn, added to
/// `cleanup`. `Ok(())` also when there is no limit; `Err` with the reason when it cannot be
/// enforced this way.
pub(crate) fn confine(
    command: &mut Command,
    limit: Option<u64>,
    cleanup: &mut Cleanup,
) -> Result<(), String> {
    let Some(limit) = limit else {
        return Ok(());
    };
    // The launcher's own group does not change while it runs: located once.
    static LOCATED: std::sync::OnceLock<Result<MemoryGroup, String>> = std::sync::OnceLock::new();
    let group = LOCATED.get_or_init(locate).clone()?;
    crate::features::pids::join_new_group(command, &group.parent, group.limit_file, limit, cleanup)
}
