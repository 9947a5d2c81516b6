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
//! unregisters it (`-`); a jail about to be spawned is registered by a marker in its command
//! line. When the pipe reaches end of file (the launching process is gone, however it ended)
//! the reaper kills every jail's process group, waits (bounded) for them to end, and removes
//! what is still registered. Registration comes first, so no moment exists where something is
//! on disk and nobody would remove it. What a run holds and registers is `cleanup.rs`; how a
//! placeholder is made and removed, `placeholders.rs`.
//!
//! Every jail is spawned into a process group the reaper made and holds until the launcher
//! releases it, so the reaper kills that group whatever of the jail died first, and never a
//! group that could have been made again: why that is sound is `groups.rs`. Under bubblewrap the
//! group holds bubblewrap itself, whose PID namespace (its init dies with it,
//! `--die-with-parent`) holds the rest; a jail between its spawn and the moment bubblewrap
//! armed that signal is found by its marker, and root's jails are also in a `pids` control
//! group, whose tasks are all the jail's. When the reaper cannot give a group (it could not
//! fork, or does not answer), the jail gets a group of its own: then only the parent-death
//! signals end it with its launcher.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use cordon_policy::COMMONDIR_SELF;

use crate::host::placeholders::{Kind, Placeholder, remove_any};

/// How long the reaper keeps trying, for all placeholders together, for their exclusive locks
/// (see `reap`); a live jail elsewhere holds one far longer.
const PATIENCE: Duration = Duration::from_millis(200);

/// How long the reaper waits for killed jails to end before removing what they used.
const JAIL_GRACE: Duration = Duration::from_secs(2);

/// How long the launcher waits for the reaper's next process group before spawning the jail in
/// a group of its own.
const GROUP_PATIENCE: Duration = Duration::from_secs(2);

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
    /// A process group the reaper made (`+`: claimed by the launcher for a jail, and the reaper
    /// makes the next; `-`: released, the reaper reaps its zombie). `0`: the launcher read that
    /// none could be made, and asks for the next.
    Group(i32),
    /// The mutants build's `no-kill-after-launcher-death`: the reaper kills nothing.
    #[cfg(all(feature = "mutants", debug_assertions))]
    KillNothing,
    /// A jail not yet spawned, known by bytes unique to its command line (the self-check's
    /// path, with its nonce): registered *before* the spawn, it covers the moment between the
    /// spawn and the moment bubblewrap arms the parent-death signal of its PID namespace's
    /// init, for a jail whose bubblewrap has no `pids` group.
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
            Item::Group(pgid) => format!("g {pgid}"),
            #[cfg(all(feature = "mutants", debug_assertions))]
            Item::KillNothing => "n 1".to_owned(),
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
            "g" => Item::Group(arg.parse().ok().filter(|p| *p >= 0)?),
            #[cfg(all(feature = "mutants", debug_assertions))]
            "n" if arg == "1" => Item::KillNothing,
            "m" => Item::Marked(unhex(arg).filter(|m| !m.is_empty())?),
            _ => return None,
        })
    }
}

/// The process's session reaper: the write end of its pipe.
#[derive(Debug)]
pub(crate) struct Session {
    pipe: Mutex<std::fs::File>,
    /// The read end of the reaper's answers: the next process group it made.
    answers: Mutex<std::fs::File>,
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
    let (read, write) = crate::host::sys::pipe().ok()?;
    let (answers, answer) = crate::host::sys::pipe().ok()?;
    crate::host::sys::fork_single_threaded(read, answer, || reap_main(&[])).ok()??;
    Some(Session {
        pipe: Mutex::new(std::fs::File::from(write)),
        answers: Mutex::new(std::fs::File::from(answers)),
        _child: None,
    })
}

