//! Class 11: backend failure. These cases run the `mutants` build with no weakening selected, only
//! `CORDON_TEST_BWRAP` pointing the launcher at a broken bubblewrap; every one must be refused with
//! 126 and the payload must never run. A control run through the same hook with the real
//! `/usr/bin/bwrap` proves the payload would have left its marker.
//!
//! In the landlock columns the same broken bubblewrap meets `--backend auto`: `auto` may refuse
//! (126, with the reason) or fall back to the Landlock backend, but the payload must never run
//! unjailed: its write outside the writable set must not land and the report must name the
//! `landlock` backend, sandboxed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::harness::{Ctx, cut, qp};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

const REAL: &str = "/usr/bin/bwrap";

pub fn cases() -> Vec<Case> {
    let c = Class::Backend;
    vec![
        Case::attack(
            "backend/missing",
            c,
            "no bubblewrap at any trusted path: refused with the reason and the ways out",
            |ctx| refused(ctx, Fake::Missing),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/not-root-owned",
            c,
            "a bubblewrap owned by another user: refused",
            |ctx| refused(ctx, Fake::NotRootOwned),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/writable-by-others",
            c,
            "a bubblewrap writable by group and others, or in such a directory: refused",
            |ctx| refused(ctx, Fake::WritableByOthers),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/userns-unavailable",
            c,
            "a bubblewrap that cannot create user namespaces (as when they are disabled): refused",
            |ctx| refused(ctx, Fake::NoUserns),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/not-jailing",
            c,
            "a bubblewrap that runs the command without any jail: the probe sees it, refused",
            |ctx| refused(ctx, Fake::NotJailing),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/jails-only-the-probe",
            c,
            "a bubblewrap that jails the probe but not the real run: the in-jail self-check refuses",
            |ctx| refused(ctx, Fake::JailsOnlyProbe),
        )
        .not_in_mutants(),
        Case::attack(
            "backend/hooks-absent-from-default-build",
            c,
            "the default build ignores CORDON_MUTANT=no-seccomp and CORDON_TEST_BWRAP",
            default_build,
        )
        .not_in_mutants(),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fake {
    Missing,
    NotRootOwned,
    WritableByOthers,
    NoUserns,
    NotJailing,
    JailsOnlyProbe,
}

/// `--version` and `--help` come from the real bubblewrap, so features look right.
const HEADER: &str =
    "#!/bin/sh\ncase \"$1\" in --version|--help) exec /usr/bin/bwrap \"$@\";; esac\n";

/// Runs the command after `--` on the host, with the stage binary substituted for its jail path.
const UNJAILED: &str = "fd=''; [ \"$1\" = --args ] && fd=$2\n\
stage=$(tr '\\0' '\\n' < /proc/self/fd/$fd | grep -B1 -x /run/cordon/stage | head -1)\n\
while [ $# -gt 0 ]; do if [ \"$1\" = -- ]; then shift; break; fi; shift; done\n\
if [ \"$1\" = /run/cordon/stage ]; then shift; exec \"$stage\" \"$@\"; fi\n\
exec \"$@\"\n";

/// A root-owned directory for the fakes (the case directory belongs to the column's user, which
/// would make every fake untrusted for the wrong reason).
fn fake_dir(ctx: &Ctx<'_>) -> Result<PathBuf, String> {
    let dir = ctx.suite.base.join("fake-bwrap").join(
        ctx.dir
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default(),
    );
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    Ok(dir)
}

fn write_exec(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The candidate list for `fake`.
fn install(ctx: &Ctx<'_>, fake: Fake) -> Result<String, String> {
    let dir = fake_dir(ctx)?;
    let bwrap = dir.join("bwrap");
    match fake {
        Fake::Missing => Ok(format!("{}:/nonexistent/bin/bwrap", bwrap.display())),
        Fake::NotRootOwned => {
            std::fs::copy(REAL, &bwrap).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            let owner = if ctx.ids.uid == 0 { 65534 } else { ctx.ids.uid };
            std::os::unix::fs::chown(&bwrap, Some(owner), Some(owner))
                .map_err(|e| format!("chown: {e}"))?;
            Ok(bwrap.display().to_string())
        }
        Fake::WritableByOthers => {
            std::fs::copy(REAL, &bwrap).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o777))
                .map_err(|e| e.to_string())?;
            let open_dir = dir.join("open");
            std::fs::create_dir_all(&open_dir).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o1777))
                .map_err(|e| e.to_string())?;
            let inner = open_dir.join("bwrap");
            std::fs::copy(REAL, &inner).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            Ok(format!("{}:{}", bwrap.display(), inner.display()))
        }
        Fake::NoUserns => {
            write_exec(
                &bwrap,
                &format!(
                    "{HEADER}echo 'bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
                ),
                0o755,
            )?;
            Ok(bwrap.display().to_string())
        }
        Fake::NotJailing => {
            write_exec(&bwrap, &format!("{HEADER}{UNJAILED}"), 0o755)?;
            Ok(bwrap.display().to_string())
        }
        Fake::JailsOnlyProbe => {
            write_exec(
                &bwrap,
                &format!(
                    "{HEADER}for a in \"$@\"; do if [ \"$a\" = check ]; then unjailed=1; fi; done\n\
                     if [ -z \"$unjailed\" ]; then exec {REAL} \"$@\"; fi\n{UNJAILED}"
                ),
                0o755,
            )?;
            Ok(bwrap.display().to_string())
        }
    }
}

