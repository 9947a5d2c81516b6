//! The copy-on-write layer (issue #30) through the library with real bubblewrap: nothing the
//! command writes reaches the host while the jail lives and its commit applies it after, the
//! command reads its own writes (a build-like sequence, a git commit), no capability reaches
//! it, `--review` applies nothing, and `--live` writes through.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_launch::{BackendChoice, Forward, Launcher, RunRequest, RunResult, RunStatus};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost, WorkspaceMode};

struct Setup {
    home: tempfile::TempDir,
    work: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let home = common::visible_dir("cordon-layer-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("existing"), "host\n").unwrap();
        Setup { home, work }
    }

    fn plan(&self, mode: WorkspaceMode) -> Plan {
        let host = RealHost::new(Some(self.home.path().as_os_str().to_owned()));
        let policy = Policy::for_profile(Profile::Shell);
        let mut plan = Plan::resolve(&policy, &Invocation::at(&self.work), &host).unwrap();
        plan.workspace_mode = mode;
        plan
    }

    fn launcher(&self) -> Launcher {
        Launcher::linux_with(
            Launcher::default_config(
                common::stage().to_path_buf(),
                Some(self.home.path().as_os_str().to_owned()),
                None,
            ),
            BackendChoice::Bwrap,
        )
    }

    fn layers(&self) -> PathBuf {
        self.home.path().join(".cache/cordon/layers")
    }

    fn run(&self, plan: &Plan, script: &str) -> RunResult {
        let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), script.into()];
        let env: Vec<(OsString, OsString)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
        self.launcher()
            .run(&RunRequest {
                plan,
                argv: &argv,
                host_env: &env,
                forward: Forward::No,
                inherit_stdin: false,
            })
            .unwrap()
    }
}

/// Every file named `name` below `dir`.
fn find(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if e.file_name() == name {
            found.push(path.clone());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(find(&path, name));
        }
    }
    found
}

fn exited_ok(r: &RunResult) {
    assert_eq!(
        r.status,
        RunStatus::Exited,
        "refusal: {:?}\nstderr: {}",
        r.refusal,
        r.stderr.text
    );
    assert_eq!(r.exit_code, 0, "stderr: {}", r.stderr.text);
}

pub fn a_layered_write_is_absent_on_the_host_while_the_jail_lives_and_committed_after() {
    let s = Setup::new();
    // The host's way to let the command end: a directory the jail sees read-only and live.
    let signal = common::visible_dir("cordon-layer-signal-");
    let go = signal.path().join("go");
    let plan = s.plan(WorkspaceMode::Layer);
    let script = format!(
        "cat /proc/self/status > written; echo more >> existing; \
         while [ ! -e {} ]; do sleep 0.05; done",
        go.display()
    );
    let result = std::thread::scope(|scope| {
        let running = scope.spawn(|| s.run(&plan, &script));
        // The command has written once its file is in the layer's upper directory.
        let mut upper_file = Vec::new();
        for _ in 0..1200 {
            upper_file = find(&s.layers(), "written");
            if !upper_file.is_empty() || running.is_finished() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(
            upper_file.len(),
            1,
            "the command's write never reached its layer"
        );
        // The window: while the jail lives, the host's workspace is as before.
        assert!(!s.work.join("written").exists());
        assert_eq!(
            std::fs::read_to_string(s.work.join("existing")).unwrap(),
            "host\n"
        );
        std::fs::write(&go, "").unwrap();
        running.join().unwrap()
    });
    exited_ok(&result);
    assert_eq!(result.workspace, Some("layer"));
    let changes = result.changes.expect("a layered run reports its changes");
    assert!(changes.applied, "{changes:?}");
    assert_eq!(changes.roots.len(), 1);
    assert_eq!(changes.roots[0].root, s.work.canonicalize().unwrap());
    // After: the commit applied both changes, and the layer is gone.
    assert_eq!(
        std::fs::read_to_string(s.work.join("existing")).unwrap(),
        "host\nmore\n"
    );
    assert!(find(&s.layers(), "written").is_empty());
    // No capability, no-new-privileges and the filter in the payload.
    let status = std::fs::read_to_string(s.work.join("written")).unwrap();
    for line in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let value = status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{line}:")))
            .unwrap()
            .trim();
        assert_eq!(value, "0000000000000000", "{line} in the payload");
    }
    assert!(status.lines().any(|l| l == "Seccomp:\t2"), "{status}");
    assert!(status.lines().any(|l| l == "NoNewPrivs:\t1"), "{status}");
}

pub fn a_layered_command_reads_its_own_writes_and_commits_with_git() {
    let s = Setup::new();
    let plan = s.plan(WorkspaceMode::Layer);
    let result = s.run(
        &plan,
        "set -e; mkdir -p out/obj; echo built > out/obj/a.o; mv out/obj/a.o out/a.bin; \
         cat out/a.bin; rm existing; test ! -e existing; \
         git init -q . && git add -A && \
         git -c user.name=t -c user.email=t@example.com commit -qm layered && \
         git log --format=%s",
    );
    exited_ok(&result);
    assert_eq!(result.stdout.text, "built\nlayered\n");
    // Committed: the build's output and the deletion are on the host.
    assert_eq!(
        std::fs::read_to_string(s.work.join("out/a.bin")).unwrap(),
        "built\n"
    );
    assert!(!s.work.join("existing").exists());
    assert!(result.changes.expect("changes").applied);
}

