//! `cargo xtask ci`: the pipeline CI runs, as a list of named steps.
//!
//! To add a step, write a `fn(&Ctx) -> Result<(), Error>` and add a [`Step`] to [`STEPS`] at
//! the place in the order where it should run; `cargo xtask ci <name>` then runs it alone, and
//! `cargo xtask ci --list` shows it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cordon_test_support::cmd::{Cmd, CmdError};
use cordon_test_support::error::Error;

use crate::harnesses;
use crate::setup;
use crate::workspace;

/// One stage of the pipeline.
pub struct Step {
    /// What `cargo xtask ci <name>` and the progress headers call it.
    pub name: &'static str,
    /// One line for `--list`.
    pub about: &'static str,
    pub run: fn(&Ctx) -> Result<(), Error>,
}

/// The pipeline, in the order it runs. It stops at the first step that fails.
pub const STEPS: &[Step] = &[
    Step {
        name: "setup",
        about: "make sure bubblewrap, cargo-deny and cargo-fuzz exist (installing them), report cargo-nextest",
        run: setup::run,
    },
    Step {
        name: "fmt",
        about: "cargo fmt --all -- --check",
        run: fmt,
    },
    Step {
        name: "clippy",
        about: "cargo clippy --workspace --all-targets --locked -- -D warnings",
        run: clippy,
    },
    Step {
        name: "seatbelt-graph",
        about: "cordon-launch without its Linux backends (what a macOS build compiles): no Linux-only crate in its graph, and it compiles",
        run: seatbelt_graph,
    },
    Step {
        name: "test",
        about: "every test: nextest (or cargo test), doctests, custom-harness tests",
        run: test,
    },
    Step {
        name: "relocated",
        about: "the CLI and launcher tests again from a copy of the built binaries and sources under /tmp, as root and as the unprivileged user",
        run: crate::relocated::run,
    },
    Step {
        name: "dist",
        about: "cargo xtask dist (the static binary the benchmarks measure), then a jail through it",
        run: dist,
    },
    Step {
        name: "fuzz-smoke",
        about: "cargo xtask fuzz --seconds 15: every fuzz target briefly (fuzz/), fuzz crate fmt",
        run: crate::fuzz::smoke,
    },
    Step {
        name: "escape-suite",
        about: "cargo xtask escape-suite in every column (the no-jail columns, where every attack must escape, included), then --mutants (docs/escape-matrix.md)",
        run: escape_suite,
    },
    Step {
        name: "load",
        about: "cargo xtask load --jobs 4 --runs 60, as root and as the unprivileged user: many jails at once, nothing left behind",
        run: load,
    },
    Step {
        name: "workloads",
        about: "cargo xtask workloads: the probes test suites need and the Rust crates from cargo's registry cache, their own tests on the host and in the jail, root and user, offline (docs/workloads.md); then the same where a container refuses namespaces (--container: auto must fall back to the Landlock backend); then the projects and some probes through a `cordon serve` session (--serve: layered jails built ahead)",
        run: workloads,
    },
    Step {
        name: "packages",
        about: "the Python wheel and the npm package with the static binary in them, installed in a fresh venv and a fresh project; pytest (cordon mcp and a third-party MCP server in the jail included) and node --test against real jails",
        run: crate::packages::run,
    },
    Step {
        name: "deny",
        about: "cargo deny check licenses bans sources (deny.toml)",
        run: deny,
    },
];

/// What every step gets: where the workspace is and how to call cargo.
pub struct Ctx {
    pub root: PathBuf,
    cargo: OsString,
    /// `CI=true` unless the caller already set `CI`: tests such as insta's snapshot checks
    /// behave as in CI (fail instead of writing new snapshots).
    ci_env: Option<(&'static str, &'static str)>,
}

