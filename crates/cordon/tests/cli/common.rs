//! What the CLI tests share: which cordon binary to run, and where to place homes and
//! workspaces so that what a test asserts holds wherever the checkout (or the binary) lives.

#![allow(dead_code)]

use std::path::PathBuf;

/// The cordon binary under test: nextest's runtime path when it gives one (a run from an
/// archive extracted elsewhere, as CI's `relocated` step does), else cargo's build.
pub fn cordon() -> PathBuf {
    std::env::var_os("NEXTEST_BIN_EXE_cordon")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cordon")))
}

/// Fails the test, saying why, where bubblewrap is missing: a jail test never skips.
pub fn require_bwrap() {
    assert!(
        std::path::Path::new("/usr/bin/bwrap").exists(),
        "bubblewrap is not installed at /usr/bin/bwrap: these tests need it (cargo xtask ci installs it)"
    );
}

/// A fresh directory the jail sees as the host's, for homes and workspaces.
pub use cordon_test_support::homes::visible_dir;
