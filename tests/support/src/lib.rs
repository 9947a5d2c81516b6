//! What `xtask` and the harness packages beside this one (`tests/escape`, `tests/load`,
//! `tests/bench`, `tests/workloads`) share: running a command and naming it when it fails
//! ([`cmd`]), the errors of the tasks ([`error`]), which cargo and where it builds ([`cargo`],
//! [`target_dir`]), the statically linked `cordon` ([`dist`]) and the unprivileged user the
//! escape suite, the load and the workloads run as ([`user`]), and the conditions a container
//! makes ([`container`]). With the `homes` feature, also
//! what the crates' own jail tests (`cordon`'s, `cordon-launch`'s) share: where to place a home
//! the jail sees (`homes`).
//!
//! It depends on no cordon crate, so that `cargo xtask` compiles in seconds and `cargo xtask ci`
//! can check formatting and lints before anything of the library is built.

use std::path::{Path, PathBuf};

pub mod cmd;
pub mod container;
pub mod dist;
pub mod error;
#[cfg(feature = "homes")]
pub mod homes;
pub mod user;

/// The workspace root (fixed at build time): this package sits two levels below it.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(2)
        .unwrap_or(manifest_dir)
        .to_owned()
}

/// `cargo` in the workspace at `root`: the very cargo that started this process (`CARGO`, set
/// under `cargo run`), else the one on `PATH`.
pub fn cargo(root: &Path) -> cmd::Cmd {
    cmd::Cmd::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())).current_dir(root)
}

/// Cargo's target directory for the workspace at `root` (`CARGO_TARGET_DIR`, relative to `root`
/// when relative, else `root/target`).
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}
