//! Refused and held changes are kept aside, never in the workspace; review mode keeps
//! everything; `apply_held` and `drop_run` act on a run; bad input is a clear error.

use std::path::{Path, PathBuf};

use cordon_commit::{CommitError, Limits, Mode, apply_held, commit_root, drop_run, list_runs};

use crate::support::{Fixture, paths, read};

#[test]
fn a_planted_hook_is_refused_and_kept_in_the_run_with_its_rule() {
    let f = Fixture::new("mkdir -p .git/hooks; echo '[core]' > .git/config");
    f.jail("printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo fine > src.txt");
    let report = f.commit(Mode::Apply);
    assert_eq!(
        paths(&report.refused),
        [".git/hooks/pre-commit"],
        "{report:?}"
    );
    let finding = report.refused[0].finding.clone().unwrap();
    assert!(
        !finding.rule.is_empty() && !finding.why.is_empty(),
        "{finding:?}"
    );
    assert!(!f.ws().join(".git/hooks/pre-commit").exists());
    assert_eq!(read(f.ws().join("src.txt")), "fine\n");
    let run = report.run_dir.clone().unwrap();
    assert!(read(run.join("kept/.git/hooks/pre-commit")).contains("pwned"));
    // The manifest names path, rule, program and why.
    let manifest: serde_json::Value = serde_json::from_str(&read(run.join("run.json"))).unwrap();
    let text = manifest.to_string();
    assert!(
        text.contains(".git/hooks/pre-commit") && text.contains(&finding.rule),
        "{text}"
    );
    // A refused change cannot be applied.
    let err = apply_held(
        &f.state(),
        &report.run,
        &[PathBuf::from(".git/hooks/pre-commit")],
    )
    .unwrap_err();
    assert!(matches!(err, CommitError::NotHeld { .. }), "{err}");
}

#[test]
fn a_held_change_waits_for_consent_then_applies() {
    let f = Fixture::new("");
    f.jail("echo 'script-shell=/tmp/x' > .npmrc; echo ok > ok");
    let report = f.commit(Mode::Apply);
    assert_eq!(paths(&report.held), [".npmrc"], "{report:?}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["apply_with"],
        serde_json::json!(["cordon", "apply", report.run])
    );
    assert_eq!(json["held"][0]["finding"]["rule"], "project-config");
    assert!(!f.ws().join(".npmrc").exists());
    assert_eq!(list_runs(&f.state()).unwrap()[0].held, 1);
    let applied = apply_held(&f.state(), &report.run, &[PathBuf::from(".npmrc")]).unwrap();
    assert_eq!(paths(&applied.added), [".npmrc"]);
    assert_eq!(read(f.ws().join(".npmrc")), "script-shell=/tmp/x\n");
    // Nothing kept any more: the run is gone.
    assert!(list_runs(&f.state()).unwrap().is_empty());
}

#[test]
fn review_mode_applies_nothing_until_apply_and_drop_discards() {
    let f = Fixture::new("echo old > a");
    f.jail("echo new > a; mkdir -p d; echo x > d/x");
    let report = f.commit(Mode::Review);
    assert!(!report.applied);
    assert_eq!(paths(&report.modified), ["a"]);
    assert_eq!(read(f.ws().join("a")), "old\n");
    assert!(!f.ws().join("d").exists());
    let runs = list_runs(&f.state()).unwrap();
    assert_eq!(runs[0].pending, 3);
    // Applying one path brings the directory it needs.
    let applied = apply_held(&f.state(), &report.run, &[PathBuf::from("d/x")]).unwrap();
    let mut added = paths(&applied.added);
    added.sort();
    assert_eq!(added, ["d", "d/x"]);
    assert_eq!(read(f.ws().join("d/x")), "x\n");
    assert_eq!(read(f.ws().join("a")), "old\n");
    drop_run(&f.state(), &report.run).unwrap();
    assert!(list_runs(&f.state()).unwrap().is_empty());
    assert_eq!(read(f.ws().join("a")), "old\n");
}

#[test]
fn applying_later_rejudges_conflicts() {
    let f = Fixture::new("echo old > a");
    f.jail("echo new > a");
    let report = f.commit(Mode::Review);
    std::fs::write(f.ws().join("a"), "host edit\n").unwrap();
    let applied = apply_held(&f.state(), &report.run, &[]).unwrap();
    assert_eq!(paths(&applied.conflicts), ["a"]);
    assert_eq!(read(f.ws().join("a")), "host edit\n");
}

#[test]
fn bad_input_is_a_clear_error_and_nothing_is_applied() {
    let f = Fixture::new("");
    f.jail("mkdir -p a/b/c/d; echo x > a/b/c/d/e");
    let err = commit_root(
        Path::new("ws"),
        &f.upper(),
        &f.state(),
        &f.marker(),
        Mode::Apply,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("ws is not an absolute path"),
        "{err}"
    );
    let err = cordon_commit::commit_root_with(
        &f.ws(),
        &f.upper(),
        &f.state(),
        &f.marker(),
        Mode::Apply,
        cordon_commit::CommitOptions {
            limits: Limits {
                max_depth: 3,
                max_entries: 100,
            },
            hook: None,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("deeper than 3 levels"), "{err}");
    assert!(!f.ws().join("a").exists());
    let inside = f.ws().join(".state");
    let err = commit_root(&f.ws(), &f.upper(), &inside, &f.marker(), Mode::Apply).unwrap_err();
    assert!(
        err.to_string().contains("is inside the writable root"),
        "{err}"
    );
    let err = drop_run(&f.state(), "../x").unwrap_err();
    assert!(err.to_string().contains("not a run name"), "{err}");
    let err = apply_held(&f.state(), "1-2-3", &[]).unwrap_err();
    assert!(matches!(err, CommitError::NoSuchRun { .. }), "{err}");
}
