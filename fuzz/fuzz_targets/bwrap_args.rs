//! cordon-bwrap `build` on a fuzzed plan (see `src/plan.rs` for the script).
//!
//! Beyond "no panic": a plan of clean paths always builds; what is built never holds a NUL byte,
//! reads back option by option with the crate's own test reader (so no path became an option),
//! runs exactly the requested command, mounts parents before children, mounts nothing below a
//! credential mask, keeps every mask and writable root that no other mask hides, and does not
//! depend on the order of the plan's lists.

#![no_main]

#[allow(dead_code, clippy::all)]
#[path = "../../crates/cordon-bwrap/tests/bwrap/common.rs"]
mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cordon_bwrap::{BwrapError, Descriptors, Features, Request, STAGE_DIR, STAGE_PATH, build};
use cordon_fuzz::plan::{Case, decode, is_clean, reversed};
use cordon_policy::EntryKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = decode(&cordon_fuzz::lines(data)) else {
        return;
    };
    check(&case);
});

fn request<'a>(
    case: &'a Case,
    plan: &'a cordon_policy::GuardedPlan,
    features: &'a Features,
) -> Request<'a> {
    Request {
        plan,
        brokers: &[],
        features,
        env: &case.env,
        fds: Descriptors { seccomp: 4 },
        stage: case.stage.as_deref(),
        argv: &case.argv,
    }
}

fn features() -> &'static Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    FEATURES.get_or_init(common::features)
}

fn check(case: &Case) {
    let features = features();
    // Guarded against a host where nothing exists: the plan's own paths, no pins or placeholders.
    let guarded = case.plan.guard(&cordon_policy::FakeHost::new());
    let built = build(&request(case, &guarded, features));
    let args = match built {
        Ok(args) => args,
        Err(err) => {
            assert!(!err.to_string().is_empty());
            if case.stage.is_none() {
                assert!(
                    !should_build(case),
                    "a plan of clean paths was refused: {err}\n{case:#?}"
                );
            }
            if let BwrapError::NulByte { value, .. } = &err {
                assert!(!value.contains('\0'), "the error message carries a raw NUL");
            }
            return;
        }
    };

    // No NUL anywhere, and the descriptor data is exactly the options.
    let bytes = args
        .to_nul_separated()
        .expect("built arguments contain a NUL byte");
    let options = args.options();
    assert_eq!(bytes.iter().filter(|&&b| b == 0).count(), options.len());
    for arg in options.iter().chain(args.command()) {
        assert!(!arg.as_bytes().contains(&0));
    }

    // The command is the stage (if any) followed by argv, untouched.
    let mut expected: Vec<OsString> = Vec::new();
    if case.stage.is_some() {
        expected.push(STAGE_PATH.into());
    }
    expected.extend(case.argv.iter().cloned());
    assert_eq!(args.command(), expected.as_slice());

    // Every option reads back with its arity: no path or value landed in an option position.
    let steps = common::read_options(&options);
    let mounts: Vec<(usize, PathBuf, bool)> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.dest().map(|d| (i, d, s.is_mask(steps.get(i + 1)))))
        .collect();
    let sealed = case.plan.posture == cordon_policy::Posture::Minimal;
    let ordered: &[(usize, PathBuf, bool)] = if sealed {
        let (last, rest) = mounts
            .split_last()
            .expect("a minimal plan mounts something");
        assert_eq!(steps[last.0].flag, "--remount-ro");
        assert_eq!(last.1, Path::new("/"), "the minimal posture ends sealed");
        rest
    } else {
        &mounts
    };
    // A hidden home is sealed read-only once every mount below it exists: the seal comes after
    // its children by design, and is held to that instead of to the parents-first order.
    let (seals, ordered): (Vec<_>, Vec<_>) = ordered.iter().cloned().partition(|(i, dest, _)| {
        // A mask's own `--tmpfs P --remount-ro P` is not a seal.
        let mask_part = i
            .checked_sub(1)
            .and_then(|p| steps.get(p))
            .is_some_and(|prev| prev.flag == "--tmpfs" && prev.dest().as_ref() == Some(dest));
        steps[*i].flag == "--remount-ro" && !mask_part
    });
    for (i, dest, _) in &seals {
        for (j, other, _) in &mounts {
            assert!(
                !(other != dest && other.starts_with(dest) && j > i),
                "{} is mounted after the seal of {}\n{}",
                other.display(),
                dest.display(),
                args.render()
            );
        }
    }
    let ordered = ordered.as_slice();

    // Parents before children; nothing strictly below a mask.
    for (a, (_, dest_a, mask_a)) in ordered.iter().enumerate() {
        for (_, dest_b, _) in &ordered[a + 1..] {
            assert!(
                !(dest_a != dest_b && dest_a.starts_with(dest_b)),
                "{} is mounted before its parent {}\n{}",
                dest_a.display(),
                dest_b.display(),
                args.render()
            );
        }
        if *mask_a {
            for (_, other, _) in ordered {
                assert!(
                    !(other != dest_a && other.starts_with(dest_a)),
                    "{} is mounted below the mask {}\n{}",
                    other.display(),
                    dest_a.display(),
                    args.render()
                );
            }
        }
    }

    // Nothing is lost that no mask hides: every mask and every writable root is there.
    let mask_targets: Vec<&Path> = case.plan.masks.iter().map(|m| m.target.as_path()).collect();
    let hidden = |p: &Path| mask_targets.iter().any(|m| p != *m && p.starts_with(m));
    let rendered = args.render();
    // Paths compare by component, as the generator dedups them: `//a` and `/a` are one mount.
    let has = |flag: &str, operands: &[&Path]| {
        steps.iter().any(|s| {
            s.flag == flag
                && s.operands.len() == operands.len()
                && s.operands
                    .iter()
                    .zip(operands)
                    .all(|(o, p)| Path::new(o) == *p)
        })
    };
    for m in &case.plan.masks {
        if hidden(&m.target) {
            continue;
        }
        let present = match m.kind {
            EntryKind::Dir => has("--tmpfs", &[&m.target]) && has("--remount-ro", &[&m.target]),
            _ => has("--ro-bind", &[Path::new("/dev/null"), &m.target]),
        };
        assert!(
            present,
            "mask {} is missing\n{rendered}",
            m.target.display()
        );
    }
    for w in &case.plan.writable {
        if !hidden(w) {
            assert!(
                has("--bind", &[w, w]),
                "root {} is missing\n{rendered}",
                w.display()
            );
        }
    }

    // The order of the plan's lists does not matter.
    let mut shuffled = case.clone();
    shuffled.plan = reversed(&case.plan);
    let guarded_again = shuffled.plan.guard(&cordon_policy::FakeHost::new());
    let again = build(&request(&shuffled, &guarded_again, features))
        .expect("the reversed plan was refused");
    assert_eq!(
        again, args,
        "the output depends on the order of the plan's lists"
    );
}

