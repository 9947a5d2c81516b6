//! The git configuration broker end to end (bubblewrap): everyday configuration steps succeed
//! in the jail and reach the repository, keys that make the host run a program never do, and
//! each refused key is a violation naming it. These tests fail (never skip) when bubblewrap or
//! git is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Repo {
    _dir: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    upstream: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git is needed by these tests");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Repo {
    fn new() -> Repo {
        common::require_bwrap();
        let dir = common::visible_dir("cordon-gitcfg-");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let work = home.join("proj");
        let upstream = root.join("upstream");
        for d in [&work, &upstream] {
            std::fs::create_dir_all(d).unwrap();
            git(d, &["init", "-q", "-b", "main"]);
            git(d, &["commit", "-q", "--allow-empty", "-m", "first"]);
        }
        Repo {
            _dir: dir,
            home,
            work,
            upstream,
        }
    }

    fn cmd(&self, script: &str) -> Command {
        self.cmd_with(&[], script)
    }

    /// `cordon run` with `extra` options (`--live`) before the command.
    fn cmd_with(&self, extra: &[&str], script: &str) -> Command {
        let mut c = Command::new(common::cordon());
        c.args(["run", "--json", "--backend", "bwrap"])
            .args(extra)
            .args(["--", "sh", "-c", script])
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, script: &str) -> serde_json::Value {
        self.run_with(&[], script)
    }

    fn run_with(&self, extra: &[&str], script: &str) -> serde_json::Value {
        let out = self.cmd_with(extra, script).output().unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)))
    }

    /// `git config --get KEY` on the host, outside any jail.
    fn host_get(&self, dir: &Path, key: &str) -> Option<String> {
        let out = Command::new("git")
            .args(["config", "--local", "--get", key])
            .current_dir(dir)
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| text(&out.stdout).trim().to_owned())
    }
}

const EVERYDAY: &str = "set -e; g='git -c user.name=t -c user.email=t@example.com'; \
    git config user.name 'Jailed Name'; git config user.email jailed@example.com; \
    git remote add origin \"$UPSTREAM\"; git fetch -q origin; \
    git branch -q --set-upstream-to=origin/main; \
    $g -c protocol.file.allow=always submodule add -q \"$UPSTREAM\" lib; \
    $g commit -qm 'add lib'; \
    git worktree add -q wt -b topic; echo everyday-done";

