//! The stage runs wherever the binary lives: a cordon under `/tmp` (which every jail hides)
//! runs commands under both backends — bubblewrap binds the binary into the jail, the Landlock
//! backend grants read and execute on that one file — and `cordon doctor` says so. A binary the
//! jail could write is refused with 126, naming the path and the rule. The library's side of it
//! (a stage binary under `/tmp` run through `Launcher`) is cordon-launch's
//! `tests/launch/stage_placement.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn run(cordon: &Path, backend: &str, home: &Path, work: &Path) -> Output {
    Command::new(cordon)
        .args([
            "run",
            "--backend",
            backend,
            "--",
            "/bin/sh",
            "-c",
            "echo ran > out/x",
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .current_dir(work)
        .output()
        .unwrap()
}

#[test]
fn a_cordon_under_tmp_runs_under_both_backends() {
    let bin_dir = tempfile::Builder::new()
        .prefix("cordon-stage-")
        .tempdir_in("/tmp")
        .unwrap();
    let copy = bin_dir.path().join("cordon");
    std::fs::copy(common::cordon(), &copy).unwrap();
    let copy = std::fs::canonicalize(&copy).unwrap();
    // Home and workspace outside every private directory, so only the binary's place differs.
    let home = common::visible_dir("cordon-stage-home-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join("out")).unwrap();
    for backend in ["landlock", "bwrap"] {
        let _ = std::fs::remove_file(work.join("out/x"));
        let out = run(&copy, backend, home.path(), &work);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(work.join("out/x")).unwrap(),
            "ran\n",
            "{backend}"
        );
    }

    // doctor says where the stage is and that each backend can execute it.
    let out = Command::new(&copy)
        .args(["doctor", "--json"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home.path())
        .current_dir(&work)
        .output()
        .unwrap();
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stages = doctor["stage"].as_array().unwrap();
    for backend in ["bubblewrap", "landlock"] {
        let s = stages
            .iter()
            .find(|s| s["backend"] == backend)
            .unwrap_or_else(|| panic!("no stage report for {backend}: {doctor}"));
        assert_eq!(s["path"], copy.display().to_string(), "{s}");
        assert_eq!(s["executable"], true, "{s}");
    }
}

#[test]
fn a_cordon_the_jail_could_write_is_refused_naming_the_path_and_the_rule() {
    let home = common::visible_dir("cordon-stage-home-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join("out")).unwrap();
    let copy = work.join("tools/cordon");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(common::cordon(), &copy).unwrap();
    let copy = std::fs::canonicalize(&copy).unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    for backend in ["landlock", "bwrap"] {
        let out = run(&copy, backend, home.path(), &work);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(126), "{backend}: {stderr}");
        assert!(
            stderr.contains(&copy.display().to_string()),
            "{backend}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("lies inside the writable root {}", work.display())),
            "{backend}: {stderr}"
        );
        assert!(!work.join("out/x").exists(), "{backend}: the command ran");
    }
    let out = Command::new(&copy)
        .args(["doctor", "--json"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home.path())
        .current_dir(&work)
        .output()
        .unwrap();
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for s in doctor["stage"].as_array().unwrap() {
        assert_eq!(s["executable"], false, "{s}");
        assert!(
            s["refused"].as_str().unwrap().contains("writable root"),
            "{s}"
        );
    }
}
