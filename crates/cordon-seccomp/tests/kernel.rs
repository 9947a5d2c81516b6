//! The compiled filter against the real kernel.
//!
//! `main` re-runs this binary once per case and mode, naming them in `CORDON_SECCOMP_KERNEL_CASE`.
//! The child installs the host filter (mode `filtered`) or nothing (mode `baseline`), makes one
//! system call and prints its outcome. The parent then checks that:
//!
//! * each refused call gets the filter's answer, and the same call without the filter gets a
//!   different one, so the answer came from the filter and not from the arguments. The arguments
//!   are chosen so an unfiltered call fails harmlessly (bad pointers, descriptors or flags),
//!   even as root: nothing is mounted, traced, loaded or written;
//! * foreign ABIs (x32, i386) kill the process;
//! * ordinary work (files, pipes, socketpair, fork, threads, exec) still succeeds.
//!
//! Some calls check the caller's capabilities before their arguments, so without the filter an
//! unprivileged run also answers EPERM and cannot tell the two apart: run as root (CI does).
//! Nothing is skipped; a kernel that refuses to load the filter fails every filtered case.

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};

use cordon_seccomp::{FilterSpec, compile};
use libc::{c_long, c_ulong};

const CASE_VAR: &str = "CORDON_SECCOMP_KERNEL_CASE";

/// A pointer no process has mapped: the first page.
const BAD_PTR: c_ulong = 1;
/// A flag bit no call below defines.
const BAD_FLAG: c_ulong = 0x4000_0000;
const BAD_FD: c_ulong = -1_i64 as c_ulong;
/// `open_tree_attr` (Linux 6.15) is newer than the libc crate's table; one number everywhere.
const SYS_OPEN_TREE_ATTR: c_long = 467;

const TIOCSTI: c_ulong = 0x5412;
const TIOCLINUX: c_ulong = 0x541c;
const CLONE_THREAD: c_ulong = 0x0001_0000;

/// What a child saw. Probes report success as `Ok` and any surprise as `Errno`; -1 stands for a
/// surprise with no errno (wrong data read back, a child that exited badly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok(i64),
    Errno(i32),
    Killed(i32),
}

/// What a case must show.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Filtered: this errno; unfiltered: anything else.
    Denied(i32),
    /// Filtered: killed by SIGSYS; unfiltered: not.
    Killed,
    /// Filtered and unfiltered: success.
    Works,
    /// Filtered: the same outcome as unfiltered (the filter does not touch this call).
    Untouched,
}

struct Case {
    name: &'static str,
    deny_sockets: bool,
    /// Installed with `without_pid_namespace()` (the Landlock backend's filter).
    alone: bool,
    expect: Expect,
    probe: fn() -> Outcome,
}

fn raw(nr: c_long, args: [c_ulong; 6]) -> Outcome {
    // SAFETY: every probe passes arguments the kernel validates or copies with fault checks
    // (bad pointers give EFAULT, not a write into this process); no call here hands the kernel
    // memory it may write to later.
    let ret = unsafe { libc::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]) };
    if ret == -1 {
        Outcome::Errno(last_errno())
    } else {
        Outcome::Ok(ret)
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn io_errno(err: &std::io::Error) -> Outcome {
    Outcome::Errno(err.raw_os_error().unwrap_or(-1))
}

/// A socket call that closes what it opened.
fn socket(domain: i32) -> Outcome {
    let outcome = raw(
        libc::SYS_socket,
        [domain as c_ulong, libc::SOCK_STREAM as c_ulong, 0, 0, 0, 0],
    );
    if let Outcome::Ok(fd) = outcome {
        // SAFETY: fd was just returned by socket(2) and is owned here.
        unsafe { libc::close(fd as i32) };
        return Outcome::Ok(0);
    }
    outcome
}

/// Reaps `pid` and returns its exit code.
fn wait_exit_code(pid: libc::pid_t) -> Outcome {
    let mut status = 0;
    // SAFETY: pid is our own child; status is a valid out-pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Outcome::Errno(last_errno());
    }
    if libc::WIFEXITED(status) {
        Outcome::Ok(libc::WEXITSTATUS(status).into())
    } else {
        Outcome::Errno(-1)
    }
}

