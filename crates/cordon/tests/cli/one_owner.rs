//! One owner for the jail: the bubblewrap argument list a downstream project builds from the
//! public crates alone (`cordon-policy`'s guard, `cordon-bwrap`, `cordon-env`) is the list
//! `Launcher::run` hands bubblewrap, and `cordon explain` prints it, for a repository, a linked
//! worktree and missing protected directories. What bubblewrap received is recorded by a
//! root-owned wrapper that copies its `--args` descriptor and then runs the real bubblewrap.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cordon_bwrap::{Descriptors, Features, Request};
use cordon_launch::{Forward, Launcher, RunRequest, RunStatus};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

const BWRAP: &str = "/usr/bin/bwrap";

/// A directory with a bubblewrap that records what it is given: trusted only when root owns it
/// and every directory above it, so it lives under `/var/lib` and the test must run as root.
struct Recorder {
    dir: PathBuf,
}

impl Recorder {
    fn new() -> Recorder {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test needs root: the recording bubblewrap must be root-owned to be trusted \
             (CI runs the tests as root)"
        );
        assert!(
            Path::new(BWRAP).exists(),
            "{BWRAP} is missing: install bubblewrap; this test does not skip"
        );
        let dir = PathBuf::from(format!(
            "/var/lib/cordon-test-record-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("calls")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = format!(
            "#!/bin/sh\n\
             next=; fd=\n\
             for a in \"$@\"; do [ \"$next\" = 1 ] && {{ fd=$a; break; }}; [ \"$a\" = --args ] && next=1; done\n\
             if [ -n \"$fd\" ]; then\n\
               out={calls}/$$\n\
               cat /proc/self/fd/$fd > $out.args\n\
               printf '%s\\0' \"$@\" > $out.line\n\
             fi\n\
             exec {BWRAP} \"$@\"\n",
            calls = dir.join("calls").display()
        );
        let wrapper = dir.join("bwrap");
        std::fs::write(&wrapper, script).unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Recorder { dir }
    }

    fn wrapper(&self) -> String {
        self.dir.join("bwrap").display().to_string()
    }

    /// The options (the `--args` data) of the one recorded jail that ran a command (not the
    /// probe), and forgets every recorded call.
    fn take_run(&self) -> Vec<OsString> {
        let calls = self.dir.join("calls");
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(&calls).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "line") {
                let line = std::fs::read(&path).unwrap();
                if line.windows(21).any(|w| w == b"__cordon_stage\0check\0") {
                    runs.push(std::fs::read(path.with_extension("args")).unwrap());
                }
            }
        }
        for entry in std::fs::read_dir(&calls).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        assert_eq!(runs.len(), 1, "one run of a command expected");
        split_nul(&runs[0])
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn split_nul(bytes: &[u8]) -> Vec<OsString> {
    bytes
        .strip_suffix(&[0])
        .unwrap_or(bytes)
        .split(|b| *b == 0)
        .map(|a| std::ffi::OsStr::from_bytes(a).to_owned())
        .collect()
}

/// Descriptor numbers depend on what else is open: the one after `--seccomp` is left out.
/// Every git configuration broker's shadow (`.git/cordon-config-<nonce>`) spelled the same:
/// a run and `explain` each draw their own nonce.
fn shadows_named_alike(options: Vec<OsString>) -> Vec<OsString> {
    options
        .into_iter()
        .map(|o| {
            let s = o.to_string_lossy().into_owned();
            match s.find("cordon-config-") {
                Some(i) => {
                    let start = i + "cordon-config-".len();
                    let end = s[start..]
                        .find(|c: char| !c.is_ascii_hexdigit())
                        .map_or(s.len(), |e| start + e);
                    format!("{}N{}", &s[..start], &s[end..]).into()
                }
                None => o,
            }
        })
        .collect()
}

fn without_descriptors(options: &[OsString]) -> Vec<OsString> {
    let mut out = options.to_vec();
    for i in 1..out.len() {
        if out[i - 1] == "--seccomp" {
            out[i] = "<fd>".into();
        }
    }
    out
}

fn features() -> Features {
    let ask = |flag: &str| {
        let o = Command::new(BWRAP).arg(flag).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    Features::parse(&ask("--version"), &ask("--help"))
}

/// A home with a repository (`proj`: hooks and config, no `commondir`, none of the protected
/// editor and agent directories) and a linked worktree of it (`wt`).
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let home = tempfile::Builder::new()
        .prefix("cordon-one-owner-")
        .tempdir_in("/var/lib")
        .unwrap();
    let base = std::fs::canonicalize(home.path()).unwrap();
    let proj = base.join("proj");
    std::fs::create_dir_all(proj.join(".git/hooks")).unwrap();
    std::fs::write(proj.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let admin = proj.join(".git/worktrees/wt");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    let wt = base.join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(admin.join("gitdir"), format!("{}/.git\n", wt.display())).unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    (home, proj, wt)
}

fn host_env(home: &Path) -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), home.as_os_str().to_owned()),
    ]
}