impl Ctx {
    /// Reads the workspace location (fixed at build time) and the cargo to use.
    pub fn from_env() -> Self {
        // xtask's manifest sits one level below the workspace root.
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir.parent().unwrap_or(manifest_dir).to_owned();
        // Under `cargo run`, CARGO is the very cargo that started us: same toolchain for all steps.
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let ci_env = std::env::var_os("CI").is_none().then_some(("CI", "true"));
        Self {
            root,
            cargo,
            ci_env,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `cargo <args>` in the workspace root.
    pub fn cargo<I>(&self, args: I) -> Cmd
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        self.cmd(&self.cargo).args(args)
    }

    /// `cargo <args>` in the workspace root, in the environment this process got (no `CI=true`):
    /// the harness packages see the `CI` their caller set, as they did when they ran inside xtask.
    pub fn cargo_as_called<I>(&self, args: I) -> Cmd
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        Cmd::new(&self.cargo).current_dir(&self.root).args(args)
    }

    /// Any program, in the workspace root, with the CI environment.
    pub fn cmd(&self, program: impl AsRef<OsStr>) -> Cmd {
        let cmd = Cmd::new(program).current_dir(&self.root);
        match self.ci_env {
            Some((key, value)) => cmd.env(key, value),
            None => cmd,
        }
    }
}

/// Runs the named steps (all of them when `only` is empty) in pipeline order.
pub fn run(ctx: &Ctx, only: &[String]) -> Result<(), StepFailed> {
    let selected: Vec<&Step> = STEPS
        .iter()
        .filter(|step| only.is_empty() || only.iter().any(|name| name == step.name))
        .collect();
    let total = Instant::now();
    let mut timings = Vec::with_capacity(selected.len());
    for (index, step) in selected.iter().enumerate() {
        println!(
            "\n==> [{}/{}] {}: {}",
            index + 1,
            selected.len(),
            step.name,
            step.about
        );
        let started = Instant::now();
        let outcome = (step.run)(ctx);
        let took = started.elapsed();
        timings.push((step.name, took));
        match outcome {
            Ok(()) => println!("<== {} ok ({})", step.name, seconds(took)),
            Err(source) => {
                println!("<== {} FAILED ({})", step.name, seconds(took));
                return Err(StepFailed {
                    step: step.name,
                    source,
                });
            }
        }
    }
    println!("\nci: all {} step(s) passed", selected.len());
    for (name, took) in timings {
        println!("  {name:<14} {:>8}", seconds(took));
    }
    println!("  {:<14} {:>8}", "total", seconds(total.elapsed()));
    Ok(())
}

/// The pipeline stopped here.
#[derive(Debug, thiserror::Error)]
#[error("ci step `{step}` failed: {source}")]
pub struct StepFailed {
    pub step: &'static str,
    pub source: Error,
}

fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn fmt(ctx: &Ctx) -> Result<(), Error> {
    ctx.cargo(["fmt", "--all", "--", "--check"]).run()?;
    Ok(())
}

fn clippy(ctx: &Ctx) -> Result<(), Error> {
    ctx.cargo([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ])
    .run()?;
    Ok(())
}

/// cordon-launch as a macOS build gets it, checked on Linux: without the `linux-backends`
/// feature none of the Linux-only crates is in its graph, and what is left compiles. (No macOS
/// target is installed here, so this is as close as the machine gets.)
fn seatbelt_graph(ctx: &Ctx) -> Result<(), Error> {
    let args = ["-p", "cordon-launch", "--no-default-features", "--locked"];
    let tree = ctx
        .cargo(["tree", "-e", "normal", "--prefix", "none"])
        .args(args)
        .read()?;
    let linux_only = [
        "cordon-bwrap",
        "cordon-landlock",
        "cordon-seccomp",
        "cordon-scan",
    ];
    if let Some(found) = linux_only.iter().find(|c| {
        tree.lines()
            .any(|l| l.split_whitespace().next() == Some(**c))
    }) {
        return Err(Error::Ci(format!(
            "cordon-launch without linux-backends still depends on {found}:\n{tree}"
        )));
    }
    if !tree.lines().any(|l| l.starts_with("cordon-seatbelt ")) {
        return Err(Error::Ci(format!(
            "cargo tree did not list cordon-seatbelt; the check read nothing:\n{tree}"
        )));
    }
    ctx.cargo(["check", "--lib"]).args(args).run()?;
    Ok(())
}

