//! `cordon run --layer` killed with SIGKILL (issue #30's crash rule): whatever instant the
//! launcher dies at, the workspace is as before the command or as after its complete commit,
//! never half, once the next cordon (`cordon recover`, or the next layered run) has looked;
//! what a run killed before its commit wrote is kept for review, never applied.
//! Real kernel, real bubblewrap; these tests fail (never skip) when bubblewrap is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Only a guard against a launcher that never starts the payload.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// What the payloads do: write, modify, delete, rename and plant. `WAIT` is replaced by what
/// the payload does once it has written everything.
const PAYLOAD: &str = "mkdir -p gen && i=0; while [ $i -lt 400 ]; do echo $i > gen/f$i; i=$((i+1)); done; \
     echo changed > a.txt; rm b.txt; mv c.txt d.txt; echo 'touch /tmp/never' > .envrc; \
     echo new > new.txt; echo 0123 > .git/refs/heads/made; echo obj > .git/objects/ab; \
     echo ready; WAIT";

struct Ws {
    home: tempfile::TempDir,
    work: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        common::require_bwrap();
        let home = common::visible_dir("cordon-test-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        for (name, text) in [("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")] {
            std::fs::write(work.join(name), text).unwrap();
        }
        std::fs::write(work.join("sub/kept.txt"), "kept\n").unwrap();
        // A repository: its `.git` is under the layer too (no bind of the host's writes through).
        std::fs::create_dir_all(work.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(work.join(".git/objects")).unwrap();
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        Ws { home, work }
    }

    fn cordon(&self) -> Command {
        let mut c = Command::new(common::cordon());
        c.current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        c
    }

    /// A layered run whose launcher is SIGKILLed while its jail runs, once the jail is gone.
    fn killed_while_running(&self) {
        let mut child = self.start("sleep 60");
        child.kill().unwrap();
        child.wait().unwrap();
        jail_gone(self);
    }

    /// Starts `cordon run --layer` with the payload, waiting for its `ready`.
    fn start(&self, wait: &str) -> Child {
        let mut child = self
            .cordon()
            .args(["run", "--layer", "--", "/bin/sh", "-c"])
            .arg(PAYLOAD.replace("WAIT", wait))
            .arg(self.marker())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next().and_then(Result::ok));
            for _ in lines {}
        });
        match rx.recv_timeout(READY_DEADLINE) {
            Ok(Some(line)) if line == "ready" => child,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the payload never said ready: {other:?}");
            }
        }
    }

    /// The payload's `$0`, unique to this workspace: its processes are found by it.
    fn marker(&self) -> String {
        format!(
            "killlayer-{}",
            self.home.path().file_name().unwrap().to_string_lossy()
        )
    }

    fn cordon_out(&self, args: &[&str]) -> Output {
        self.cordon().args(args).output().unwrap()
    }

    /// `cordon recover --json`.
    fn recover(&self) -> serde_json::Value {
        let out = self.cordon_out(&["recover", "--json"]);
        assert!(
            out.status.success(),
            "cordon recover: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The layers' state directory of this workspace's runs.
    fn layer_state(&self) -> PathBuf {
        self.home.path().join(".cache/cordon/layers")
    }
}

/// Every entry below `root` with its type, mode and content, but for the auto-run guard's
/// placeholder `.git/commondir` (a file reading `.`, made on the host for every run, live or
/// layered, and removed after it: `crates/cordon-launch/src/features/autorun.rs`).
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut all = tree_all(root);
    let placeholder = PathBuf::from(".git/commondir");
    if all
        .get(&placeholder)
        .is_some_and(|e| e == &format!("file 644 {:?}", b".\n"))
    {
        all.remove(&placeholder);
    }
    all
}

