//! What a jail's build read of the workspace, kept with a jail built ahead and looked at again
//! when a command claims it (`session/warm.rs`).

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use cordon_policy::{Plan, SkipReason};

/// What a jail's build read of the workspace (guard.rs), path by path: the identity of what was
/// there (device, inode, type; size and modification time too for a file, whose content the
/// build may have read), or nothing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Seen(Vec<(PathBuf, Option<[i64; 6]>)>);

impl Seen {
    /// Looks at the paths `plan`'s guard reads (the plan before the guard added to it).
    pub(crate) fn of(plan: &Plan) -> Seen {
        let mut paths: Vec<PathBuf> = Vec::new();
        for root in plan.writable.iter().chain(&plan.inner_roots) {
            paths.push(root.clone());
            for rel in [".git", ".git/commondir", "commondir", "gitdir"] {
                paths.push(root.join(rel));
            }
        }
        let guarded = plan
            .protected
            .iter()
            // A file put back after the run: its content is read when the jail is built, so a
            // change on the host since then discards the jail (the old content would be put
            // back over it).
            .chain(&plan.restored)
            .map(|p| (p.path.as_path(), Some(p.root.as_path())))
            .chain(
                plan.skipped
                    .iter()
                    .filter(|s| s.reason == SkipReason::ProtectedMissing)
                    .map(|s| (s.path.as_path(), None)),
            )
            .chain(
                // cordon's own missing directory: the guard looks up to its writable root for
                // the first missing component.
                plan.skipped
                    .iter()
                    .filter(|s| s.reason == SkipReason::OwnStateMissing)
                    .map(|s| {
                        let root = plan.writable.iter().find(|r| s.path.starts_with(r));
                        (s.path.as_path(), root.map(PathBuf::as_path))
                    }),
            );
        for (path, root) in guarded {
            paths.push(path.to_path_buf());
            // The directories between the path and its root (pinned, or where a placeholder
            // would be made).
            for d in path.ancestors().skip(1) {
                paths.push(d.to_path_buf());
                if root.is_none_or(|r| !d.starts_with(r) || d == r) {
                    break;
                }
            }
        }
        paths.sort();
        paths.dedup();
        Seen(
            paths
                .into_iter()
                .map(|p| {
                    let seen = look(&p);
                    (p, seen)
                })
                .collect(),
        )
    }

    /// Whether every path looked at is still what it was (the jail built ahead may be used).
    pub(crate) fn unchanged(&self) -> bool {
        self.0.iter().all(|(p, seen)| look(p) == *seen)
    }
}

/// The identity of what is at `p` (device, inode, type; size and modification time too for a
/// file), or nothing.
fn look(p: &std::path::Path) -> Option<[i64; 6]> {
    std::fs::symlink_metadata(p).ok().map(|m| {
        let file = m.is_file();
        [
            m.dev() as i64,
            m.ino() as i64,
            i64::from(m.mode() & 0o170_000),
            if file { m.size() as i64 } else { 0 },
            if file { m.mtime() } else { 0 },
            if file { m.mtime_nsec() } else { 0 },
        ]
    })
}
