//! The few raw kernel calls the launcher needs, each behind a safe function. This is the only
//! module of the crate allowed to use `unsafe`.
#![allow(unsafe_code)]

use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use cordon_policy::Limits;

/// A sealed-enough in-memory file holding `bytes`, positioned at the start, close-on-exec (the
/// spawn hook clears that flag for the descriptors the backend needs).
pub fn memfd_with(name: &str, bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(OwnedFd::from(file))
}

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A close-on-exec connected pair of stream sockets (a command channel whose writer is never
/// killed by `SIGPIPE`: see [`send_all`]).
pub fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::STREAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Writes all of `bytes` to the socket `fd` with `MSG_NOSIGNAL`: a peer that is gone gives
/// `EPIPE`, never a `SIGPIPE` in a harness that has not ignored it.
pub fn send_all(fd: &OwnedFd, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match rustix::net::send(fd, bytes, rustix::net::SendFlags::NOSIGNAL) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Sends the descriptor `fd` over the socket `channel` (`SCM_RIGHTS`, one byte of data).
pub(crate) fn send_fd(channel: &OwnedFd, fd: &OwnedFd) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, sendmsg};
    use std::os::fd::AsFd;
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd.as_fd()];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("no room for the descriptor"));
    }
    loop {
        match sendmsg(
            channel,
            &[std::io::IoSlice::new(b"L")],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(1) => return Ok(()),
            Ok(_) => return Err(std::io::ErrorKind::WriteZero.into()),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one descriptor sent with [`send_fd`] on `channel` (close-on-exec); `Ok(None)` when
/// the peer closed without sending one.
pub(crate) fn recv_fd(channel: &OwnedFd) -> std::io::Result<Option<OwnedFd>> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    loop {
        match recvmsg(
            channel,
            &mut [std::io::IoSliceMut::new(&mut byte)],
            &mut control,
            #[cfg(target_os = "linux")]
            RecvFlags::CMSG_CLOEXEC,
            #[cfg(not(target_os = "linux"))]
            RecvFlags::empty(),
        ) {
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut received = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                // More than one: the first is kept, the others close when dropped.
                if received.is_none() {
                    received = Some(fd);
                }
            }
        }
    }
    Ok(received)
}

/// Waits until one of `fds` is readable (or hung up, or in error); the index of the first.
pub(crate) fn wait_readable(fds: &[&OwnedFd]) -> std::io::Result<usize> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut polled: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::new(*fd, PollFlags::IN))
        .collect();
    loop {
        match poll(&mut polled, None) {
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(polled
        .iter()
        .position(|p| !p.revents().is_empty())
        .unwrap_or(0))
}

/// One resource limit to set in the child.
#[derive(Debug, Clone, Copy)]
struct Rlimit {
    resource: libc::__rlimit_resource_t,
    value: u64,
}

fn rlimits(limits: &Limits) -> Vec<Rlimit> {
    let mut out = vec![Rlimit {
        resource: libc::RLIMIT_CORE,
        value: 0,
    }];
    let pairs = [
        (libc::RLIMIT_CPU, limits.cpu_secs),
        (libc::RLIMIT_FSIZE, limits.file_size_bytes),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_NPROC, limits.processes),
        (libc::RLIMIT_AS, limits.address_space_bytes),
    ];
    for (resource, value) in pairs {
        if let Some(value) = value {
            out.push(Rlimit { resource, value });
        }
    }
    out
}

/// Arranges for the spawned process to: start its own process group, get the policy's resource
/// limits, and inherit no descriptor but stdio and `keep` (every other one is marked
/// close-on-exec, so std's own exec-status pipe keeps working).
///
/// It also dies with the launcher (`PR_SET_PDEATHSIG`, checked against a launcher that died before
/// the signal was armed): bubblewrap's own `--die-with-parent` is armed only after it starts, and
/// a launcher killed in between would leave the jail running.
pub fn prepare_child(command: &mut Command, limits: &Limits, keep: &[RawFd]) {
    spawn_hook(command, rlimits(limits), keep, true);
}

