//! `cordon changes`, `diff`, `apply`, `drop` and `recover` over a run that cordon-commit kept
//! in review mode (its layer made by a real overlay in `unshare -Urm`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common;

struct Setup {
    base: tempfile::TempDir,
    ws: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let base = tempfile::tempdir().unwrap();
        let ws = base.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let ws = std::fs::canonicalize(ws).unwrap();
        std::fs::write(ws.join("a"), "one\ntwo\n").unwrap();
        Setup { base, ws }
    }

    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(common::cordon())
            .args(args)
            .env("XDG_CACHE_HOME", self.base.path().join("cache"))
            .env("HOME", self.base.path())
            .output()
            .unwrap()
    }

    /// The workspace's state directory, where the layer feature keeps runs.
    fn state(&self) -> PathBuf {
        self.base
            .path()
            .join("cache/cordon/layers")
            .join(cordon_policy::CacheLayout::workspace_key(&self.ws))
    }

    /// A command's writes through an overlay, committed for review: returns the run.
    fn review_run(&self, script: &str) -> String {
        let layer = self.base.path().join("layer");
        for d in ["upper", "work"] {
            std::fs::create_dir_all(layer.join(d)).unwrap();
        }
        // The marker's change time must be after the set-up's (change times are coarse).
        let setup = std::fs::metadata(self.ws.join("a")).unwrap();
        loop {
            let _ = std::fs::remove_file(layer.join("started"));
            std::fs::write(layer.join("started"), "").unwrap();
            let m = std::fs::metadata(layer.join("started")).unwrap();
            use std::os::unix::fs::MetadataExt;
            if (m.ctime(), m.ctime_nsec()) > (setup.ctime(), setup.ctime_nsec()) {
                break;
            }
        }
        let mount = format!(
            "mount -t overlay -o userxattr,lowerdir={ws},upperdir={l}/upper,workdir={l}/work none {ws} && cd {ws} && {script}",
            ws = self.ws.display(),
            l = layer.display()
        );
        let out = Command::new("unshare")
            .args(["-Urm", "sh", "-ec", &mount])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = cordon_commit::commit_root(
            &self.ws,
            &layer.join("upper"),
            &self.state(),
            &layer.join("started"),
            cordon_commit::Mode::Review,
        )
        .unwrap();
        report.run
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_reviewed_run_is_listed_diffed_applied_by_path_and_dropped() {
    let s = Setup::new();
    let ws = s.ws.to_str().unwrap();
    let run = s.review_run("printf 'one\\nTWO\\n' > a; echo new > b; echo npm > .npmrc");
    let list = s.cordon(&["changes", "--json", "--workspace", ws]);
    assert_eq!(list.status.code(), Some(0), "{}", text(&list));
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v["runs"][0]["run"], run.as_str());
    assert_eq!(v["runs"][0]["pending"], 2);
    assert_eq!(v["runs"][0]["held"], 1);
    let diff = s.cordon(&["diff", &run, "--workspace", ws]);
    let d = text(&diff);
    assert_eq!(diff.status.code(), Some(0), "{d}");
    assert!(
        d.contains("pending modified a") && d.contains("  -two") && d.contains("  +TWO"),
        "{d}"
    );
    assert!(d.contains("held added .npmrc (project-config"), "{d}");
    let apply = s.cordon(&["apply", &run, "a", "--workspace", ws, "--json"]);
    assert_eq!(apply.status.code(), Some(0), "{}", text(&apply));
    let r: serde_json::Value = serde_json::from_slice(&apply.stdout).unwrap();
    assert_eq!(r["modified"][0]["path"], "a");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a")).unwrap(),
        "one\nTWO\n"
    );
    assert!(!s.ws.join("b").exists());
    let drop = s.cordon(&["drop", &run, "--workspace", ws]);
    assert_eq!(drop.status.code(), Some(0), "{}", text(&drop));
    assert!(!s.ws.join("b").exists() && !s.ws.join(".npmrc").exists());
    let none = s.cordon(&["changes", "--workspace", ws]);
    assert!(text(&none).contains("no run of"), "{}", text(&none));
    let rec = s.cordon(&["recover", "--workspace", ws]);
    assert_eq!(rec.status.code(), Some(0));
    assert!(text(&rec).contains("nothing to recover"), "{}", text(&rec));
}

#[test]
fn a_bad_run_or_path_is_refused_with_125_and_a_message() {
    let s = Setup::new();
    let ws = s.ws.to_str().unwrap();
    let run = s.review_run("echo new > b");
    let bad = s.cordon(&["drop", "../../etc", "--workspace", ws]);
    assert_eq!(bad.status.code(), Some(125));
    assert!(text(&bad).contains("is not a run name"), "{}", text(&bad));
    let missing = s.cordon(&["apply", "1-2-3", "--workspace", ws]);
    assert_eq!(missing.status.code(), Some(125));
    assert!(
        text(&missing).contains("no run 1-2-3"),
        "{}",
        text(&missing)
    );
    let not_held = s.cordon(&["apply", &run, "zzz", "--workspace", ws]);
    assert_eq!(not_held.status.code(), Some(125));
    assert!(
        text(&not_held).contains("zzz is not a held or pending change"),
        "{}",
        text(&not_held)
    );
    assert!(!s.ws.join("b").exists());
    let nowhere = s.cordon(&["changes", "--workspace", "/nonexistent/ws"]);
    assert_eq!(nowhere.status.code(), Some(125));
}