fn cases() -> Vec<Case> {
    use Expect::*;
    let deny = |name, expect, probe| Case {
        name,
        deny_sockets: true,
        alone: false,
        expect,
        probe,
    };
    let eperm = libc::EPERM;
    let mut cases = vec![
        // The mount family.
        deny("mount", Denied(eperm), || {
            raw(libc::SYS_mount, [BAD_PTR, BAD_PTR, BAD_PTR, 0, 0, 0])
        }),
        deny("umount2", Denied(eperm), || {
            raw(libc::SYS_umount2, [BAD_PTR, 0x8000_0000, 0, 0, 0, 0])
        }),
        deny("pivot_root", Denied(eperm), || {
            raw(libc::SYS_pivot_root, [BAD_PTR, BAD_PTR, 0, 0, 0, 0])
        }),
        deny("chroot", Denied(eperm), || {
            raw(libc::SYS_chroot, [BAD_PTR, 0, 0, 0, 0, 0])
        }),
        deny("open_tree", Denied(eperm), || {
            raw(libc::SYS_open_tree, [BAD_FD, BAD_PTR, BAD_FLAG, 0, 0, 0])
        }),
        deny("move_mount", Denied(eperm), || {
            raw(
                libc::SYS_move_mount,
                [BAD_FD, BAD_PTR, BAD_FD, BAD_PTR, BAD_FLAG, 0],
            )
        }),
        deny("fsopen", Denied(eperm), || {
            raw(libc::SYS_fsopen, [BAD_PTR, BAD_FLAG, 0, 0, 0, 0])
        }),
        deny("fsconfig", Denied(eperm), || {
            raw(libc::SYS_fsconfig, [BAD_FD, 0, 0, 0, 0, 0])
        }),
        deny("fsmount", Denied(eperm), || {
            raw(libc::SYS_fsmount, [BAD_FD, BAD_FLAG, 0, 0, 0, 0])
        }),
        deny("fspick", Denied(eperm), || {
            raw(libc::SYS_fspick, [BAD_FD, BAD_PTR, BAD_FLAG, 0, 0, 0])
        }),
        deny("mount_setattr", Denied(eperm), || {
            raw(
                libc::SYS_mount_setattr,
                [BAD_FD, BAD_PTR, BAD_FLAG, 0, 0, 0],
            )
        }),
        deny("open_tree_attr", Denied(eperm), || {
            raw(SYS_OPEN_TREE_ATTR, [BAD_FD, BAD_PTR, BAD_FLAG, 0, 0, 0])
        }),
        // Namespaces. clone's flags pair each CLONE_NEW* bit with CLONE_THREAD but no
        // CLONE_SIGHAND, which the kernel rejects before creating anything.
        deny("unshare", Denied(eperm), || {
            raw(libc::SYS_unshare, [0x1, 0, 0, 0, 0, 0])
        }),
        deny("setns", Denied(eperm), || {
            raw(libc::SYS_setns, [BAD_FD, 0, 0, 0, 0, 0])
        }),
        deny("clone(CLONE_NEWNS)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWNS as c_ulong)
        }),
        deny("clone(CLONE_NEWCGROUP)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWCGROUP as c_ulong)
        }),
        deny("clone(CLONE_NEWUTS)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWUTS as c_ulong)
        }),
        deny("clone(CLONE_NEWIPC)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWIPC as c_ulong)
        }),
        deny("clone(CLONE_NEWUSER)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWUSER as c_ulong)
        }),
        deny("clone(CLONE_NEWPID)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWPID as c_ulong)
        }),
        deny("clone(CLONE_NEWNET)", Denied(eperm), || {
            clone_flags(libc::CLONE_NEWNET as c_ulong)
        }),
        deny("clone(CLONE_NEWTIME)", Denied(eperm), || clone_flags(0x80)),
        deny("clone(CLONE_NEWUSER|high bits)", Denied(eperm), || {
            clone_flags(0xffff_0000_0000_0000 | libc::CLONE_NEWUSER as c_ulong)
        }),
        deny("clone3", Denied(libc::ENOSYS), || {
            raw(libc::SYS_clone3, [0, 0, 0, 0, 0, 0])
        }),
        // Other processes and kernel-side programs.
        deny("ptrace", Denied(eperm), || {
            raw(libc::SYS_ptrace, [0xffff, i32::MAX as c_ulong, 0, 0, 0, 0])
        }),
        deny("process_vm_readv", Denied(eperm), || {
            raw(libc::SYS_process_vm_readv, [0, 0, 0, 0, 0, 1])
        }),
        deny("process_vm_writev", Denied(eperm), || {
            raw(libc::SYS_process_vm_writev, [0, 0, 0, 0, 0, 1])
        }),
        deny("bpf", Denied(eperm), || {
            raw(libc::SYS_bpf, [0xffff, 0, 0, 0, 0, 0])
        }),
        deny("perf_event_open", Denied(eperm), || {
            raw(
                libc::SYS_perf_event_open,
                [BAD_PTR, 0, BAD_FD, BAD_FD, BAD_FLAG, 0],
            )
        }),
        deny("userfaultfd", Denied(eperm), || {
            raw(libc::SYS_userfaultfd, [0x1 | 0x2, 0, 0, 0, 0, 0])
        }),
        deny("io_uring_setup", Denied(eperm), || {
            raw(libc::SYS_io_uring_setup, [1, 0, 0, 0, 0, 0])
        }),
        deny("io_uring_enter", Denied(eperm), || {
            raw(libc::SYS_io_uring_enter, [BAD_FD, 0, 0, 0x8000_0000, 0, 0])
        }),
        deny("io_uring_register", Denied(eperm), || {
            raw(
                libc::SYS_io_uring_register,
                [i32::MAX as c_ulong, 0, 0, 0, 0, 0],
            )
        }),
        // Keyrings, modules, kexec.
        deny("add_key", Denied(eperm), || {
            raw(libc::SYS_add_key, [BAD_PTR, BAD_PTR, 0, 0, 0, 0])
        }),
        deny("request_key", Denied(eperm), || {
            raw(libc::SYS_request_key, [BAD_PTR, BAD_PTR, 0, 0, 0, 0])
        }),
        deny("keyctl", Denied(eperm), || {
            raw(libc::SYS_keyctl, [0xffff, 0, 0, 0, 0, 0])
        }),
        deny("init_module", Denied(eperm), || {
            raw(libc::SYS_init_module, [0, 0, 0, 0, 0, 0])
        }),
        deny("finit_module", Denied(eperm), || {
            raw(
                libc::SYS_finit_module,
                [BAD_FD, BAD_PTR, 0x8000_0000, 0, 0, 0],
            )
        }),
        deny("delete_module", Denied(eperm), || {
            raw(libc::SYS_delete_module, [BAD_PTR, 0, 0, 0, 0, 0])
        }),
        // Too many segments and an undefined flag: rejected before the image is touched (zero
        // valid segments would unload it).
        deny("kexec_load", Denied(eperm), || {
            raw(libc::SYS_kexec_load, [0, 0xffff_ffff, 0, 0x8000, 0, 0])
        }),
        deny("kexec_file_load", Denied(eperm), || {
            raw(
                libc::SYS_kexec_file_load,
                [BAD_FD, BAD_FD, 0, 0, 0x8000_0000, 0],
            )
        }),
        // File handles.
        deny("name_to_handle_at", Denied(eperm), || {
            raw(
                libc::SYS_name_to_handle_at,
                [BAD_FD, BAD_PTR, BAD_PTR, BAD_PTR, BAD_FLAG, 0],
            )
        }),
        deny("open_by_handle_at", Denied(eperm), || {
            raw(libc::SYS_open_by_handle_at, [BAD_FD, BAD_PTR, 0, 0, 0, 0])
        }),
        // Terminal injection, on a descriptor that is not open.
        deny("ioctl(TIOCSTI)", Denied(eperm), || {
            raw(libc::SYS_ioctl, [BAD_FD, TIOCSTI, BAD_PTR, 0, 0, 0])
        }),
        deny(
            "ioctl(TIOCSTI|0xdead_0000_0000_0000)",
            Denied(eperm),
            || {
                raw(
                    libc::SYS_ioctl,
                    [BAD_FD, 0xdead_0000_0000_0000 | TIOCSTI, BAD_PTR, 0, 0, 0],
                )
            },
        ),
        deny("ioctl(0xdead_0000_5412)", Denied(eperm), || {
            raw(
                libc::SYS_ioctl,
                [BAD_FD, 0xdead_0000_5412, BAD_PTR, 0, 0, 0],
            )
        }),
        deny("ioctl(TIOCLINUX)", Denied(eperm), || {
            raw(libc::SYS_ioctl, [BAD_FD, TIOCLINUX, BAD_PTR, 0, 0, 0])
        }),
        // Host administration. reboot's magic numbers are wrong, acct's path is a bad pointer
        // (a null one would switch accounting off).
        deny("swapon", Denied(eperm), || {
            raw(libc::SYS_swapon, [BAD_PTR, BAD_FLAG, 0, 0, 0, 0])
        }),
        deny("swapoff", Denied(eperm), || {
            raw(libc::SYS_swapoff, [BAD_PTR, 0, 0, 0, 0, 0])
        }),
        deny("reboot", Denied(eperm), || {
            raw(libc::SYS_reboot, [0, 0, 0xdead, 0, 0, 0])
        }),
        deny("acct", Denied(eperm), || {
            raw(libc::SYS_acct, [BAD_PTR, 0, 0, 0, 0, 0])
        }),
        // SYSLOG_ACTION_READ_ALL into no buffer.
        deny("syslog", Denied(eperm), || {
            raw(libc::SYS_syslog, [3, 0, -1_i64 as c_ulong, 0, 0, 0])
        }),
        // Sockets, with the network denied.
        deny("socket(AF_INET), network denied", Denied(eperm), || {
            socket(libc::AF_INET)
        }),
        deny("socket(AF_INET6), network denied", Denied(eperm), || {
            socket(libc::AF_INET6)
        }),
        deny("socket(AF_UNIX), network denied", Denied(eperm), || {
            socket(libc::AF_UNIX)
        }),
        Case {
            name: "socket(AF_INET), network allowed",
            deny_sockets: false,
            alone: false,
            expect: Works,
            probe: || socket(libc::AF_INET),
        },
        Case {
            name: "socket(AF_UNIX), network allowed",
            deny_sockets: false,
            alone: false,
            expect: Works,
            probe: || socket(libc::AF_UNIX),
        },
        // Without a PID namespace (the Landlock backend) nothing leaves the process group.
        Case {
            name: "setsid, no PID namespace",
            deny_sockets: true,
            alone: true,
            expect: Denied(eperm),
            probe: || in_child(|| raw(libc::SYS_setsid, [0; 6])),
        },
        Case {
            name: "setpgid(0, 0), no PID namespace",
            deny_sockets: true,
            alone: true,
            expect: Denied(eperm),
            probe: || in_child(|| raw(libc::SYS_setpgid, [0; 6])),
        },
        Case {
            name: "shmget(IPC_PRIVATE), no IPC namespace",
            deny_sockets: true,
            alone: true,
            expect: Denied(eperm),
            probe: || {
                ipc_private(
                    libc::SYS_shmget,
                    [0, 4096, 0o600 | 0o1000, 0, 0, 0],
                    libc::SYS_shmctl,
                )
            },
        },
        Case {
            name: "msgget(IPC_PRIVATE), no IPC namespace",
            deny_sockets: true,
            alone: true,
            expect: Denied(eperm),
            probe: || {
                ipc_private(
                    libc::SYS_msgget,
                    [0, 0o600 | 0o1000, 0, 0, 0, 0],
                    libc::SYS_msgctl,
                )
            },
        },
        // What the filter leaves alone.
        deny("clone(CLONE_THREAD) reaches the kernel", Untouched, || {
            clone_flags(0)
        }),
        deny("ioctl(TIOCGWINSZ) reaches the kernel", Untouched, || {
            raw(libc::SYS_ioctl, [BAD_FD, 0x5413, BAD_PTR, 0, 0, 0])
        }),
        deny("getpid", Works, || raw(libc::SYS_getpid, [0; 6])),
        deny("temp file write/read", Works, temp_file),
        deny("pipe", Works, pipe),
        deny("socketpair(AF_UNIX), network denied", Works, socketpair),
        deny("fork", Works, fork),
        deny("clone(SIGCHLD)", Works, plain_clone),
        deny("thread (clone3 falls back to clone)", Works, thread),
        deny("exec true", Works, exec_true),
    ];
    #[cfg(target_arch = "x86_64")]
    cases.extend([
        deny("iopl", Denied(eperm), || {
            raw(libc::SYS_iopl, [4, 0, 0, 0, 0, 0])
        }),
        deny("ioperm", Denied(eperm), || {
            raw(libc::SYS_ioperm, [0, 0, 1, 0, 0, 0])
        }),
        // Set-ID mode bits (filter version 2): a bad path pointer or descriptor makes the unfiltered
        // call fail harmlessly with EFAULT/EBADF; the filter answers EPERM before the kernel looks.
        deny("fchmod(S_ISUID)", Denied(eperm), || {
            raw(libc::SYS_fchmod, [u64::MAX, 0o4755, 0, 0, 0, 0])
        }),
        deny("fchmodat(S_ISGID)", Denied(eperm), || {
            raw(
                libc::SYS_fchmodat,
                [libc::AT_FDCWD as c_ulong, BAD_PTR, 0o2755, 0, 0, 0],
            )
        }),
        deny("openat(O_CREAT, S_ISUID)", Denied(eperm), || {
            raw(
                libc::SYS_openat,
                [
                    libc::AT_FDCWD as c_ulong,
                    BAD_PTR,
                    (libc::O_CREAT | libc::O_WRONLY) as c_ulong,
                    0o4755,
                    0,
                    0,
                ],
            )
        }),
        deny("mknodat(S_ISUID)", Denied(eperm), || {
            raw(
                libc::SYS_mknodat,
                [
                    libc::AT_FDCWD as c_ulong,
                    BAD_PTR,
                    (libc::S_IFREG | 0o4755) as c_ulong,
                    0,
                    0,
                    0,
                ],
            )
        }),
        deny("openat2 answers ENOSYS", Denied(libc::ENOSYS), || {
            raw(
                libc::SYS_openat2,
                [libc::AT_FDCWD as c_ulong, BAD_PTR, BAD_PTR, 24, 0, 0],
            )
        }),
        deny(
            "fchmod without set-ID bits reaches the kernel",
            Untouched,
            || raw(libc::SYS_fchmod, [u64::MAX, 0o755, 0, 0, 0, 0]),
        ),
        // x32 getpid: the kernel answers it (CONFIG_X86_X32_ABI) or ENOSYS; the filter kills.
        deny("x32 getpid (nr | 0x40000000)", Killed, || {
            raw(0x4000_0000 | libc::SYS_getpid, [0; 6])
        }),
        deny("i386 getpid (int 0x80)", Killed, int80_getpid),
    ]);
    cases
}