/// [`prepare_child`], with the parent-death signal only when `die_with_parent` (a mutants
/// build's `no-kill-after-launcher-death` takes it away; every other caller passes `true`).
pub(crate) fn prepare_child_with(
    command: &mut Command,
    limits: &Limits,
    keep: &[RawFd],
    die_with_parent: bool,
) {
    spawn_hook(command, rlimits(limits), keep, die_with_parent);
}

/// Forks a child that makes itself a new process group and exits at once, and waits for it to
/// exit *without reaping it*: a zombie, it holds its pid, and so the process group of that
/// number, until this process reaps it ([`reap_child`]). The group's id. Safe from any process:
/// the child makes only async-signal-safe calls (`setpgid`, `_exit`).
pub(crate) fn fork_group_pin() -> std::io::Result<i32> {
    // SAFETY: the child calls only setpgid and _exit, both async-signal-safe, so it is sound
    // even in a process with several threads.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: raw calls; `_exit` ends the child without running anything of the parent's.
        unsafe {
            let code = if libc::setpgid(0, 0) == 0 { 0 } else { 1 };
            libc::_exit(code);
        }
    }
    match exited_status_keeping_zombie(pid) {
        Ok(0) => Ok(pid),
        Ok(_) => {
            reap_child(pid);
            Err(std::io::Error::other(
                "the group's first process could not make its group",
            ))
        }
        Err(e) => {
            reap_child(pid);
            Err(e)
        }
    }
}

