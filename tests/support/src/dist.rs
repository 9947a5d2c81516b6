//! `cargo xtask dist`: the `cordon` binary to install, statically linked.
//!
//! A command run through cordon executes the `cordon` binary twice: the CLI itself and the stage
//! inside the jail (the CLI forks its session reaper; a library harness starts the binary as
//! its reaper once per process). A dynamically linked binary pays the
//! loader's work (mapping libc and libgcc_s, relocations, their start-up code) each time; a
//! static-pie one does not. `docs/benchmarks.md` measures both: the static one is what the
//! launch figures stand for.
//!
//! The build is `cargo build --release --locked -p cordon --target <host>` with
//! `-C target-feature=+crt-static` (an explicit `--target` keeps the flag off the build scripts
//! and proc-macros, which must stay dynamic). Linux with glibc only; the result is copied to
//! `target/dist/cordon`.

use std::path::{Path, PathBuf};

use crate::cmd::Cmd;
use crate::error::Error;

/// Builds the static binary and returns where it is (`target/dist/cordon`).
pub fn build(root: &Path) -> Result<PathBuf, Error> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Cmd::new(&rustc).arg("-vV").read()?;
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .ok_or_else(|| Error::Dist(format!("`rustc -vV` named no host:\n{version}")))?
        .trim()
        .to_owned();
    if !host.ends_with("-linux-gnu") {
        return Err(Error::Dist(format!(
            "the static build is for Linux with glibc; this host is {host}: use `cargo build --release -p cordon`"
        )));
    }
    let target = crate::target_dir(root);
    crate::cargo(root)
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "cordon",
            "--target",
            &host,
        ])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .run()?;
    let built = target.join(&host).join("release/cordon");
    let dist = target.join("dist");
    std::fs::create_dir_all(&dist)
        .map_err(|e| Error::Dist(format!("cannot create {}: {e}", dist.display())))?;
    let out = dist.join("cordon");
    // Through a temporary name: a running copy of the old binary keeps its inode.
    let temp = dist.join(".cordon.new");
    std::fs::copy(&built, &temp)
        .and_then(|_| std::fs::rename(&temp, &out))
        .map_err(|e| {
            Error::Dist(format!(
                "cannot copy {} to {}: {e}",
                built.display(),
                out.display()
            ))
        })?;
    let shown = Cmd::new(&out).arg("--version").read()?;
    println!("{} ({})", out.display(), shown.trim());
    Ok(out)
}
