//! Spawning a prepared command and supervising it: wall-clock timeout that kills the whole tree,
//! stdout and stderr capped in memory (never copied to disk), the exit code or signal kept.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a supervised process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// The timeout passed and the process group was killed.
    TimedOut,
}

/// What was kept of one output stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first `cap` bytes.
    pub bytes: Vec<u8>,
    /// True when more was written than kept.
    pub truncated: bool,
    /// How many bytes were written in all.
    pub total: u64,
}

/// Where the streams go besides memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forward {
    /// Only memory.
    No,
    /// Also copy (up to the cap) to this process's stdout and stderr as it arrives.
    ToOwnStdio,
}

/// Supervision settings.
#[derive(Debug)]
pub struct Supervision {
    /// Wall-clock timeout.
    pub timeout: Option<Duration>,
    /// Bytes kept per stream.
    pub output_cap: u64,
    /// Live forwarding.
    pub forward: Forward,
    /// The read end of the stage's status pipe, if any.
    pub status: Option<OwnedFd>,
    /// Whether stdin is inherited (else `/dev/null`).
    pub inherit_stdin: bool,
    /// Descriptors the child inherits; closed here right after the spawn, so that EOF on the
    /// status pipe means the stage and everything that inherited it are gone.
    pub hold: Vec<OwnedFd>,
    /// The session reaper whose process group the child is spawned into (reaper.rs), so a
    /// killed launcher's jail is ended.
    pub(crate) session: Option<&'static crate::host::reaper::Session>,
    /// Spawn from the process's long-lived spawner thread rather than the calling one: for a
    /// child that outlives the call (a jail built ahead, warm.rs). Its parent-death signal is
    /// tied to the *thread* that forked it, and a harness's worker thread may end first.
    pub(crate) from_long_lived_thread: bool,
    /// The supervisor to start right after the spawn (the Landlock backend), serving the
    /// listener the child sends: if it cannot start, the child is killed and the spawn fails.
    pub(crate) supervisor: Option<Handover>,
}

/// What starting a supervisor needs: the launcher's end of the socket the child sends its
/// seccomp listener over, and the rules the supervisor enforces. Made by the Landlock backend
/// only.
#[derive(Debug)]
pub struct Handover {
    #[cfg(linux_backends)]
    pub(crate) socket: OwnedFd,
    #[cfg(linux_backends)]
    pub(crate) rules: cordon_supervisor::Rules,
    /// The host listener the stage's network check must fail to reach, open until the
    /// supervisor ends.
    #[cfg(linux_backends)]
    pub(crate) sentinel: Option<std::net::TcpListener>,
}

/// A call the supervisor refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The real path the call would have changed.
    pub path: std::path::PathBuf,
    /// The supervisor's rule id (`protected`, `git-directory`, `outside-writable`, …).
    pub rule: &'static str,
    /// For a brokered git configuration (`git-config`): the key left out.
    pub key: Option<String>,
}

/// What the supervisor did, once every process under its filter was gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SupervisorSummary {
    /// Calls it answered.
    pub handled: u64,
    /// Calls it refused.
    pub refused: u64,
    /// The first refusals.
    pub refusals: Vec<Refused>,
}

/// A supervisor's listener being taken from the child about to be spawned (the child waits
/// for it before its `exec`), and the rules it will serve.
#[cfg(linux_backends)]
struct Taking {
    listener: JoinHandle<std::io::Result<OwnedFd>>,
    rules: cordon_supervisor::Rules,
    sentinel: Option<std::net::TcpListener>,
}

#[cfg(not(linux_backends))]
struct Taking;

#[cfg(linux_backends)]
fn take_listener(h: Handover) -> std::io::Result<Taking> {
    Ok(Taking {
        listener: cordon_supervisor::take_listener(h.socket)?,
        rules: h.rules,
        sentinel: h.sentinel,
    })
}

#[cfg(not(linux_backends))]
fn take_listener(h: Handover) -> std::io::Result<Taking> {
    let _ = h;
    Err(std::io::Error::other("no supervisor on this platform"))
}

/// Starts the supervisor for a child just spawned.
#[cfg(linux_backends)]
fn start_supervisor(t: Taking) -> std::io::Result<JoinHandle<SupervisorSummary>> {
    let listener = t
        .listener
        .join()
        .map_err(|_| std::io::Error::other("the listener's handover panicked"))??;
    let (rules, sentinel) = (t.rules, t.sentinel);
    // The sentinel listens until the supervisor ends; the supervisor knows its address as the
    // stage's self-check (`cordon_supervisor::Network::self_check`).
    std::thread::Builder::new()
        .name("cordon-supervisor".into())
        .spawn(move || {
            let served = cordon_supervisor::serve(listener, &rules);
            drop(sentinel);
            match served {
                Ok(r) => SupervisorSummary {
                    handled: r.handled,
                    refused: r.refused,
                    refusals: r
                        .refusals
                        .into_iter()
                        .map(|x| Refused {
                            path: x.path,
                            rule: x.rule,
                            key: x.key,
                        })
                        .collect(),
                },
                // The listener is closed: every supervised call fails, none goes through.
                Err(_) => SupervisorSummary::default(),
            }
        })
}

