#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking
//! `cordon explain --platform macos` on any OS: the Seatbelt profile and sandbox-exec's
//! arguments, built from the real host's plan, with nothing probed or run.

use crate::common;

use std::process::{Command, Stdio};

#[test]
fn prints_the_profile_then_one_argument_per_line() {
    let home = common::visible_dir("cordon-test-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let out = Command::new(common::cordon())
        .args([
            "explain",
            "--platform",
            "macos",
            "--env",
            "API=supersecret",
            "--",
            "/bin/echo",
            "hi there",
        ])
        .current_dir(&work)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (profile, args) = stdout.split_once("\n\n/usr/bin/sandbox-exec\n").unwrap();
    assert!(profile.contains("(version 1)"));
    assert!(profile.contains("(deny default)"));
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(args[..2], ["-p", "<the profile above>"]);
    let canonical = std::fs::canonicalize(&work).unwrap();
    assert!(
        args.contains(&format!("-DWRITABLE_0={}", canonical.display()).as_str()),
        "{args:?}"
    );
    let ssh = std::fs::canonicalize(home.path().join(".ssh")).unwrap();
    assert!(
        args.iter()
            .any(|a| a.starts_with("-DMASK_") && a.ends_with(&*ssh.to_string_lossy()))
    );
    assert_eq!(args[args.len() - 2..], ["/bin/echo", "hi there"]);
    assert!(!stdout.contains("supersecret"));

    let bad = Command::new(common::cordon())
        .args([
            "explain",
            "--platform",
            "macos",
            "--env",
            "LD_PRELOAD=x",
            "--",
            "true",
        ])
        .current_dir(&work)
        .env_clear()
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(125));
}
