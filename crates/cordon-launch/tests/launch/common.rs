//! What the tests share: the stage binary (this test binary), and where to place homes and
//! workspaces so that what a test asserts holds wherever the checkout (or the binary) lives.

use std::path::{Path, PathBuf};

/// The stage binary: this test binary, which calls `run_if_stage` first thing in `main`.
/// Resolved once, for APIs that borrow a path for the whole test.
pub fn stage() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| std::env::current_exe().expect("this test binary's own path"))
}

/// A fresh directory the jail sees as the host's, for homes and workspaces.
pub use cordon_test_support::homes::visible_dir;
