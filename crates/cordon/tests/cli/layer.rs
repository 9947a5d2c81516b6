//! `cordon run --layer`, `--review` and `--live` end to end: the workspace alone is layered (the
//! toolchain cache, cordon's own, is not), its change set is committed and listed in `--json`,
//! and each run names its mode.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::cli_run::{Jail, text};
use std::path::Path;

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

/// The copy-on-write layer is the default where the backend makes one (bubblewrap); the
/// Landlock backend runs live and says so in the warnings; `--layer` asked of it is refused.
#[test]
fn the_layer_is_the_default_under_bubblewrap_and_a_backend_without_one_says_so() {
    let j = Jail::new();
    let script = "echo made > default.txt";
    let r = json(
        &j,
        &[
            "run",
            "--json",
            "--backend",
            "bwrap",
            "--",
            "/bin/sh",
            "-c",
            script,
        ],
    );
    assert_eq!(r["workspace"], "layer", "{r}");
    assert_eq!(
        r["changes"]["roots"][0]["report"]["added"][0]["path"], "default.txt",
        "{r}"
    );
    assert!(j.work.join("default.txt").exists());

    // (Below the top: Landlock cannot let a new entry be made at a repository's top.)
    std::fs::create_dir(j.work.join("sub")).unwrap();
    let script = "echo made > sub/landlock.txt";
    let r = json(
        &j,
        &[
            "run",
            "--json",
            "--backend",
            "landlock",
            "--",
            "/bin/sh",
            "-c",
            script,
        ],
    );
    assert_eq!(r["workspace"], "live", "{r}");
    assert!(r["changes"].is_null(), "{r}");
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.contains("written live") && w.contains("landlock"))
    });
    assert!(warned, "no warning says the run was live: {r}");
    assert!(j.work.join("sub/landlock.txt").exists(), "{r}");

    for flag in ["--layer", "--review"] {
        let out = j.run(&[
            "run",
            flag,
            "--backend",
            "landlock",
            "--",
            "/bin/touch",
            "never",
        ]);
        assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains(flag) && err.contains("--live"), "{err}");
        assert!(!j.work.join("never").exists());
    }
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