/// Whether `build` must succeed: every path the generator checks is clean, none lies in the
/// stage's reserved directory, the environment can be set and there is a program to run.
fn should_build(case: &Case) -> bool {
    let plan = &case.plan;
    let mut dests: Vec<&Path> = Vec::new();
    dests.extend(plan.private_dirs.iter().map(PathBuf::as_path));
    dests.extend(plan.read_only.iter().map(|b| b.dest.as_path()));
    dests.extend(plan.symlinks.iter().map(|s| s.link.as_path()));
    dests.extend(plan.writable.iter().map(PathBuf::as_path));
    dests.extend(plan.protected.iter().map(|p| p.path.as_path()));
    dests.extend(plan.masks.iter().map(|m| m.target.as_path()));
    let mut checked = dests.clone();
    checked.push(&plan.cwd);
    checked.extend(plan.read_only.iter().map(|b| b.source.as_path()));
    let paths_ok = checked.iter().all(|p| is_clean(p))
        && !dests.iter().any(|d| d.starts_with(STAGE_DIR))
        && plan
            .symlinks
            .iter()
            .all(|s| !s.target.as_os_str().as_bytes().contains(&0));
    let env_ok = case.env.iter().all(|(name, value)| {
        !name.is_empty()
            && !name.as_bytes().contains(&b'=')
            && !name.as_bytes().contains(&0)
            && !value.as_bytes().contains(&0)
    });
    let argv_ok = case.argv.first().is_some_and(|p| !p.is_empty())
        && case.argv.iter().all(|a| !a.as_bytes().contains(&0));
    paths_ok && env_ok && argv_ok
}
