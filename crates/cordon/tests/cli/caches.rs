//! cordon's private toolchain caches and private homes end to end: a cache written in one run
//! is there in the next, the host's own caches and cordon's own state are never written, `cordon
//! cache clear` empties it, and `cordon audit` fails a writable root inside the home directory's
//! caches; a tool writes its home (`~/.cache/x`, `~/.config/x`) and finds it in the next run of
//! the same workspace only, never in the real home.
//! These tests fail (never skip) when bubblewrap is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Home {
    home: tempfile::TempDir,
    work: PathBuf,
}

impl Home {
    fn new() -> Home {
        common::require_bwrap();
        let home = common::visible_dir("cordon-caches-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        // The host's own Go build cache, and cordon's own probe cache.
        std::fs::create_dir_all(home.path().join(".cache/go-build")).unwrap();
        std::fs::write(home.path().join(".cache/go-build/README"), "host\n").unwrap();
        std::fs::create_dir_all(home.path().join(".cache/cordon")).unwrap();
        Home { home, work }
    }

    fn home(&self) -> PathBuf {
        std::fs::canonicalize(self.home.path()).unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(common::cordon())
            .args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("GOCACHE", self.home.path().join(".cache/go-build"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn sh(&self, extra: &[&str], script: &str) -> Output {
        let mut args = vec!["run"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "sh", "-c", script]);
        self.run(&args)
    }

    fn base(&self) -> PathBuf {
        self.home().join(".cache/cordon/tools")
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_cache_written_in_one_run_is_seen_in_the_next() {
    let h = Home::new();
    let out = h.sh(
        &[],
        "echo warm > \"$GOCACHE/entry\" && echo pip > \"$PIP_CACHE_DIR/wheel\" \
         && mkdir -p \"$XDG_CACHE_HOME/tool\" && echo xdg > \"$XDG_CACHE_HOME/tool/state\" \
         && echo \"$GOCACHE\"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let gocache = PathBuf::from(text(&out.stdout).trim());
    // cordon's own cache, outside the workspace, not the host's GOCACHE the caller had set.
    assert!(gocache.starts_with(h.base()), "{gocache:?}");
    assert!(!gocache.starts_with(&h.work));
    let out = h.sh(
        &[],
        "cat \"$GOCACHE/entry\" \"$PIP_CACHE_DIR/wheel\" \"$XDG_CACHE_HOME/tool/state\"",
    );
    assert_eq!(
        text(&out.stdout),
        "warm\npip\nxdg\n",
        "{}",
        text(&out.stderr)
    );
    // The host's own cache is untouched.
    let host = h.home().join(".cache/go-build");
    assert_eq!(std::fs::read_dir(&host).unwrap().count(), 1);
}

#[test]
fn the_hosts_caches_and_cordons_state_are_never_written() {
    let h = Home::new();
    // Make the cache exist, then try every way at what lies around it.
    assert_eq!(h.sh(&[], "true").status.code(), Some(0));
    let key = std::fs::read_dir(h.base())
        .unwrap()
        .flatten()
        .find(|e| {
            e.file_type().unwrap().is_dir() && !e.file_name().to_string_lossy().ends_with(".home")
        })
        .unwrap()
        .file_name();
    let key = key.to_str().unwrap().to_owned();
    let out = h.sh(
        &[],
        &format!(
            "echo poison > ~/.cache/go-build/poison; echo x > ~/.cache/go-build/README; \
             echo x > ~/.cache/cordon/probe-0.json; echo x > ~/.cache/cordon/tools/{key}.used; \
             mkdir ~/.cache/cordon/tools/other; ln -s / ~/.cache/cordon/tools/x; \
             rm -rf ~/.cache/cordon/tools/{key}; echo done"
        ),
    );
    assert_eq!(text(&out.stdout), "done\n", "{}", text(&out.stderr));
    let home = h.home();
    assert!(!home.join(".cache/go-build/poison").exists());
    assert_eq!(
        std::fs::read_to_string(home.join(".cache/go-build/README")).unwrap(),
        "host\n"
    );
    // cordon itself writes its probe cache there; the jail's line never lands in it.
    let probe = std::fs::read(home.join(".cache/cordon/probe-0.json")).unwrap_or_default();
    assert_ne!(probe, b"x\n");
    assert!(!h.base().join("other").exists());
    assert!(std::fs::symlink_metadata(h.base().join("x")).is_err());
    let stamp = std::fs::read_to_string(h.base().join(format!("{key}.used"))).unwrap();
    assert_eq!(Path::new(&stamp), std::fs::canonicalize(&h.work).unwrap());
    // The jail could empty its own cache (rm -rf reached inside), never remove the root.
    assert!(h.base().join(&key).is_dir());
}

#[test]
fn an_explicit_value_wins_over_cordons() {
    let h = Home::new();
    let out = h.sh(
        &["--env", "GOCACHE=/explicit/go"],
        "echo \"$GOCACHE $PIP_CACHE_DIR\"",
    );
    let shown = text(&out.stdout);
    assert!(shown.starts_with("/explicit/go "), "{shown}");
    assert!(shown.trim_end().ends_with("/pip"), "{shown}");
}

#[test]
fn clear_removes_the_cache_and_show_lists_it() {
    let h = Home::new();
    assert_eq!(
        h.sh(&[], "echo warm > \"$GOCACHE/entry\"").status.code(),
        Some(0)
    );
    let show = h.run(&["cache", "show", "--json"]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let caches = v["caches"].as_array().unwrap();
    assert_eq!(caches.len(), 1, "{v}");
    assert_eq!(caches[0]["key"], v["current"]);
    let work = std::fs::canonicalize(&h.work).unwrap();
    assert_eq!(caches[0]["workspace"], work.to_str().unwrap());
    assert!(caches[0]["bytes"].as_u64().unwrap() > 0);
    assert!(v["max_bytes"].as_u64().unwrap() > 0);

    let clear = h.run(&["cache", "clear"]);
    assert_eq!(clear.status.code(), Some(0), "{}", text(&clear.stderr));
    let key = caches[0]["key"].as_str().unwrap();
    assert!(!h.base().join(key).exists());
    let out = h.sh(&[], "cat \"$GOCACHE/entry\" 2>/dev/null || echo cold");
    assert_eq!(text(&out.stdout), "cold\n");
}

#[test]
fn audit_fails_a_writable_root_in_the_home_directorys_caches() {
    let h = Home::new();
    let home = h.home();
    let go_build = home.join(".cache/go-build");
    let out = h.run(&["audit", "--json", "--write", go_build.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "writable-host-cache")
        .unwrap();
    assert_eq!(check["passed"], false, "{check}");
    assert!(
        check["detail"].as_str().unwrap().contains("go-build"),
        "{check}"
    );
    let out = h.run(&["audit", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "writable-host-cache")
        .unwrap();
    assert_eq!(check["passed"], true, "{check}");
}

/// `.cordon-selfcheck-<pid>-<nonce>` and `cordon-config-<nonce>` with the nonces taken out.
fn without_nonces(line: &str) -> String {
    let mut out = String::new();
    for word in line.split('/') {
        if !out.is_empty() {
            out.push('/');
        }
        match [".cordon-selfcheck-", "cordon-config-", "jail-"]
            .iter()
            .find(|p| word.starts_with(**p))
        {
            Some(prefix) => out.push_str(prefix),
            None => out.push_str(word),
        }
    }
    out
}

#[test]
fn a_harness_planning_through_the_library_gets_the_clis_caches_and_jail() {
    use cordon_launch::{CordonDirs, Launcher};
    use cordon_policy::{Invocation, Policy, Profile, RealHost};
    let h = Home::new();
    let home = h.home();
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("HOME".into(), home.clone().into()),
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("GOCACHE".into(), home.join(".cache/go-build").into()),
    ];
    // The library alone, as a Rust harness plans: the launcher makes the workspace's cache.
    let dirs = CordonDirs::from_vars(Some(home.as_os_str()), None, None);
    let invocation = Invocation::at(&h.work)
        .with_own_state(dirs.own_state())
        .with_host_env(env.iter().cloned())
        .with_caches(dirs.tools_caches().unwrap());
    assert!(!h.base().exists(), "the cache existed before any run");
    let (plan, warnings) = Launcher::plan(
        &Policy::for_profile(Profile::Shell),
        &invocation,
        &RealHost::new(Some(home.clone().into())),
    )
    .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let cache = plan
        .caches
        .as_ref()
        .expect("the library's plan has no cache");
    assert!(cache.root.starts_with(h.base()) && cache.root.is_dir());
    // What the library would run is what the CLI prints for the same workspace.
    let launcher = Launcher::linux(Launcher::default_config(
        common::cordon(),
        Some(home.clone().into()),
        None,
    ));
    let library = launcher
        .explain(&plan, &["/bin/true".into()], &env)
        .unwrap();
    // The default workspace mode: the copy-on-write layer, whose run directory is named by a
    // nonce like the self-check's.
    assert!(
        library.features.contains(&"layer"),
        "{:?}",
        library.features
    );
    assert!(
        library.env.iter().any(|r| r.name == "GOCACHE"
            && r.value
                .to_string_lossy()
                .starts_with(&*cache.root.to_string_lossy())),
        "{:?}",
        library.env
    );
    let out = h.run(&["explain", "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let cli: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("# "))
        .map(without_nonces)
        .collect();
    let lib: Vec<String> = library
        .args
        .iter()
        .map(|a| without_nonces(&a.to_string_lossy()))
        .collect();
    // The host's listening Unix sockets are read by each plan; another test's socket outside
    // this test's home may come or go between the two (each is masked by `/dev/null`).
    let own = |args: Vec<String>| -> Vec<String> {
        let home = home.to_string_lossy().into_owned();
        let mut out = Vec::with_capacity(args.len());
        let mut i = 0;
        while i < args.len() {
            let masks_other = args[i].ends_with("bind")
                && args.get(i + 1).is_some_and(|s| s == "/dev/null")
                && args.get(i + 2).is_some_and(|d| !d.starts_with(&home));
            if masks_other {
                i += 3;
                continue;
            }
            out.push(args[i].clone());
            i += 1;
        }
        out
    };
    let (cli, lib) = (own(cli), own(lib));
    if cli != lib {
        let first = cli.iter().zip(&lib).position(|(a, b)| a != b);
        panic!(
            "the CLI and the library build different jails; first difference at {first:?}: {:?} against {:?}",
            first.map(|i| &cli[i.saturating_sub(3)..(i + 3).min(cli.len())]),
            first.map(|i| &lib[i.saturating_sub(3)..(i + 3).min(lib.len())]),
        );
    }
    let listed = text(&out.stdout);
    assert!(
        listed.contains("# env GOCACHE: set by the plan"),
        "{listed}"
    );
    assert!(listed.contains("# features: "), "{listed}");
}

/// `script` run in `dir` (a workspace below the test's home) with `extra` options.
fn sh_in(h: &Home, dir: &Path, extra: &[&str], script: &str) -> Output {
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", script]);
    Command::new(common::cordon())
        .args(&args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", h.home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

const WRITE_HOME: &str = "mkdir -p ~/.cache/x ~/.config/x && echo y > ~/.cache/x/y \
    && echo z > ~/.config/x/z && echo \"$HOME\"";
const READ_HOME: &str = "cat ~/.cache/x/y ~/.config/x/z 2>/dev/null || echo absent";

#[test]
fn a_tool_writes_its_home_and_finds_it_next_run_in_this_workspace_only() {
    let h = Home::new();
    let home = h.home();
    let out = h.sh(&[], WRITE_HOME);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // bubblewrap: the private home is at the home's own path.
    assert_eq!(Path::new(text(&out.stdout).trim()), home);
    // Never in the real home.
    assert!(!home.join(".cache/x").exists() && !home.join(".config/x").exists());
    let key = key_of(&h.work);
    let private = h.base().join(format!("{key}.home"));
    assert_eq!(
        std::fs::read_to_string(private.join(".config/x/z")).unwrap(),
        "z\n"
    );
    // The next run of the same workspace finds it.
    let out = h.sh(&[], READ_HOME);
    assert_eq!(text(&out.stdout), "y\nz\n", "{}", text(&out.stderr));
    // Another workspace's jail does not.
    let other = h.home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let out = sh_in(&h, &other, &[], READ_HOME);
    assert_eq!(text(&out.stdout), "absent\n", "{}", text(&out.stderr));
    // `cordon cache show` counts it, `cordon cache clear` removes it.
    let show = h.run(&["cache", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let mine = v["caches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == key.as_str())
        .unwrap()
        .clone();
    assert!(mine["home_bytes"].as_u64().unwrap() > 0, "{v}");
    let clear = h.run(&["cache", "clear"]);
    assert_eq!(clear.status.code(), Some(0), "{}", text(&clear.stderr));
    assert!(!private.exists());
    let out = h.sh(&[], READ_HOME);
    assert_eq!(text(&out.stdout), "absent\n", "{}", text(&out.stderr));
}

#[test]
fn the_landlock_backend_names_the_private_home_in_home() {
    let h = Home::new();
    let home = h.home();
    let out = h.sh(&["--backend", "landlock"], WRITE_HOME);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let key = key_of(&h.work);
    let private = h.base().join(format!("{key}.home"));
    assert_eq!(Path::new(text(&out.stdout).trim()), private);
    assert!(!home.join(".cache/x").exists() && !home.join(".config/x").exists());
    let out = h.sh(&["--backend", "landlock"], READ_HOME);
    assert_eq!(text(&out.stdout), "y\nz\n", "{}", text(&out.stderr));
    // Another workspace's private home is neither readable nor writable from this jail.
    let other = h.home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let out = sh_in(
        &h,
        &other,
        &["--backend", "landlock"],
        &format!(
            "cat {0}/.cache/x/y 2>/dev/null || echo unreadable; \
             echo w > {0}/planted 2>/dev/null || echo unwritable",
            private.display()
        ),
    );
    assert_eq!(
        text(&out.stdout),
        "unreadable\nunwritable\n",
        "{}",
        text(&out.stderr)
    );
    assert!(!private.join("planted").exists());
}

#[test]
fn policy_show_and_explain_name_the_private_home() {
    let h = Home::new();
    let show = h.run(&["policy", "show", "--json"]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let key = key_of(&h.work);
    let private = h.base().join(format!("{key}.home"));
    assert_eq!(v["private_home"]["path"], private.to_str().unwrap(), "{v}");
    assert_eq!(v["private_home"]["exists"], false, "{v}");
    assert_eq!(h.sh(&[], "true").status.code(), Some(0));
    let show = h.run(&["policy", "show"]);
    let shown = text(&show.stdout);
    assert!(
        shown.contains(&format!("private home {}", private.display())),
        "{shown}"
    );
    let out = h.run(&["explain", "--", "/bin/true"]);
    let listed = text(&out.stdout);
    assert!(
        listed.contains(&format!("# private home: {}", private.display())),
        "{listed}"
    );
    assert!(
        listed
            .lines()
            .any(|l| l == format!("{}", private.display())),
        "{listed}"
    );
}

/// The workspace key as cordon computes it.
fn key_of(work: &Path) -> String {
    cordon_policy::CacheLayout::workspace_key(&std::fs::canonicalize(work).unwrap())
}

#[test]
fn a_linked_toolchain_tree_is_reached_in_every_run_of_the_persistent_home() {
    // `~/.cargo -> cargo-real`: the plan recreates the link below the home; in a private home
    // that persists, the second run finds it already there (bubblewrap 0.8 would refuse it).
    let h = Home::new();
    let real = h.home.path().join("cargo-real/bin");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("tool"), "tool\n").unwrap();
    std::os::unix::fs::symlink("cargo-real", h.home.path().join(".cargo")).unwrap();
    for run in 0..2 {
        let out = h.sh(&[], "cat ~/.cargo/bin/tool");
        assert_eq!(
            text(&out.stdout),
            "tool\n",
            "run {run}: {}",
            text(&out.stderr)
        );
    }
    // A jail that replaces the link in its home gets it back at the next run.
    let out = h.sh(&[], "rm ~/.cargo && ln -s /nowhere ~/.cargo; echo swapped");
    assert_eq!(text(&out.stdout), "swapped\n", "{}", text(&out.stderr));
    let out = h.sh(&[], "cat ~/.cargo/bin/tool");
    assert_eq!(text(&out.stdout), "tool\n", "{}", text(&out.stderr));
}