fn tree_all(root: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            let m = std::fs::symlink_metadata(&path).unwrap();
            let mode = m.permissions().mode() & 0o7777;
            let what = if m.is_dir() {
                format!("dir {mode:o}")
            } else if m.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(path.strip_prefix(root).unwrap().to_path_buf(), what);
            if m.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// `jail-*` and `new-*` directories left in the layers' state.
fn layers_left(state: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ws in std::fs::read_dir(state).into_iter().flatten().flatten() {
        for run in std::fs::read_dir(ws.path()).into_iter().flatten().flatten() {
            let name = run.file_name().to_string_lossy().into_owned();
            if ["jail-", "new-", "gone-"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                out.push(run.path());
            }
        }
    }
    out
}

/// Waits until no process of the workspace's jails is left (their command lines hold its
/// marker).
fn jail_gone(ws: &Ws) {
    let needle = ws.marker();
    let work = &ws.work;
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(5) {
        let alive = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
            .any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
            });
        if !alive {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!(
        "a jail of {} outlived its killed launcher by 5 s",
        work.display()
    );
}

#[test]
fn a_layered_run_killed_while_its_jail_runs_leaves_the_workspace_and_keeps_its_changes_for_review()
{
    let ws = Ws::new();
    let before = tree(&ws.work);
    let child = ws.start("sleep 60");
    // The command has written everything; the host must not see any of it.
    assert_eq!(
        tree(&ws.work),
        before,
        "the host saw the layer's writes while the jail lived"
    );
    let state = ws.layer_state();
    assert_eq!(
        layers_left(&state).len(),
        1,
        "the run's layer is not where this test looks, so it would prove nothing"
    );
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    jail_gone(&ws);
    assert_eq!(
        tree(&ws.work),
        before,
        "a killed launcher changed the workspace"
    );
    let r = ws.recover();
    assert_eq!(tree(&ws.work), before, "recovery applied a killed run: {r}");
    let abandoned = r["abandoned"].as_array().unwrap();
    assert_eq!(abandoned.len(), 1, "{r}");
    let kept = &abandoned[0]["kept"][0];
    assert_eq!(kept["applied"], false, "{r}");
    let paths = |list: &str| -> Vec<String> {
        kept[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(paths("added").contains(&"new.txt".to_owned()), "{r}");
    assert!(paths("modified").contains(&"a.txt".to_owned()), "{r}");
    assert!(paths("deleted").contains(&"b.txt".to_owned()), "{r}");
    assert!(
        paths("held").contains(&".envrc".to_owned())
            || paths("refused").contains(&".envrc".to_owned()),
        "the planted .envrc is neither held nor refused: {r}"
    );
    assert!(
        layers_left(&state).is_empty(),
        "recovery left layer directories: {:?}",
        layers_left(&state)
    );
    // The user applies what was kept, as `cordon recover` tells them to: the plant stays out.
    let run = kept["run"].as_str().unwrap();
    let out = ws.cordon_out(&["apply", run]);
    assert!(
        out.status.success(),
        "cordon apply {run}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(ws.work.join("a.txt")).unwrap(),
        "changed\n"
    );
    assert!(!ws.work.join(".envrc").exists());
}

#[test]
fn the_next_layered_run_recovers_a_killed_one_and_says_so() {
    let ws = Ws::new();
    let before = tree(&ws.work);
    ws.killed_while_running();
    let out = ws.cordon_out(&["run", "--layer", "--json", "--", "/bin/true"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("killed before its commit") && warnings.contains("cordon apply"),
        "the next run did not say it recovered a killed one: {r}"
    );
    assert_eq!(tree(&ws.work), before, "{r}");
    assert!(layers_left(&ws.layer_state()).is_empty());
}

#[test]
fn cordon_recover_says_in_words_what_a_killed_run_left_and_how_to_act_on_it() {
    let ws = Ws::new();
    let before = tree(&ws.work);
    ws.killed_while_running();
    let out = ws.cordon_out(&["recover"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run's own line (the launcher's wording) and its listing.
    assert!(
        text.contains("killed before its commit") && text.contains("cordon apply"),
        "{text}"
    );
    assert!(
        text.contains("new.txt"),
        "the kept changes are not listed: {text}"
    );
    assert_eq!(tree(&ws.work), before, "{text}");
}

/// The launcher killed at many instants around the end of its command, its commit included:
/// after `cordon recover`, the workspace is exactly as before or exactly as after a complete
/// commit.
#[test]
fn a_layered_run_killed_at_any_instant_of_its_commit_is_whole_or_absent() {
    // The complete commit, for comparison.
    let whole = {
        let ws = Ws::new();
        let out = ws
            .cordon()
            .args(["run", "--layer", "--", "/bin/sh", "-c"])
            .arg(PAYLOAD.replace("WAIT", ":"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tree(&ws.work)
    };
    let mut seen = (0, 0);
    for delay_ms in [0u64, 3, 8, 15, 25, 40, 60, 90, 130, 200, 400] {
        let ws = Ws::new();
        let before = tree(&ws.work);
        assert_ne!(
            before, whole,
            "the payload changes nothing: the test proves nothing"
        );
        let mut child = ws.start(":");
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        jail_gone(&ws);
        let r = ws.recover();
        let now = tree(&ws.work);
        if now == before {
            seen.0 += 1;
        } else if now == whole {
            seen.1 += 1;
        } else {
            let half: Vec<_> = now
                .iter()
                .filter(|(p, e)| before.get(*p) != Some(*e))
                .map(|(p, _)| p.display().to_string())
                .take(10)
                .collect();
            panic!(
                "killed {delay_ms} ms after its command's last line, the workspace is half committed after recovery (first differences from before: {half:?}); recovery said {r}"
            );
        }
        let left = layers_left(&ws.layer_state());
        assert!(
            left.is_empty(),
            "killed {delay_ms} ms in, recovery left layer directories: {left:?}; it said {r}"
        );
    }
    eprintln!(
        "kill points: {} left the workspace as before, {} as after",
        seen.0, seen.1
    );
}
