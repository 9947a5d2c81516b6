//! The host's listening Unix sockets, read once per plan from the kernel's list.

use std::path::PathBuf;

/// The listening Unix sockets bound by absolute path in the launcher's network namespace
/// (`/proc/net/unix`, parsed by [`cordon_policy::listening_paths`]), for
/// [`cordon_policy::Invocation::with_host_sockets`]: the plan masks those the jail would see.
/// An unreadable list (no `/proc`) gives none; no jail is weaker than before it existed, and
/// bubblewrap itself needs `/proc`.
pub fn listening_unix_sockets() -> Vec<PathBuf> {
    std::fs::read("/proc/net/unix")
        .map(|text| cordon_policy::listening_paths(&text))
        .unwrap_or_default()
}