/// Waits until the child `pid` has exited, leaving it a zombie (`waitid` with `WNOWAIT`): its
/// pid and process group stay taken until it is reaped. Its exit code (or 128 + the signal).
pub(crate) fn exited_status_keeping_zombie(pid: i32) -> std::io::Result<i32> {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid writes only into `info`.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // SAFETY: after a successful waitid for WEXITED, si_status is set.
            let status = unsafe { info.si_status() };
            return Ok(if info.si_code == libc::CLD_EXITED {
                status
            } else {
                128 + status
            });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reaps the child `pid` (blocking until it has exited).
pub(crate) fn reap_child(pid: i32) {
    loop {
        // SAFETY: waitpid with a null status pointer touches no memory of ours.
        let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if rc >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// The signals that end a `cordon run` or `cordon serve` (SIGTERM, SIGINT, SIGHUP).
fn termination_set() -> libc::sigset_t {
    // SAFETY: sigemptyset and sigaddset only write into the set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, and so in every thread it starts
/// from now on, so that only [`wait_termination_signal`] takes them. A signal mask survives
/// fork and exec: every child the launcher spawns unblocks them before `exec` (`spawn_hook`).
pub(crate) fn block_termination_signals() -> std::io::Result<()> {
    let set = termination_set();
    // SAFETY: pthread_sigmask reads the set and writes nothing else.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

/// Waits for SIGTERM, SIGINT or SIGHUP (blocked beforehand); its number.
pub(crate) fn wait_termination_signal() -> std::io::Result<i32> {
    let set = termination_set();
    let mut sig: libc::c_int = 0;
    // SAFETY: sigwait reads the set and writes the signal number.
    let rc = unsafe { libc::sigwait(&set, &mut sig) };
    if rc == 0 {
        Ok(sig)
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

/// Names the calling thread (the process's `comm`, as `ps` and `/proc/<pid>/comm` show it).
pub(crate) fn set_name(name: &std::ffi::CStr) {
    // SAFETY: PR_SET_NAME copies at most 16 bytes from a NUL-terminated string that outlives the
    // call.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0) };
}

/// Forks a child that runs `body` with `stdin` as its standard input, `stdout` as its standard
/// output and `/dev/null` as its standard error, in a process group of its own and with no other descriptor open, then exits with
/// what `body` returned; its pid. `Ok(None)`, and nothing forked, unless this process has exactly
/// one thread: a child forked from several threads may find a lock held by a thread it does not
/// have, and so could only make async-signal-safe calls. With one thread, the child is a plain
/// copy (no `exec`: a fraction of a millisecond instead of a whole program start).
pub(crate) fn fork_single_threaded(
    stdin: OwnedFd,
    stdout: OwnedFd,
    body: fn() -> i32,
) -> std::io::Result<Option<i32>> {
    let threads = std::fs::read_dir("/proc/self/task")?.count();
    if threads != 1 {
        return Ok(None);
    }
    let null = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let (input, answers, output) = (stdin.as_raw_fd(), stdout.as_raw_fd(), null.as_raw_fd());
    // SAFETY: this process has one thread (checked above; only this thread could start another),
    // so the child is a consistent copy of it and may run ordinary Rust code. The child never
    // returns from this function: it ends in `_exit`, so nothing of the parent's state (buffered
    // output, destructors) is run or flushed twice.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: raw calls on descriptors this process owns; `_exit` ends the child.
        unsafe {
            let ok = libc::setpgid(0, 0) == 0
                && libc::dup2(input, 0) == 0
                && libc::dup2(answers, 1) == 1
                && libc::dup2(output, 2) == 2;
            if !ok {
                libc::_exit(1);
            }
            // Nothing of the parent's stays open here (a pipe a caller waits on to close, say).
            // Kernels before 5.9 have no close_range: each number up to the descriptor limit.
            if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
                let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(3, 1 << 20) as libc::c_int;
                for fd in 3..max {
                    libc::close(fd);
                }
            }
            libc::_exit(body());
        }
    }
    Ok(Some(pid))
}

/// Like [`prepare_child`] without resource limits: its own process group, and no descriptor
/// inherited but stdio and `keep` (for the leftovers reaper).
pub(crate) fn inherit_only(command: &mut Command, keep: &[RawFd]) {
    spawn_hook(command, Vec::new(), keep, false);
}

fn spawn_hook(command: &mut Command, limits: Vec<Rlimit>, keep: &[RawFd], die_with_parent: bool) {
    let mut keep: Vec<RawFd> = keep.to_vec();
    keep.sort_unstable();
    command.process_group(0);
    let parent = rustix::process::getpid().as_raw_nonzero().get();
    // The CLI blocks its termination signals in every thread (`block_termination_signals`),
    // and a signal mask survives fork and exec: the child starts with them unblocked.
    let unblock = termination_set();
    // SAFETY: the closure runs between fork and exec in the child. It only makes raw system calls
    // (sigprocmask, prctl, getppid, setrlimit, fcntl, close_range) on values computed before the
    // fork, allocates nothing and takes no locks, so it is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::sigprocmask(libc::SIG_UNBLOCK, &unblock, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if die_with_parent {
                let kill = libc::SIGKILL as libc::c_ulong;
                if libc::prctl(libc::PR_SET_PDEATHSIG, kill, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            for l in &limits {
                let lim = libc::rlimit {
                    rlim_cur: l.value,
                    rlim_max: l.value,
                };
                if libc::setrlimit(l.resource, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for &fd in &keep {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let mut start: u32 = 3;
            for &fd in &keep {
                let fd = fd as u32;
                if fd > start {
                    cloexec_range(start, fd - 1)?;
                }
                start = fd.saturating_add(1);
            }
            cloexec_range(start, u32::MAX)
        });
    }
}

/// Marks `first..=last` close-on-exec.
fn cloexec_range(first: u32, last: u32) -> std::io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets a flag on descriptors; it closes
    // nothing and touches no memory.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, last, CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        return Ok(());
    }
    // Kernels before 5.11: walk the table (bounded by the soft descriptor limit).
    let max = u32::try_from(
        rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(4096),
    )
    .unwrap_or(u32::MAX)
    .min(last.saturating_add(1));
    for fd in first..max {
        // SAFETY: fcntl on a descriptor number that may be closed just returns EBADF.
        unsafe { libc::fcntl(fd as RawFd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// Takes ownership of a descriptor number inherited from the launcher (the stage's status fd).
///
/// Returns `None` unless `fd` is open.
pub fn inherited_fd(fd: RawFd) -> Option<OwnedFd> {
    if fd < 3 {
        return None;
    }
    // SAFETY: fcntl(F_GETFD) only queries the flags of a descriptor number.
    let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
    // SAFETY: the descriptor is open and, by the stage protocol, handed to this process alone.
    open.then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Marks every descriptor above stderr close-on-exec, so the payload inherits only stdio.
pub fn cloexec_all_but_stdio() -> std::io::Result<()> {
    cloexec_range(3, u32::MAX)
}

/// Raw number of an owned descriptor.
pub fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}

/// Makes the spawned process write `0` to `procs` (an open `tasks` or `cgroup.procs`) before it
/// executes, which moves it, and so everything it starts, into that control group. The child is
/// single-threaded at that point, so moving the calling thread moves the whole process.
pub fn join_cgroup_before_exec(command: &mut Command, procs: OwnedFd) {
    let fd = procs.as_raw_fd();
    // The descriptor must stay open until the fork; the closure owns it from here on.
    let procs = std::sync::Arc::new(procs);
    // SAFETY: the closure runs between fork and exec in the child and only calls write(2) on a
    // descriptor opened before the fork; it allocates nothing and takes no locks.
    unsafe {
        command.pre_exec(move || {
            let _keep = &procs;
            if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `capset(2)`'s header (`_LINUX_CAPABILITY_VERSION_3`).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// One half of `capset(2)`'s data (version 3 takes two).
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP` and `SECBIT_NO_CAP_AMBIENT_RAISE`, each locked: uid 0
/// gains no capability on exec, and none can be raised again.
const SECURE_BITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x80;

/// Root's capabilities, all gone for good: bounding set, ambient set, and the process's own sets.
/// Async-signal-safe (only `prctl` and `capset`).
#[cfg(linux_backends)]
fn drop_capabilities(last_cap: libc::c_ulong) -> std::io::Result<()> {
    // SAFETY: prctl and capset with integer arguments and pointers to live stack values.
    unsafe {
        if libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for cap in 0..=last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        let clear_all = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        if libc::prctl(libc::PR_CAP_AMBIENT, clear_all, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let header = CapHeader {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The highest capability number this kernel knows (`/proc/sys/kernel/cap_last_cap`).
#[cfg(linux_backends)]
fn last_capability() -> libc::c_ulong {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(63)
}

/// The Landlock backend's confinement, applied in the child between fork and exec, after
/// [`prepare_child`]'s hook: die with the launcher (unless `die_with_parent` is false: only a
/// mutants build's `no-kill-after-launcher-death`), drop every capability (`drop_caps`, for
/// root), no-new-privileges and the Landlock ruleset, then the seccomp program `filter` (the
/// bytes `cordon-seccomp` compiled). A failing step fails the spawn: nothing runs.
#[cfg(linux_backends)]
pub(crate) fn confine_alone(
    command: &mut Command,
    ruleset: cordon_landlock::Ruleset,
    filter: &[u8],
    drop_caps: bool,
    die_with_parent: bool,
    listener_to: Option<RawFd>,
) {
    let program = bpf_program(filter);
    let len = u16::try_from(program.len()).unwrap_or(u16::MAX);
    let last_cap = last_capability();
    let parent = rustix::process::getpid().as_raw_nonzero().get();
    // SAFETY: the closure runs between fork and exec in the child. It makes raw system calls
    // (prctl, getppid, capset, landlock_restrict_self) on values computed before the fork,
    // allocates nothing and takes no locks, so it is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if die_with_parent
                && libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if die_with_parent && libc::getppid() != parent {
                // The launcher died before the signal was armed.
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if drop_caps {
                drop_capabilities(last_cap)?;
            }
            ruleset
                .restrict_self()
                .map_err(|e| std::io::Error::from_raw_os_error(e.errno))?;
            match listener_to {
                // Its supervised calls wait for the launcher's supervisor (cordon-supervisor).
                Some(to) => cordon_supervisor::install_with_listener(&program, to),
                None => set_seccomp(&program, len),
            }
        });
    }
}

/// A C string of `path`, or `EINVAL` for one with a NUL byte.
#[cfg(linux_backends)]
fn c_path(path: &std::path::Path) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// A detached copy of the mount tree at `path`, its submounts and their flags included
/// (`open_tree` with `OPEN_TREE_CLONE | AT_RECURSIVE`), to be attached elsewhere with
/// [`attach_mount`]. The stage uses it to carry what bubblewrap mounted below a writable root
/// over onto the overlay that covers the root.
#[cfg(linux_backends)]
pub(crate) fn clone_mount(path: &std::path::Path) -> std::io::Result<OwnedFd> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let path = c_path(path)?;
    let flags = OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint;
    // SAFETY: open_tree with a live C string; the result is a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(|_| std::io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Attaches the detached mount tree `tree` ([`clone_mount`]) at `at` (`move_mount`).
#[cfg(linux_backends)]
pub(crate) fn attach_mount(tree: &OwnedFd, at: &std::path::Path) -> std::io::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
    let at = c_path(at)?;
    let empty = c"";
    // SAFETY: move_mount with a live descriptor and live C strings.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_FDCWD,
            at.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Mounts an overlay at `at` with `options` (`lowerdir=…,upperdir=…,workdir=…,userxattr`),
/// without set-id programs or device files.
#[cfg(linux_backends)]
pub(crate) fn mount_overlay(at: &std::path::Path, options: &str) -> std::io::Result<()> {
    let at = c_path(at)?;
    let options = std::ffi::CString::new(options)
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let (source, kind) = (c"overlay", c"overlay");
    // SAFETY: mount with live C strings.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            at.as_ptr(),
            kind.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Detaches the mount at `at` (`umount2` with `MNT_DETACH`).
#[cfg(linux_backends)]
pub(crate) fn detach_mount(at: &std::path::Path) -> std::io::Result<()> {
    let at = c_path(at)?;
    // SAFETY: umount2 with a live C string.
    if unsafe { libc::umount2(at.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Moves this (single-threaded) process into a new user namespace (`unshare(CLONE_NEWUSER)`).
#[cfg(linux_backends)]
pub(crate) fn unshare_user() -> std::io::Result<()> {
    // SAFETY: unshare with a constant flag.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The stage's own confinement in a layered jail, once its mounts are made: every capability
/// gone for good (bounding, ambient, the process's sets, the securebits locked), no new
/// privileges, then the seccomp program `filter` (bytes `cordon-seccomp` compiled), exactly
/// what bubblewrap does for a live jail.
#[cfg(linux_backends)]
pub(crate) fn confine_stage(filter: &[u8]) -> std::io::Result<()> {
    if filter.is_empty() || !filter.len().is_multiple_of(8) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    let program = bpf_program(filter);
    let len =
        u16::try_from(program.len()).map_err(|_| std::io::Error::from_raw_os_error(libc::E2BIG))?;
    drop_capabilities(last_capability())?;
    // SAFETY: prctl with integer arguments; `set_seccomp` reads the live program.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        set_seccomp(&program, len)
    }
}

/// A seccomp program's bytes (8 per instruction, native order) as the kernel's instructions.
#[cfg(linux_backends)]
fn bpf_program(filter: &[u8]) -> Vec<libc::sock_filter> {
    filter
        .chunks_exact(8)
        .map(|c| libc::sock_filter {
            code: u16::from_ne_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect()
}

/// Installs the first `len` instructions of `program` as this thread's seccomp filter. It
/// allocates nothing, so it may run between fork and exec.
///
/// # Safety
///
/// `len` must not exceed `program.len()`.
#[cfg(linux_backends)]
unsafe fn set_seccomp(program: &[libc::sock_filter], len: u16) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    let mode = libc::SECCOMP_MODE_FILTER as libc::c_ulong;
    // SAFETY: prctl with a pointer to a program that lives for the call (the caller's `len`).
    if unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            mode,
            &prog as *const libc::sock_fprog,
            0,
            0,
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Moves this (single-threaded) process into a new user namespace and a new mount namespace
/// whose mounts propagate nowhere (the layer probe, on the host).
#[cfg(linux_backends)]
pub(crate) fn unshare_user_and_mounts() -> std::io::Result<()> {
    // SAFETY: unshare and mount with constant arguments and static C strings.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let root = c"/";
        let flags = libc::MS_REC | libc::MS_PRIVATE;
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
