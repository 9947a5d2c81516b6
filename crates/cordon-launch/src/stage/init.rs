//! The stage as the jail's init, where no PID namespace holds the jail (the Landlock backend on
//! a kernel with Landlock's signal scope).
//!
//! Without a PID namespace nothing ends a process that left the jail's process group, so the
//! seccomp filter used to refuse `setsid` and `setpgid`, and terminals, daemons and job control
//! failed. Here the stage stays, instead of `exec`ing the payload:
//!
//! - before its report it checks that its own Landlock domain scopes signals (it must fail to
//!   signal the launcher, its parent: a jail whose signals are not scoped is refused), becomes
//!   a child subreaper (every orphan of the jail is re-parented to it, whatever its session),
//!   re-arms its parent-death signal as `SIGTERM`, and leaves the jail's process group for one
//!   of its own, so that the group kill of the launcher and the session reaper no longer
//!   reaches it;
//! - it forks the payload, which rejoins the jail's group and, before `exec`, enters a *nested*
//!   Landlock domain that only scopes signals: nothing the command starts can signal or trace
//!   the stage, while the stage can signal all of it;
//! - it waits for the payload (reaping the orphans it inherits meanwhile), or for `SIGTERM`
//!   (the launcher's timeout, discard or end, or the launcher's death);
//! - then it ends the jail: `kill(-1, SIGKILL)` reaches exactly the processes of the jail's
//!   domain (the scope checked above keeps every other process out of reach, root's included),
//!   repeated while it reaps, until it has no child left — every process of the jail descends
//!   from it, and an orphan comes back to it — or 10 s have passed (a process in an
//!   uninterruptible sleep dies when it leaves it, its `SIGKILL` pending);
//! - last it exits as the payload did (its code, or its signal with core dumps off).
//!
//! The filter then lets `setsid` and `setpgid` through (`FilterSpec::sessions_reaped`). What it
//! cannot answer: the stage killed from outside the jail (by the host's user or the OOM
//! killer) leaves the processes that left the group running; `docs/limits.md` says so.
//!
//! The only module of the stage with `unsafe`: signal masks, `sigwaitinfo`, `waitpid`, `kill`,
//! `prctl` and the payload's `pre_exec`.

#![allow(unsafe_code)]

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use cordon_landlock::{Abi, Ruleset};

/// What the stage prepared before its report.
pub(crate) struct Init {
    /// The nested domain the payload enters.
    scope: Ruleset,
    /// The jail's process group, which the payload rejoins.
    group: libc::pid_t,
    /// `SIGCHLD` and `SIGTERM`, blocked here and taken with `sigwaitinfo`.
    signals: libc::sigset_t,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Everything that can fail before the stage reports: the scope check, the subreaper, the
/// parent-death signal, the group of its own. An `Err` refuses the run.
pub(crate) fn prepare() -> Result<Init, String> {
    let abi = Abi::detect().map_err(|e| format!("the stage's init needs Landlock: {e}"))?;
    let scope = Ruleset::signals_only(abi)
        .map_err(|e| format!("cannot make the command's nested Landlock domain: {e}"))?;
    // SAFETY: getppid and getpgrp take no arguments and cannot fail.
    let (parent, group) = unsafe { (libc::getppid(), libc::getpgrp()) };
    // SAFETY: kill with signal 0 only checks permission; it sends nothing.
    let reached = unsafe { libc::kill(parent, 0) } == 0;
    if reached || errno() != libc::EPERM {
        return Err(format!(
            "the jail's signals are not scoped: the stage can signal its launcher (pid {parent}), \
             so it cannot end the jail's processes by their domain"
        ));
    }
    // SAFETY: sigemptyset/sigaddset write only the local set; pthread_sigmask reads it (the
    // stage is single-threaded, so the mask is the process's).
    let signals = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err("cannot block SIGCHLD and SIGTERM in the stage".into());
        }
        set
    };
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(format!(
            "cannot make the stage a child subreaper (errno {})",
            errno()
        ));
    }
    // SAFETY: as above; the parent is checked again once the signal is armed.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0) } != 0
        || unsafe { libc::getppid() } != parent
    {
        return Err("the launcher is gone, or its death cannot be watched".into());
    }
    // SAFETY: setpgid(0, 0) makes the caller a group of its own.
    if unsafe { libc::setpgid(0, 0) } != 0 {
        return Err(format!(
            "the stage cannot leave the jail's process group (errno {})",
            errno()
        ));
    }
    Ok(Init {
        scope,
        group,
        signals,
    })
}

/// How the payload ended.
#[derive(Clone, Copy)]
enum End {
    Code(i32),
    Signal(i32),
}

fn end_of(status: libc::c_int) -> End {
    if libc::WIFSIGNALED(status) {
        End::Signal(libc::WTERMSIG(status))
    } else {
        End::Code(libc::WEXITSTATUS(status))
    }
}