#[cfg(not(linux_backends))]
fn start_supervisor(t: Taking) -> std::io::Result<JoinHandle<SupervisorSummary>> {
    let _ = t;
    Err(std::io::Error::other("no supervisor on this platform"))
}

/// A spawn request: the command, and where its outcome goes.
type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// The thread that forks children which outlive the call that made them; it never ends.
static SPAWNER: std::sync::OnceLock<std::sync::Mutex<mpsc::Sender<SpawnRequest>>> =
    std::sync::OnceLock::new();

/// Spawns `command` from [`SPAWNER`]'s thread (started on first use).
fn spawn_from_long_lived_thread(command: Command) -> std::io::Result<Child> {
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        // Without the thread, `rx` is dropped: every request below finds the channel closed
        // and says so.
        let _ = std::thread::Builder::new()
            .name("cordon-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            });
        std::sync::Mutex::new(tx)
    });
    let (reply, answer) = mpsc::channel();
    let gone = || std::io::Error::other("cordon's spawner thread is gone");
    sender
        .lock()
        .map_err(|_| gone())?
        .send((command, reply))
        .map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

/// The result of supervising one process.
#[derive(Debug, Clone)]
pub struct Supervised {
    /// How it ended.
    pub exit: Exit,
    /// Standard output.
    pub stdout: Captured,
    /// Standard error.
    pub stderr: Captured,
    /// Wall-clock time from spawn to exit.
    pub duration: Duration,
    /// What the stage reported on its status pipe (empty when it never wrote).
    pub status_line: String,
    /// What the supervisor did, when one served the jail and ended in time.
    pub supervisor: Option<SupervisorSummary>,
}

fn reader<R: Read + Send + 'static>(
    mut from: R,
    cap: u64,
    forward: Option<Box<dyn Write + Send>>,
) -> JoinHandle<Captured> {
    std::thread::spawn(move || {
        let mut captured = Captured::default();
        let mut forward = forward;
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let room = usize::try_from(cap.saturating_sub(captured.total)).unwrap_or(usize::MAX);
            let keep = n.min(room);
            captured.bytes.extend_from_slice(&buf[..keep]);
            if let Some(w) = forward.as_mut()
                && (w.write_all(&buf[..keep]).is_err() || w.flush().is_err())
            {
                forward = None;
            }
            if keep < n {
                captured.truncated = true;
            }
            captured.total += n as u64;
        }
        captured
    })
}

/// Spawns `command` (stdout and stderr are piped here) and supervises it to the end.
pub fn supervise(command: Command, sup: Supervision) -> std::io::Result<Supervised> {
    let timeout = sup.timeout;
    spawn(command, sup)?.wait(timeout)
}

