//! What a run creates on the host, and how it is always removed: even when the launcher is killed.
//!
//! A run may create, outside the jail: placeholders in a writable root (`guard.rs`: an empty
//! `.vscode` that a read-only bind keeps from being created, a `.git/commondir` reading `.`), for
//! root a `pids` control group (`pids.rs`), the Landlock backend's private `TMPDIR`, and a probe's
//! throwaway directory. All of it must be gone when the run is over, whatever happens to the
//! launcher — a peer's users keep finding the empty mount-point files its sandbox left in their
//! checkouts.
//!
//! - **The launcher cleans up; a session reaper covers its death.** The first run of a process
//!   starts one reaper for the whole process: the cordon binary in reaper mode ([`reap_main`]), in
//!   its own process group, reading a pipe. Before the launcher creates anything it *registers* it
//!   there (`+`), and after removing it, unregisters it (`-`); a started jail is registered by
//!   pid. When the pipe reaches end of file — the launching process is gone, however it ended —
//!   the reaper kills the process group of every jail still registered, waits (bounded) for them
//!   to end, and removes what is still registered. Registration comes first, so no moment exists
//!   where something is on disk and nobody would remove it.
//! - **A placeholder appears whole.** It is made under a unique temporary name, marked with the
//!   `user.cordon.placeholder` extended attribute, and only then renamed into place
//!   (`RENAME_NOREPLACE`), so an unmarked placeholder never exists at its final name.
//! - **Concurrent jails share placeholders safely.** Every run that relies on a placeholder,
//!   whether it created it or found it, holds a shared `flock` on it while its jail lives. It is
//!   removed only under an exclusive lock, which a shared one blocks, so one jail's cleanup never
//!   pulls a read-only bind from under another's (removing a directory detaches the mounts on it in
//!   every other namespace). The last run out removes it: each releases its shared lock and tries
//!   an exclusive one without waiting; failing means another holder remains and will try in turn.
//! - **Only what cordon made is removed.** A placeholder is removed only when it carries the mark
//!   (or this run made it), the path still names the same inode, a directory is still empty
//!   (`rmdir` checks that atomically) and a file still holds exactly what was written. A directory
//!   a person creates, or fills, during the run stays.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// The extended attribute that marks a placeholder.
const MARK: &str = "user.cordon.placeholder";

/// How many times making a placeholder is retried when another run removes it meanwhile.
const ATTEMPTS: usize = 8;

/// How long the reaper keeps trying, for all placeholders together, for their exclusive locks
/// (see `reap`); a live jail elsewhere holds one far longer.
const PATIENCE: Duration = Duration::from_millis(200);

/// How long the reaper waits for killed jails to end before removing what they used.
const JAIL_GRACE: Duration = Duration::from_secs(2);

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An empty directory.
    Dir,
    /// A file holding exactly these bytes.
    File(&'static [u8]),
}

/// Something registered with the session reaper.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
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
enum KindTag {
    Dir,
    CommonDir,
    Empty,
}

impl KindTag {
    fn of(kind: Kind) -> KindTag {
        match kind {
            Kind::Dir => KindTag::Dir,
            Kind::File(c) if c == crate::guard::COMMONDIR_SELF => KindTag::CommonDir,
            Kind::File(_) => KindTag::Empty,
        }
    }