impl Init {
    /// Runs `argv` as the payload, waits, ends the jail, and ends as the payload did. Returns
    /// only an exit code (the payload could not be started, or its signal did not end the
    /// stage).
    pub(crate) fn run(self, argv: &[OsString]) -> i32 {
        let Some((program, rest)) = argv.split_first() else {
            return 0;
        };
        let mut command = std::process::Command::new(program);
        command.args(rest);
        let Init {
            scope,
            group,
            signals,
        } = self;
        // SAFETY: the hook makes only async-signal-safe calls (pthread_sigmask, setpgid, and
        // restrict_self's prctl and landlock_restrict_self) on values made before the fork,
        // and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::pthread_sigmask(libc::SIG_UNBLOCK, &signals, std::ptr::null_mut()) != 0
                    || libc::setpgid(0, group) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                scope
                    .restrict_self()
                    .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
            });
        }
        let payload = match command.spawn() {
            Ok(child) => i32::try_from(child.id()).unwrap_or(-1),
            Err(err) => {
                eprintln!(
                    "cordon: cannot execute {}: {err}",
                    program.to_string_lossy()
                );
                return if err.kind() == std::io::ErrorKind::NotFound {
                    127
                } else {
                    126
                };
            }
        };
        let mut end = None;
        while end.is_none() {
            // SAFETY: sigwaitinfo writes the info of one of the blocked signals.
            let signal = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::sigwaitinfo(&signals, &mut info)
            };
            if signal == libc::SIGTERM {
                break;
            }
            // SIGCHLD (or EINTR): reap what ended, the payload or an orphan.
            while let Reaped::Child(pid, status) = reap() {
                if pid == payload {
                    end = Some(end_of(status));
                }
            }
        }
        let end = end_jail(&signals, payload, end);
        mirror(end)
    }
}

/// What one `waitpid(-1, WNOHANG)` found.
enum Reaped {
    /// A child ended: its pid and status.
    Child(libc::pid_t, libc::c_int),
    /// Children are left, none has ended.
    Running,
    /// No child is left.
    NoChild,
}

/// One `waitpid(-1, WNOHANG)` (retried on `EINTR`).
fn reap() -> Reaped {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only the status.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            return Reaped::Child(pid, status);
        }
        match (pid < 0).then(errno) {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Reaped::NoChild,
            _ => return Reaped::Running,
        }
    }
}

/// How long the stage waits for the killed processes to be gone: a process stuck in an
/// uninterruptible sleep (a hung network filesystem) dies only when it leaves it, with its
/// `SIGKILL` pending, and never runs the command's code again; the stage does not wait for it.
const END_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Kills every process of the jail's domain until the stage has no child left (or
/// [`END_PATIENCE`] has passed); the payload's end, if it is reaped here.
fn end_jail(signals: &libc::sigset_t, payload: libc::pid_t, mut end: Option<End>) -> End {
    let deadline = std::time::Instant::now() + END_PATIENCE;
    loop {
        // SAFETY: kill(-1) reaches only the processes of this domain (checked in `prepare`).
        unsafe { libc::kill(-1, libc::SIGKILL) };
        match reap() {
            Reaped::Child(pid, status) => {
                if pid == payload {
                    end = Some(end_of(status));
                }
                continue;
            }
            Reaped::NoChild => break,
            Reaped::Running => {}
        }
        if std::time::Instant::now() >= deadline {
            break;
        }
        // Children left, none ended yet: wait for a SIGCHLD (blocked, so it stays pending).
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 10_000_000,
        };
        // SAFETY: sigtimedwait reads the set and the timeout; no info is asked for.
        unsafe { libc::sigtimedwait(signals, std::ptr::null_mut(), &pause) };
    }
    end.unwrap_or(End::Signal(libc::SIGKILL))
}

/// Ends the stage as the payload ended.
fn mirror(end: End) -> i32 {
    match end {
        End::Code(code) => code,
        End::Signal(signal) => {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: setrlimit reads the limit; signal/sigprocmask/raise take integers and a
            // local set. The stage has no handler of its own to lose.
            unsafe {
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(signal, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, signal);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(signal);
            }
            128 + signal
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stage_whose_signals_reach_its_parent_is_refused_before_it_changes_anything() {
        // The test process is in no Landlock domain: it can signal its parent, so the stage
        // must refuse to be an init here (a `kill(-1)` would reach every process of the user).
        let Err(reason) = super::prepare() else {
            panic!("an unscoped process was made the jail's init");
        };
        let scopes = cordon_landlock::Abi::detect().is_ok_and(|a| a.supports_scopes());
        assert!(!scopes || reason.contains("not scoped"), "{reason}");
        // Refused before the signal mask changed: SIGTERM is not blocked.
        let mask = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        let blocked = mask
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or(0);
        assert_eq!(blocked & (1 << (libc::SIGTERM - 1)), 0, "SIGTERM blocked");
    }
}
