//! Ending this process's jails when it is told to stop (the CLI's SIGTERM, SIGINT and SIGHUP),
//! and the rule every kill of a jail's process group by the launcher follows.
//!
//! Every spawned jail's first process has a [`Leader`], listed here while it lives.
//! [`end_all`] refuses every spawn from then on, kills every listed jail's process group and
//! waits (bounded) until no live process is left in them, so that a `cordon run` told to stop
//! exits only once its jail is gone. What the runs made on the host is removed by the runs
//! themselves as they end, or by the session reaper once the process has exited.
//!
//! Killing `-pgid` is sound only while the group cannot have been made again by an unrelated
//! process: while the first process is not yet reaped (alive or a zombie, its pid, which is the
//! group's number, stays taken), or, for a group the session reaper made, until the launcher
//! releases it (groups.rs: a zombie of the reaper's holds it). So the waiter thread waits for
//! the first process to exit *without reaping it* (`WNOWAIT`), kills what it left in its group,
//! marks it reaped under the leader's lock and only then reaps it; every other kill (timeout,
//! discard, [`end_all`]) takes the same lock and kills only while the group is still the
//! jail's. A group is not released to the reaper while the process is ending, so [`end_all`]
//! can watch it empty.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// A jail's first process and its process group, as the launcher may kill it.
#[derive(Debug)]
pub(crate) struct Leader {
    pgid: i32,
    /// The first process: told to end (`SIGTERM`) with every kill while it is not reaped. The
    /// Landlock backend's stage, an init out of the group, then ends every process of the jail
    /// (stage/init.rs); any other first process is in the group and already killed.
    first: i32,
    /// Whether the group is one the session reaper made (held until released).
    pinned: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The first process is reaped, or about to be (set under the lock before `wait`).
    reaped: bool,
    /// The reaper's group was released to it.
    released: bool,
}

impl Leader {
    /// The leader of a jail spawned into `pgid` (a group the reaper made when `pinned`, else
    /// the first process's own).
    pub(crate) fn new(pgid: i32, first: i32, pinned: bool) -> Leader {
        Leader {
            pgid,
            first,
            pinned,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether the group is still the jail's (see the module's documentation).
    fn ours(&self, state: &State) -> bool {
        !state.reaped || (self.pinned && !state.released)
    }

    fn kill(&self, state: &State) {
        if let Some(group) = rustix::process::Pid::from_raw(self.pgid) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        // Not reaped, the first process's pid is still its own.
        if !state.reaped
            && let Some(first) = rustix::process::Pid::from_raw(self.first)
        {
            let _ = rustix::process::kill_process(first, rustix::process::Signal::TERM);
        }
    }

    /// Kills the jail's whole process group, if it is still the jail's.
    pub(crate) fn kill_group(&self) {
        if let Ok(state) = self.state.lock()
            && self.ours(&state)
        {
            self.kill(&state);
        }
    }

    /// The first process has exited and is about to be reaped: with `kill`, what it left in
    /// its group goes now (a jail without a PID namespace cannot leave the group: seccomp
    /// refuses setsid and setpgid). From here on only a pinned group is killed.
    pub(crate) fn exited(&self, kill: bool) {
        if let Ok(mut state) = self.state.lock() {
            if kill && self.ours(&state) {
                self.kill(&state);
            }
            state.reaped = true;
        }
    }

    /// The launcher is done with the group: whether it may release it to the reaper now. Not
    /// while the process is ending ([`end_all`] may be watching it; the reaper reaps it after
    /// the process exits).
    pub(crate) fn release(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if ENDING.load(Ordering::SeqCst) {
            return false;
        }
        state.released = true;
        true
    }

    /// Waits until no live process is left in the group, while it is the jail's, or until
    /// `deadline`.
    fn wait_empty(&self, deadline: Instant) {
        loop {
            if let Ok(state) = self.state.lock()
                && (!self.ours(&state) || !crate::host::groups::has_live_members(self.pgid))
            {
                return;
            }
            if Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Whether [`end_all`] was called: no jail starts any more.
static ENDING: AtomicBool = AtomicBool::new(false);

/// The leaders of the jails that may still be alive.
static LIVE: Mutex<Vec<Weak<Leader>>> = Mutex::new(Vec::new());

/// Whether this process is ending its jails (a spawn is refused).
pub(crate) fn is_ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// Lists a spawned jail's leader; kills its group at once when the process is already ending
/// (a spawn that raced [`end_all`]).
pub(crate) fn listed(leader: &Arc<Leader>) {
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|l| l.strong_count() > 0);
        live.push(Arc::downgrade(leader));
    }
    if is_ending() {
        leader.kill_group();
    }
}

/// Ends every jail this process started: no jail starts from now on, every listed jail's
/// process group is killed, and this waits until none has a live process left, or `patience`
/// has passed. For a process about to exit (the CLI told to stop by a signal).
pub fn end_all(patience: Duration) {
    let deadline = Instant::now() + patience;
    ENDING.store(true, Ordering::SeqCst);
    let live: Vec<Arc<Leader>> = LIVE
        .lock()
        .map(|l| l.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default();
    for leader in &live {
        leader.kill_group();
    }
    for leader in &live {
        leader.wait_empty(deadline);
    }
}

/// The termination signal this process received (0: none yet).
static SIGNALLED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Makes SIGTERM, SIGINT and SIGHUP end this process's jails: it blocks them (call it before
/// starting any thread, so that every thread inherits the mask; every child the launcher
/// spawns unblocks them before `exec`)
/// and starts a thread that waits for them. On the first, every jail is ended ([`end_all`]),
/// then the process exits with 128 + the signal's number after at most `linger` (time for the
/// main thread to finish its run, which exits the same way after checking
/// [`termination_signal`]).
pub fn end_jails_on_signals(linger: Duration) -> std::io::Result<()> {
    crate::host::sys::block_termination_signals()?;
    std::thread::Builder::new()
        .name("cordon-signals".into())
        .spawn(move || {
            let Ok(signal) = crate::host::sys::wait_termination_signal() else {
                return;
            };
            SIGNALLED.store(signal, Ordering::SeqCst);
            end_all(Duration::from_secs(2));
            std::thread::sleep(linger);
            std::process::exit(128 + signal);
        })?;
    Ok(())
}

/// The termination signal this process received, if any (its exit code is then 128 + it).
pub fn termination_signal() -> Option<i32> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}
