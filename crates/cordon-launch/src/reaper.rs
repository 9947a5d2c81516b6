//! The session reaper: what a run creates on the host is removed, and its jail ended, even when
//! the launcher is killed.
//!
//! A run may create, outside the jail: placeholders in a writable root (the plan's guard: an
//! empty `.vscode` that a read-only bind keeps from being created, a `.git/commondir` reading
//! `.`), for root a `pids` control group (`pids.rs`), the Landlock backend's private `TMPDIR`,
//! and a probe's throwaway directory. All of it must be gone when the run is over, whatever
//! happens to the launcher: a peer's users keep finding the empty mount-point files its sandbox
//! left in their checkouts.
//!
//! The first run of a process starts one reaper for the whole process: the cordon binary in
//! reaper mode ([`reap_main`]), forked or started, in its own process group, reading a pipe.
//! Before the launcher creates anything it *registers* it there (`+`), and after removing it,
//! unregisters it (`-`); a started jail is registered by pid, and before its spawn by a marker
//! in its command line. When the pipe reaches end of file (the launching process is gone,
//! however it ended) the reaper kills the process group of every jail still registered, waits
//! (bounded) for them to end, and removes what is still registered. Registration comes first,
//! so no moment exists where something is on disk and nobody would remove it. What a run holds
//! and registers is `cleanup.rs`; how a placeholder is made and removed, `placeholders.rs`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use cordon_policy::guard::COMMONDIR_SELF;

use crate::placeholders::{Kind, Placeholder, remove_any};

/// How long the reaper keeps trying, for all placeholders together, for their exclusive locks
/// (see `reap`); a live jail elsewhere holds one far longer.
const PATIENCE: Duration = Duration::from_millis(200);

/// How long the reaper waits for killed jails to end before removing what they used.
const JAIL_GRACE: Duration = Duration::from_secs(2);

/// The argument, after the stage's, that selects reaper mode in the cordon binary.
pub(crate) const REAP_MODE: &str = "reap";

/// Something registered with the session reaper.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Item {
    /// A placeholder's final path: removed when marked, unlocked and unchanged.
    Placeholder(PathBuf, KindTag),
    /// A placeholder's temporary name: removed if it exists (the name is unique to this run).
    Temp(PathBuf),
    /// A control group directory.
    Cgroup(PathBuf),
    /// A directory removed with all its content (a private TMPDIR, a probe site).
    Tree(PathBuf),
    /// A jail's leader (and process group).
    Jail(i32),
    /// A jail not yet spawned, known by bytes unique to its command line (the self-check's
    /// path, with its nonce): registered *before* the spawn, it covers the moment between the
    /// spawn and [`Item::Jail`], when an unprivileged bubblewrap has lost the parent-death
    /// signal (its credentials changed) and has no `pids` group.
    Marked(Vec<u8>),
}

/// [`Kind`] as the reaper's protocol spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum KindTag {
    Dir,
    CommonDir,
    Empty,
}

impl KindTag {
    pub(crate) fn of(kind: Kind) -> KindTag {
        match kind {
            Kind::Dir => KindTag::Dir,
            Kind::File(c) if c == COMMONDIR_SELF => KindTag::CommonDir,
            Kind::File(_) => KindTag::Empty,
        }
    }

