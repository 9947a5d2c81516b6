//! Where the crates' jail tests place homes and workspaces (with the `homes` feature): a
//! directory the jail sees as the host's, wherever the checkout or the test binary lives.

use std::path::{Path, PathBuf};

/// The directories every jail replaces with private, empty ones (a home or workspace made in
/// one is not the host's inside a bubblewrap jail).
const PRIVATE: &[&str] = &["/tmp", "/var/tmp", "/run", "/dev/shm"];

/// Whether `path` lies in a directory the jail makes private.
fn in_private_dir(path: &Path) -> bool {
    PRIVATE.iter().any(|d| path.starts_with(d))
}

/// A fresh directory the jail sees as the host's (never under `/tmp`, `/var/tmp`, `/run`),
/// for homes and workspaces: under `CORDON_TEST_DIR` when set, else `/var/lib` for root, else
/// the user's home, else the current directory, whichever is not private.
///
/// # Panics
///
/// When none of those can hold a new directory: a test cannot go on without one.
#[allow(clippy::panic)] // a test fails by panicking
pub fn visible_dir(prefix: &str) -> tempfile::TempDir {
    let mut bases: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("CORDON_TEST_DIR") {
        bases.push(dir.into());
    }
    if rustix::process::geteuid().is_root() {
        bases.push("/var/lib".into());
    }
    if let Some(home) = std::env::var_os("HOME") {
        bases.push(home.into());
    }
    if let Ok(cwd) = std::env::current_dir() {
        bases.push(cwd);
    }
    for base in bases {
        let Ok(base) = std::fs::canonicalize(&base) else {
            continue;
        };
        if in_private_dir(&base) {
            continue;
        }
        if let Ok(dir) = tempfile::Builder::new().prefix(prefix).tempdir_in(&base) {
            return dir;
        }
    }
    panic!("no directory outside {PRIVATE:?} to place a test home in: set CORDON_TEST_DIR to one");
}
