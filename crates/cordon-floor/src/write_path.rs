//! Protected paths for file tools that write without a shell (an agent's edit or write tool):
//! the same writable set and protected paths the jail enforces, checked before the write.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use cordon_policy::{Plan, SkipReason};

use crate::error::FloorError;

/// A path a file tool may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritePath {
    /// The canonical path.
    pub path: PathBuf,
    /// The writable root it lies in.
    pub root: PathBuf,
    /// The path relative to `root`: what [`open_beneath`](crate::open_beneath) takes.
    pub relative: PathBuf,
}

/// Checks that a file tool may write `path` under `plan`: absolute (a relative path is taken
/// from the plan's cwd), without `..`, inside a writable root, not inside a protected path (the
/// control directory, `.git/hooks`, `.git/config`, the policy's `deny_write`, including ones
/// that do not exist yet) or a credential mask, with no symlink from the root down, and not an
/// existing file with other hard links.
///
/// The check reads the filesystem, so it can race a concurrent change; open the result with
/// [`open_beneath`](crate::open_beneath)`(root, relative, …)`, which holds under races.
pub fn validate_write_path(path: &Path, plan: &Plan) -> Result<WritePath, FloorError> {
    if path.as_os_str().as_bytes().contains(&0) {
        return Err(FloorError::NulByte {
            path: path.to_path_buf(),
        });
    }
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        plan.cwd.join(path)
    };
    let mut clean = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::RootDir => clean.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(FloorError::ParentComponent { path: absolute });
            }
            Component::Normal(name) => clean.push(name),
            Component::Prefix(_) => {}
        }
    }
    let Some(root) = plan
        .writable
        .iter()
        .filter(|r| clean.starts_with(r))
        .max_by_key(|r| r.components().count())
    else {
        return Err(FloorError::OutsideWritable {
            path: clean,
            writable: cordon_policy::DisplayPath::list(&plan.writable),
        });
    };
    let relative = clean
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    if relative.as_os_str().is_empty() {
        return Err(FloorError::IsRoot { path: clean });
    }
    let protected = plan.protected.iter().map(|p| &p.path).chain(
        plan.skipped
            .iter()
            .filter(|s| {
                matches!(
                    s.reason,
                    SkipReason::ProtectedMissing | SkipReason::OwnStateMissing
                )
            })
            .map(|s| &s.path),
    );
    for p in protected {
        if clean.starts_with(p) {
            return Err(FloorError::Protected {
                path: clean,
                protected: p.clone(),
            });
        }
    }
    if let Some(mask) = plan
        .masks
        .iter()
        .find(|m| clean.starts_with(&m.target) || clean.starts_with(&m.requested))
    {
        return Err(FloorError::Masked {
            path: clean,
            mask: mask.requested.clone(),
        });
    }
    let mut walked = root.clone();
    let count = relative.components().count();
    for (i, component) in relative.components().enumerate() {
        walked.push(component);
        match std::fs::symlink_metadata(&walked) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(FloorError::Symlink {
                    path: clean,
                    link: walked,
                });
            }
            Ok(meta) if i + 1 == count && meta.is_file() && meta.nlink() > 1 => {
                return Err(FloorError::HardLinked {
                    path: clean,
                    links: meta.nlink(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(source) => {
                return Err(FloorError::Io {
                    path: walked,
                    source,
                });
            }
        }
    }
    Ok(WritePath {
        path: clean,
        root: root.clone(),
        relative,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{EntryKind, Invocation, Policy, Profile, RealHost};

    struct Fixture {
        _home: tempfile::TempDir,
        work: PathBuf,
        plan: Plan,
    }

    fn fixture() -> Fixture {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let home_path = std::fs::canonicalize(home.path()).unwrap_or_default();
        let work = home_path.join("proj");
        for dir in [
            work.join(".git/hooks"),
            work.join("src"),
            home_path.join(".ssh"),
        ] {
            std::fs::create_dir_all(dir).unwrap_or_default();
        }
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap_or_default();
        let host = RealHost::new(Some(home_path.clone().into_os_string()));
        let plan = Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(work.clone()),
            &host,
        )
        .unwrap_or_else(|e| panic!("plan: {e}"));
        Fixture {
            _home: home,
            work,
            plan,
        }
    }

    #[test]
    fn a_file_in_the_workspace() {
        let f = fixture();
        let ok = validate_write_path(&f.work.join("src/main.rs"), &f.plan);
        let ok = ok.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.relative, PathBuf::from("src/main.rs"));
        assert_eq!(ok.root, f.work);
        let rel = validate_write_path(Path::new("./src/new/dir/file.txt"), &f.plan);
        assert!(rel.is_ok(), "{rel:?}");
    }

    #[test]
    fn refusals() {
        let f = fixture();
        let err = |p: PathBuf| validate_write_path(&p, &f.plan).err();
        assert!(matches!(
            err(f.work.join(".git/hooks/pre-commit")),
            Some(FloorError::Protected { .. })
        ));
        assert!(matches!(
            err(f.work.join(".git/config")),
            Some(FloorError::Protected { .. })
        ));
        // The control directory does not exist yet: still protected.
        assert!(matches!(
            err(f.work.join(".cordon/state")),
            Some(FloorError::Protected { .. })
        ));
        assert!(matches!(
            err(f.work.join("../outside")),
            Some(FloorError::ParentComponent { .. })
        ));
        assert!(matches!(
            err(PathBuf::from("/etc/passwd")),
            Some(FloorError::OutsideWritable { .. })
        ));
        assert!(matches!(
            err(f.work.clone()),
            Some(FloorError::IsRoot { .. })
        ));
        std::os::unix::fs::symlink("/etc", f.work.join("link")).unwrap_or_default();
        assert!(matches!(
            err(f.work.join("link/passwd")),
            Some(FloorError::Symlink { .. })
        ));
        std::fs::write(f.work.join("a"), "x").unwrap_or_default();
        std::fs::hard_link(f.work.join("a"), f.work.join("b")).unwrap_or_default();
        assert!(matches!(
            err(f.work.join("a")),
            Some(FloorError::HardLinked { links: 2, .. })
        ));
        assert!(f.plan.protected.iter().any(|p| p.kind == EntryKind::Dir));
    }
}