    fn kind(self) -> Kind {
        match self {
            KindTag::Dir => Kind::Dir,
            KindTag::CommonDir => Kind::File(COMMONDIR_SELF),
            KindTag::Empty => Kind::File(b""),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Item {
    /// One protocol line, without the sign: `<tag> <argument>`.
    fn line(&self) -> String {
        let path = |p: &Path| hex(p.as_os_str().as_bytes());
        match self {
            Item::Placeholder(p, KindTag::Dir) => format!("pd {}", path(p)),
            Item::Placeholder(p, KindTag::CommonDir) => format!("pc {}", path(p)),
            Item::Placeholder(p, KindTag::Empty) => format!("pe {}", path(p)),
            Item::Temp(p) => format!("t {}", path(p)),
            Item::Cgroup(p) => format!("c {}", path(p)),
            Item::Tree(p) => format!("r {}", path(p)),
            Item::Jail(pid) => format!("j {pid}"),
            Item::Marked(m) => format!("m {}", hex(m)),
        }
    }

    fn parse(text: &str) -> Option<Item> {
        let (tag, arg) = text.split_once(' ')?;
        let path = || unhex(arg).map(|b| PathBuf::from(OsString::from_vec(b)));
        Some(match tag {
            "pd" => Item::Placeholder(path()?, KindTag::Dir),
            "pc" => Item::Placeholder(path()?, KindTag::CommonDir),
            "pe" => Item::Placeholder(path()?, KindTag::Empty),
            "t" => Item::Temp(path()?),
            "c" => Item::Cgroup(path()?),
            "r" => Item::Tree(path()?),
            "j" => Item::Jail(arg.parse().ok().filter(|p| *p > 0)?),
            "m" => Item::Marked(unhex(arg).filter(|m| !m.is_empty())?),
            _ => return None,
        })
    }
}

/// The process's session reaper: the write end of its pipe.
#[derive(Debug)]
pub(crate) struct Session {
    pipe: Mutex<std::fs::File>,
    /// The reaper when spawned (a forked one is not waited for either: it outlives this process).
    _child: Option<Child>,
}

static SESSION: OnceLock<Option<Session>> = OnceLock::new();

/// The name (`/proc/<pid>/comm`) every session reaper gives itself.
pub const REAPER_NAME: &std::ffi::CStr = c"cordon-reaper";

/// The session reaper, started on first use with `binary` (the cordon binary). `None` when no
/// binary is known or it cannot be started: the launcher then cleans up alone, and a killed
/// launcher can leave things behind (`docs/limits.md`).
pub(crate) fn session(binary: Option<&Path>) -> Option<&'static Session> {
    if let Some(s) = SESSION.get() {
        return s.as_ref();
    }
    let binary = binary?;
    SESSION.get_or_init(|| start(binary)).as_ref()
}

/// Starts the session reaper now, as a copy of this process rather than a new program, when this
/// process has a single thread (the CLI right after it parsed its arguments): no `exec` on the
/// command's path. Otherwise (or if the fork fails) it is started as a program, `binary` in reaper mode. Whether a reaper
/// runs.
pub fn start_session_forked(binary: &Path) -> bool {
    if let Some(s) = SESSION.get() {
        return s.is_some();
    }
    // Forked outside the `OnceLock`'s initialisation, so the child's copy of it is not caught
    // half-way. Another thread's session set first wins; this one's reaper then reads its pipe
    // close at once and has nothing to do.
    let _ = SESSION.set(fork_reaper().or_else(|| start(binary)));
    SESSION.get().is_some_and(Option::is_some)
}

fn fork_reaper() -> Option<Session> {
    let (read, write) = crate::sys::pipe().ok()?;
    crate::sys::fork_single_threaded(read, || reap_main(&[])).ok()??;
    Some(Session {
        pipe: Mutex::new(std::fs::File::from(write)),
        _child: None,
    })
}

fn start(binary: &Path) -> Option<Session> {
    let (read, write) = crate::sys::pipe().ok()?;
    let mut command = Command::new(binary);
    command
        .args([crate::stage::STAGE_ARG, REAP_MODE])
        .env_clear()
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::sys::inherit_only(&mut command, &[]);
    let child = command.spawn().ok()?;
    Some(Session {
        pipe: Mutex::new(std::fs::File::from(write)),
        _child: Some(child),
    })
}

impl Session {
    fn send(&self, sign: char, item: &Item) {
        let line = format!("{sign}{}\n", item.line());
        if let Ok(mut pipe) = self.pipe.lock() {
            // One write per line, shorter than PIPE_BUF: never interleaved with another.
            let _ = pipe.write_all(line.as_bytes());
        }
    }

    /// Registers a started jail (its pid leads its process group).
    pub(crate) fn jail_started(&self, pid: u32) {
        if let Ok(pid) = i32::try_from(pid) {
            self.send('+', &Item::Jail(pid));
        }
    }

    /// Unregisters a jail that has ended.
    pub(crate) fn jail_ended(&self, pid: u32) {
        if let Ok(pid) = i32::try_from(pid) {
            self.send('-', &Item::Jail(pid));
        }
    }
}

/// Registers `item` with the session (if any) for as long as the guard lives.
pub(crate) fn register(session: Option<&'static Session>, item: Item) -> Registered {
    if let Some(s) = session {
        s.send('+', &item);
    }
    Registered { session, item }
}

/// An item registered with the session reaper; unregistered on drop.
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) session: Option<&'static Session>,
    pub(crate) item: Item,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(s) = self.session {
            s.send('-', &self.item);
        }
    }
}