/// A spawned command whose end has not been waited for: its output is already being read, its
/// exit is already being waited for on a thread of its own.
#[derive(Debug)]
pub(crate) struct Running {
    start: Instant,
    /// The first process and its process group, as they may be killed (ending.rs).
    leader: std::sync::Arc<crate::host::ending::Leader>,
    /// The session reaper's process group the child was spawned into, released after its end.
    group: Option<(&'static crate::host::reaper::Session, i32)>,
    out: Option<JoinHandle<Captured>>,
    err: Option<JoinHandle<Captured>>,
    status_reader: Option<JoinHandle<String>>,
    reported: mpsc::Receiver<()>,
    exited: mpsc::Receiver<std::io::Result<std::process::ExitStatus>>,
    waiter: JoinHandle<()>,
    supervisor: Option<JoinHandle<SupervisorSummary>>,
}

/// Spawns `command` (stdout and stderr piped here, read from now on); `sup.timeout` is not used
/// here but by [`Running::wait`].
pub(crate) fn spawn(mut command: Command, sup: Supervision) -> std::io::Result<Running> {
    command
        .stdin(if sup.inherit_stdin {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if crate::host::ending::is_ending() {
        return Err(std::io::Error::other(
            "this process is ending its jails: no jail is started",
        ));
    }
    // A process group the session reaper made and holds (reaper.rs), else one of its own.
    let group = sup.session.and_then(|s| s.group().map(|g| (s, g)));
    if let Some((_, pgid)) = group {
        command.process_group(pgid);
    }
    let taking = match sup.supervisor.map(take_listener).transpose() {
        Ok(t) => t,
        Err(e) => {
            if let Some((session, pgid)) = group {
                session.release_group(pgid);
            }
            return Err(e);
        }
    };
    let start = Instant::now();
    let spawned = if sup.from_long_lived_thread {
        spawn_from_long_lived_thread(command)
    } else {
        command.spawn()
    };
    drop(sup.hold);
    let mut child: Child = match spawned {
        Ok(child) => child,
        Err(e) => {
            if let Some((session, pgid)) = group {
                session.release_group(pgid);
            }
            return Err(e);
        }
    };
    let supervisor = match taking.map(start_supervisor).transpose() {
        Ok(s) => s,
        Err(e) => {
            // Its supervised calls would wait for ever: the child goes.
            let _ = child.kill();
            let _ = child.wait();
            if let Some((session, pgid)) = group {
                session.release_group(pgid);
            }
            return Err(std::io::Error::new(
                e.kind(),
                format!("starting the jail's supervisor: {e}"),
            ));
        }
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let leader = std::sync::Arc::new(crate::host::ending::Leader::new(
        group.map_or(pid, |(_, pgid)| pgid),
        pid,
        group.is_some(),
    ));
    crate::host::ending::listed(&leader);
    let forward = sup.forward == Forward::ToOwnStdio;
    let out = child.stdout.take().map(|s| {
        reader(
            s,
            sup.output_cap,
            forward.then(|| Box::new(std::io::stdout()) as Box<dyn Write + Send>),
        )
    });
    let err = child.stderr.take().map(|s| {
        reader(
            s,
            sup.output_cap,
            forward.then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>),
        )
    });
    let (report_tx, reported) = mpsc::channel();
    let status_reader = sup.status.map(|fd| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut file = std::fs::File::from(fd).take(4096);
            let mut buf = [0u8; 512];
            loop {
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        bytes.extend_from_slice(&buf[..n]);
                        // The stage's report arrives in one write: say it came.
                        let _ = report_tx.send(());
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    });
    let (tx, exited) = mpsc::channel();
    let waiting = leader.clone();
    let waiter = std::thread::spawn(move || {
        // Exited but not reaped, the first process still holds its pid (and its group's
        // number): what it left in the group is killed before it is reaped (ending.rs).
        let exited = crate::host::sys::exited_status_keeping_zombie(pid).is_ok();
        waiting.exited(exited);
        let status = child.wait();
        let _ = tx.send(status);
    });
    Ok(Running {
        start,
        leader,
        group,
        out,
        err,
        status_reader,
        reported,
        exited,
        waiter,
        supervisor,
    })
}

impl Running {
    /// Restarts the clock: the command's time (and its timeout) counts from now. A jail built
    /// ahead of its command (warm.rs) is timed from the moment it is given one.
    pub(crate) fn restart_clock(&mut self) {
        self.start = Instant::now();
    }

    /// Waits up to `timeout` for the stage's report on the status descriptor (or the end of
    /// the descriptor); whether it came.
    pub(crate) fn wait_for_report(&self, timeout: Duration) -> bool {
        !matches!(
            self.reported.recv_timeout(timeout),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    }

    /// Whether the process has exited (without waiting).
    pub(crate) fn has_exited(&self) -> bool {
        self.waiter.is_finished()
    }

    /// Waits for the end, at most `timeout` from the clock's start; past it the whole process
    /// group is killed.
    pub(crate) fn wait(self, timeout: Option<Duration>) -> std::io::Result<Supervised> {
        let waited = match timeout {
            Some(t) => self
                .exited
                .recv_timeout(t.saturating_sub(self.start.elapsed()))
                .ok(),
            None => self.exited.recv().ok(),
        };
        let exit = match waited {
            Some(status) => {
                // What the command left running in its process group is already gone: the
                // waiter killed it before reaping the first process.
                let status = status?;
                match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(sig)) => Exit::Signal(sig),
                    (None, None) => Exit::Code(-1),
                }
            }
            None => {
                self.leader.kill_group();
                let _ = self.exited.recv();
                Exit::TimedOut
            }
        };
        let duration = self.start.elapsed();
        let _ = self.waiter.join();
        if let Some((session, pgid)) = self.group
            && self.leader.release()
        {
            session.release_group(pgid);
        }
        let stdout = self.out.and_then(|h| h.join().ok()).unwrap_or_default();
        let stderr = self.err.and_then(|h| h.join().ok()).unwrap_or_default();
        let status_line = self
            .status_reader
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        // Every process under the filter is gone once reaped; a straggler not yet reaped by
        // its new parent is waited for a little, then the report is left behind.
        let supervisor = self.supervisor.and_then(|h| {
            let until = Instant::now() + Duration::from_secs(2);
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            h.is_finished().then(|| h.join().ok()).flatten()
        });
        Ok(Supervised {
            exit,
            stdout,
            stderr,
            duration,
            status_line,
            supervisor,
        })
    }

    /// Kills the whole process group and waits for it: a command that will not be needed.
    pub(crate) fn discard(self) {
        self.leader.kill_group();
        let _ = self.wait(None);
    }
}