    fn kind(self) -> Kind {
        match self {
            KindTag::Dir => Kind::Dir,
            KindTag::CommonDir => Kind::File(crate::guard::COMMONDIR_SELF),
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

/// Starts the session reaper for `binary` now, if none runs yet (a one-command process such as
/// `cordon run` calls it on a thread of its own, so that the reaper's spawn overlaps the
/// planning instead of delaying the jail). Whether a reaper runs.
pub fn start_session(binary: &Path) -> bool {
    session(Some(binary)).is_some()
}

/// Starts the session reaper now, as a copy of this process rather than a new program, when this
/// process has a single thread (the CLI right after it parsed its arguments): no `exec` on the
/// command's path. Otherwise (or if the fork fails) as [`start_session`] does. Whether a reaper
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
        .args([crate::stage::STAGE_ARG, "reap"])
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
fn register(session: Option<&'static Session>, item: Item) -> Registered {
    if let Some(s) = session {
        s.send('+', &item);
    }
    Registered { session, item }
}

/// An item registered with the session reaper; unregistered on drop.
#[derive(Debug)]
struct Registered {
    session: Option<&'static Session>,
    item: Item,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(s) = self.session {
            s.send('-', &self.item);
        }
    }
}

/// A placeholder this run relies on: open, with a shared lock held on it.
#[derive(Debug)]
pub(crate) struct Placeholder {
    path: PathBuf,
    kind: Kind,
    fd: OwnedFd,
    created: bool,
}

fn same_inode(fd: &OwnedFd, path: &Path) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::lstat(path)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

fn open_at(path: &Path, kind: Kind) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let flags = match kind {
        Kind::Dir => flags | OFlags::DIRECTORY,
        Kind::File(_) => flags,
    };
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

fn open_held(path: &Path, kind: Kind) -> std::io::Result<OwnedFd> {
    let fd = open_at(path, kind)?;
    rustix::fs::flock(&fd, FlockOperation::LockShared)?;
    Ok(fd)
}

/// Makes a marked placeholder under the unique name `tmp`.
fn make_marked(tmp: &Path, kind: Kind) -> std::io::Result<()> {
    let fd = match kind {
        Kind::Dir => {
            std::fs::create_dir(tmp)?;
            open_at(tmp, kind)?
        }
        Kind::File(content) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(tmp)?;
            f.write_all(content)?;
            OwnedFd::from(f)
        }
    };
    // Best effort: without user extended attributes only the creating run removes it.
    let _ = rustix::fs::fsetxattr(&fd, MARK, b"1", rustix::fs::XattrFlags::empty());
    Ok(())
}

fn remove_any(path: &Path) {
    if std::fs::remove_dir(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}

impl Placeholder {
    /// Makes the placeholder at `path` (or joins the one there), locked shared, registered with
    /// `session` for as long as it lives. `Ok(None)` when something that cannot be opened as this
    /// kind is already there.
    pub(crate) fn create(
        path: &Path,
        kind: Kind,
        session: Option<&'static Session>,
        cleanup: &mut Cleanup,
    ) -> std::io::Result<Option<()>> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let registered = register(
            session,
            Item::Placeholder(path.to_path_buf(), KindTag::of(kind)),
        );
        for _ in 0..ATTEMPTS {
            // Join what is there.
            match open_held(path, kind) {
                Ok(fd) if same_inode(&fd, path) => {
                    cleanup.items.push(Held::Placeholder(
                        Placeholder {
                            path: path.to_path_buf(),
                            kind,
                            fd,
                            created: false,
                        },
                        registered,
                    ));
                    return Ok(Some(()));
                }
                Ok(_) => continue, // removed while we waited for the lock
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return Ok(None),
            }
            // Make it whole under a unique name, then move it into place without replacing.
            let tmp = dir.join(format!(
                ".{}.cordon-{}",
                name.to_string_lossy(),
                crate::backend::nonce()
            ));
            let temp = register(session, Item::Temp(tmp.clone()));
            make_marked(&tmp, kind)?;
            let moved = rustix::fs::renameat_with(
                rustix::fs::CWD,
                &tmp,
                rustix::fs::CWD,
                path,
                rustix::fs::RenameFlags::NOREPLACE,
            );
            if moved.is_err() {
                remove_any(&tmp);
                drop(temp);
                continue; // someone else's is there now: join it
            }
            drop(temp);
            let fd = open_held(path, kind)?;
            if same_inode(&fd, path) {
                cleanup.items.push(Held::Placeholder(
                    Placeholder {
                        path: path.to_path_buf(),
                        kind,
                        fd,
                        created: true,
                    },
                    registered,
                ));
                return Ok(Some(()));
            }
        }
        Err(std::io::Error::other(format!(
            "{} kept changing while a placeholder was being made there",
            path.display()
        )))
    }

    fn marked(&self) -> bool {
        let mut buf = [0u8; 8];
        rustix::fs::fgetxattr(&self.fd, MARK, &mut buf[..]).is_ok_and(|n| buf[..n] == *b"1")
    }

    /// Releases this run's hold and removes the placeholder when this run is its last user.
    fn release(self) {
        if self.try_exclusive() {
            self.remove_if_ours();
        }
        // Otherwise another run still relies on it, and will try in turn.
    }

    /// Drops this run's shared lock and tries for the exclusive one without waiting.
    fn try_exclusive(&self) -> bool {
        let _ = rustix::fs::flock(&self.fd, FlockOperation::Unlock);
        rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive).is_ok()
    }