/// Runs every test and reports every failing command, not only the first.
///
/// With cargo-nextest: nextest for the libtest-style tests, `cargo test --doc` for doctests
/// (nextest does not run them), and `cargo test --test <name>` for custom harnesses nextest
/// cannot list. Without it: `cargo test`, which covers all three.
fn test(ctx: &Ctx) -> Result<(), Error> {
    let mut commands = Vec::new();
    if setup::nextest_version(ctx).is_some() {
        let custom = workspace::custom_harness_tests(ctx)?;
        let (by_nextest, by_cargo): (Vec<_>, Vec<_>) =
            custom.into_iter().partition(|t| t.nextest_compatible);
        for t in &by_nextest {
            println!("custom harness {} runs under nextest", t.binary_id());
        }
        let mut nextest = ctx.cargo([
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ]);
        if !by_cargo.is_empty() {
            let excluded: Vec<String> = by_cargo
                .iter()
                .map(|t| format!("binary_id(={})", t.binary_id()))
                .collect();
            // Nextest never executes a binary that a filterset excludes, not even to list it.
            nextest = nextest.args(["-E", &format!("not ({})", excluded.join(" | "))]);
        }
        commands.push(nextest);
        commands.push(ctx.cargo(["test", "--workspace", "--doc", "--locked"]));
        for t in &by_cargo {
            commands.push(ctx.cargo([
                "test",
                "--locked",
                "--package",
                &t.package,
                "--test",
                &t.target,
            ]));
        }
    } else {
        println!("cargo-nextest not found: running everything with `cargo test`");
        commands.push(ctx.cargo(["test", "--workspace", "--locked", "--no-fail-fast"]));
    }

    let failures: Vec<CmdError> = commands.iter().filter_map(|c| c.run().err()).collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error::Tests(failures))
    }
}

/// Real attacks through the real launcher in every column (the no-jail columns too, where every
/// attack case must escape: proof that each can fail), then the weakened launchers.
fn escape_suite(ctx: &Ctx) -> Result<(), Error> {
    let none: [&str; 0] = [];
    ctx.cargo_as_called(harnesses::ESCAPE.cargo_args(none))
        .run()?;
    ctx.cargo_as_called(harnesses::ESCAPE.cargo_args(["--mutants"]))
        .run()?;
    Ok(())
}

