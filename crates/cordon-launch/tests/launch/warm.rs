//! The jail a prepared session builds ahead of its next command (`src/session/warm.rs`), through
//! the library with the real stage (this test binary): each command still gets a jail of its
//! own that holds, its clock starts when it is handed the command, a request that does not fit
//! runs in a fresh jail, and nothing is left once the session ends.
//!
//! One test function on purpose: it counts this process's `bwrap` children, which another test
//! running at the same time would disturb (the runner runs one test at a time, too).

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_launch::Forward;
use cordon_launch::{BackendChoice, LaunchError, Launcher, RunRequest, RunResult, RunStatus};
use cordon_policy::{Invocation, Plan, Policy, PolicyBuilder, Profile, RealHost, Source};

fn sh(script: &str) -> Vec<OsString> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}

fn run(
    launcher: &Launcher,
    plan: &Plan,
    prep: &cordon_launch::Preparation,
    argv: &[OsString],
    env: &[(OsString, OsString)],
) -> RunResult {
    launcher
        .run_prepared(
            &RunRequest {
                plan,
                argv,
                host_env: env,
                forward: Forward::No,
                inherit_stdin: false,
            },
            prep,
        )
        .unwrap()
}

/// This process's children that are bubblewrap (a waiting jail's first process).
fn waiting_jails() -> usize {
    let me = std::process::id().to_string();
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((comm_part, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).unwrap_or("");
        if ppid == me && comm_part.ends_with("(bwrap") {
            n += 1;
        }
    }
    n
}

/// Everything under `dir`, as sorted relative paths.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn stdout(r: &RunResult) -> &str {
    assert_eq!(r.status, RunStatus::Exited, "{r:?}");
    r.stdout.text.as_str()
}

