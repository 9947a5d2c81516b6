//! Every case: the call it makes, the filter it runs under, and what it must show.

use libc::{c_long, c_ulong};

#[cfg(target_arch = "x86_64")]
use crate::probes::int80_getpid;
use crate::probes::{
    Outcome, clone_flags, exec_true, fork, in_child, ipc_private, pipe, plain_clone, raw, socket,
    socketpair, temp_file, thread,
};

/// A pointer no process has mapped: the first page.
const BAD_PTR: c_ulong = 1;
/// A flag bit no call below defines.
const BAD_FLAG: c_ulong = 0x4000_0000;
const BAD_FD: c_ulong = -1_i64 as c_ulong;
/// `open_tree_attr` (Linux 6.15) is newer than the libc crate's table; one number everywhere.
const SYS_OPEN_TREE_ATTR: c_long = 467;

const TIOCSTI: c_ulong = 0x5412;
const TIOCLINUX: c_ulong = 0x541c;

/// What a case must show.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// Filtered: this errno; unfiltered: anything else.
    Denied(i32),
    /// Filtered: killed by SIGSYS; unfiltered: not.
    Killed,
    /// Filtered and unfiltered: success.
    Works,
    /// Filtered: the same outcome as unfiltered (the filter does not touch this call).
    Untouched,
}

pub struct Case {
    pub name: &'static str,
    pub deny_sockets: bool,
    /// Installed with `without_pid_namespace()` (the Landlock backend's filter).
    pub alone: bool,
    /// Installed with `with_own_network_namespace()` (bubblewrap's filter, network denied).
    pub own_net: bool,
    pub expect: Expect,
    pub probe: fn() -> Outcome,
}

pub fn cases() -> Vec<Case> {
    use Expect::*;
    let deny = |name, expect, probe| Case {
        name,
        deny_sockets: true,
        alone: false,
        own_net: false,
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
        // bubblewrap's filter with the network denied: its namespace's own loopback and Unix
        // sockets (the host's listening socket files are masked in its view).
        Case {
            name: "socket(AF_UNIX), own network namespace",
            deny_sockets: true,
            alone: false,
            own_net: true,
            expect: Works,
            probe: || socket(libc::AF_UNIX),
        },
        Case {
            name: "socket(AF_INET), own network namespace",
            deny_sockets: true,
            alone: false,
            own_net: true,
            expect: Works,
            probe: || socket(libc::AF_INET),
        },
        Case {
            name: "socket(AF_INET), network allowed",
            deny_sockets: false,
            alone: false,
            own_net: false,
            expect: Works,
            probe: || socket(libc::AF_INET),
        },
        Case {
            name: "socket(AF_UNIX), network allowed",
            deny_sockets: false,
            alone: false,
            own_net: false,
            expect: Works,
            probe: || socket(libc::AF_UNIX),
        },
        // No tracing, not even of the caller's own child (docs/limits.md, "Tracing inside the
        // jail"): the child asks to be traced, which needs no other process's permission.
        deny(
            "ptrace(PTRACE_TRACEME), a child asking",
            Denied(eperm),
            || in_child(|| raw(libc::SYS_ptrace, [0; 6])),
        ),
        // Without a PID namespace (the Landlock backend) nothing leaves the process group.
        Case {
            name: "setsid, no PID namespace",
            deny_sockets: true,
            alone: true,
            own_net: false,
            expect: Denied(eperm),
            probe: || in_child(|| raw(libc::SYS_setsid, [0; 6])),
        },
        Case {
            name: "setpgid(0, 0), no PID namespace",
            deny_sockets: true,
            alone: true,
            own_net: false,
            expect: Denied(eperm),
            probe: || in_child(|| raw(libc::SYS_setpgid, [0; 6])),
        },
        Case {
            name: "shmget(IPC_PRIVATE), no IPC namespace",
            deny_sockets: true,
            alone: true,
            own_net: false,
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
            own_net: false,
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
