//! What the CLI tests share: which cordon binary to run, and where to place homes and
//! workspaces so that what a test asserts holds wherever the checkout (or the binary) lives.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The cordon binary under test: nextest's runtime path when it gives one (a run from an
/// archive extracted elsewhere, as CI's `relocated` step does), else cargo's build.
pub fn cordon() -> PathBuf {
    std::env::var_os("NEXTEST_BIN_EXE_cordon")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cordon")))
}

/// The directories every jail replaces with private, empty ones (a home or workspace made in
/// one is not the host's inside a bubblewrap jail).
const PRIVATE: &[&str] = &["/tmp", "/var/tmp", "/run", "/dev/shm"];

/// Whether `path` lies in a directory the jail makes private.
pub fn in_private_dir(path: &Path) -> bool {
    PRIVATE.iter().any(|d| path.starts_with(d))
}

/// A fresh directory the jail sees as the host's (never under `/tmp`, `/var/tmp`, `/run`),
/// for homes and workspaces: under `CORDON_TEST_DIR` when set, else `/var/lib` for root, else
/// the user's home, else the current directory, whichever is not private.
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

/// [`cordon`], resolved once, for APIs that borrow a path for the whole test.
pub fn cordon_static() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(cordon)
}