pub fn a_prepared_session_builds_each_next_jail_ahead_and_each_holds() {
    // A home the jail sees as the host's (never under its private /tmp or /var/tmp, wherever
    // the checkout is), with a credential to mask.
    let base = common::visible_dir("cordon-test-warm-");
    let home = base.path().join("home");
    let work = home.join("proj");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "warm-test-secret\n").unwrap();
    let mut launcher_config = Launcher::default_config(
        common::stage().to_path_buf(),
        Some(home.as_os_str().to_owned()),
        None,
    );
    launcher_config.candidates = cordon_launch::TRUSTED_BWRAP_PATHS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let launcher = Launcher::linux_with(launcher_config, BackendChoice::Bwrap);
    let host = RealHost::new(Some(home.as_os_str().to_owned()));
    let mut policy = PolicyBuilder::new(Profile::Shell);
    let limits = cordon_policy::Limits {
        timeout_secs: Some(2),
        ..*Policy::for_profile(Profile::Shell).limits()
    };
    policy.set_limits(limits, "timeout_secs", Source::Caller);
    let mut plan = Plan::resolve(&policy.build(), &Invocation::at(&work), &host).unwrap();
    // Live mode here (a layered session builds ahead too: layer.rs of these tests).
    plan.workspace_mode = cordon_policy::WorkspaceMode::Live;
    let before = listing(&work);
    let env = vec![(OsString::from("LANG"), OsString::from("C.UTF-8"))];

    let prep = launcher.prepare(&plan).unwrap();
    assert_eq!(waiting_jails(), 0);

    // The first command runs in a jail built for it; the next one is built before returning.
    let probe = "echo $LANG; echo here > /tmp/mine; cat $HOME/.ssh/id_ed25519 2>/dev/null; \
                 echo x > $HOME/planted 2>/dev/null && echo planted; ls /tmp";
    let first = run(&launcher, &plan, &prep, &sh(probe), &env);
    assert_eq!(stdout(&first), "C.UTF-8\nmine\n", "{first:?}");
    assert!(!first.built_ahead, "{first:?}");
    assert_eq!(waiting_jails(), 1, "no jail was built ahead");
    assert!(prep.wait_for_waiting_jail(std::time::Duration::from_secs(10)));

    // The next commands are handed to jails built ahead: each holds (the credential reads
    // empty, nothing lands outside the workspace) and each is its own (its /tmp starts empty).
    for _ in 0..3 {
        let r = run(&launcher, &plan, &prep, &sh(probe), &env);
        assert_eq!(stdout(&r), "C.UTF-8\nmine\n", "{r:?}");
        assert_eq!(r.backend.as_deref(), Some("bubblewrap"), "{r:?}");
        assert!(r.built_ahead, "{r:?}");
        assert!(
            r.landlock.as_deref().unwrap_or("").starts_with("ABI"),
            "{r:?}"
        );
        assert_eq!(waiting_jails(), 1);
    }
    assert!(!home.join("planted").exists());

    // Exit codes, stderr and arguments with spaces and newlines arrive intact.
    let r = run(
        &launcher,
        &plan,
        &prep,
        &[
            "/bin/sh".into(),
            "-c".into(),
            "printf '%s|' \"$@\"; echo oops >&2; exit 7".into(),
            "sh".into(),
            "a b".into(),
            "".into(),
            "line\nbreak".into(),
        ],
        &env,
    );
    assert_eq!(r.status, RunStatus::Exited, "{r:?}");
    assert_eq!(r.exit_code, 7);
    assert_eq!(r.stdout.text, "a b||line\nbreak|");
    assert_eq!(r.stderr.text, "oops\n");

    // A jail built ahead by a harness's worker thread outlives that thread (a child's
    // parent-death signal follows the thread that forked it: cordon forks waiting jails from a
    // thread of its own), and takes the next command from another thread.
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| run(&launcher, &plan, &prep, &sh("echo worker"), &env));
        assert_eq!(stdout(&worker.join().unwrap()), "worker\n");
    });
    assert!(prep.wait_for_waiting_jail(std::time::Duration::from_secs(10)));
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(waiting_jails(), 1, "the waiting jail died with its thread");
    let r = run(&launcher, &plan, &prep, &sh("echo main"), &env);
    assert_eq!(stdout(&r), "main\n");

    // The clock starts when the jail is handed its command: a jail that waited longer than
    // the 2 s timeout still runs its command in full...
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let r = run(&launcher, &plan, &prep, &sh("echo done"), &env);
    assert_eq!(stdout(&r), "done\n", "{r:?}");
    assert!(r.duration_ms < 2000.0, "{r:?}");
    // ... and the timeout still holds for it.
    let r = run(&launcher, &plan, &prep, &sh("sleep 5; echo late"), &env);
    assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
    assert_eq!(r.stdout.text, "");

    // Another host environment does not fit the waiting jail: it is discarded, the command
    // runs in a fresh jail with its own environment.
    let other = vec![(OsString::from("LANG"), OsString::from("en_US.UTF-8"))];
    let r = run(&launcher, &plan, &prep, &sh("echo $LANG"), &other);
    assert_eq!(stdout(&r), "en_US.UTF-8\n");
    assert_eq!(waiting_jails(), 1);

    // An argument no program can receive is an error, and nothing is left of the jail.
    let err = launcher
        .run_prepared(
            &RunRequest {
                plan: &plan,
                argv: &["/bin/echo".into(), OsString::from("a\0b")],
                host_env: &other,
                forward: Forward::No,
                inherit_stdin: false,
            },
            &prep,
        )
        .unwrap_err();
    assert!(
        matches!(err, LaunchError::NulInArgument { index: 1 }),
        "{err:?}"
    );

    // Ending the session ends its waiting jail, and leaves the workspace as it was.
    assert_eq!(waiting_jails(), 1);
    drop(prep);
    assert_eq!(waiting_jails(), 0);
    assert_eq!(listing(&work), before);

    // A session whose waiting jail is discarded explicitly runs its next command cold.
    let prep = launcher.prepare(&plan).unwrap();
    let r = run(&launcher, &plan, &prep, &sh("echo one"), &env);
    assert_eq!(stdout(&r), "one\n");
    prep.discard_waiting_jail();
    assert_eq!(waiting_jails(), 0);
    let r = run(&launcher, &plan, &prep, &sh("echo two"), &env);
    assert_eq!(stdout(&r), "two\n");
    drop(prep);
    assert_eq!(waiting_jails(), 0);
    assert_eq!(listing(&work), before);

    // A waiting jail protects what its build saw. When the host changes that in between (here a
    // repository appears, as with `git init`), the jail is not used: the command runs in a jail
    // built now, which protects the new repository's `commondir` (it would redirect git to
    // another config and hooks). A stale jail would let this write through.
    let prep = launcher.prepare(&plan).unwrap();
    let r = run(&launcher, &plan, &prep, &sh("echo built"), &env);
    assert_eq!(stdout(&r), "built\n");
    assert!(prep.wait_for_waiting_jail(std::time::Duration::from_secs(10)));
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(work.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut with_git = before.clone();
    with_git.extend([".git", ".git/HEAD", ".git/config", ".git/hooks"].map(PathBuf::from));
    with_git.sort();
    let r = run(
        &launcher,
        &plan,
        &prep,
        &sh(
            "(printf '/elsewhere\\n' > .git/commondir) 2>/dev/null && echo redirected || echo refused",
        ),
        &env,
    );
    assert_eq!(stdout(&r), "refused\n", "{r:?}");
    drop(prep);
    assert_eq!(waiting_jails(), 0);
    assert_eq!(listing(&work), with_git, "a placeholder was left behind");
}