    /// With the exclusive lock held: removes the placeholder if it is still what cordon made.
    fn remove_if_ours(self) {
        if !same_inode(&self.fd, &self.path) || !(self.created || self.marked()) {
            return;
        }
        match self.kind {
            Kind::Dir => {
                let _ = std::fs::remove_dir(&self.path);
            }
            Kind::File(content) => {
                let mut now = Vec::new();
                let read = std::fs::File::from(self.fd)
                    .take(content.len() as u64 + 1)
                    .read_to_end(&mut now);
                if read.is_ok() && now == content {
                    let _ = std::fs::remove_file(&self.path);
                }
            }
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

fn remove_cgroup(dir: &Path) {
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

/// Something a run holds, removed when the run's [`Cleanup`] drops.
#[derive(Debug)]
enum Held {
    Placeholder(Placeholder, Registered),
    Cgroup(Registered),
    Tree(Registered),
    Marker(Registered),
}

/// Everything one run created on the host; removed (and unregistered) on drop.
#[derive(Debug)]
pub(crate) struct Cleanup {
    session: Option<&'static Session>,
    items: Vec<Held>,
}

impl Cleanup {
    /// An empty cleanup that registers with `session`.
    pub(crate) fn new(session: Option<&'static Session>) -> Cleanup {
        Cleanup {
            session,
            items: Vec::new(),
        }
    }

    /// The session this cleanup registers with.
    pub(crate) fn session(&self) -> Option<&'static Session> {
        self.session
    }

    /// Makes (or joins) the placeholder at `path`; `Ok(false)` when it cannot be one.
    pub(crate) fn placeholder(&mut self, path: &Path, kind: Kind) -> std::io::Result<bool> {
        Ok(Placeholder::create(path, kind, self.session, self)?.is_some())
    }

    /// Whether a placeholder at `path` is already held.
    pub(crate) fn holds(&self, path: &Path) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Held::Placeholder(p, _) if p.path == path))
    }

    /// Registers a control group directory *before* it is made.
    pub(crate) fn cgroup(&mut self, dir: PathBuf) {
        let r = register(self.session, Item::Cgroup(dir));
        self.items.push(Held::Cgroup(r));
    }

    /// Takes over a directory removed with its content (already registered by its maker).
    pub(crate) fn tree(&mut self, tree: Tree) {
        self.items.push(Held::Tree(tree.into_registered()));
    }

