//! cordon-seatbelt `build` on a fuzzed plan and fuzzed glob rules (see `src/plan.rs` for the
//! script).
//!
//! Beyond "no panic": a plan of absolute NUL-free paths without globs always builds; a built
//! profile is printable ASCII and reads back with the crate's own test reader (the independent
//! TinyScheme-style reader in `crates/cordon-seatbelt/tests/seatbelt/common.rs`), starting with
//! `(version 1)`, every form a rule, every `(param "NAME")` among the `-D` parameters; the
//! command is passed through untouched; every credential mask is denied for reading and writing
//! by the profile as the reader's evaluator decides it; and building is deterministic.

#![no_main]

#[allow(dead_code, clippy::all)]
#[path = "../../crates/cordon-seatbelt/tests/seatbelt/common.rs"]
mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cordon_fuzz::plan::{Case, decode};
use cordon_seatbelt::{GlobRule, Request, SeatbeltExtras, build};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = decode(&cordon_fuzz::lines(data)) else {
        return;
    };
    check(&case);
});

fn check(case: &Case) {
    let extras = SeatbeltExtras {
        deny_read: rules(&case.deny_read),
        deny_write: rules(&case.deny_write),
        proxy_port: None,
    };
    let request = Request {
        plan: &case.plan,
        host: &case.host,
        tmpdir: &case.tmpdir,
        extras: &extras,
        stage: case.stage.as_deref(),
        argv: &case.argv,
    };
    let exec = match build(&request) {
        Ok(exec) => exec,
        Err(err) => {
            assert!(!err.to_string().is_empty());
            assert!(
                !should_build(case),
                "a plan of clean paths was refused: {err}\n{case:#?}"
            );
            return;
        }
    };
    assert_eq!(
        build(&request).as_ref(),
        Ok(&exec),
        "building is not deterministic"
    );

    let profile = exec.profile();
    assert!(
        profile
            .bytes()
            .all(|b| b == b'\n' || (0x20..0x7f).contains(&b)),
        "the profile is not printable ASCII"
    );
    for p in exec.params() {
        assert!(
            !p.value.as_bytes().contains(&0),
            "parameter {} holds a NUL",
            p.name
        );
    }

    // Reads back: (version 1), then only rules, every parameter defined (Judge::new panics
    // otherwise, which libFuzzer reports as a crash).
    let judge = common::Judge::new(&exec);

    let mut command: Vec<OsString> = Vec::new();
    if let Some(stage) = &case.stage {
        command.push(stage.as_os_str().to_owned());
    }
    command.extend(case.argv.iter().cloned());
    assert_eq!(exec.command(), command.as_slice());

    // Masks hold: neither the masked path nor anything below it is readable or writable, asked
    // of the path as Seatbelt sees it (resolved, so spelled canonically). Two questions per
    // path: the evaluator compiles every glob regex per question.
    let mut asked: Vec<PathBuf> = Vec::new();
    for m in &case.plan.masks {
        for target in [&m.target, &m.requested] {
            let canonical: PathBuf = target.components().collect();
            if asked.contains(&canonical) || has_parent_component(&canonical) {
                continue; // `..` is resolved before Seatbelt compares: it never sees one.
            }
            let below = canonical.join("cordon-fuzz-probe");
            for (op, probe) in [("file-read-data", &canonical), ("file-write-data", &below)] {
                assert!(
                    !judge.allows(op, probe),
                    "{op} is allowed on masked {}\n{profile}",
                    probe.display()
                );
            }
            asked.push(canonical);
        }
    }
}

fn rules(list: &[(PathBuf, OsString)]) -> Vec<GlobRule> {
    list.iter()
        .map(|(base, pattern)| GlobRule::new(base.clone(), pattern.clone()))
        .collect()
}

fn has_parent_component(p: &Path) -> bool {
    p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// Whether `build` must succeed: no glob rules (their refusals are the glob module's own
/// business), every path absolute and NUL-free, and a program to run.
fn should_build(case: &Case) -> bool {
    let plan = &case.plan;
    let clean = |p: &Path| p.is_absolute() && !p.as_os_str().as_bytes().contains(&0);
    let mut paths: Vec<&Path> = vec![&case.tmpdir];
    paths.extend(plan.writable.iter().map(PathBuf::as_path));
    paths.extend(plan.protected.iter().map(|p| p.path.as_path()));
    paths.extend(
        plan.masks
            .iter()
            .flat_map(|m| [m.target.as_path(), m.requested.as_path()]),
    );
    paths.extend(plan.skipped.iter().map(|s| s.path.as_path()));
    paths.extend(plan.private_dirs.iter().map(PathBuf::as_path));
    paths.extend(
        plan.read_only
            .iter()
            .flat_map(|b| [b.source.as_path(), b.dest.as_path()]),
    );
    paths.extend(plan.symlinks.iter().map(|s| s.link.as_path()));
    paths.extend(case.stage.as_deref());
    case.deny_read.is_empty()
        && case.deny_write.is_empty()
        && paths.iter().all(|p| clean(p))
        && case
            .argv
            .first()
            .is_some_and(|p| !p.is_empty() || case.stage.is_some())
        && case.argv.iter().all(|a| !a.as_bytes().contains(&0))
}
