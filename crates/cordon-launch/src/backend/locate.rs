//! Finding bubblewrap: only in trusted system locations, owned by root, not writable by group or
//! others — never from `PATH`, where an entry inside a writable root would let the jailed command
//! replace the jailer for the next run.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where bubblewrap may live, in order.
pub const TRUSTED_BWRAP_PATHS: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// Why a candidate bubblewrap was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The candidate.
    pub path: PathBuf,
    /// Why.
    pub why: String,
}

/// The first trusted bubblewrap among `candidates`, or every reason none was usable.
pub fn find_bwrap(candidates: &[&str]) -> Result<PathBuf, Vec<Rejected>> {
    let mut rejected = Vec::new();
    for candidate in candidates {
        let path = Path::new(candidate);
        match check_trusted(path) {
            Ok(canonical) => return Ok(canonical),
            Err(why) => rejected.push(Rejected {
                path: path.to_path_buf(),
                why,
            }),
        }
    }
    Err(rejected)
}

/// Checks that `path` resolves to a root-owned regular file that neither it nor any directory
/// above it can be rewritten by anyone but root.
pub fn check_trusted(path: &Path) -> Result<PathBuf, String> {
    let canonical = std::fs::canonicalize(path).map_err(|e| format!("not found ({e})"))?;
    let meta = std::fs::metadata(&canonical).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    check_owner_and_mode(&canonical, meta.uid(), meta.mode())?;
    for dir in canonical.ancestors().skip(1) {
        let m = std::fs::metadata(dir).map_err(|e| e.to_string())?;
        check_owner_and_mode(dir, m.uid(), m.mode())?;
    }
    Ok(canonical)
}

fn check_owner_and_mode(path: &Path, uid: u32, mode: u32) -> Result<(), String> {
    if uid != 0 {
        return Err(format!(
            "{} is owned by uid {uid}, not root",
            path.display()
        ));
    }
    // A sticky directory writable by others (like /tmp) still lets others add files; refuse it.
    if mode & 0o022 != 0 {
        return Err(format!(
            "{} is writable by group or others (mode {:o})",
            path.display(),
            mode & 0o7777
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_and_mode_rules() {
        assert!(check_owner_and_mode(Path::new("/x"), 0, 0o100755).is_ok());
        let e = check_owner_and_mode(Path::new("/x"), 1000, 0o100755).unwrap_err();
        assert!(e.contains("uid 1000"), "{e}");
        let e = check_owner_and_mode(Path::new("/x"), 0, 0o100775).unwrap_err();
        assert!(e.contains("group or others"), "{e}");
        assert!(check_owner_and_mode(Path::new("/x"), 0, 0o100757).is_err());
    }

    #[test]
    fn files_in_user_owned_or_world_writable_places_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("bwrap");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        let err = check_trusted(&fake).unwrap_err();
        assert!(err.contains("writable") || err.contains("owned"), "{err}");
        let missing = find_bwrap(&["/nonexistent/bwrap"]).unwrap_err();
        assert_eq!(missing.len(), 1);
        assert!(missing[0].why.starts_with("not found"));
    }
}
