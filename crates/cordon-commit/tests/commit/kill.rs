//! A commit SIGKILLed at every point, then recovered: the host's tree is as before the command
//! or as after the complete commit, never half.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cordon_commit::{CommitOptions, Mode, Point, Recovered, commit_root_with, recover};

use crate::support::{Fixture, listing};

const HOST: &str = "echo a > a; echo b > b; mkdir -p d/e; echo x > d/e/x; echo y > d/y; \
                    mkdir keep; echo k > keep/k; echo f > f; mkdir r; echo r > r/in";
/// Writes, deletes, renames (a file and a directory), a type change, and plants.
const RUN: &str = "echo A >> a; rm b; rm -r d; mv f f2; mv r r2; echo n > keep/new; \
                   mkdir -p new/deep; echo z > new/deep/z; ln -s a lnk; rm keep/k; mkdir keep/k; \
                   echo in > keep/k/in; mkfifo fifo; chmod 4755 a";

const AT: &str = "CORDON_COMMIT_KILL_AT";
/// Set: the child recovers (killed at the point `AT` names) instead of committing.
const RECOVERING: &str = "CORDON_COMMIT_KILL_RECOVERING";
const WS: &str = "CORDON_COMMIT_KILL_DIR";

/// Makes the workspace and its layer; returns the fixture and the tree before the commit.
fn scenario() -> (Fixture, BTreeMap<PathBuf, String>) {
    let f = Fixture::new(HOST);
    f.jail(RUN);
    let before = listing(&f.ws());
    (f, before)
}

fn commit(base: &Path, hook: &mut dyn FnMut(Point)) {
    let ws = base.join("ws");
    let _ = commit_root_with(
        &ws,
        &base.join("layer/upper"),
        &base.join("state"),
        &base.join("layer/started"),
        Mode::Apply,
        CommitOptions {
            hook: Some(hook),
            ..CommitOptions::default()
        },
    )
    .unwrap();
}

/// The child: commits the fixture named by the environment, and kills itself with SIGKILL at
/// the point numbered there. Run only by `killed_at_every_point_the_tree_is_before_or_after`.
#[test]
#[ignore = "the child process of the kill test"]
fn kill_child() {
    let at: usize = std::env::var(AT).unwrap().parse().unwrap();
    let base = PathBuf::from(std::env::var_os(WS).unwrap());
    let mut n = 0;
    let mut hook = |p: Point| {
        if n == at {
            std::fs::write(base.join("killed-at"), format!("{p:?}")).unwrap();
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL)
                .unwrap();
        }
        n += 1;
    };
    if std::env::var_os(RECOVERING).is_some() {
        cordon_commit::recover_with(&base.join("state"), &mut hook).unwrap();
    } else {
        commit(&base, &mut hook);
    }
    panic!("it ended before point {at}");
}

/// Runs the child over the fixture at `base`, killed at point `at`; `false`: the child ended
/// before that point (only a recovery may).
fn killed_child(base: &Path, at: usize, recovering: bool) -> bool {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "kill::kill_child", "--ignored", "--nocapture"])
        .env(AT, at.to_string())
        .env(WS, base);
    if recovering {
        cmd.env(RECOVERING, "1");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if recovering && out.status.code() == Some(101) && stderr.contains("it ended before point") {
        return false;
    }
    assert_eq!(
        out.status.signal(),
        Some(9),
        "the child was not killed at point {at} (recovering: {recovering}): {}",
        stderr
    );
    true
}

#[test]
fn a_recovery_killed_at_every_point_is_finished_by_the_next() {
    let (full, _) = scenario();
    commit(full.path(), &mut |_| {});
    let after = listing(&full.ws());
    // Kill the commit after two of its operations (the journal is sealed), then kill each
    // recovery at its every point; the last one finishes.
    let mut commit_points = Vec::new();
    let (probe, _) = scenario();
    commit(probe.path(), &mut |p| commit_points.push(p));
    let at = commit_points
        .iter()
        .position(|p| *p == Point::Applied(2))
        .expect("the commit has three operations");
    let (f, _) = scenario();
    assert!(killed_child(f.path(), at, false));
    // Each recovery is killed at its first point, after one more operation (or the record).
    let mut killed = 0;
    loop {
        assert!(
            killed_child(f.path(), 0, true),
            "a recovery had nothing to do"
        );
        killed += 1;
        let point = std::fs::read_to_string(f.path().join("killed-at")).unwrap();
        if point == "Finalized" {
            break;
        }
        assert!(point.starts_with("Applied"), "{point}");
        assert!(killed < 1000, "recovery makes no progress");
    }
    assert!(killed > 3, "{killed} recoveries killed");
    // Killed after its record, before the journal went: the next one finishes.
    let recovered = recover(&f.state()).unwrap();
    assert!(
        matches!(recovered.as_slice(), [Recovered::RolledForward { .. }]),
        "{recovered:?}"
    );
    assert_eq!(listing(&f.ws()), after);
    assert_eq!(recover(&f.state()).unwrap(), vec![]);
}

#[test]
fn killed_at_every_point_the_tree_is_before_or_after() {
    // The whole commit, in this process: its points and the tree after it.
    let (full, before) = scenario();
    let mut points = 0;
    commit(full.path(), &mut |_| points += 1);
    let after = listing(&full.ws());
    assert_ne!(before, after);
    assert!(points > 10, "{points} points");
    let (mut saw_before, mut saw_after) = (0, 0);
    for at in 0..points {
        let (f, start) = scenario();
        assert_eq!(start, before);
        killed_child(f.path(), at, false);
        let recovered = recover(&f.state()).unwrap();
        let now = listing(&f.ws());
        if now == before {
            saw_before += 1;
            assert!(
                !recovered
                    .iter()
                    .any(|r| matches!(r, Recovered::RolledForward { .. })),
                "{recovered:?}"
            );
        } else {
            assert_eq!(
                now, after,
                "killed at point {at}, recovered {recovered:?}: half a commit"
            );
            saw_after += 1;
        }
        // A second recovery has nothing left to do.
        assert_eq!(recover(&f.state()).unwrap(), vec![], "at point {at}");
    }
    assert!(
        saw_before > 0 && saw_after > 0,
        "{saw_before} before, {saw_after} after"
    );
}
