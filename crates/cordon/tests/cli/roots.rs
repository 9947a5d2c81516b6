//! Writable roots never drop a protection: a root that holds the workspace keeps the workspace's
//! protected paths, and cordon's own configuration and cache stay read-only inside any root.
//! Real jails (bubblewrap and the Landlock backend), judged on the host.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BACKENDS: &[&str] = &["bwrap", "landlock"];

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        common::require_bwrap();
        Home {
            dir: common::visible_dir("cordon-roots-"),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// A workspace holding a repository, with a hook directory and a config.
    fn repo(&self, rel: &str) -> PathBuf {
        let work = self.path().join(rel);
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        work
    }

    fn run(&self, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> (Output, String) {
        let (out, v) = self.json(cwd, args, env);
        let stdout = v["stdout"]["text"].as_str().unwrap_or_default().to_owned();
        assert!(stdout.contains("END"), "the payload did not finish: {v}");
        (out, stdout)
    }

    /// `cordon ARGS` in `cwd` with this home, and its JSON object.
    fn json(
        &self,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> (Output, serde_json::Value) {
        let mut c = Command::new(common::cordon());
        c.args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
        (out, v)
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What the payload tries against a repository's protected paths (from inside it).
const ATTACK_GIT: &str = "echo '[core] hooksPath = /x' >> .git/config; \
     echo '#!/bin/sh' > .git/hooks/pre-commit; \
     mv .git/hooks .git/hooks-old; mv .git .git-old; rm -f .git/config; \
     echo made > ../lib/sibling.txt; echo END";

fn assert_git_intact(work: &Path, what: &str) {
    assert_eq!(
        std::fs::read_to_string(work.join(".git/config")).unwrap(),
        "[core]\n",
        "{what}: .git/config was rewritten"
    );
    assert!(
        !work.join(".git/hooks/pre-commit").exists(),
        "{what}: a hook was planted"
    );
    assert!(work.join(".git/hooks").is_dir(), "{what}: hooks moved");
    assert!(!work.join(".git-old").exists(), "{what}: .git moved");
}

#[test]
fn writing_a_parent_of_the_workspace_keeps_the_workspace_git_read_only() {
    for backend in BACKENDS {
        let home = Home::new();
        let work = home.repo("src/proj");
        let parent = home.path().join("src");
        std::fs::create_dir_all(parent.join("lib")).unwrap();
        let (_, stdout) = home.run(
            &work,
            &[
                "run",
                "--json",
                "--backend",
                backend,
                "--write",
                parent.to_str().unwrap(),
                "--",
                "/bin/sh",
                "-c",
                ATTACK_GIT,
            ],
            &[],
        );
        let what = format!("--write <parent> on {backend}");
        assert_git_intact(&work, &what);
        // The parent itself was writable: the grant still works.
        assert_eq!(
            std::fs::read_to_string(parent.join("lib/sibling.txt")).unwrap(),
            "made\n",
            "{what}: {stdout}"
        );
    }
}

#[test]
fn a_configured_root_holding_the_workspace_keeps_the_workspace_git_read_only() {
    let home = Home::new();
    let work = home.repo("src/proj");
    let parent = home.path().join("src");
    std::fs::create_dir_all(parent.join("lib")).unwrap();
    let config = home.path().join(".config/cordon");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[filesystem]\nwritable = [{:?}]\n",
            parent.display().to_string()
        ),
    )
    .unwrap();
    home.run(
        &work,
        &["run", "--json", "--", "/bin/sh", "-c", ATTACK_GIT],
        &[],
    );
    assert_git_intact(&work, "[filesystem] writable = [<parent>]");
    assert!(parent.join("lib/sibling.txt").exists());
}

#[test]
fn missing_cordon_config_cannot_be_created_nor_the_cache_rewritten_inside_writable_parents() {
    for backend in BACKENDS {
        let what = format!("on {backend}");
        // Nothing of cordon's own exists yet under ~/.config or $XDG_CONFIG_HOME: it cannot be
        //    created. The probe cache (~/.cache/cordon) is written by the launcher before the
        //    jail: it cannot be rewritten or added to.
        let home = Home::new();
        let work = home.repo("proj");
        let h = home.path();
        std::fs::create_dir_all(h.join(".config/git")).unwrap();
        std::fs::create_dir_all(h.join(".cache/pip")).unwrap();
        std::fs::create_dir_all(h.join("xdg")).unwrap();
        // The relocated configuration directory by its literal path: the jail is not given
        // XDG_CONFIG_HOME (it relocates every tool's configuration, so it is never passed).
        // The real home by its path: under the Landlock backend `HOME` names the workspace's
        // private home (docs/home.md).
        let attack = format!(
            "for d in {home}/.config/cordon {xdg}/cordon; do \
               mkdir -p $d; echo '[filesystem]' > $d/config.toml; done; \
             for f in {home}/.cache/cordon/*; do echo EVIL > $f; done; \
             echo EVIL > {home}/.cache/cordon/probe-evil.json; \
             mv {home}/.cache/cordon {home}/.cache/moved; \
             echo ok > {home}/.config/git/other; echo ok > {home}/.cache/pip/other; echo END",
            home = h.display(),
            xdg = h.join("xdg").display()
        );
        // A root that holds cordon's own state cannot be layered (the commit keeps its journal
        // there): the default refuses it, naming `--live`; live mode's protections are tested.
        let cache = h.join(".cache");
        let run = ["run", "--json", "--backend", backend, "--write"];
        let args: Vec<&str> = run
            .into_iter()
            .chain([cache.to_str().unwrap(), "--", "/bin/sh", "-c", "echo END"])
            .collect();
        let (_, v) = home.json(&work, &args, &[]);
        if *backend == "bwrap" {
            assert_eq!(v["status"], "refused", "{v}");
            assert!(v["refusal"].as_str().unwrap().contains("--live"), "{v}");
        } else {
            assert_eq!(v["status"], "exited", "{v}");
        }
        let (_, stdout) = home.run(
            &work,
            &[
                "run",
                "--json",
                "--live",
                "--backend",
                backend,
                "--write",
                h.join(".config").to_str().unwrap(),
                "--write",
                h.join(".cache").to_str().unwrap(),
                "--write",
                h.join("xdg").to_str().unwrap(),
                "--",
                "/bin/sh",
                "-c",
                &attack,
            ],
            &[("XDG_CONFIG_HOME", &h.join("xdg"))],
        );
        assert!(h.join(".config/git/other").exists(), "{what}: {stdout}");
        assert!(h.join(".cache/pip/other").exists(), "{what}: {stdout}");
        for created in [".config/cordon", "xdg/cordon"] {
            assert!(
                !h.join(created).exists(),
                "{what}: {created} was created (or its placeholder left behind): {stdout}"
            );
        }
        assert!(!h.join(".cache/moved").exists(), "{what}: the cache moved");
        let cache = h.join(".cache/cordon");
        assert!(cache.is_dir(), "{what}: the launcher wrote no probe cache");
        for entry in std::fs::read_dir(&cache).unwrap() {
            let path = entry.unwrap().path();
            if !path.is_file() {
                continue; // `tools`: the private toolchain caches (docs/caches.md)
            }
            let content = std::fs::read_to_string(&path).unwrap();
            assert!(
                !content.contains("EVIL"),
                "{what}: {} was written from the jail",
                path.display()
            );
        }
    }
}

#[test]
fn the_global_configuration_cannot_be_rewritten_inside_a_writable_parent() {
    for backend in BACKENDS {
        let what = format!("on {backend}");
        // The global configuration exists: it cannot be rewritten, removed or moved.
        let home = Home::new();
        let work = home.repo("proj");
        let h = home.path();
        let config = h.join(".config/cordon/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::create_dir_all(h.join(".config/git")).unwrap();
        std::fs::write(&config, "# trusted\n").unwrap();
        // The real home by its path (under the Landlock backend `HOME` is the private home).
        let attack = &format!(
            "f={home}/.config/cordon/config.toml; echo '[filesystem]' >> $f; \
             echo '[filesystem]' > $f.new && mv $f.new $f; rm -f $f; \
             mv {home}/.config/cordon {home}/.config/moved; echo ok > {home}/.config/git/other; echo END",
            home = h.display()
        );
        // A root that holds cordon's own state cannot be layered (the commit keeps its journal
        // there): the default refuses it, naming `--live`; live mode's protections are tested.
        let cache = h.join(".cache");
        let run = ["run", "--json", "--backend", backend, "--write"];
        let args: Vec<&str> = run
            .into_iter()
            .chain([cache.to_str().unwrap(), "--", "/bin/sh", "-c", "echo END"])
            .collect();
        let (_, v) = home.json(&work, &args, &[]);
        if *backend == "bwrap" {
            assert_eq!(v["status"], "refused", "{v}");
            assert!(v["refusal"].as_str().unwrap().contains("--live"), "{v}");
        } else {
            assert_eq!(v["status"], "exited", "{v}");
        }
        let (_, stdout) = home.run(
            &work,
            &[
                "run",
                "--json",
                "--live",
                "--backend",
                backend,
                "--write",
                h.join(".config").to_str().unwrap(),
                "--",
                "/bin/sh",
                "-c",
                attack,
            ],
            &[],
        );
        assert!(h.join(".config/git/other").exists(), "{what}: {stdout}");
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            "# trusted\n",
            "{what}: the global configuration was rewritten: {stdout}"
        );
        assert!(!h.join(".config/moved").exists(), "{what}: moved");
        assert!(!h.join(".config/cordon/config.toml.new").exists(), "{what}");
    }
}