/// Kills every task in the control group `dir` until it is empty or `deadline` passes
/// (`cgroup.kill` on v2; each listed pid on v1).
fn kill_group_tasks(dir: &Path, deadline: Instant) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in pids {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(crate) fn remove_cgroup(dir: &Path) {
    // The jail's tasks are reaped as its PID namespace ends, usually within microseconds of
    // bubblewrap's exit: retry with a short, growing pause.
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    while std::fs::remove_dir(dir).is_err() && start.elapsed() < Duration::from_secs(2) {
        if !dir.exists() {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// What the reaper does with what is still registered when its pipe closes.
pub(crate) fn reap(registry: BTreeMap<Item, Option<OwnedFd>>) {
    // First the jails: kill each one's process group, then wait (bounded) for its leader.
    let deadline = Instant::now() + JAIL_GRACE;
    for (item, pidfd) in &registry {
        if let (Item::Jail(pid), Some(pidfd)) = (item, pidfd)
            && let Some(pid) = rustix::process::Pid::from_raw(*pid)
        {
            if !exited(pidfd, Duration::ZERO) {
                // Its leader is alive, so the group id cannot have been reused.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                exited(pidfd, deadline.saturating_duration_since(Instant::now()));
            } else if group_has_members(pid) {
                // The leader is gone but its group is not: under the Landlock backend the
                // leader is the command itself, which its parent-death signal kills the moment
                // the launcher dies, often before this pipe reads as closed, while what it
                // started in the background lives on in its group. While a process is in the
                // group, its id cannot have been reused either.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
    }
    // A jail whose launcher died between its spawn and its registration is not in the registry,
    // and bubblewrap arms its own parent-death signal only after it starts: for root, its
    // `pids` group holds it, and everything in that group is the jail's; for anyone, its
    // processes carry its marker in their command line until the payload runs.
    for item in registry.keys() {
        match item {
            Item::Cgroup(dir) => kill_group_tasks(dir, deadline),
            Item::Marked(marker) => kill_marked(marker, deadline),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    for item in registry.into_keys() {
        match item {
            Item::Jail(_) | Item::Marked(_) => {}
            Item::Cgroup(dir) => remove_cgroup(&dir),
            Item::Tree(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Item::Temp(p) => remove_any(&p),
            Item::Placeholder(path, tag) => {
                if let Some(p) = Placeholder::left_behind(path, tag.kind()) {
                    pending.push(p);
                }
            }
        }
    }
    // A killed launcher's descriptors are released after its pipe reads as closed (the kernel
    // finishes closing an exiting process's files in reverse order), so its shared locks can
    // outlive the moment the reaper gets here by microseconds: keep trying, all together, for a
    // short while. A live jail elsewhere holds its lock far longer; its own run removes it.
    let deadline = Instant::now() + PATIENCE;
    while !pending.is_empty() {
        let mut left = Vec::new();
        for p in pending {
            if p.try_exclusive() {
                p.remove_if_ours();
            } else {
                left.push(p);
            }
        }
        if left.is_empty() || Instant::now() >= deadline {
            break;
        }
        pending = left;
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether any process is in the process group `pgid` (field 5 of `/proc/<pid>/stat`, after
/// the command name in parentheses: state, parent, group).
fn group_has_members(pgid: rustix::process::Pid) -> bool {
    let want = pgid.as_raw_nonzero().get().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .any(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(2))
                    .is_some_and(|g| g == want)
            })
        })
}

/// Kills every process whose command line holds `marker` (and its process group), until none
/// is left or `deadline` passes. Only this user's processes can be read and signalled, and the
/// marker holds a nonce: nothing else matches.
fn kill_marked(marker: &[u8], deadline: Instant) {
    // A process in the middle of `exec` shows an empty command line for a moment: two scans in
    // a row must find nothing.
    let mut empty_scans = 0;
    loop {
        let mut found = false;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
                .and_then(rustix::process::Pid::from_raw)
            else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            if cmdline.windows(marker.len()).any(|w| w == marker) {
                found = true;
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        empty_scans = if found { 0 } else { empty_scans + 1 };
        if empty_scans >= 2 || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether the process behind `pidfd` has ended, waiting at most `wait`.
fn exited(pidfd: &OwnedFd, wait: Duration) -> bool {
    let timeout = rustix::event::Timespec {
        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    loop {
        let mut fds = [rustix::event::PollFd::new(
            pidfd,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Err(rustix::io::Errno::INTR) => continue,
            Ok(n) => return n > 0,
            Err(_) => return true,
        }
    }
}

/// The session reaper's `main` (`__cordon_stage reap`, stdin the launcher's pipe): keep the
/// registry of what the launching process holds, and when the pipe closes, end its jails and
/// remove what is still registered. Returns the exit code.
pub fn reap_main(_args: &[OsString]) -> i32 {
    // Spawned or forked, a reaper is known by this name (a forked one keeps its launcher's
    // command line).
    crate::sys::set_name(REAPER_NAME);
    let mut registry: BTreeMap<Item, Option<OwnedFd>> = BTreeMap::new();
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    loop {
        let n = match rustix::io::read(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Ok(text) = std::str::from_utf8(&line[..line.len() - 1]) else {
                continue;
            };
            let (sign, rest) = text.split_at(text.len().min(1));
            let Some(item) = Item::parse(rest) else {
                continue;
            };
            match sign {
                "+" => {
                    let pidfd = match item {
                        Item::Jail(pid) => rustix::process::Pid::from_raw(pid).and_then(|p| {
                            rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty())
                                .ok()
                        }),
                        _ => None,
                    };
                    registry.insert(item, pidfd);
                }
                "-" => {
                    registry.remove(&item);
                }
                _ => {}
            }
        }
    }
    reap(registry);
    0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    #[test]
    fn a_jail_known_only_by_its_marker_is_killed_when_the_launcher_is_gone() {
        // As if a launcher died between the spawn and the jail's registration by pid: the
        // reaper finds the jail by the marker registered before the spawn.
        let marker = format!("cordon-test-marker-{}-{}", std::process::id(), line!());
        // `sleep 30; :` keeps the shell (and its argv, the marker as `$0`) alive: a shell may
        // `exec` a lone last command. Its own process group, as a jail's bubblewrap has.
        let mut jail = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 30; :", &marker])
            .process_group(0)
            .spawn()
            .expect("sh");
        // A running jail: its command line is in place (right after `exec` it may read empty).
        let cmdline = format!("/proc/{}/cmdline", jail.id());
        let shown = Instant::now();
        while !std::fs::read(&cmdline).is_ok_and(|c| c.ends_with(format!("{marker}\0").as_bytes()))
        {
            assert!(
                shown.elapsed() < Duration::from_secs(5),
                "the marker never showed"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut registry = BTreeMap::new();
        registry.insert(Item::Marked(marker.into_bytes()), None);
        let start = Instant::now();
        reap(registry);
        let status = jail.wait().expect("wait");
        assert!(
            status.signal() == Some(9),
            "the marked process was not killed: {status:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_jail_whose_leader_died_first_has_the_rest_of_its_group_killed() {
        // As under the Landlock backend when the launcher is SIGKILLed: the leader (the command
        // itself) dies of its parent-death signal before the reaper looks, and a child it left
        // in the background must not outlive the run.
        let mut leader = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 30 & echo $!; exit 0"])
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let pid = rustix::process::Pid::from_raw(i32::try_from(leader.id()).unwrap()).unwrap();
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
            .expect("pidfd_open");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(leader.stdout.take().unwrap()),
            &mut line,
        )
        .expect("read");
        let child: i32 = line.trim().parse().expect("the background pid");
        assert!(leader.wait().expect("wait").success());
        let child = rustix::process::Pid::from_raw(child).unwrap();
        assert!(
            group_has_members(pid),
            "the background child is in the leader's group"
        );
        let mut registry = BTreeMap::new();
        registry.insert(Item::Jail(pid.as_raw_nonzero().get()), Some(pidfd));
        reap(registry);
        let gone = |p: rustix::process::Pid| {
            std::fs::read_to_string(format!("/proc/{}/stat", p.as_raw_nonzero())).map_or(
                true,
                |s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                },
            )
        };
        let start = Instant::now();
        while !gone(child) {
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "the background child of a dead leader outlived the reaper"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn protocol_lines_round_trip() {
        for item in [
            Item::Placeholder(PathBuf::from("/w/.vscode"), KindTag::Dir),
            Item::Placeholder(PathBuf::from("/w/.git/commondir"), KindTag::CommonDir),
            Item::Placeholder(PathBuf::from("/w/.git/config.worktree"), KindTag::Empty),
            Item::Temp(PathBuf::from("/w/a\nb c")),
            Item::Cgroup(PathBuf::from("/sys/fs/cgroup/pids/cordon-1")),
            Item::Tree(PathBuf::from("/tmp/cordon-tmp-1")),
            Item::Jail(42),
            Item::Marked(b"/home/u/.cordon-selfcheck-7-ab\n".to_vec()),
        ] {
            assert_eq!(Item::parse(&item.line()), Some(item.clone()), "{item:?}");
            assert!(!item.line().contains('\n'));
        }
        for bad in [
            "", "j", "j 0", "j -3", "x 00", "t 0", "t zz", "pd", "m ", "m 0",
        ] {
            assert_eq!(Item::parse(bad), None, "{bad:?}");
        }
    }
}