fn start(binary: &Path) -> Option<Session> {
    let (read, write) = crate::host::sys::pipe().ok()?;
    let (answers, answer) = crate::host::sys::pipe().ok()?;
    let mut command = Command::new(binary);
    command
        .args([crate::stage::STAGE_ARG, REAP_MODE])
        .env_clear()
        .stdin(Stdio::from(read))
        .stdout(Stdio::from(answer))
        .stderr(Stdio::null());
    crate::host::sys::inherit_only(&mut command, &[]);
    let child = command.spawn().ok()?;
    Some(Session {
        pipe: Mutex::new(std::fs::File::from(write)),
        answers: Mutex::new(std::fs::File::from(answers)),
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

    /// Claims the next process group the reaper made, for a jail about to be spawned into it
    /// (see the module's documentation); `None` when the reaper could not make one or does not
    /// answer within [`GROUP_PATIENCE`].
    pub(crate) fn group(&self) -> Option<i32> {
        let mut answers = self.answers.lock().ok()?;
        let mut fds = [rustix::event::PollFd::new(
            &*answers,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec {
            tv_sec: i64::try_from(GROUP_PATIENCE.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(GROUP_PATIENCE.subsec_nanos()),
        };
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(n) if n > 0 => {}
            _ => return None,
        }
        // One answer is in the pipe at a time (the next is made only once this one is
        // claimed), written in one write shorter than PIPE_BUF: one line, whole.
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while line.last() != Some(&b'\n') && line.len() < 32 {
            match answers.read(&mut byte) {
                Ok(1) => line.push(byte[0]),
                Ok(_) => return None,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        let pgid = match std::str::from_utf8(&line)
            .ok()
            .and_then(|l| Item::parse(l.trim_end()))
        {
            Some(Item::Group(pgid)) => pgid,
            _ => return None,
        };
        // Claimed (also when it is 0, none): the reaper makes the next one.
        self.send('+', &Item::Group(pgid));
        (pgid > 0).then_some(pgid)
    }

    /// Releases a process group claimed with [`Session::group`]: its jail has ended and the
    /// group was killed; the reaper reaps the zombie that held it.
    pub(crate) fn release_group(&self, pgid: i32) {
        self.send('-', &Item::Group(pgid));
    }

    /// The mutants build's `no-kill-after-launcher-death`: from now on the reaper kills no
    /// jail when the launcher is gone (it still removes what the runs made).
    #[cfg(all(feature = "mutants", debug_assertions))]
    pub(crate) fn kill_nothing(&self) {
        self.send('+', &Item::KillNothing);
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

/// What the reaper does when its pipe closes: end the jails in `groups` (the process groups it
/// made, handed out and has not released) and those registered otherwise, then remove what is still
/// registered. With `kill` false (only a mutants build's `no-kill-after-launcher-death`)
/// nothing is killed.
pub(crate) fn reap(registry: BTreeSet<Item>, groups: &BTreeSet<i32>, kill: bool) {
    let deadline = Instant::now() + JAIL_GRACE;
    if kill {
        // First the jails: every group it handed out is still held by its zombie, so still the
        // jail's, whoever of the jail is still alive.
        for &pgid in groups {
            let _ = rustix::process::Pid::from_raw(pgid)
                .map(|g| rustix::process::kill_process_group(g, rustix::process::Signal::KILL));
        }
        for &pgid in groups {
            crate::host::groups::end_group(pgid, deadline);
        }
        // A jail whose bubblewrap had not yet armed its namespace's parent-death signal, or one
        // spawned in a group of its own: for root, its `pids` group holds it, and everything
        // in that group is the jail's; for anyone, its processes carry its marker in their
        // command line until the payload runs.
        for item in &registry {
            match item {
                Item::Cgroup(dir) => kill_group_tasks(dir, deadline),
                Item::Marked(marker) => kill_marked(marker, deadline),
                _ => {}
            }
        }
    }
    let mut pending = Vec::new();
    for item in registry {
        match item {
            Item::Group(_) | Item::Marked(_) => {}
            #[cfg(all(feature = "mutants", debug_assertions))]
            Item::KillNothing => {}
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

/// The session reaper's `main` (`__cordon_stage reap`, stdin the launcher's pipe): keep the
/// registry of what the launching process holds, and when the pipe closes, end its jails and
/// remove what is still registered. Returns the exit code.
pub fn reap_main(_args: &[OsString]) -> i32 {
    // Spawned or forked, a reaper is known by this name (a forked one keeps its launcher's
    // command line).
    crate::host::sys::set_name(REAPER_NAME);
    let mut registry: BTreeSet<Item> = BTreeSet::new();
    // The process groups made and not yet released, each held by a zombie child, and those of
    // them claimed: a jail is only ever spawned into a group after its claim was written, so an
    // unclaimed one is empty.
    let mut groups: BTreeSet<i32> = BTreeSet::new();
    let mut claimed: BTreeSet<i32> = BTreeSet::new();
    #[cfg_attr(not(all(feature = "mutants", debug_assertions)), allow(unused_mut))]
    let mut kill = true;
    let answers = std::io::stdout();
    let answers = answers.as_fd();
    // The next group, made ahead; `g 0` when none could be made.
    let answer = |groups: &mut BTreeSet<i32>| {
        let pgid = crate::host::sys::fork_group_pin().unwrap_or(0);
        if pgid > 0 {
            groups.insert(pgid);
        }
        // A launcher that is gone makes this fail with EPIPE (SIGPIPE is ignored).
        let _ = rustix::io::write(
            answers,
            format!("{}\n", Item::Group(pgid).line()).as_bytes(),
        );
    };
    answer(&mut groups);
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
            match (sign, item) {
                // Claimed: make the next one.
                ("+", Item::Group(pgid)) => {
                    if groups.contains(&pgid) {
                        claimed.insert(pgid);
                    }
                    answer(&mut groups);
                }
                // Its jail has ended: the zombie that held the group goes.
                ("-", Item::Group(pgid)) if groups.remove(&pgid) => {
                    claimed.remove(&pgid);
                    crate::host::sys::reap_child(pgid);
                }
                ("-", Item::Group(_)) => {}
                #[cfg(all(feature = "mutants", debug_assertions))]
                ("+", Item::KillNothing) => kill = false,
                ("+", item) => {
                    registry.insert(item);
                }
                ("-", item) => {
                    registry.remove(&item);
                }
                _ => {}
            }
        }
    }
    reap(registry, &claimed, kill);
    for pgid in groups {
        crate::host::sys::reap_child(pgid);
    }
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
        let mut registry = BTreeSet::new();
        registry.insert(Item::Marked(marker.into_bytes()));
        let start = Instant::now();
        reap(registry, &BTreeSet::new(), true);
        let status = jail.wait().expect("wait");
        assert!(
            status.signal() == Some(9),
            "the marked process was not killed: {status:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_group_the_reaper_made_is_killed_after_its_first_process_is_gone() {
        // The order of deaths the Landlock backend's parent-death signal makes: the jail's
        // first process dies (and is reaped) first, a background process lives on in the
        // group. The group is still held by the reaper's zombie, so it is killed all the same.
        let pgid = crate::host::sys::fork_group_pin().expect("a group");
        let mut leader = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 30 >/dev/null & echo $!"])
            .process_group(pgid)
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut out = String::new();
        leader
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        leader.wait().unwrap();
        let sleeper: i32 = out.trim().parse().expect("the sleeper's pid");
        let stat = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap();
        assert!(
            stat.contains(&format!(" {pgid} ")) && crate::host::groups::has_live_members(pgid),
            "the sleeper is not alive in the group, so this test would prove nothing: {stat}"
        );
        reap(BTreeSet::new(), &BTreeSet::from([pgid]), true);
        assert!(
            !crate::host::groups::has_live_members(pgid),
            "a process of the group outlived the reaper"
        );
        crate::host::sys::reap_child(pgid);
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
            Item::Group(42),
            Item::Group(0),
            Item::Marked(b"/home/u/.cordon-selfcheck-7-ab\n".to_vec()),
        ] {
            assert_eq!(Item::parse(&item.line()), Some(item.clone()), "{item:?}");
            assert!(!item.line().contains('\n'));
        }
        for bad in [
            "", "g", "g -3", "g x", "j 42", "x 00", "t 0", "t zz", "pd", "m ", "m 0",
        ] {
            assert_eq!(Item::parse(bad), None, "{bad:?}");
        }
    }
}
