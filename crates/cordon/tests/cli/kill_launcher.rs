//! `cordon run` killed with SIGKILL while its payload runs: nothing of the jail may outlive it
//! by more than a second, and the workspace must end up exactly as it was (the placeholders the
//! run created for `.vscode`, `.claude`, `.git/commondir`, … included). Told to stop with
//! SIGTERM, it ends its jail and exits 143, under bubblewrap and under the Landlock backend, and
//! so does `cordon serve`.
//! Real kernel, real bubblewrap; these tests fail (never skip) when bubblewrap is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// How long a killed jail may take to disappear, and its run's leftovers to be removed.
const GRACE: Duration = Duration::from_secs(1);

/// Only a guard against a launcher that never starts the payload.
const READY_DEADLINE: Duration = Duration::from_secs(60);

struct Setup {
    home: tempfile::TempDir,
    work: PathBuf,
    /// Digits unique to this test: in the payload's argv and in its `sleep`'s.
    marker: String,
}

impl Setup {
    /// A home with a credential to mask and a git workspace without `.vscode`, `.claude` or
    /// `.git/commondir`, so the run needs placeholders.
    fn new() -> Setup {
        common::require_bwrap();
        let home = common::visible_dir("cordon-test-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(work.join("README"), "a workspace\n").unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".ssh/id_test"), "SENTINEL-KEY").unwrap();
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let marker = format!("{}{nanos:09}", std::process::id());
        Setup { home, work, marker }
    }

    /// Starts `cordon run` with a payload that prints `ready` then sleeps, and waits for `ready`.
    fn start_payload(&self) -> Child {
        self.start(&[], &format!("echo ready; sleep 60.0{}; :", self.marker))
    }

    /// Starts `cordon run OPTIONS -- /bin/sh -c SCRIPT killtest-<marker>`, and waits for the
    /// script's first line, `ready`.
    fn start(&self, options: &[&str], script: &str) -> Child {
        let mut child = Command::new(common::cordon())
            .arg("run")
            .args(options)
            .args(["--", "/bin/sh", "-c", script])
            .arg(format!("killtest-{}", self.marker))
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let ready = lines.next().and_then(Result::ok);
            let _ = tx.send(ready);
            for _ in lines {} // keep draining until the CLI is gone
        });
        match rx.recv_timeout(READY_DEADLINE) {
            Ok(Some(line)) if line == "ready" => child,
            other => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "the payload never said ready ({other:?}); cordon: {}, stderr: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

/// Processes whose command line contains `needle`, as `[pid] cmdline`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(bytes) = std::fs::read(e.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
            if text.contains(needle) {
                out.push(format!("[{pid}] {}", text.trim_end()));
            }
        }
    }
    out
}