/// Creates a private System V object with `get` and, when that works, removes it again with
/// `ctl(id, IPC_RMID)`, so the unfiltered run leaves nothing on the host.
fn ipc_private(get: c_long, args: [c_ulong; 6], ctl: c_long) -> Outcome {
    let outcome = raw(get, args);
    if let Outcome::Ok(id) = outcome {
        let _ = raw(ctl, [id as c_ulong, libc::IPC_RMID as c_ulong, 0, 0, 0, 0]);
    }
    outcome
}

/// Runs `probe` in a forked child (for calls that would change this process's session or group,
/// which the parent's wait relies on), reporting 0 for success and the errno otherwise.
fn in_child(probe: fn() -> Outcome) -> Outcome {
    // SAFETY: the test child is single-threaded; the forked child only makes raw system calls
    // and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = match probe() {
            Outcome::Ok(_) => 0,
            Outcome::Errno(e) => e,
            Outcome::Killed(_) => 255,
        };
        // SAFETY: ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    match wait_exit_code(pid) {
        Outcome::Ok(0) => Outcome::Ok(0),
        Outcome::Ok(code) => Outcome::Errno(code as i32),
        other => other,
    }
}

fn clone_flags(flags: c_ulong) -> Outcome {
    raw(libc::SYS_clone, [flags | CLONE_THREAD, 0, 0, 0, 0, 0])
}