/// Hard links (issue #30): a local clone's objects and a package store's files share their
/// inode with a file outside the workspace. A live run is refused when git's objects are
/// shared; a layered run is not, and what it writes through the workspace's names never
/// reaches the other names.
#[test]
fn a_layered_run_writes_hard_linked_files_without_changing_their_other_names() {
    let j = Jail::new();
    let store = j.home.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(j.work.join(".git/objects/pack")).unwrap();
    std::fs::write(j.work.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(store.join("pack"), "origin pack\n").unwrap();
    std::fs::write(store.join("module.js"), "store copy\n").unwrap();
    std::fs::hard_link(store.join("pack"), j.work.join(".git/objects/pack/p.pack")).unwrap();
    std::fs::hard_link(store.join("module.js"), j.work.join("module.js")).unwrap();
    let script =
        "echo rewritten >> .git/objects/pack/p.pack; echo patched > module.js; chmod 600 module.js";
    let live = j.run(&["run", "--live", "--", "/bin/sh", "-c", script]);
    assert_eq!(
        live.status.code(),
        Some(126),
        "a live run over shared git objects must be refused: {}",
        text(&live.stderr)
    );
    assert!(
        text(&live.stderr).contains("outside-hard-link"),
        "{}",
        text(&live.stderr)
    );
    let r = json(
        &j,
        &["run", "--layer", "--json", "--", "/bin/sh", "-c", script],
    );
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(
        std::fs::read_to_string(j.work.join("module.js")).unwrap(),
        "patched\n",
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(j.work.join(".git/objects/pack/p.pack")).unwrap(),
        "origin pack\nrewritten\n",
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(store.join("module.js")).unwrap(),
        "store copy\n",
        "the store's name changed through the workspace's"
    );
    assert_eq!(
        std::fs::read_to_string(store.join("pack")).unwrap(),
        "origin pack\n",
        "the origin's pack changed through the workspace's"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(store.join("module.js"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o644,
        "the store's mode changed through the workspace's name"
    );
}

/// A run that changes nothing leaves its layer directory as a spare, and the next run takes it:
/// one spare at most after runs one at a time, and a run on a taken spare commits as any other.
#[test]
fn an_unchanged_layer_is_kept_as_the_next_runs_spare() {
    let j = Jail::new();
    let state = j.home.path().join(".cache/cordon/layers");
    let entries = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&state)
            .unwrap()
            .flatten()
            .filter(|w| w.path().is_dir() && !w.file_name().to_string_lossy().starts_with('.'))
            .flat_map(|w| std::fs::read_dir(w.path()).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lock" && n != "runs" && n != "workspace")
            .collect();
        names.sort();
        names
    };
    for _ in 0..3 {
        let out = j.run(&["run", "--layer", "--", "/bin/true"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let left = entries();
        assert!(
            left.len() == 1 && left[0].starts_with("spare-"),
            "after an unchanged run: {left:?}"
        );
        // The overlay is mounted `volatile`: its mark, which would make the next mount on
        // this work directory fail, is gone from the spare.
        let marks: Vec<_> = std::fs::read_dir(&state)
            .unwrap()
            .flatten()
            .filter(|w| w.path().is_dir() && !w.file_name().to_string_lossy().starts_with('.'))
            .flat_map(|w| std::fs::read_dir(w.path()).unwrap().flatten())
            .filter(|e| e.path().join("0/work/work/incompat").exists())
            .collect();
        assert!(
            marks.is_empty(),
            "a spare keeps the volatile mark: {marks:?}"
        );
    }
    let r = json(
        &j,
        &[
            "run",
            "--layer",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo on-spare > spare.txt",
        ],
    );
    assert_eq!(r["changes"]["applied"], true, "{r}");
    assert_eq!(
        std::fs::read_to_string(j.work.join("spare.txt")).unwrap(),
        "on-spare\n"
    );
    assert!(
        entries().is_empty(),
        "a committed layer is removed: {:?}",
        entries()
    );
}

/// Asserts that the git configuration at `path` on the host holds the allowed key the jail set
/// (`user.name = jailed`) and not the command-running `dropped` one.
fn judged_config(path: &Path, dropped: &str, r: &serde_json::Value) {
    let config = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        config.contains("jailed"),
        "the allowed key did not reach {}: {config} {r}",
        path.display()
    );
    let key = dropped.rsplit('.').next().unwrap_or(dropped).to_lowercase();
    assert!(
        !config.to_lowercase().contains(&key),
        "{dropped} reached the host: {config}"
    );
}

/// Under the layer the host's existing `.git/config` is the commit's to judge, not a read-only
/// bind (git's lock-and-rename failed on one with `EBUSY`): `git config` works in the jail, an
/// allowed key reaches the host, a command-running one is dropped and reported, and a
/// world-writable mode is not committed. `.git/hooks` stays read-only. A new repository made
/// in the jail is judged the same way: its hook is refused, its command-running key dropped.
#[test]
fn a_layered_jail_edits_git_config_and_the_commit_judges_it_and_new_repositories() {
    use std::os::unix::fs::PermissionsExt;
    let j = Jail::new();
    assert!(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&j.work)
            .status()
            .unwrap()
            .success()
    );
    let script = "git config user.name jailed && git config core.fsmonitor 'touch /tmp/never' \
                  && chmod 666 .git/config && test \"$(git config user.name)\" = jailed";
    let r = json(
        &j,
        &["run", "--layer", "--json", "--", "/bin/sh", "-c", script],
    );
    assert_eq!(
        r["exit_code"], 0,
        "git config failed in the layered jail: {r}"
    );
    judged_config(&j.work.join(".git/config"), "core.fsmonitor", &r);
    let mode = std::fs::metadata(j.work.join(".git/config"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o002,
        0,
        "the config is writable by others: {mode:o}"
    );
    assert!(
        r["violations"].to_string().contains("core.fsmonitor"),
        "the dropped key is not reported: {r}"
    );
    // The existing repository's hooks are not bound read-only in a layered jail: the hook is
    // written in the layer (the jail's own git may run it) and refused by the commit.
    let r = json(
        &j,
        &[
            "run",
            "--layer",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "printf '#!/bin/sh\\n' > .git/hooks/pre-commit && test -s .git/hooks/pre-commit",
        ],
    );
    assert_eq!(
        r["exit_code"], 0,
        "the hook could not be written in the layer: {r}"
    );
    assert!(!j.work.join(".git/hooks/pre-commit").exists(), "{r}");
    assert!(
        r["violations"].to_string().contains("git-hook"),
        "the refused hook is not reported: {r}"
    );
    let script = "git init -q sub && git -C sub config user.name jailed \
                  && git -C sub config core.hooksPath /tmp/hooks-test \
                  && printf '#!/bin/sh\\ntouch /tmp/never\\n' > sub/.git/hooks/pre-commit \
                  && chmod +x sub/.git/hooks/pre-commit";
    let r = json(
        &j,
        &["run", "--layer", "--json", "--", "/bin/sh", "-c", script],
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    judged_config(&j.work.join("sub/.git/config"), "core.hooksPath", &r);
    assert!(
        !j.work.join("sub/.git/hooks/pre-commit").exists(),
        "a planted hook reached the host"
    );
    let violations = r["violations"].to_string().to_lowercase();
    assert!(
        violations.contains("pre-commit") && violations.contains("core.hookspath"),
        "the refused hook and key are not reported: {r}"
    );
}

/// One library `Launcher` running layered jails on several threads at once, before any layer
/// probe was made: every run is layered, exits 0 and commits. (The probe's tree is named by the
/// process, and concurrent probes once removed it under each other: "this kernel refused an
/// overlay … No such file or directory", found by the load suite.)
#[test]
fn concurrent_layered_runs_of_one_launcher_all_start() {
    use cordon_launch::{BackendChoice, Forward, Launcher, RunRequest, RunStatus};
    use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};
    crate::common::require_bwrap();
    let dir = crate::common::visible_dir("cordon-probes-");
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let launcher = Launcher::linux_with(
        Launcher::default_config(crate::common::cordon(), Some(home.clone().into()), None),
        BackendChoice::Bwrap,
    );
    let host = RealHost::new(Some(home.clone().into()));
    const THREADS: usize = 6;
    let start = std::sync::Barrier::new(THREADS);
    std::thread::scope(|s| {
        for i in 0..THREADS {
            let (launcher, host, start, home) = (&launcher, &host, &start, &home);
            s.spawn(move || {
                let work = home.join(format!("w{i}"));
                std::fs::create_dir_all(&work).unwrap();
                let plan = Plan::resolve(
                    &Policy::for_profile(Profile::Shell),
                    &Invocation::at(&work),
                    host,
                )
                .unwrap();
                let argv = ["/bin/sh".into(), "-c".into(), "echo made > made".into()];
                start.wait();
                let result = launcher
                    .run(&RunRequest {
                        plan: &plan,
                        argv: &argv,
                        host_env: &[],
                        forward: Forward::No,
                        inherit_stdin: false,
                    })
                    .unwrap();
                assert_eq!(result.status, RunStatus::Exited, "run {i}: {result:?}");
                assert_eq!(result.workspace, Some("layer"), "run {i}: {result:?}");
                assert!(work.join("made").is_file(), "run {i}: {result:?}");
            });
        }
    });
}

/// `git submodule add` in a layered jail reaches the host whole: the plain `.gitmodules` it
/// writes is applied (a command in one would be refused), with the module's sanitized
/// configuration and the checkout's `.git` file, so host git sees the submodule.
#[test]
fn git_submodule_add_in_a_layered_jail_reaches_the_host_whole() {
    let j = Jail::new();
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    for name in ["origin", "super"] {
        let dir = j.work.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("README"), name).unwrap();
        git(&dir, &["add", "README"]);
        git(&dir, &["commit", "-qm", "init"]);
    }
    let url = format!(
        "file://{}",
        j.work.canonicalize().unwrap().join("origin").display()
    );
    let script = format!(
        "cd super && git -c protocol.file.allow=always submodule add -q {url} lib \
         && git -c user.name=t -c user.email=t@example.com commit -qm sub"
    );
    let r = json(
        &j,
        &["run", "--layer", "--json", "--", "/bin/sh", "-c", &script],
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["changes"]["applied"], true, "{r}");
    let sup = j.work.join("super");
    assert!(
        std::fs::read_to_string(sup.join(".gitmodules"))
            .unwrap()
            .contains("path = lib"),
        "{r}"
    );
    let status = git(&sup, &["submodule", "status"]);
    assert!(status.contains(" lib"), "{status} {r}");
    assert!(
        !status.starts_with('-'),
        "the submodule is not checked out: {status}"
    );
    assert_eq!(
        std::fs::read_to_string(sup.join("lib/README")).unwrap(),
        "origin"
    );
    assert_eq!(git(&sup, &["status", "--porcelain"]), "", "{r}");
}

/// A layered command that deletes the user's auto-run files and project configuration, and
/// edits one: the host keeps them (held, a violation each), and `cordon apply` carries out the
/// deletion on the user's word.
#[test]
fn deleting_the_user_s_auto_run_files_is_held_until_applied() {
    let j = Jail::new();
    std::fs::write(j.work.join(".envrc"), "use nix\n").unwrap();
    std::fs::write(j.work.join(".npmrc"), "ignore-scripts=true\n").unwrap();
    std::fs::write(j.work.join("notes.txt"), "mine\n").unwrap();
    let r = json(
        &j,
        &[
            "run",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "rm .envrc .npmrc notes.txt && test ! -e .envrc",
        ],
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["workspace"], "layer", "{r}");
    let report = &r["changes"]["roots"][0]["report"];
    let held: Vec<&str> = report["held"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["path"].as_str())
        .collect();
    assert_eq!(held, [".envrc", ".npmrc"], "{r}");
    assert_eq!(
        std::fs::read_to_string(j.work.join(".envrc")).unwrap(),
        "use nix\n"
    );
    assert!(j.work.join(".npmrc").exists());
    // An ordinary file's deletion is applied.
    assert!(!j.work.join("notes.txt").exists(), "{r}");
    let rules = r["violations"].to_string();
    assert!(
        rules.contains("auto-run-deleted") && rules.contains("project-config"),
        "{r}"
    );
    let run = report["run"].as_str().unwrap();
    let out = j.run(&["apply", run, ".envrc"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!j.work.join(".envrc").exists(), "{}", text(&out.stdout));
    assert!(
        j.work.join(".npmrc").exists(),
        "only the path named is applied"
    );
}

/// A path the project's configuration protects (`deny_write`) beyond git's and the registry's
/// stays read-only in a layered jail: no rule of the commit knows it, so the layer does not
/// leave it to the commit. Without the bind, the edit and the deletion would be applied.
#[test]
fn a_path_the_configuration_protects_stays_read_only_in_a_layered_jail() {
    let j = Jail::new();
    std::fs::create_dir_all(j.work.join("secrets")).unwrap();
    std::fs::write(j.work.join("secrets/key"), "host\n").unwrap();
    std::fs::write(
        j.work.join(".cordon.toml"),
        "[filesystem]\ndeny_write = [\"secrets\"]\n",
    )
    .unwrap();
    let r = json(
        &j,
        &[
            "run",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo jail > secrets/key; rm -f secrets/key; echo x > secrets/new; echo ok > ok.txt",
        ],
    );
    assert_eq!(r["workspace"], "layer", "{r}");
    assert_eq!(
        std::fs::read_to_string(j.work.join("ok.txt")).unwrap_or_default(),
        "ok\n",
        "the command did not run to its end: {r}"
    );
    assert_eq!(
        std::fs::read_to_string(j.work.join("secrets/key")).unwrap(),
        "host\n",
        "{r}"
    );
    assert!(!j.work.join("secrets/new").exists(), "{r}");
}

/// What the host makes at an auto-run name while a layered command runs (the user's own new
/// `.envrc`, an editor's `.vscode`) is the host's: no sweep moves it aside when the run ends.
/// (Live, the sweep would: it cannot tell the host's new file from the command's.)
#[test]
fn an_auto_run_file_the_host_makes_during_a_layered_run_stays() {
    use std::io::{BufRead, Read, Write};
    let j = Jail::new();
    let mut child = j
        .cmd(&["run", "--", "/bin/sh", "-c", "echo ready; read go"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut ready = String::new();
    out.read_line(&mut ready).unwrap();
    assert_eq!(ready, "ready\n", "the jail did not start");
    // The jail lives, its guard long done: the user makes an .envrc on the host.
    std::fs::write(j.work.join(".envrc"), "use nix\n").unwrap();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(j.work.join(".envrc")).unwrap_or_default(),
        "use nix\n",
        "the host's own .envrc was moved aside: {err}"
    );
    assert!(!err.contains(".envrc"), "{err}");
}

/// The layer state of a workspace that no longer exists, idle for a week, goes at the next
/// layered run (which says so); a present workspace's state and an idle one's of a day stay.
#[test]
fn a_gone_workspace_s_layer_state_is_removed_after_a_week() {
    let j = Jail::new();
    let layers = j.home.path().join(".cache/cordon/layers");
    let week = std::time::Duration::from_secs(8 * 24 * 3600);
    let day = std::time::Duration::from_secs(24 * 3600);
    let make = |key: &str, workspace: &Path, idle: std::time::Duration| {
        let state = layers.join(key);
        std::fs::create_dir_all(state.join("runs/1-1-0/kept")).unwrap();
        std::fs::write(
            state.join("workspace"),
            workspace.as_os_str().as_encoded_bytes(),
        )
        .unwrap();
        let when = std::time::SystemTime::now() - idle;
        std::fs::File::open(&state)
            .unwrap()
            .set_modified(when)
            .unwrap();
        state
    };
    let gone = make("deleted-1", &j.home.path().join("deleted"), week);
    let recent = make("deleted-2", &j.home.path().join("deleted-too"), day);
    let present = make("present-3", &j.work, week);
    let out = j.run(&["run", "--layer", "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!gone.exists(), "a gone workspace's state stayed");
    assert!(recent.exists() && present.exists());
    assert!(
        text(&out.stderr).contains("a workspace that no longer exists"),
        "{}",
        text(&out.stderr)
    );
    // The run recorded its own workspace.
    let own = std::fs::read_dir(&layers)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("workspace").exists())
        .any(|e| {
            std::fs::read(e.path().join("workspace")).unwrap()
                == j.work.as_os_str().as_encoded_bytes()
        });
    assert!(own, "the run did not record its workspace");
}
