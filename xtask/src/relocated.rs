//! `cargo xtask ci relocated`: the CLI tests and the launcher's (cordon-launch's `launch` test
//! binary) once more, from a copy of the built binaries and of the sources under `/tmp`, as root
//! and as the unprivileged user.
//!
//! Every jail hides the host's `/tmp`, so a test that places its home by accident, or a cordon
//! that cannot run its stage from there, passes in the checkout and fails for a user whose
//! checkout (or whose cordon) lives under a temporary directory. nextest's archive carries the
//! test binaries and the `cordon` binary; the run extracts them under `/tmp` and remaps the
//! workspace to a copy of the sources there, so each test's working directory and the stage it
//! runs (`NEXTEST_BIN_EXE_cordon`, or the `launch` test binary, its own stage) are all under
//! `/tmp`. The `launch` binary brings its own harness, which answers nextest's `--list` and
//! `--exact` as libtest does.

use std::path::{Path, PathBuf};

use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;

use crate::ci::Ctx;
use crate::setup;

/// The packages archived, and the tests of theirs that run: all of `cordon`'s, and of
/// cordon-launch only the launcher's tests through the library (`launch`).
const PACKAGES: &[&str] = &["cordon", "cordon-launch"];
const RELOCATED: &str = "package(cordon) | binary_id(cordon-launch::launch)";

/// Tests that plant a root-owned bubblewrap (only root can make one the launcher trusts): the
/// unprivileged run leaves them out, and says so.
const NEEDS_ROOT: &[&str] = &[
    "binary_id(cordon-launch::launch) & test(=launcher::a_bubblewrap_that_does_not_jail_fails_the_probe_and_nothing_runs)",
    "binary_id(cordon::cli) & test(/^one_owner::/)",
];

pub fn run(ctx: &Ctx) -> Result<(), Error> {
    if setup::nextest_version(ctx).is_none() {
        return Err(Error::Ci(
            "the relocated step runs the tests from a nextest archive, and cargo-nextest is not installed".into(),
        ));
    }
    let base = PathBuf::from(format!("/tmp/cordon-ci-relocated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let outcome = relocated(ctx, &base);
    let _ = std::fs::remove_dir_all(&base);
    outcome
}

fn relocated(ctx: &Ctx, base: &Path) -> Result<(), Error> {
    let src = base.join("src");
    copy_sources(ctx.root(), &src)?;
    let archive = base.join("cordon-tests.tar.zst");
    ctx.cargo(["nextest", "archive", "--locked"])
        .args(PACKAGES.iter().flat_map(|p| ["-p", *p]))
        .arg("--archive-file")
        .arg(&archive)
        .run()?;

    println!("relocated: as root, sources in {}", src.display());
    let extract = make_dir(&base.join("root"))?;
    ctx.cargo(["nextest"])
        .args(nextest_run(&archive, &extract, &src))
        .args(["-E", RELOCATED])
        .run()?;

    if !rustix::process::geteuid().is_root() {
        println!("relocated: not root, so no run as the unprivileged user");
        return Ok(());
    }
    let ids = cordon_test_support::user::ensure_user().map_err(Error::Escape)?;
    // The user's home is the host's in the jail (under /var/lib, not /tmp): the tests place
    // their own homes there.
    let home = PathBuf::from(format!(
        "/var/lib/cordon-ci-relocated-home-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&home);
    make_dir(&home)?;
    let extract = make_dir(&base.join("user"))?;
    let outcome = (|| {
        // A copy of nextest the user can execute (root's may live under an unreadable home).
        let nextest = base.join("cargo-nextest");
        let found = which("cargo-nextest")?;
        std::fs::copy(&found, &nextest)
            .map_err(|e| Error::Ci(format!("cannot copy {}: {e}", found.display())))?;
        for dir in [base, home.as_path()] {
            chown_tree(dir, ids.uid, ids.gid)?;
        }
        println!(
            "relocated: as {} (uid {}), leaving out the tests that need root: {}",
            cordon_test_support::user::USER,
            ids.uid,
            NEEDS_ROOT.join("; ")
        );
        let filter = format!("({RELOCATED}) & not ({})", NEEDS_ROOT.join(" | "));
        Cmd::new("setpriv")
            .arg(format!("--reuid={}", ids.uid))
            .arg(format!("--regid={}", ids.gid))
            .args(["--clear-groups", "--", "env", "-i"])
            .arg("PATH=/usr/local/bin:/usr/bin:/bin")
            .arg(format!("HOME={}", home.display()))
            .arg("CI=true")
            .arg(nextest)
            .arg("nextest")
            .args(nextest_run(&archive, &extract, &src))
            .args(["-E", &filter])
            .current_dir(base)
            .run()?;
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&home);
    outcome
}

/// `run` and its options (after `cargo nextest` or `cargo-nextest nextest`).
fn nextest_run(archive: &Path, extract: &Path, src: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "run".into(),
        "--archive-file".into(),
        archive.into(),
        "--extract-to".into(),
        extract.into(),
        "--workspace-remap".into(),
        src.into(),
        "--no-fail-fast".into(),
    ]
}

/// The tracked (and untracked, not ignored) files of the checkout, copied to `to`.
fn copy_sources(root: &Path, to: &Path) -> Result<(), Error> {
    let listing = Cmd::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .read()?;
    let mut copied = 0usize;
    for rel in listing.split('\0').filter(|r| !r.is_empty()) {
        let from = root.join(rel);
        // A file deleted but not yet staged is still listed: nothing to copy.
        if !from.is_file() {
            continue;
        }
        let dest = to.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::Ci(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::copy(&from, &dest).map_err(|e| {
            Error::Ci(format!(
                "cannot copy {} to {}: {e}",
                from.display(),
                dest.display()
            ))
        })?;
        copied += 1;
    }
    if copied == 0 {
        return Err(Error::Ci(format!(
            "git ls-files listed nothing in {}",
            root.display()
        )));
    }
    println!(
        "relocated: {copied} source file(s) copied to {}",
        to.display()
    );
    Ok(())
}

fn make_dir(dir: &Path) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Ci(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir.to_path_buf())
}

fn chown_tree(dir: &Path, uid: u32, gid: u32) -> Result<(), Error> {
    Cmd::new("chown")
        .args(["-R", &format!("{uid}:{gid}")])
        .arg(dir)
        .run()?;
    Ok(())
}

/// The absolute path of `program` on `PATH` (the user's `env -i` has a short `PATH`).
fn which(program: &str) -> Result<PathBuf, Error> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::Ci(format!("{program} is not on PATH")))
}