fn temp_file() -> Outcome {
    let path = std::env::temp_dir().join(format!("cordon-seccomp-kernel-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&path)?;
        file.write_all(b"cordon")?;
        drop(file);
        let mut text = String::new();
        std::fs::File::open(&path)?.read_to_string(&mut text)?;
        std::fs::remove_file(&path)?;
        Ok(text)
    })();
    match result {
        Ok(text) if text == "cordon" => Outcome::Ok(0),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

fn pipe() -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Outcome::Errno(last_errno());
    }
    round_trip(fds[1], fds[0])
}

fn socketpair() -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors socketpair(2) writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Outcome::Errno(last_errno());
    }
    round_trip(fds[0], fds[1])
}

/// Writes a byte into `tx`, reads it from `rx`, closes both.
fn round_trip(tx: i32, rx: i32) -> Outcome {
    let mut byte = [0u8];
    // SAFETY: tx and rx are open descriptors owned here; the buffers are valid for one byte.
    let moved = unsafe {
        libc::write(tx, b"x".as_ptr().cast(), 1) == 1
            && libc::read(rx, byte.as_mut_ptr().cast(), 1) == 1
    };
    let outcome = if moved && byte == *b"x" {
        Outcome::Ok(0)
    } else {
        Outcome::Errno(last_errno())
    };
    // SAFETY: both descriptors are owned here and not used again.
    unsafe {
        libc::close(tx);
        libc::close(rx);
    }
    outcome
}