/// Every entry below `root`: type, mode, owner, size of files, extended attribute names.
fn listing(root: &Path) -> BTreeMap<PathBuf, String> {
    // Entries may vanish while they are listed (the reaper at work): they are skipped.
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(m) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mut xattrs = vec![0u8; 1024];
            let n = rustix::fs::llistxattr(&path, &mut xattrs[..]).unwrap_or(0);
            let names = String::from_utf8_lossy(&xattrs[..n]).replace('\0', " ");
            let kind = if m.is_dir() {
                "dir".to_owned()
            } else if m.file_type().is_symlink() {
                // A link of the git broker's shadow may go with the reaper's removal of it.
                let Ok(target) = std::fs::read_link(&path) else {
                    continue;
                };
                format!("symlink -> {}", target.display())
            } else {
                format!("file {} B", m.len())
            };
            out.insert(
                path.strip_prefix(root).unwrap().to_path_buf(),
                format!(
                    "{kind} {:o} uid {} {}",
                    m.permissions().mode() & 0o7777,
                    m.uid(),
                    names.trim()
                ),
            );
            if m.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Polls `cond` until it holds or `limit` passes since `since`.
fn within(since: Instant, limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    loop {
        if cond() {
            return true;
        }
        if since.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The children of `pid` named `cordon-reaper` (`/proc/<pid>/comm`).
fn reapers_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let parent = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if comm.trim_end() == "cordon-reaper" && parent == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn kill(mut child: Child) -> Instant {
    child.kill().unwrap();
    let killed = Instant::now();
    child.wait().unwrap();
    killed
}

#[test]
fn a_killed_launcher_leaves_no_process_of_its_jail_alive() {
    let s = Setup::new();
    let child = s.start_payload();
    let launcher = child.id();
    let before = processes_with(&s.marker);
    assert!(
        before
            .iter()
            .any(|p| p.contains(&format!("sleep 60.0{}", s.marker))),
        "the payload's sleep is not visible before the kill, so this test would prove nothing: {before:?}"
    );
    let killed = kill(child);
    let gone = within(killed, GRACE, || processes_with(&s.marker).is_empty());
    let left = processes_with(&s.marker);
    assert!(
        gone,
        "{} ms after cordon (pid {launcher}) was SIGKILLed, these processes of its jail are alive: {left:?}",
        killed.elapsed().as_millis()
    );
}

/// The default (layered) run makes nothing in the workspace while its jail lives: no
/// placeholder, no `.git/commondir` (the live run of the next test makes one), and the host's
/// tree is as before when its launcher is killed.
#[test]
fn a_layered_run_makes_nothing_in_the_workspace_while_it_runs() {
    let s = Setup::new();
    let before = listing(&s.work);
    let child = s.start(
        &["--layer"],
        &format!(
            "echo planted > .envrc; echo ready; sleep 60.0{}; :",
            s.marker
        ),
    );
    let during = listing(&s.work);
    let killed = kill(child);
    assert_eq!(
        during, before,
        "the layered run changed the host's tree while it ran"
    );
    let workspace = format!("{}/", s.work.display());
    assert!(within(killed, GRACE, || processes_with(&workspace).is_empty()));
    assert_eq!(listing(&s.work), before);
}

#[test]
fn a_killed_launcher_leaves_the_workspace_as_it_was() {
    let s = Setup::new();
    let before = listing(&s.work);
    // Live: a layered root gets no placeholders (`kill_layer.rs` kills layered runs).
    let child = s.start(
        &["--live"],
        &format!("echo ready; sleep 60.0{}; :", s.marker),
    );
    let launcher = child.id();
    let during = listing(&s.work);
    assert!(
        during.contains_key(Path::new(".git/commondir")),
        "the run made no placeholders, so this test would prove nothing: {during:#?}"
    );
    // The CLI's session reaper is a copy of it (forked, not a program started) under a name
    // of its own; it must do its work and go.
    let reapers = reapers_of(launcher);
    assert_eq!(
        reapers.len(),
        1,
        "cordon (pid {launcher}) should have one child named cordon-reaper: {reapers:?}"
    );
    let cmdline = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert_eq!(
        cmdline(reapers[0]),
        cmdline(launcher),
        "the reaper was started as a program, not forked (was cordon still single-threaded?)"
    );
    let killed = kill(child);
    let workspace = format!("{}/", s.work.display());
    let restored = within(killed, GRACE, || {
        listing(&s.work) == before && processes_with(&workspace).is_empty()
    });
    let after = listing(&s.work);
    let added: Vec<_> = after
        .iter()
        .filter(|(p, _)| !before.contains_key(*p))
        .collect();
    let removed: Vec<_> = before
        .iter()
        .filter(|(p, _)| !after.contains_key(*p))
        .collect();
    let changed: Vec<_> = after
        .iter()
        .filter(|(p, e)| before.get(*p).is_some_and(|b| b != *e))
        .collect();
    // Ended: gone, or a zombie waiting for the host's init (its parent, the launcher, is dead).
    let reaper = format!("/proc/{}/stat", reapers[0]);
    let ended = || {
        std::fs::read_to_string(&reaper).map_or(true, |stat| {
            stat.rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                == Some("Z")
        })
    };
    assert!(
        within(killed, GRACE, ended),
        "the reaper {reaper} of cordon (pid {launcher}) outlived it by {} ms",
        killed.elapsed().as_millis()
    );
    assert!(
        restored,
        "{} ms after cordon (pid {launcher}) was SIGKILLed the workspace is not as it was: \
         added {added:#?}, removed {removed:#?}, changed {changed:#?}; still working on it: {:?}",
        killed.elapsed().as_millis(),
        processes_with(&workspace)
    );
    // Root's jails get a `pids` control group named after the launcher; it goes with the run.
    if rustix::process::geteuid().is_root() {
        let prefix = format!("cordon-{launcher}-");
        let groups = || -> Vec<String> {
            std::fs::read_dir("/sys/fs/cgroup/pids")
                .into_iter()
                .chain(std::fs::read_dir("/sys/fs/cgroup"))
                .flat_map(|rd| rd.flatten())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        };
        assert!(
            within(killed, GRACE, || groups().is_empty()),
            "the killed launcher's pids control group is still there: {:?}",
            groups()
        );
    }
}

/// The processes of a jail: those whose command line holds `marker`, but for the session reaper
/// (a forked one keeps its launcher's command line, and it is not part of the jail).
fn jail_processes(marker: &str) -> Vec<String> {
    processes_with(marker)
        .into_iter()
        .filter(|p| {
            let pid = p.trim_start_matches('[').split(']').next().unwrap_or("");
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map_or(true, |c| c.trim_end() != "cordon-reaper")
        })
        .collect()
}

/// SIGTERM to `cordon run OPTIONS` whose jail runs a foreground sleep and a background one:
/// cordon exits 143 (128 + 15), and no process of its jail is left.
fn sigterm_ends_the_jail(options: &[&str]) {
    let s = Setup::new();
    // A tree: the shell, a background shell with its own sleep, a foreground sleep.
    let script = format!(
        "(sleep 60.1{m}; :) & echo ready; sleep 60.2{m}; :",
        m = s.marker
    );
    let mut child = s.start(options, &script);
    let launcher = child.id();
    let before = jail_processes(&s.marker);
    assert!(
        before
            .iter()
            .any(|p| p.contains(&format!("sleep 60.1{}", s.marker)))
            && before
                .iter()
                .any(|p| p.contains(&format!("sleep 60.2{}", s.marker))),
        "the jail's sleeps are not visible before the signal, so this test would prove nothing: {before:?}"
    );
    let pid = rustix::process::Pid::from_raw(i32::try_from(launcher).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let signalled = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "cordon {options:?} (pid {launcher}) told to stop with SIGTERM: {status}"
    );
    let gone = within(signalled, GRACE, || jail_processes(&s.marker).is_empty());
    assert!(
        gone,
        "after cordon {options:?} (pid {launcher}) ended on SIGTERM, these processes of its jail are alive: {:?}",
        jail_processes(&s.marker)
    );
}

#[test]
fn a_sigtermed_launcher_ends_its_bubblewrap_jail_and_exits_143() {
    sigterm_ends_the_jail(&["--backend", "bwrap"]);
}

#[test]
fn a_sigtermed_launcher_ends_its_landlock_jail_and_exits_143() {
    sigterm_ends_the_jail(&["--backend", "landlock"]);
}

#[test]
fn a_sigtermed_serve_ends_its_jails_and_exits_143() {
    use std::io::Write;
    let s = Setup::new();
    // The second command runs in the jail the session built ahead after the first one (live
    // mode: a layered command never runs in a jail built ahead): its shell, a foreground and a
    // background sleep must all go.
    let script = format!(
        "(sleep 60.1{m}; :) & echo ready > ready.txt; sleep 60.2{m}; :",
        m = s.marker
    );
    let mut serve = Command::new(common::cordon())
        .args(["serve", "--backend", "bwrap", "--live"])
        .current_dir(&s.work)
        .env_clear()
        .env("HOME", s.home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = serve.stdin.take().unwrap();
    let mut answers = BufReader::new(serve.stdout.take().unwrap());
    writeln!(input, r#"["/bin/true"]"#).unwrap();
    let mut first = String::new();
    answers.read_line(&mut first).unwrap();
    assert!(first.contains("\"exit_code\":0"), "{first}");
    let request = serde_json::to_string(&["/bin/sh", "-c", &script]).unwrap();
    writeln!(input, "{request}").unwrap();
    let ready = s.work.join("ready.txt");
    assert!(
        within(Instant::now(), READY_DEADLINE, || ready.exists()),
        "the payload never started"
    );
    let before = jail_processes(&s.marker);
    assert!(
        before
            .iter()
            .any(|p| p.contains(&format!("sleep 60.1{}", s.marker))),
        "the jail's background sleep is not visible, so this test would prove nothing: {before:?}"
    );
    let pid = rustix::process::Pid::from_raw(i32::try_from(serve.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let signalled = Instant::now();
    let status = serve.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "cordon serve told to stop: {status}"
    );
    assert!(
        within(signalled, GRACE, || jail_processes(&s.marker).is_empty()),
        "after cordon serve ended on SIGTERM, these processes of its jail are alive: {:?}",
        jail_processes(&s.marker)
    );
    drop(input);
}