#[test]
fn the_public_crates_build_the_list_run_hands_bubblewrap_and_explain_prints_it() {
    let recorder = Recorder::new();
    let (home, proj, wt) = layout();
    let home_dir = std::fs::canonicalize(home.path()).unwrap();
    let stage = std::fs::canonicalize(common::cordon()).unwrap();
    let env = host_env(&home_dir);
    let host = RealHost::new(Some(home_dir.as_os_str().to_owned()));
    let features = features();
    let payload: Vec<OsString> = vec!["/bin/true".into()];

    for work in [&proj, &wt] {
        // The host's listening sockets, as the launcher reads them for its plan (a socket that
        // starts or stops listening between the reads would differ: none does in this test).
        let mut plan = Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(work).with_host_sockets(cordon_launch::listening_unix_sockets()),
            &host,
        )
        .unwrap();
        // A downstream project that builds bubblewrap's list from the public crates runs live:
        // the copy-on-write layer is made by the launcher's pipeline (its stage mounts it).
        plan.workspace_mode = cordon_policy::WorkspaceMode::Live;

        // A downstream project, with the public crates alone.
        let guarded = plan.guard(&host);
        let made: Vec<&Path> = guarded
            .placeholders()
            .iter()
            .filter(|p| p.created_for_the_run)
            .map(|p| p.path.as_path())
            .collect();
        assert!(
            work != &proj || made.iter().any(|p| p.ends_with(".git/commondir")),
            "a missing git redirection gets a placeholder: {made:?}"
        );
        assert!(
            !made.iter().any(|p| p.ends_with(".vscode")),
            "a missing auto-run directory is swept after the run, not made: {made:?}"
        );
        let child_env = cordon_env::ChildEnv::build(env.iter().cloned(), &plan.env).unwrap();
        let built = cordon_bwrap::build(&Request {
            plan: &guarded,
            brokers: &[],
            features: &features,
            env: &child_env.vars,
            fds: Descriptors { seccomp: 3 },
            stage: Some(&stage),
            argv: &payload,
        })
        .unwrap();
        built.startable().unwrap();
        let downstream = without_descriptors(&built.options());
        let rules = built.render();
        if work == &proj {
            assert!(rules.contains(&format!("--bind {0}/.git {0}/.git", proj.display())));
            assert!(rules.contains(&format!(
                "--ro-bind {0}/.git/commondir {0}/.git/commondir",
                proj.display()
            )));
        } else {
            assert!(rules.contains(&format!("--ro-bind {0}/.git {0}/.git", wt.display())));
        }
        assert!(rules.contains("--ro-bind /proc/sys /proc/sys"));

        // What the launcher hands bubblewrap for the same plan.
        let mut config =
            Launcher::default_config(stage.clone(), Some(home_dir.as_os_str().to_owned()), None);
        config.candidates = vec![recorder.wrapper()];
        config.cache_file = None;
        let launcher = Launcher::linux_with(config, cordon_launch::BackendChoice::Bwrap);
        let result = launcher
            .run(&RunRequest {
                plan: &plan,
                argv: &payload,
                host_env: &env,
                forward: Forward::No,
                inherit_stdin: false,
            })
            .unwrap();
        assert_eq!(result.status, RunStatus::Exited, "{result:?}");
        assert_eq!(result.exit_code, 0, "{result:?}");
        let ran = without_descriptors(&recorder.take_run());
        // The git configuration broker's shadow is named at run time (gitbroker.rs): the one
        // the launcher made, read back from what it ran, is added the way the launcher adds it.
        let shadow = ran.windows(3).find_map(|w| {
            let pointer = std::path::Path::new(&w[1]);
            (w[0] == "--ro-bind" && pointer.ends_with(".commondir"))
                .then(|| pointer.parent().unwrap().to_path_buf())
        });
        let downstream = match shadow {
            Some(shadow) => {
                let git_dir = shadow.parent().unwrap().to_path_buf();
                let bound: &[&str] = if git_dir.join("objects").is_dir() {
                    &["objects"]
                } else {
                    &[]
                };
                let broker =
                    cordon_policy::ConfigBroker::new(&guarded, &git_dir, shadow, bound).unwrap();
                let built = cordon_bwrap::build(&Request {
                    plan: &guarded,
                    brokers: &[broker],
                    features: &features,
                    env: &child_env.vars,
                    fds: Descriptors { seccomp: 3 },
                    stage: Some(&stage),
                    argv: &payload,
                })
                .unwrap();
                without_descriptors(&built.options())
            }
            None => downstream,
        };
        let (downstream, ran) = (shadows_named_alike(downstream), shadows_named_alike(ran));
        assert_eq!(
            downstream, ran,
            "the public crates' list differs from what the launcher ran"
        );
        for p in &made {
            assert!(
                !p.exists(),
                "a placeholder was left behind: {}",
                p.display()
            );
        }

        // And what `cordon explain` prints for the same plan: the placeholders marked, then
        // bubblewrap's path, the same options, `--` and the stage's command.
        let out = Command::new(common::cordon())
            .args(["explain", "--backend", "bwrap", "--live", "--"])
            .args(&payload)
            .env_clear()
            .envs(env.iter().cloned())
            .current_dir(work)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<OsString> = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| std::ffi::OsStr::from_bytes(l).to_owned())
            .collect();
        for p in &made {
            let marked = format!("# created for the run: {}", p.display());
            assert!(
                lines
                    .iter()
                    .any(|l| l.to_string_lossy().starts_with(&marked)),
                "explain does not mark {}: {lines:?}",
                p.display()
            );
        }
        let listed: Vec<OsString> = lines
            .into_iter()
            .filter(|l| !l.as_bytes().starts_with(b"# "))
            .collect();
        assert_eq!(listed[0], BWRAP);
        let end = listed.iter().position(|l| l == "--").unwrap();
        assert_eq!(
            shadows_named_alike(without_descriptors(&listed[1..end])),
            ran,
            "cordon explain shows other options than the run handed bubblewrap"
        );
        assert_eq!(listed[end + 1], cordon_bwrap::STAGE_PATH);
        assert_eq!(listed.last().unwrap(), "/bin/true");
    }
}
