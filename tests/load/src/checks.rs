//! The end-of-load verdicts on the host: what changed in the load's directory, what the load's
//! launchers added to the shared places, the mount table, and the launcher process's descriptors
//! and memory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::host::{self, Change, Descriptors, Listing, Memory};
use super::mix::Planned;
use super::{Layout, MEMORY_GROWTH_LIMIT_KIB};

/// What the host looked like before the load.
pub struct Before {
    base: Listing,
    shared: BTreeMap<&'static str, Listing>,
    mounts: BTreeMap<String, usize>,
}

impl Before {
    pub fn take(layout: &Layout) -> Before {
        Before {
            base: host::listing(&layout.base, None),
            shared: host::shared_snapshot(),
            mounts: host::mounts(),
        }
    }

    /// Every leftover in the load's directory, the shared places and the mount table.
    pub fn leftovers(
        &self,
        layout: &Layout,
        plan: &[Planned],
        session: &str,
        pids: &[u32],
    ) -> Vec<String> {
        let mut out = leftovers_in_base(layout, plan, &self.base);
        out.extend(leftovers_shared(&self.shared, session, pids));
        let now = host::mounts();
        let points: std::collections::BTreeSet<&String> =
            self.mounts.keys().chain(now.keys()).collect();
        for mount in points {
            let was = self.mounts.get(mount).copied().unwrap_or(0);
            let is = now.get(mount).copied().unwrap_or(0);
            if was != is {
                out.push(format!("host mount table: `{mount}` {was} -> {is} time(s)"));
            }
        }
        out
    }
}

/// The launcher process after the warm-up against at the end: descriptors must be the same
/// number, memory must not grow past [`MEMORY_GROWTH_LIMIT_KIB`].
pub fn launcher_process(
    fds: (&Descriptors, &Descriptors),
    memory: (Memory, Memory),
) -> Vec<String> {
    let mut out = Vec::new();
    let (fds_warm, fds_end) = fds;
    if fds_end.len() != fds_warm.len() {
        let extra: Vec<String> = fds_end
            .iter()
            .filter(|fd| !fds_warm.contains(fd))
            .map(|(fd, target)| format!("{fd} -> {target}"))
            .collect();
        out.push(format!(
            "descriptors of the launcher process: {} after the warm-up, {} at the end; new: {}",
            fds_warm.len(),
            fds_end.len(),
            extra.join(", ")
        ));
    }
    let (warm, end) = memory;
    for (what, a, b) in [
        ("VmRSS", warm.vm_rss, end.vm_rss),
        ("VmHWM", warm.vm_hwm, end.vm_hwm),
    ] {
        if b > a + MEMORY_GROWTH_LIMIT_KIB {
            out.push(format!(
                "{what} of the launcher process grew from {a} KiB after the warm-up to {b} KiB \
                 after {} more runs (limit +{MEMORY_GROWTH_LIMIT_KIB} KiB)",
                end.runs - warm.runs
            ));
        }
    }
    out
}

/// Everything that changed in the load's directory, except the probe cache file (and the
/// directories holding it) appearing or changing in the homes. Each change names the runs that
/// used the workspace it is in.
fn leftovers_in_base(layout: &Layout, plan: &[Planned], before: &Listing) -> Vec<String> {
    let euid = rustix::process::geteuid().as_raw();
    let cache_paths = [
        PathBuf::from(".cache"),
        PathBuf::from(".cache/cordon"),
        PathBuf::from(format!(".cache/cordon/probe-{euid}.json")),
    ];
    // `home/…`, `probe-home/…` or `homes/<name>/…`, then one of the cache paths.
    let is_allowed = |p: &Path| -> bool {
        let rest = p
            .strip_prefix("home")
            .or_else(|_| p.strip_prefix("probe-home"))
            .ok()
            .or_else(|| {
                let mut c = p.strip_prefix("homes").ok()?.components();
                c.next()?;
                Some(c.as_path())
            });
        // cordon's private toolchain caches persist across runs by design (docs/caches.md).
        rest.is_some_and(|r| {
            cache_paths.iter().any(|c| r == c) || r.starts_with(crate::cache::TOOL_CACHES)
        })
    };
    let mut users: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in plan {
        users
            .entry(p.dir_name())
            .or_default()
            .push(format!("{} {}", p.kind.name(), p.index));
    }
    let after = host::listing(&layout.base, None);
    // One line per workspace (or other top-level part of the load's directory).
    let mut grouped: BTreeMap<PathBuf, Vec<Change>> = BTreeMap::new();
    for c in host::diff(before, &after) {
        let allowed = match &c {
            Change::Added(p, _) | Change::Changed(p, _, _) => is_allowed(p),
            Change::Removed(..) => false,
        };
        if allowed {
            continue;
        }
        let parts: Vec<_> = c.path().components().collect();
        let depth = if parts.first().is_some_and(|p| p.as_os_str() == "ws") {
            2
        } else {
            1
        };
        let group: PathBuf = parts.iter().take(depth).collect();
        grouped.entry(group).or_default().push(c);
    }
    grouped
        .into_iter()
        .map(|(group, changes)| {
            let name = group
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let by = match users.get(&name) {
                Some(runs) if runs.len() == 1 => format!(" (the workspace of run {})", runs[0]),
                Some(runs) => format!(" (a workspace shared by {} runs)", runs.len()),
                None => String::new(),
            };
            format!(
                "left in {}{by}: {}",
                layout.base.join(&group).display(),
                changes
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        })
        .collect()
}

/// What this load's launchers added to the shared places, then removed by the harness so the
/// host is clean again. Unattributed additions that mention cordon are printed (another process
/// on the host may have made them) but do not fail the load.
fn leftovers_shared(
    before: &BTreeMap<&'static str, Listing>,
    session: &str,
    pids: &[u32],
) -> Vec<String> {
    let after = host::shared_snapshot();
    let mut out = Vec::new();
    let mut reported: Vec<PathBuf> = Vec::new();
    for (root, listing) in &after {
        let Some(was) = before.get(root) else {
            continue;
        };
        for change in host::diff(was, listing) {
            let Change::Added(rel, entry) = &change else {
                continue;
            };
            let path = Path::new(root).join(rel);
            if reported.iter().any(|r| path.starts_with(r)) {
                continue;
            }
            if host::attributed(&path, session, pids) {
                reported.push(path.clone());
                out.push(format!("left on the host: {} ({entry})", path.display()));
                let _ = if entry.kind == 'd' {
                    if root.starts_with("/sys/") {
                        std::fs::remove_dir(&path)
                    } else {
                        std::fs::remove_dir_all(&path)
                    }
                } else {
                    std::fs::remove_file(&path)
                };
            } else if path.to_string_lossy().contains("cordon") {
                println!(
                    "note: {} appeared during the load, not attributed to it (another process?)",
                    path.display()
                );
            }
        }
    }
    out
}