fn refused(ctx: &Ctx<'_>, fake: Fake) -> Outcome {
    if fake == Fake::NotRootOwned && rustix::process::geteuid().as_raw() != 0 {
        return Outcome::new(Verdict::Unavailable, "needs root to chown the fake");
    }
    // Control: the same hook with the real bubblewrap runs the payload.
    let live = ctx
        .cordon()
        .mutants_build()
        .env("CORDON_TEST_BWRAP", REAL)
        .sh("true")
        .run();
    if !ctx.canary() {
        return ctx.judge(&live, false, "control run through the hook did not run");
    }
    let candidates = match install(ctx, fake) {
        Ok(c) => c,
        Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
    };
    let marker = ctx.work.join("payload-ran");
    let outside_probe = ctx.outside.join("escaped");
    let mut run = ctx.cordon().mutants_build();
    if ctx.column.landlock() {
        run = run.args(["--backend", "auto"]);
    }
    let out = run
        .env("CORDON_TEST_BWRAP", &candidates)
        .payload([
            "/bin/sh",
            "-c",
            &format!("touch {}; touch {}", qp(&marker), qp(&outside_probe)),
        ])
        .run();
    let ran = marker.exists() || outside_probe.exists();
    let refusal = out
        .json
        .as_ref()
        .and_then(|j| j["refusal"].as_str())
        .unwrap_or("")
        .to_owned();
    let _ = std::fs::remove_dir_all(fake_dir(ctx).unwrap_or_default());
    if ctx.column.landlock() {
        let json = out.json.as_ref();
        let backend = json
            .and_then(|j| j["backend"].as_str())
            .unwrap_or("")
            .to_owned();
        let sandboxed = json.and_then(|j| j["sandboxed"].as_bool()) == Some(true);
        let outside = outside_probe.exists();
        let refused = out.code == Some(126) && !refusal.is_empty() && !marker.exists();
        let fell_back = backend == "landlock" && sandboxed;
        return ctx.judge(
            &live,
            outside || !(refused || fell_back),
            format!(
                "--backend auto: exit {:?}; backend {backend:?}, sandboxed {sandboxed}; \
                 outside write landed: {outside}; reason: {}",
                out.code,
                cut(&refusal, 220)
            ),
        );
    }
    ctx.judge(
        &live,
        ran || out.code != Some(126) || refusal.is_empty(),
        format!(
            "exit {:?}; payload ran: {ran}; reason: {}",
            out.code,
            cut(&refusal, 220)
        ),
    )
}

fn default_build(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx
        .cordon()
        .env("CORDON_MUTANT", "no-seccomp")
        .env("CORDON_TEST_BWRAP", "/nonexistent/bwrap")
        .sh("grep -E '^Seccomp:' /proc/self/status")
        .run();
    let filtered = out.out.contains("Seccomp:\t2");
    ctx.judge(
        &out,
        !filtered || out.code != Some(0),
        format!(
            "default build with both variables set: exit {:?}, {}",
            out.code,
            cut(&out.out, 40)
        ),
    )
}
