//! The process groups the session reaper makes for jails, and why killing one is sound in every
//! order of deaths.
//!
//! Every jail is spawned into a process group the reaper made, never into one named after the
//! jail's own first process. The reaper forks a child that makes itself a new group (`setpgid(0,
//! 0)`) and exits at once, and the reaper does not reap it: a zombie, it keeps its pid taken,
//! and a process group ID is a pid (the kernel frees the number only once no process uses it
//! as a pid, a process group or a session). So until the reaper reaps that zombie, the group
//! of that number cannot be made again by anyone else, and the only processes in it are the
//! ones that joined it: the jail, spawned into it with `setpgid` before `exec`, and
//! everything the jail starts (a child inherits its parent's group; the Landlock backend's
//! seccomp filter refuses `setsid` and `setpgid`, so no process of a Landlock jail leaves it).
//! `setpgid` lets a process join only a group of its own session, and move only itself or a
//! child of its own, so nothing outside the launcher's session can be put in it; a process of
//! that session that joins it on purpose is ended with the jail. The reaper hands the group
//! out on its answer pipe (its standard output) — `g <pgid>`, one at a time, always one made
//! ahead — and the launcher claims it (`+g <pgid>`) before the spawn and releases it (`-g
//! <pgid>`) once the jail has ended and its group has been killed; only then does the reaper
//! reap the zombie (a group is claimed before anything is spawned into it, so an unclaimed one
//! is empty). Killing `-pgid` is therefore sound in *every order of deaths*: whether the
//! jail's first process is alive, a zombie, or long reaped by the host's init, the group is
//! still the jail's, and the reaper (and the launcher, until it releases it) keeps sending
//! SIGKILL to it until no live process is left in it. A single SIGKILL to a group already
//! reaches every member, including a child being forked at that moment (the kernel makes the
//! fork fail or delivers the signal to the child too), so nothing can slip out between two
//! kills. When the pipe closes the reaper kills every claimed group it has not released, waits
//! for them to empty, then reaps its zombies. The launcher's own kills of a jail's group follow
//! the same rule (`ending.rs`): only while the group is held, by the reaper's zombie or by the
//! jail's first process not yet reaped.
//!
//! The pin is `sys::fork_group_pin`; the protocol around it, `reaper.rs`.

use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// Whether any process in the process group `pgid` is alive (not a zombie), from `/proc`.
/// Meaningful only while the group cannot have been made again (see the module's
/// documentation).
pub(crate) fn has_live_members(pgid: i32) -> bool {
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if !entry.file_name().as_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold anything, so from the last `)`.
        let mut fields = stat
            .rfind(')')
            .map(|i| stat[i + 1..].split_whitespace())
            .into_iter()
            .flatten();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid) && !matches!(state, Some("Z" | "X" | "x")) {
            return true;
        }
    }
    false
}

/// Kills the process group `pgid` with SIGKILL until no live process is left in it, or
/// `deadline` passes. Only for a group that cannot have been made again meanwhile: one the
/// reaper made and has not released (see the module's documentation).
pub(crate) fn end_group(pgid: i32, deadline: Instant) {
    let Some(group) = rustix::process::Pid::from_raw(pgid) else {
        return;
    };
    loop {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        if !has_live_members(pgid) || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
