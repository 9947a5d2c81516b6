//! `cordon policy show` and `cordon audit`, end to end through the binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

struct Env {
    home: tempfile::TempDir,
    work: std::path::PathBuf,
}

impl Env {
    fn new() -> Env {
        let home = common::visible_dir("cordon-test-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        Env { home, work }
    }

    fn global(&self, text: &str) {
        let dir = self.home.path().join(".config/cordon");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
    }

    fn project(&self, text: &str) {
        std::fs::write(self.work.join(".cordon.toml"), text).unwrap();
    }

    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(common::cordon())
            .args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn policy_show_prints_values_with_their_source_and_the_plan() {
    let env = Env::new();
    env.global("[env]\npass = [\"RUST_LOG\"]\nset = { SECRET_VALUE_NAME = \"hunter2\" }\n[limits]\ntimeout_secs = 77\n");
    env.project("[filesystem]\ndeny_read = [\"keys\"]\n");
    let out = env.cordon(&["policy", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("timeout_secs") && stdout.contains("77"),
        "{stdout}"
    );
    assert!(stdout.contains("(global "), "{stdout}");
    assert!(
        stdout.contains("keys") && stdout.contains("(project "),
        "{stdout}"
    );
    assert!(stdout.contains("SECRET_VALUE_NAME"), "{stdout}");
    assert!(
        !stdout.contains("hunter2"),
        "explicit values are never printed"
    );
    // The home is hidden: ~/.ssh is left to the private home, the home's line says so.
    assert!(
        stdout.contains(&format!("home      {} hidden", env.home.path().display())),
        "{stdout}"
    );
    assert!(
        !stdout.contains(&format!(
            "masked    {}",
            env.home.path().join(".ssh").display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("filesystem.home") && stdout.contains("stores moved by the environment"),
        "{stdout}"
    );
    assert!(
        stdout.contains("read-only") && stdout.contains(".git/hooks"),
        "{stdout}"
    );
}

#[test]
fn policy_show_json_is_one_object_with_the_hash() {
    let env = Env::new();
    let out = env.cordon(&["policy", "show", "--json", "--profile", "document-parser"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"]["value"], "document-parser");
    assert_eq!(v["profile"]["source"], "caller");
    assert_eq!(v["posture"]["value"], "minimal");
    assert!(v["policy_hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(v["plan"]["posture"], "minimal");
}

#[test]
fn bad_configuration_exits_125_naming_key_and_file_and_runs_nothing() {
    let env = Env::new();
    env.project("[network]\nmode = \"allow\"\n");
    let out = env.cordon(&["policy", "show"]);
    assert_eq!(out.status.code(), Some(125));
    let err = text(&out.stderr);
    assert!(
        err.contains("network.mode")
            && err.contains(".cordon.toml")
            && err.contains("only tighten"),
        "{err}"
    );

    env.project("[filesytem]\n");
    let out = env.cordon(&["policy", "show"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("unknown key `filesytem`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn broad_cwd_exits_125_naming_path_and_rule() {
    let env = Env::new();
    let out = env.cordon(&["policy", "show", "--cwd", env.home.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("home directory"),
        "{}",
        text(&out.stderr)
    );
    let out = env.cordon(&["policy", "show", "--profile", "nope"]);
    assert_eq!(
        out.status.code(),
        Some(125),
        "a bad flag value is bad input"
    );
}

#[test]
fn audit_passes_the_defaults_and_fails_loose_configurations() {
    let env = Env::new();
    let out = env.cordon(&["audit"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("workspace-live") && text(&out.stdout).contains("mode auto"),
        "{}",
        text(&out.stdout)
    );
    let out = env.cordon(&["audit", "--live"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("FAIL  workspace-live"),
        "{}",
        text(&out.stdout)
    );

    env.global("[network]\nmode = \"allow\"\n[backend]\nunavailable = \"warn\"\n[filesystem]\nallow_read = [\"~/.ssh\"]\nwritable = [\"~\"]\n[env]\npass = [\"GITHUB_TOKEN\"]\n");
    let out = env.cordon(&["audit", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "network-allowed-in-shell",
        "unavailable-warn",
        "default-mask-removed",
        "writable-home-or-system",
        "env-pass-credential",
    ] {
        assert!(failed.contains(&name), "{name} not flagged: {failed:?}");
    }
}

#[test]
fn audit_fails_a_writable_root_that_holds_the_workspace() {
    let env = Env::new();
    std::fs::create_dir_all(env.home.path().join("other")).unwrap();
    let failed = |text: &str| -> Vec<(String, String)> {
        env.global(text);
        let out = env.cordon(&["audit", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["passed"] == false)
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap().to_owned();
                (s("name"), s("detail"))
            })
            .collect()
    };
    // A sibling of the workspace passes; the workspace's parent (spelled absolute or below
    // `~`) fails, naming the root.
    assert_eq!(failed("[filesystem]\nwritable = [\"~/other\"]\n"), vec![]);
    let parent = env.work.parent().unwrap().canonicalize().unwrap();
    let home_parent = env.home.path().canonicalize().unwrap().join("nest");
    std::fs::create_dir_all(home_parent.join("ws")).unwrap();
    for (root, cwd) in [
        (parent.display().to_string(), env.work.clone()),
        ("~/nest".to_owned(), home_parent.join("ws")),
    ] {
        env.global(&format!("[filesystem]\nwritable = [{root:?}]\n"));
        let out = Command::new(common::cordon())
            .args(["audit", "--json"])
            .current_dir(&cwd)
            .env_clear()
            .env("HOME", env.home.path().canonicalize().unwrap())
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{root}: {}", text(&out.stdout));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "writable-contains-workspace")
            .unwrap();
        assert_eq!(check["passed"], false, "{root}: {check}");
        assert!(check["detail"].as_str().unwrap().contains(&root), "{check}");
    }
}

#[test]
fn audit_of_a_loosening_project_file_fails() {
    let env = Env::new();
    let file = env.work.join(".cordon.toml");
    env.project("[backend]\nunavailable = \"warn\"\n");
    let out = env.cordon(&["audit", "--config", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("FAIL  config-valid") && stdout.contains("backend.unavailable"),
        "{stdout}"
    );
    let out = env.cordon(&[
        "audit",
        "--config",
        Path::new("/nonexistent/x.toml").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(125));
}

#[test]
fn memory_bounds_too_small_to_start_exit_125_naming_key_and_rule_and_run_nothing() {
    for (limits, key, floor) in [
        ("tmp_bytes = 4096", "limits.tmp_bytes", "1048576"),
        ("memory_bytes = 1048576", "limits.memory_bytes", "67108864"),
    ] {
        let env = Env::new();
        env.project(&format!("[limits]\n{limits}\n"));
        let out = env.cordon(&["run", "--", "/bin/sh", "-c", "echo ran > ran"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{limits}: {err}");
        assert!(err.contains(key) && err.contains(floor), "{limits}: {err}");
        assert!(!env.work.join("ran").exists(), "{limits}: the command ran");
    }
    // A project file may lower them (the bound holds: res/tmp-fill, res/memory-bound).
    let env = Env::new();
    env.project("[limits]\ntmp_bytes = 16777216\nmemory_bytes = 268435456\n");
    let out = env.cordon(&["policy", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("16777216") && shown.contains("268435456"),
        "{shown}"
    );
}

#[test]
fn policy_show_lists_each_moved_store_with_its_variable() {
    let env = Env::new();
    let moved = common::visible_dir("cordon-moved-");
    let gnupg = moved.path().canonicalize().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["policy", "show"])
        .current_dir(&env.work)
        .env_clear()
        .env("HOME", env.home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("GNUPGHOME", &gnupg)
        .env("KUBECONFIG", "/nonexistent-a:/nonexistent-b")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("GNUPGHOME={} masked", gnupg.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("masked    {}", gnupg.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("KUBECONFIG=/nonexistent-b missing"),
        "{stdout}"
    );
}

#[test]
fn a_read_grant_of_the_home_or_a_mask_exits_125_naming_the_key_and_the_rule() {
    let env = Env::new();
    for grant in ["~", "/", "~/.ssh/id_ed25519"] {
        env.global(&format!("[filesystem]\nread = [\"{grant}\"]\n"));
        let out = env.cordon(&["run", "--", "/bin/true"]);
        assert_eq!(
            out.status.code(),
            Some(125),
            "{grant}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains("filesystem.read") && err.contains("rule:"),
            "{grant}: {err}"
        );
    }
}