    /// Registers the jail about to be spawned by `marker`, bytes unique to its command line
    /// ([`Item::Marked`]), until the run's end.
    pub(crate) fn mark_jail(&mut self, marker: &[u8]) {
        if !marker.is_empty() {
            let item = Item::Marked(marker.to_vec());
            self.items.push(Held::Marker(register(self.session, item)));
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for item in std::mem::take(&mut self.items) {
            match item {
                Held::Placeholder(p, _registered) => p.release(),
                Held::Cgroup(r) => {
                    if let Item::Cgroup(dir) = &r.item {
                        remove_cgroup(dir);
                    }
                }
                Held::Tree(r) => {
                    if let Item::Tree(dir) = &r.item {
                        let _ = std::fs::remove_dir_all(dir);
                    }
                }
                Held::Marker(_registered) => {}
            }
        }
    }
}

/// A directory made for a run or a probe, removed with its content on drop (registered with the
/// session reaper from before it exists until after it is gone).
#[derive(Debug)]
pub struct Tree {
    registered: Option<Registered>,
}

impl Tree {
    /// Registers `dir` (with the session of `binary`, if one can be started), then `make`s it.
    pub(crate) fn make(
        dir: &Path,
        binary: Option<&Path>,
        make: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> std::io::Result<Tree> {
        let tree = Tree {
            registered: Some(register(session(binary), Item::Tree(dir.to_path_buf()))),
        };
        make(dir)?;
        Ok(tree)
    }

    fn into_registered(mut self) -> Registered {
        // `registered` is always set until here; the fallback keeps `Drop` total.
        self.registered.take().unwrap_or(Registered {
            session: None,
            item: Item::Jail(0),
        })
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if let Some(r) = self.registered.take()
            && let Item::Tree(dir) = &r.item
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// What the reaper does with what is still registered when its pipe closes.
fn reap(registry: BTreeMap<Item, Option<OwnedFd>>) {
    // First the jails: kill each one's process group, then wait (bounded) for its leader.
    let deadline = Instant::now() + JAIL_GRACE;
    for (item, pidfd) in &registry {
        if let (Item::Jail(pid), Some(pidfd)) = (item, pidfd)
            && let Some(pid) = rustix::process::Pid::from_raw(*pid)
            && !exited(pidfd, Duration::ZERO)
        {
            // Its leader is alive, so the group id cannot have been reused.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            exited(pidfd, deadline.saturating_duration_since(Instant::now()));
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
                let kind = tag.kind();
                if let Ok(fd) = open_at(&path, kind) {
                    pending.push(Placeholder {
                        path,
                        kind,
                        fd,
                        created: false,
                    });
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

    fn held(c: &mut Cleanup, p: &Path, kind: Kind) -> bool {
        c.placeholder(p, kind).unwrap()
    }

    #[test]
    fn the_last_of_two_holders_removes_a_shared_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let mut a = Cleanup::new(None);
        let mut b = Cleanup::new(None);
        assert!(held(&mut a, &p, Kind::Dir) && held(&mut b, &p, Kind::Dir));
        drop(a);
        assert!(p.is_dir(), "removed while another run still relied on it");
        drop(b);
        assert!(
            !p.exists(),
            "the last holder must remove a marked placeholder"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "a temporary name was left: {names:?}");
    }

    #[test]
    fn a_directory_a_person_made_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".idea");
        std::fs::create_dir(&p).unwrap();
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &p, Kind::Dir));
        drop(c);
        assert!(p.is_dir());
    }

    #[test]
    fn a_placeholder_written_into_is_kept_and_a_file_must_match() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join(".claude");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &d, Kind::Dir));
        std::fs::write(d.join("settings.json"), "{}").unwrap();
        drop(c);
        assert!(d.join("settings.json").exists());

        let f = dir.path().join("commondir");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &f, Kind::File(b".\n")));
        assert_eq!(std::fs::read(&f).unwrap(), b".\n");
        std::fs::write(&f, "../elsewhere\n").unwrap();
        drop(c);
        assert_eq!(std::fs::read(&f).unwrap(), b"../elsewhere\n");
    }

    #[test]
    fn a_file_that_was_already_there_is_joined_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("config.worktree");
        std::fs::write(&f, "").unwrap();
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &f, Kind::File(b"")));
        drop(c);
        assert!(
            f.exists(),
            "a person's empty file is not cordon's to remove"
        );
    }

    #[test]
    fn the_reaper_removes_what_is_still_registered() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".vscode");
        let mut c = Cleanup::new(None);
        assert!(held(&mut c, &p, Kind::Dir));
        // The launcher "dies": its descriptors (and so its lock) go, nothing is removed by it.
        for item in std::mem::take(&mut c.items) {
            if let Held::Placeholder(p, _) = item {
                drop(p.fd);
            }
        }
        let tree = dir.path().join("cordon-tmp-x");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        let other = dir.path().join(".idea");
        std::fs::create_dir(&other).unwrap();
        let mut registry = BTreeMap::new();
        for item in [
            Item::Placeholder(p.clone(), KindTag::Dir),
            Item::Placeholder(other.clone(), KindTag::Dir),
            Item::Tree(tree.clone()),
        ] {
            registry.insert(item, None);
        }
        reap(registry);
        assert!(!p.exists(), "a marked, unlocked placeholder stays");
        assert!(!tree.exists());
        assert!(other.exists(), "an unmarked directory was removed");
    }

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
