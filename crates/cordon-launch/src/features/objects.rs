//! Objects a repository shares by hard link with another one, checked at launch.
//!
//! A local `git clone` hard-links `.git/objects` (pack files, loose objects, `objects/info`)
//! with its origin. A jailed command could make such a file writable and rewrite it in place,
//! corrupting the origin repository outside every writable root. The session walk
//! (`cordon-scan`) refuses any file with a hard link it did not see inside the roots; a single
//! `cordon run` does not walk, so this check looks at exactly the files git shares: for every
//! repository a writable root is or holds at its top (found from the structure,
//! `cordon_policy::GitLayout`), one `readdir` of `objects`, `objects/pack`, `objects/info` and each
//! loose-object directory, and the link count of each file there; never the work tree. A file
//! with more than one link is refused under the session walk's rule name, `outside-hard-link`,
//! with the way out. A layered run (`layer.rs`) is not checked: nothing is written through
//! there.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cordon_policy::{GitLayout, Plan, RealHost};

/// At most this many object files are looked at per run; past it the run is refused (a
/// repository with this many loose objects is overdue for `git gc`).
pub(crate) const MAX_OBJECT_FILES: usize = 100_000;

/// A file below `objects` with another hard link, or a repository too large to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shared {
    Linked { path: PathBuf, links: u64 },
    TooMany { objects: PathBuf },
}

impl std::fmt::Display for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shared::Linked { path, links } => write!(
                f,
                "{path} has {links} hard links (a local `git clone` shares its objects with the origin); \
                 rule outside-hard-link: a write through it would change a file outside the writable roots; \
                 way out: clone again with `git clone --no-hardlinks` (or `--no-local`), or break each link \
                 (`cp -p FILE FILE.new && mv FILE.new FILE`)",
                path = path.display()
            ),
            Shared::TooMany { objects } => write!(
                f,
                "{} holds more than {MAX_OBJECT_FILES} object files, too many to check for hard links shared \
                 with another repository; rule outside-hard-link; way out: `git gc` packs them",
                objects.display()
            ),
        }
    }
}

/// The object directories of the repositories the plan's roots hold at their top, inside a
/// writable root (outside one they are read-only already).
fn object_dirs(plan: &Plan) -> Vec<PathBuf> {
    let host = RealHost::new(None);
    let mut out: Vec<PathBuf> = Vec::new();
    let roots = plan.writable.iter().chain(plan.inner_roots.iter());
    for root in roots {
        for dir in GitLayout::discover(&host, root).git_dirs {
            let objects = dir.join("objects");
            if objects.is_dir()
                && plan.writable.iter().any(|w| objects.starts_with(w))
                && !out.contains(&objects)
            {
                out.push(objects);
            }
        }
    }
    out
}

fn check_files(dir: &Path, seen: &mut usize) -> Result<(), Shared> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        *seen += 1;
        if meta.nlink() > 1 {
            return Err(Shared::Linked {
                path: e.path(),
                links: meta.nlink(),
            });
        }
    }
    Ok(())
}

fn check_objects(objects: &Path) -> Result<(), Shared> {
    let mut seen = 0usize;
    check_files(objects, &mut seen)?;
    check_files(&objects.join("pack"), &mut seen)?;
    check_files(&objects.join("info"), &mut seen)?;
    let Ok(entries) = std::fs::read_dir(objects) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let loose = name.len() == 2
            && name
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_hexdigit()));
        if loose {
            check_files(&e.path(), &mut seen)?;
            if seen > MAX_OBJECT_FILES {
                return Err(Shared::TooMany {
                    objects: objects.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// Planning: objects shared by hard link with another repository (a local clone's) refuse the
/// run before anything is made. This feature takes part in no other phase.
pub(crate) fn plan(
    run: &super::Run<'_>,
    refusals: &mut Vec<String>,
) -> Option<Box<dyn super::Feature>> {
    // Under the copy-on-write layer a write to a hard-linked file is a copy up, and the commit
    // replaces the workspace's name by a rename: the other names never change (issue #30).
    if run.plan.workspace_mode.layered() && run.backend.layers() {
        return None;
    }
    if let Some(shared) = shared_object(run.plan) {
        refusals.push(shared.to_string());
    }
    None
}

/// The first object file shared by hard link, if any, in the repositories of `plan`'s roots
/// (the plan before its guard: its writable roots are the granted ones).
pub(crate) fn shared_object(plan: &Plan) -> Option<Shared> {
    object_dirs(plan)
        .iter()
        .find_map(|o| check_objects(o).err())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_hard_linked_pack_is_named_and_a_private_one_passes() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join(".git/objects");
        std::fs::create_dir_all(objects.join("pack")).unwrap();
        std::fs::create_dir_all(objects.join("ab")).unwrap();
        std::fs::write(objects.join("ab/cdef"), "x").unwrap();
        std::fs::write(objects.join("pack/pack-1.pack"), "x").unwrap();
        assert_eq!(check_objects(&objects), Ok(()));
        std::fs::hard_link(
            objects.join("pack/pack-1.pack"),
            dir.path().join("origin.pack"),
        )
        .unwrap();
        let err = check_objects(&objects).unwrap_err();
        assert_eq!(
            err,
            Shared::Linked {
                path: objects.join("pack/pack-1.pack"),
                links: 2
            }
        );
        let text = err.to_string();
        assert!(
            text.contains("outside-hard-link") && text.contains("--no-hardlinks"),
            "{text}"
        );
        std::fs::remove_file(dir.path().join("origin.pack")).unwrap();
        std::fs::hard_link(objects.join("ab/cdef"), dir.path().join("loose")).unwrap();
        assert!(matches!(
            check_objects(&objects),
            Err(Shared::Linked { .. })
        ));
    }
}
