//! The `setup` step: the tools the other steps need exist afterwards, or the step fails saying
//! how to get them. Nothing is skipped because a tool is missing.

use std::path::Path;

use cordon_test_support::error::Error;

use crate::ci::Ctx;

/// The bubblewrap the sandbox tests run; Debian's `bubblewrap` package installs it here.
const BWRAP: &str = "/usr/bin/bwrap";

/// The cargo-deny release `deny.toml` is written for; pinned so a new release cannot change the
/// config schema under CI. Raise it together with `deny.toml`.
const CARGO_DENY_VERSION: &str = "0.20.2";

/// The cargo-fuzz release `cargo xtask fuzz` is written for (its `run` options and output);
/// pinned like cargo-deny.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

pub fn run(ctx: &Ctx) -> Result<(), Error> {
    bubblewrap(ctx)?;
    cargo_deny(ctx)?;
    cargo_fuzz(ctx)?;
    match nextest_version(ctx) {
        Some(version) => println!("cargo-nextest: {version}"),
        None => println!("cargo-nextest: not installed; the test step falls back to `cargo test`"),
    }
    Ok(())
}

/// `cargo nextest --version`'s first line, or `None` when nextest is not installed.
pub fn nextest_version(ctx: &Ctx) -> Option<String> {
    let out = ctx.cargo(["nextest", "--version"]).probe()?;
    Some(out.lines().next().unwrap_or_default().to_owned())
}

fn bubblewrap(ctx: &Ctx) -> Result<(), Error> {
    if !cfg!(target_os = "linux") {
        println!("bubblewrap: not used on {}", std::env::consts::OS);
        return Ok(());
    }
    if !Path::new(BWRAP).exists() {
        if !is_root(ctx)? {
            return Err(Error::BubblewrapMissing { path: BWRAP });
        }
        println!("bubblewrap: {BWRAP} is missing; installing the Debian package");
        let install = ctx
            .cmd("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "bubblewrap"]);
        // A fresh image often has no package lists yet; `apt-get update` is slow and needs the
        // network, so it runs only when the install fails without it.
        if let Err(first) = install.run() {
            println!("{first}; refreshing the package lists and trying again");
            ctx.cmd("apt-get").arg("update").run()?;
            install.run()?;
        }
        if !Path::new(BWRAP).exists() {
            return Err(Error::BubblewrapNotInstalled { path: BWRAP });
        }
    }
    let version = ctx.cmd(BWRAP).arg("--version").read()?;
    println!("bubblewrap: {BWRAP} ({version})");
    Ok(())
}

fn cargo_deny(ctx: &Ctx) -> Result<(), Error> {
    if ctx.cargo(["deny", "--version"]).probe().is_none() {
        println!("cargo-deny: not installed; installing {CARGO_DENY_VERSION} (about 3 minutes)");
        ctx.cargo([
            "install",
            "--locked",
            "cargo-deny",
            "--version",
            CARGO_DENY_VERSION,
        ])
        .run()?;
    }
    let version = ctx.cargo(["deny", "--version"]).read()?;
    println!("cargo-deny: {version}");
    Ok(())
}

/// Makes sure `cargo fuzz` exists (the `fuzz-smoke` step and `cargo xtask fuzz` run it).
pub fn cargo_fuzz(ctx: &Ctx) -> Result<(), Error> {
    if ctx.cargo(["fuzz", "--version"]).probe().is_none() {
        println!("cargo-fuzz: not installed; installing {CARGO_FUZZ_VERSION} (about 30 seconds)");
        ctx.cargo([
            "install",
            "--locked",
            "cargo-fuzz",
            "--version",
            CARGO_FUZZ_VERSION,
        ])
        .run()?;
    }
    let version = ctx.cargo(["fuzz", "--version"]).read()?;
    println!("cargo-fuzz: {version}");
    Ok(())
}

fn is_root(ctx: &Ctx) -> Result<bool, Error> {
    Ok(ctx.cmd("id").arg("-u").read()? == "0")
}