/// The short load in a process of its own, so that its descriptor and memory checks see only
/// the load's launcher.
/// Builds the static binary and runs a jail through it: a vetted toolchain tree of the home is
/// readable, the rest of the home (a plain file, a credential) is not, a write to the home lands
/// in the private home (not the real one), one to /usr is refused, the workspace is writable, as with the dynamically linked binary the tests use.
fn dist(ctx: &Ctx) -> Result<(), Error> {
    let cordon = cordon_test_support::dist::build(ctx.root())?;
    let home = tempfile_dir("cordon-ci-dist")?;
    let work = home.join("work");
    let outcome = (|| {
        std::fs::create_dir_all(home.join(".ssh"))
            .and_then(|()| std::fs::create_dir_all(&work))
            .and_then(|()| std::fs::write(home.join(".ssh/id_ed25519"), "ci-dist-secret\n"))
            .and_then(|()| std::fs::create_dir_all(home.join(".local/bin")))
            .and_then(|()| std::fs::write(home.join(".local/bin/readable.txt"), "visible\n"))
            .and_then(|()| std::fs::write(home.join("hidden.txt"), "ci-dist-hidden\n"))
            .map_err(|e| Error::Dist(format!("cannot set up {}: {e}", home.display())))?;
        let out = Cmd::new(&cordon)
            .args(["run", "--", "sh", "-c"])
            .arg(
                "cat ~/.local/bin/readable.txt; cat ~/hidden.txt 2>/dev/null || echo hidden; \
                 cat ~/.ssh/id_ed25519 2>/dev/null; (echo x > ~/planted) 2>/dev/null && echo private-home; \
                 (echo x > /usr/cordon-ci-dist-planted) 2>/dev/null || echo refused; \
                 echo in-jail > made && cat made",
            )
            .env("HOME", &home)
            .current_dir(&work)
            .read()?;
        // A write to the home lands in the workspace's private home, never the real one
        // (docs/home.md); a write outside the writable set is refused.
        if out.trim_end() != "visible\nhidden\nprivate-home\nrefused\nin-jail"
            || home.join("planted").exists()
            || Path::new("/usr/cordon-ci-dist-planted").exists()
        {
            return Err(Error::Dist(format!(
                "the static binary's jail did not hold: printed {out:?}"
            )));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&home);
    outcome
}

/// A fresh directory under /var/lib (CI runs as root): a jail replaces /tmp and /var/tmp with
/// private ones, which would hide a home made there and make the mask check vacuous.
fn tempfile_dir(stem: &str) -> Result<PathBuf, Error> {
    let dir = PathBuf::from(format!("/var/lib/{stem}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::canonicalize(&dir))
        .map_err(|e| Error::Ci(format!("cannot create {}: {e}", dir.display())))
}

fn load(ctx: &Ctx) -> Result<(), Error> {
    ctx.cargo(harnesses::LOAD.cargo_args(["--jobs", "4", "--runs", "60"]))
        .run()?;
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    // Again as the unprivileged user: no `pids` group there, and bubblewrap's credential change
    // clears the parent-death signal, so what ends a killed launcher's jail differs. The load's
    // directory must be the user's; the binaries are the ones just built (world-readable).
    let ids = cordon_test_support::user::ensure_user().map_err(Error::Escape)?;
    let dir = tempfile_dir("cordon-ci-load-user")?;
    let outcome = (|| {
        rustix::fs::chown(
            &dir,
            Some(rustix::process::Uid::from_raw(ids.uid)),
            Some(rustix::process::Gid::from_raw(ids.gid)),
        )
        .map_err(|e| Error::Ci(format!("cannot give {} to the user: {e}", dir.display())))?;
        let target = cordon_test_support::target_dir(ctx.root());
        Cmd::new("setpriv")
            .arg(format!("--reuid={}", ids.uid))
            .arg(format!("--regid={}", ids.gid))
            .args(["--clear-groups", "--"])
            .arg(harnesses::LOAD.binary(ctx.root()))
            .args(["--jobs", "4", "--runs", "60", "--cordon"])
            .arg(target.join("debug/cordon"))
            .env("HOME", &dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .current_dir(&dir)
            .run()?;
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// The CI subset of the workloads suite: every probe, and the projects whose sources are on the
/// machine once the workspace is built (no network); `cargo xtask workloads --all` runs the rest.
/// Twice: under bubblewrap, and in the conditions a container makes, where `--backend auto`
/// must fall back to the Landlock backend (issue #27).
fn workloads(ctx: &Ctx) -> Result<(), Error> {
    let none: [&str; 0] = [];
    ctx.cargo_as_called(harnesses::WORKLOADS.cargo_args(none))
        .run()?;
    ctx.cargo_as_called(harnesses::WORKLOADS.cargo_args(["--container"]))
        .run()?;
    // A session's layered jail built ahead, taking the layer when the command comes: the
    // projects and the probes a session's reuse could break.
    ctx.cargo_as_called(harnesses::WORKLOADS.cargo_args([
        "--serve",
        "--only",
        "strsim,rusty-fork,npm-run,home-write,pty,setsid",
    ]))
    .run()?;
    Ok(())
}

fn deny(ctx: &Ctx) -> Result<(), Error> {
    let config = ctx.root().join("deny.toml");
    ctx.cargo(["deny", "--locked", "--config"])
        .arg(config)
        .args(["check", "licenses", "bans", "sources"])
        .run()?;
    Ok(())
}
