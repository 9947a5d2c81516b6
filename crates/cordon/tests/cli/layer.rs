//! `cordon run --layer`, `--review` and `--live` end to end: the workspace alone is layered (the
//! toolchain cache, cordon's own, is not), its change set is committed and listed in `--json`,
//! and each run names its mode.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::cli_run::{Jail, text};

fn json(j: &Jail, args: &[&str]) -> serde_json::Value {
    let out = j.run(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn a_layered_run_commits_the_workspace_only_and_names_its_mode() {
    let j = Jail::new();
    let r = json(
        &j,
        &[
            "run",
            "--layer",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo made > made.txt",
        ],
    );
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["workspace"], "layer", "{r}");
    assert_eq!(r["changes"]["applied"], true, "{r}");
    let roots = r["changes"]["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 1, "only the workspace is layered: {r}");
    assert_eq!(
        roots[0]["root"],
        j.work.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(roots[0]["report"]["added"][0]["path"], "made.txt", "{r}");
    assert_eq!(
        std::fs::read_to_string(j.work.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn review_keeps_the_change_and_live_writes_through() {
    let j = Jail::new();
    let r = json(
        &j,
        &[
            "run",
            "--review",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo kept > kept.txt",
        ],
    );
    assert_eq!(r["changes"]["applied"], false, "{r}");
    assert!(!j.work.join("kept.txt").exists());
    let r = json(
        &j,
        &[
            "run",
            "--live",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo live > live.txt",
        ],
    );
    assert_eq!(r["workspace"], "live", "{r}");
    assert!(r["changes"].is_null(), "{r}");
    assert!(j.work.join("live.txt").exists());
    // The flags exclude each other: bad input (125), naming them, nothing run.
    let out = j.run(&["run", "--live", "--layer", "--", "/bin/touch", "never"]);
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--live"),
        "{}",
        text(&out.stderr)
    );
    assert!(!j.work.join("never").exists());
}