fn fork() -> Outcome {
    // SAFETY: this process is single-threaded; the child only calls _exit.
    match unsafe { libc::fork() } {
        -1 => Outcome::Errno(last_errno()),
        // SAFETY: _exit is async-signal-safe and ends the child at once.
        0 => unsafe { libc::_exit(7) },
        pid => expect_code(wait_exit_code(pid), 7),
    }
}

fn plain_clone() -> Outcome {
    // A fork through the raw call: no namespace flag, exit signal SIGCHLD.
    match raw(libc::SYS_clone, [libc::SIGCHLD as c_ulong, 0, 0, 0, 0, 0]) {
        // SAFETY: the child runs on a copy of this single-threaded process and only calls _exit.
        Outcome::Ok(0) => unsafe { libc::_exit(7) },
        Outcome::Ok(pid) => expect_code(wait_exit_code(pid as libc::pid_t), 7),
        other => other,
    }
}

fn expect_code(outcome: Outcome, code: i64) -> Outcome {
    match outcome {
        Outcome::Ok(got) if got == code => Outcome::Ok(0),
        Outcome::Ok(got) => Outcome::Errno(-(got as i32)),
        other => other,
    }
}

fn thread() -> Outcome {
    match std::thread::Builder::new()
        .spawn(|| 42)
        .map(|handle| handle.join())
    {
        Ok(Ok(42)) => Outcome::Ok(42),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

fn exec_true() -> Outcome {
    match Command::new("true").status() {
        Ok(status) if status.success() => Outcome::Ok(0),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

#[cfg(target_arch = "x86_64")]
fn int80_getpid() -> Outcome {
    let ret: i32;
    // SAFETY: i386 getpid (20) through the compat entry takes no arguments and touches no memory;
    // r8-r11 are declared clobbered because old kernels zeroed them on this path.
    unsafe {
        std::arch::asm!(
            "int 0x80",
            inlateout("eax") 20 => ret,
            lateout("r8") _, lateout("r9") _, lateout("r10") _, lateout("r11") _,
        );
    }
    if ret < 0 {
        Outcome::Errno(-ret)
    } else {
        Outcome::Ok(ret.into())
    }
}

/// Child side: install the filter (or not), run one probe, print the outcome.
fn child(request: &str) -> ExitCode {
    let Some((mode, name)) = request.split_once(':') else {
        eprintln!("malformed {CASE_VAR}={request}");
        return ExitCode::from(2);
    };
    let Some(case) = cases().into_iter().find(|case| case.name == name) else {
        eprintln!("no case named {name:?}");
        return ExitCode::from(2);
    };
    if mode == "filtered"
        && let Err(message) = install(case.deny_sockets, case.alone)
    {
        println!("APPLY-FAILED {message}");
        return ExitCode::from(3);
    }
    match (case.probe)() {
        Outcome::Ok(value) => println!("OUTCOME ok {value}"),
        Outcome::Errno(errno) => println!("OUTCOME errno {errno}"),
        Outcome::Killed(signal) => println!("OUTCOME killed {signal}"),
    }
    ExitCode::SUCCESS
}

/// Loads the host filter from its bytes, as bubblewrap would.
fn install(deny_sockets: bool, alone: bool) -> Result<(), String> {
    let spec = FilterSpec::for_host(deny_sockets).map_err(|err| err.to_string())?;
    let spec = if alone {
        spec.without_pid_namespace()
    } else {
        spec
    };
    let filter = compile(&spec).map_err(|err| err.to_string())?;
    let program: Vec<seccompiler::sock_filter> = filter
        .bytes()
        .chunks_exact(8)
        .map(|c| seccompiler::sock_filter {
            code: u16::from_ne_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    seccompiler::apply_filter(&program)
        .map_err(|err| format!("the kernel refused the filter: {err}"))
}

/// Parent side: run `case` in a child and read what it saw.
fn run(case: &Case, mode: &str) -> Result<Outcome, String> {
    let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
    let output = Command::new(exe)
        .env(CASE_VAR, format!("{mode}:{}", case.name))
        .output()
        .map_err(|err| format!("spawning the {mode} child: {err}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(signal) = output.status.signal() {
        return Ok(Outcome::Killed(signal));
    }
    for line in stdout.lines() {
        if let Some(message) = line.strip_prefix("APPLY-FAILED ") {
            return Err(format!("{mode} child could not load the filter: {message}"));
        }
        let mut words = line.split_whitespace();
        if words.next() == Some("OUTCOME") {
            let kind = words.next();
            let value: Option<i64> = words.next().and_then(|word| word.parse().ok());
            return match (kind, value) {
                (Some("ok"), Some(value)) => Ok(Outcome::Ok(value)),
                (Some("errno"), Some(value)) => Ok(Outcome::Errno(value as i32)),
                _ => Err(format!("{mode} child printed {line:?}")),
            };
        }
    }
    Err(format!(
        "{mode} child ({}) printed no outcome; stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

fn describe(outcome: Outcome) -> String {
    match outcome {
        Outcome::Ok(value) => format!("ok ({value})"),
        Outcome::Errno(errno) => format!("{} ({errno})", errno_name(errno)),
        Outcome::Killed(signal) if signal == libc::SIGSYS => "killed by SIGSYS".to_owned(),
        Outcome::Killed(signal) => format!("killed by signal {signal}"),
    }
}

fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        _ => "errno",
    }
}

/// Compares what the filtered and unfiltered children saw with what the case expects.
fn check(case: &Case) -> Result<String, String> {
    let filtered = run(case, "filtered")?;
    let baseline = run(case, "baseline")?;
    let seen = format!(
        "filtered {}, unfiltered {}",
        describe(filtered),
        describe(baseline)
    );
    let ok = match case.expect {
        Expect::Denied(errno) => {
            if filtered != Outcome::Errno(errno) {
                return Err(format!(
                    "expected {} under the filter; {seen}",
                    errno_name(errno)
                ));
            }
            if baseline == filtered {
                // SAFETY: geteuid has no preconditions.
                let euid = unsafe { libc::geteuid() };
                return Err(format!(
                    "the kernel gives the same answer without the filter, so this run cannot \
                     show the filter caused it (euid {euid}; run as root, since some calls check \
                     capabilities before arguments); {seen}"
                ));
            }
            true
        }
        Expect::Killed => {
            filtered == Outcome::Killed(libc::SIGSYS) && baseline != Outcome::Killed(libc::SIGSYS)
        }
        Expect::Works => matches!(filtered, Outcome::Ok(_)) && matches!(baseline, Outcome::Ok(_)),
        Expect::Untouched => filtered == baseline && !matches!(filtered, Outcome::Killed(_)),
    };
    if ok {
        Ok(seen)
    } else {
        Err(format!("expected {:?}; {seen}", case.expect))
    }
}

fn main() -> ExitCode {
    if let Ok(request) = std::env::var(CASE_VAR) {
        return child(&request);
    }
    let cases = cases();
    let mut failed = Vec::new();
    for case in &cases {
        let sockets = if case.deny_sockets {
            "network denied"
        } else {
            "network allowed"
        };
        match check(case) {
            Ok(seen) => println!("ok   {:<44} {seen}", case.name),
            Err(why) => {
                println!("FAIL {:<44} ({sockets}) {why}", case.name);
                failed.push(case.name);
            }
        }
    }
    if failed.is_empty() {
        println!("kernel: {} cases passed", cases.len());
        ExitCode::SUCCESS
    } else {
        println!(
            "kernel: {} of {} cases failed: {}",
            failed.len(),
            cases.len(),
            failed.join(", ")
        );
        ExitCode::FAILURE
    }
}