pub fn a_reviewed_layer_applies_nothing_and_lists_the_change() {
    let s = Setup::new();
    let plan = s.plan(WorkspaceMode::Review);
    let result = s.run(&plan, "echo reviewed > written");
    exited_ok(&result);
    assert!(!s.work.join("written").exists());
    let changes = result.changes.expect("changes");
    assert!(!changes.applied);
    let report = changes.roots[0].report.as_ref().expect("a report");
    assert_eq!(report["added"][0]["path"], "written", "{report}");
}

pub fn a_live_run_writes_through_as_before() {
    let s = Setup::new();
    let plan = s.plan(WorkspaceMode::Live);
    let result = s.run(
        &plan,
        "echo live > written; grep -c . /proc/self/status >/dev/null",
    );
    exited_ok(&result);
    assert_eq!(result.workspace, Some("live"));
    assert!(result.changes.is_none());
    assert_eq!(
        std::fs::read_to_string(s.work.join("written")).unwrap(),
        "live\n"
    );
    assert!(find(&s.layers(), "written").is_empty());
}

pub fn an_unchanged_layer_is_not_committed() {
    let s = Setup::new();
    let plan = s.plan(WorkspaceMode::Layer);
    let result = s.run(&plan, "cat existing >/dev/null");
    exited_ok(&result);
    let changes = result.changes.expect("changes");
    assert!(changes.applied);
    let report = changes.roots[0].report.as_ref().expect("a report");
    for list in [
        "added",
        "modified",
        "deleted",
        "refused",
        "held",
        "conflicts",
    ] {
        assert_eq!(report[list], serde_json::json!([]), "{list}: {report}");
    }
    // No commit ran: no run was recorded in the workspace's state, and the layer is left as
    // the next run's spare, alone beside the workspace's record (`layer_prune.rs`).
    let state = std::fs::read_dir(s.layers())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        // Not an overlay work directory a spare gave up (`.gone-work-*`, for the next prune).
        .find(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .expect("the workspace's state directory");
    assert!(!state.join("runs").exists(), "{}", state.display());
    let left: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "workspace")
        .collect();
    assert!(left.len() == 1 && left[0].starts_with("spare-"), "{left:?}");
}

/// A layered session builds its next jail ahead, and that jail takes the layer when its command
/// comes: what the host wrote while the jail waited is seen by the command, a file the host
/// changed before the command and the command changes after is no conflict (the run starts
/// with the command), and the command's writes reach the host only when it ends.
pub fn a_layered_session_builds_ahead_and_takes_the_layer_when_the_command_comes() {
    let s = Setup::new();
    let plan = s.plan(WorkspaceMode::Layer);
    let launcher = s.launcher();
    let prep = launcher.prepare(&plan).unwrap();
    let env: Vec<(OsString, OsString)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let run = |script: &str| {
        let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), script.into()];
        launcher
            .run_prepared(
                &RunRequest {
                    plan: &plan,
                    argv: &argv,
                    host_env: &env,
                    forward: Forward::No,
                    inherit_stdin: false,
                },
                &prep,
            )
            .unwrap()
    };
    let first = run("echo one > first");
    exited_ok(&first);
    assert!(!first.built_ahead, "{first:?}");
    assert_eq!(
        std::fs::read_to_string(s.work.join("first")).unwrap(),
        "one\n"
    );
    assert!(prep.wait_for_waiting_jail(std::time::Duration::from_secs(10)));
    // While the next jail waits, the host writes a new file and changes an existing one.
    std::fs::write(s.work.join("from-host"), "host wrote this\n").unwrap();
    std::fs::write(s.work.join("existing"), "host changed it\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = run("cat from-host existing; echo jail >> existing; echo two > second");
    exited_ok(&second);
    assert!(second.built_ahead, "{second:?}");
    assert_eq!(second.stdout.text, "host wrote this\nhost changed it\n");
    assert_eq!(
        std::fs::read_to_string(s.work.join("existing")).unwrap(),
        "host changed it\njail\n",
        "{:?}",
        second.changes
    );
    assert_eq!(
        std::fs::read_to_string(s.work.join("second")).unwrap(),
        "two\n"
    );
    let changes = serde_json::to_value(&second.changes).unwrap();
    assert_eq!(
        changes["roots"][0]["report"]["conflicts"],
        serde_json::json!([]),
        "{changes}"
    );
    drop(prep);
}

/// A workspace whose path is not UTF-8, and a link whose target is not: the run's record holds
/// them as bytes, and the commit applies (it failed, keeping everything, when the record could
/// only hold text).
pub fn a_workspace_whose_path_is_not_utf8_is_committed() {
    use std::os::unix::ffi::OsStringExt;
    let s = Setup::new();
    let odd = s
        .home
        .path()
        .join(OsString::from_vec(b"proj-\xff\xfe".to_vec()));
    std::fs::create_dir_all(&odd).unwrap();
    let host = RealHost::new(Some(s.home.path().as_os_str().to_owned()));
    let mut plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(&odd),
        &host,
    )
    .unwrap();
    plan.workspace_mode = WorkspaceMode::Layer;
    let r = s.run(
        &plan,
        "echo made > made; ln -s \"$(printf 'to-\\377')\" link",
    );
    exited_ok(&r);
    assert_eq!(std::fs::read_to_string(odd.join("made")).unwrap(), "made\n");
    assert_eq!(
        std::fs::read_link(odd.join("link")).unwrap(),
        PathBuf::from(OsString::from_vec(b"to-\xff".to_vec()))
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["changes"]["applied"], true, "{json}");
}
