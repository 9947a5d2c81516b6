//! `cordon check` and the floor's gate in `cordon run`, end to end through the binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn cordon(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(common::cordon())
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf) {
    let home = common::visible_dir("cordon-test-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    (home, work)
}

#[test]
fn check_allows_everyday_work_and_refuses_with_the_rule() {
    let (home, work) = dirs();
    let out = cordon(&work, home.path(), &["check", "--", "rm", "-rf", "./build"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "allow\n");

    let out = cordon(&work, home.path(), &["check", "--", "rm", "-rf", "/"]);
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(text(&out.stdout), "refuse recursive-delete\n");
    assert!(
        text(&out.stderr).contains("cordon: refused by the floor: recursive-delete:"),
        "{}",
        text(&out.stderr)
    );

    // An argv whose program is a shell has its string judged.
    let out = cordon(
        &work,
        home.path(),
        &["check", "--", "sh", "-c", "echo hi; kill -9 -1"],
    );
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(text(&out.stdout), "refuse kill-all-processes\n");

    // HOME is the floor's home directory.
    let home_str = home.path().to_str().unwrap();
    let out = cordon(&work, home.path(), &["check", "--", "rm", "-rf", home_str]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stdout));
}

#[test]
fn check_json_and_the_shell_form() {
    let (home, work) = dirs();
    let out = cordon(
        &work,
        home.path(),
        &["check", "--json", "--shell", "rm -rf / ; echo"],
    );
    assert_eq!(out.status.code(), Some(126));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["rule"], "recursive-delete");
    assert_eq!(v["evidence"], "rm -rf /");
    assert!(
        v["reason"].as_str().unwrap().contains("root directory"),
        "{v}"
    );

    let out = cordon(
        &work,
        home.path(),
        &["check", "--json", "--shell", "cargo test && git clean -fdx"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"verdict": "allow", "rule": null, "reason": null, "evidence": null})
    );

    // Full-width and escape-laced spellings read like the plain one.
    let out = cordon(
        &work,
        home.path(),
        &[
            "check",
            "--shell",
            "\u{1b}[31mｓｈｕｔｄｏｗｎ\u{1b}[0m now",
        ],
    );
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(text(&out.stdout), "refuse power-state\n");
}

#[test]
fn check_bad_input_exits_125() {
    let (home, work) = dirs();
    for args in [
        &["check"][..],
        &["check", "--shell", "ls", "--", "ls"][..],
        &["check", "--frobnicate", "--", "ls"][..],
    ] {
        let out = cordon(&work, home.path(), args);
        assert_eq!(
            out.status.code(),
            Some(125),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn run_consults_the_floor_before_anything_starts() {
    let (home, work) = dirs();
    let marker = work.join("ran");
    let script = format!("touch {}; rm -rf /", marker.display());
    let out = cordon(&work, home.path(), &["run", "--", "/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cordon: refused by the floor: recursive-delete:"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !marker.exists(),
        "the payload ran before the floor refused it"
    );

    let out = cordon(
        &work,
        home.path(),
        &["run", "--json", "--", "rm", "-rf", "/"],
    );
    assert_eq!(out.status.code(), Some(126));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "refused");
    assert_eq!(v["rule"], "recursive-delete");
    assert_eq!(v["exit_code"], 126);
    assert_eq!(v["backend"], serde_json::Value::Null);
    assert!(
        v["refusal"]
            .as_str()
            .unwrap()
            .starts_with("refused by the floor: recursive-delete")
    );
    assert_eq!(v["warnings"], serde_json::json!([]));
}

#[test]
fn the_floor_comes_before_the_policy() {
    // A cwd the policy would refuse with 125 (the home directory as workspace): the floor's
    // refusal comes first, so the exit code is 126.
    let (home, _) = dirs();
    let out = cordon(home.path(), home.path(), &["run", "--", "reboot"]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("power-state"),
        "{}",
        text(&out.stderr)
    );
}