#[test]
fn everyday_configuration_steps_reach_the_repository() {
    let r = Repo::new();
    let script = EVERYDAY.replace("$UPSTREAM", r.upstream.to_str().unwrap());
    let v = r.run(&script);
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(
        v["stdout"]["text"]
            .as_str()
            .unwrap()
            .contains("everyday-done"),
        "{v}"
    );
    let up = r.upstream.to_str().unwrap();
    assert_eq!(
        r.host_get(&r.work, "user.name").as_deref(),
        Some("Jailed Name")
    );
    assert_eq!(
        r.host_get(&r.work, "remote.origin.url").as_deref(),
        Some(up)
    );
    assert_eq!(
        r.host_get(&r.work, "branch.main.remote").as_deref(),
        Some("origin")
    );
    assert_eq!(
        r.host_get(&r.work, "submodule.lib.url").as_deref(),
        Some(up)
    );
    // The host's git sees the submodule and the worktree as usual.
    let status = git(&r.work, &["submodule", "status"]);
    assert!(
        text(&status.stdout).contains("lib"),
        "{}",
        text(&status.stdout)
    );
    let wt = git(&r.work.join("wt"), &["rev-parse", "--abbrev-ref", "HEAD"]);
    assert_eq!(text(&wt.stdout).trim(), "topic");
    let common = git(&r.work.join("wt"), &["rev-parse", "--git-common-dir"]);
    assert_eq!(
        std::fs::canonicalize(text(&common.stdout).trim()).unwrap(),
        r.work.join(".git")
    );
    // Nothing of the broker is left in .git.
    let left: Vec<String> = std::fs::read_dir(r.work.join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cordon-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn command_running_keys_never_reach_the_repository_and_each_is_named() {
    // Live, the git broker merges the allowed keys back; under the default copy-on-write layer,
    // the commit judges the configuration. Either way each dropped key is its own violation.
    for (mode, rule) in [
        (&["--live"][..], "brokered git configuration"),
        (&[][..], "rule git-config-key"),
    ] {
        let r = Repo::new();
        let v = r.run_with(
            mode,
            "git config core.fsmonitor /bin/false; git config core.hooksPath /tmp; \
             git config alias.st '!echo'; git config filter.x.clean cat; \
             git config include.path /tmp/inc; git config credential.helper store; \
             git config url.ext::sh.insteadOf https://; git config user.name ok; \
             git config --get core.fsmonitor",
        );
        // Inside, the jail's own git sees what it set.
        assert!(
            v["stdout"]["text"].as_str().unwrap().contains("/bin/false"),
            "{v}"
        );
        for key in [
            "core.fsmonitor",
            "core.hookspath",
            "alias.st",
            "filter.x.clean",
            "include.path",
            "credential.helper",
            "url.ext::sh.insteadof",
        ] {
            assert_eq!(r.host_get(&r.work, key), None, "{key} reached .git/config");
            let named = v["violations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["key"] == key)
                .unwrap_or_else(|| panic!("{mode:?}: no violation names {key}: {v}"));
            assert_eq!(named["kind"], "git-config-refused");
            assert!(
                named["rule"].as_str().unwrap().starts_with(rule),
                "{mode:?}: {named}"
            );
        }
        assert_eq!(r.host_get(&r.work, "user.name").as_deref(), Some("ok"));
    }
}

#[test]
fn host_git_never_reads_a_planted_key_while_the_command_runs() {
    let r = Repo::new();
    let marker = r.work.join("planted");
    let mut child = r
        .cmd("git config core.fsmonitor /bin/false && touch planted && sleep 2")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen_marker = false;
    for _ in 0..300 {
        if marker.exists() {
            seen_marker = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(seen_marker, "the command never planted its key");
    assert_eq!(r.host_get(&r.work, "core.fsmonitor"), None);
    assert!(child.wait().unwrap().success());
    assert_eq!(r.host_get(&r.work, "core.fsmonitor"), None);
}

#[test]
fn a_submodule_config_the_jail_wrote_keeps_no_command_running_key() {
    let r = Repo::new();
    let v = r.run(&format!(
        "git -c protocol.file.allow=always submodule add -q {} lib && \
         git -C lib config core.fsmonitor /bin/false && git -C lib config alias.x '!echo'",
        r.upstream.display()
    ));
    assert_eq!(v["exit_code"], 0, "{v}");
    let module = r.work.join(".git/modules/lib");
    assert_eq!(r.host_get(&module, "core.fsmonitor"), None);
    assert_eq!(r.host_get(&module, "alias.x"), None);
    // What git itself set for the submodule stays.
    assert_eq!(
        r.host_get(&module, "core.worktree").as_deref(),
        Some("../../../lib")
    );
    assert!(
        v["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["key"] == "core.fsmonitor"
                && x["path"] == module.join("config").to_str().unwrap()),
        "{v}"
    );
}

#[test]
fn a_link_planted_in_git_modules_never_makes_cordon_rewrite_another_repository() {
    let r = Repo::new();
    // Someone else's submodule configuration, with a key of their own choosing.
    let elsewhere = r.upstream.join(".git/modules/x");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let theirs = "[core]\n\tfsmonitor = their-own-choice\n";
    std::fs::write(elsewhere.join("config"), theirs).unwrap();
    let v = r.run(&format!(
        "rm -rf .git/modules && ln -s {} .git/modules && ls .git/modules/x && echo linked",
        r.upstream.join(".git/modules").display()
    ));
    assert!(
        v["stdout"]["text"].as_str().unwrap().contains("linked"),
        "{v}"
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("config")).unwrap(),
        theirs
    );
}
