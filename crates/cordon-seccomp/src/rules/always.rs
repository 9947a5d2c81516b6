//! The rules applied whatever the spec says: mounts, namespaces, other processes' memory,
//! kernel code, keyrings, file handles, the terminal's input, host administration and
//! set-user-ID modes.

use super::{Action, Condition, Denial, eperm};

const fn clone_with(flag: u32, name: &'static str, why: &'static str) -> Denial {
    Denial {
        syscall: "clone",
        condition: Condition::ArgFlagSet { arg: 0, flag, name },
        action: Action::Eperm,
        why,
    }
}

const fn ioctl_request(value: u32, name: &'static str, why: &'static str) -> Denial {
    Denial {
        syscall: "ioctl",
        condition: Condition::ArgLow32Equals {
            arg: 1,
            value,
            name,
        },
        action: Action::Eperm,
        why,
    }
}

const S_ISUID: u32 = 0o4000;
const S_ISGID: u32 = 0o2000;
const SET_ID: &str = "a set-user-ID or set-group-ID file left in a writable root is honoured by \
                      the host after the run: a root-run jail would plant a root shell for any \
                      local user";

const fn set_id(syscall: &'static str, arg: u8, flag: u32, name: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::ArgFlagSet { arg, flag, name },
        action: Action::Eperm,
        why: SET_ID,
    }
}

const MOUNT: &str = "changes what the sandbox sees of the filesystem; bubblewrap built the view \
                     and nothing inside may rearrange it";
const NEW_MOUNT_API: &str = "the new mount API: the same power as mount(2) through file \
                             descriptors";
const NAMESPACE: &str = "a new namespace gives the caller capabilities over it, the usual first \
                         step of a kernel exploit; bubblewrap already made the namespaces needed";
const KERNEL_CODE: &str = "loads or replaces kernel code";

/// The rules applied whatever the spec says, in table order.
pub(super) const ALWAYS_DENIED: &[Denial] = &[
    eperm("mount", MOUNT),
    eperm("umount2", MOUNT),
    eperm("pivot_root", MOUNT),
    eperm(
        "chroot",
        "changes the root directory: an old escape route, never needed inside",
    ),
    eperm("open_tree", NEW_MOUNT_API),
    eperm("move_mount", NEW_MOUNT_API),
    eperm("fsopen", NEW_MOUNT_API),
    eperm("fsconfig", NEW_MOUNT_API),
    eperm("fsmount", NEW_MOUNT_API),
    eperm("fspick", NEW_MOUNT_API),
    eperm("mount_setattr", NEW_MOUNT_API),
    eperm("open_tree_attr", NEW_MOUNT_API),
    eperm("unshare", NAMESPACE),
    eperm(
        "setns",
        "enters another namespace, possibly the host's through an inherited descriptor",
    ),
    clone_with(0x0002_0000, "CLONE_NEWNS", NAMESPACE),
    clone_with(0x0200_0000, "CLONE_NEWCGROUP", NAMESPACE),
    clone_with(0x0400_0000, "CLONE_NEWUTS", NAMESPACE),
    clone_with(0x0800_0000, "CLONE_NEWIPC", NAMESPACE),
    clone_with(0x1000_0000, "CLONE_NEWUSER", NAMESPACE),
    clone_with(0x2000_0000, "CLONE_NEWPID", NAMESPACE),
    clone_with(0x4000_0000, "CLONE_NEWNET", NAMESPACE),
    clone_with(
        0x0000_0080,
        "CLONE_NEWTIME",
        "clone(2) cannot make a time namespace (the bit is in its exit-signal byte, where no \
         valid signal sets it); refused anyway so every CLONE_NEW* bit is covered",
    ),
    Denial {
        syscall: "clone3",
        condition: Condition::Always,
        action: Action::Enosys,
        why: "its flags sit behind a pointer seccomp cannot read; ENOSYS makes libc fall back to \
              clone(2), whose flags are checked above",
    },
    eperm(
        "ptrace",
        "reads and writes other processes' memory and registers",
    ),
    eperm("process_vm_readv", "reads another process's memory"),
    eperm("process_vm_writev", "writes another process's memory"),
    eperm(
        "bpf",
        "loads programs into the kernel: a large attack surface",
    ),
    eperm(
        "perf_event_open",
        "kernel profiling: a large attack surface and a side channel",
    ),
    eperm(
        "userfaultfd",
        "stalls kernel page faults at will, a staple of kernel exploits",
    ),
    eperm(
        "io_uring_setup",
        "io_uring runs operations from kernel workers that this filter never sees, so it would \
         bypass every rule here (sockets included)",
    ),
    eperm("io_uring_enter", "io_uring: see io_uring_setup"),
    eperm("io_uring_register", "io_uring: see io_uring_setup"),
    eperm(
        "add_key",
        "kernel keyrings are not namespaced: they can hold the host's secrets",
    ),
    eperm(
        "request_key",
        "kernel keyrings are not namespaced: they can hold the host's secrets",
    ),
    eperm(
        "keyctl",
        "kernel keyrings are not namespaced: they can hold the host's secrets",
    ),
    eperm("init_module", KERNEL_CODE),
    eperm("finit_module", KERNEL_CODE),
    eperm("delete_module", "unloads kernel code"),
    eperm("kexec_load", KERNEL_CODE),
    eperm("kexec_file_load", KERNEL_CODE),
    eperm(
        "name_to_handle_at",
        "file handles name files by inode, past the mounts that hide them",
    ),
    eperm(
        "open_by_handle_at",
        "opens a file by handle, past the mounts that hide it (the 'shocker' container escape)",
    ),
    ioctl_request(
        0x5412,
        "TIOCSTI",
        "pushes keystrokes into the terminal, to be run by the shell outside the sandbox",
    ),
    ioctl_request(
        0x541c,
        "TIOCLINUX",
        "console subcommands include pasting the selection into the terminal's input",
    ),
    eperm(
        "swapon",
        "host administration, never needed by a jailed command",
    ),
    eperm(
        "swapoff",
        "host administration, never needed by a jailed command",
    ),
    eperm(
        "reboot",
        "host administration, never needed by a jailed command",
    ),
    eperm(
        "acct",
        "host administration, never needed by a jailed command",
    ),
    eperm(
        "syslog",
        "the kernel log is host state: it leaks addresses and other processes' messages",
    ),
    eperm("iopl", "raw I/O port access"),
    set_id("chmod", 1, S_ISUID, "S_ISUID"),
    set_id("chmod", 1, S_ISGID, "S_ISGID"),
    set_id("fchmod", 1, S_ISUID, "S_ISUID"),
    set_id("fchmod", 1, S_ISGID, "S_ISGID"),
    set_id("fchmodat", 2, S_ISUID, "S_ISUID"),
    set_id("fchmodat", 2, S_ISGID, "S_ISGID"),
    set_id("fchmodat2", 2, S_ISUID, "S_ISUID"),
    set_id("fchmodat2", 2, S_ISGID, "S_ISGID"),
    set_id("open", 2, S_ISUID, "S_ISUID"),
    set_id("open", 2, S_ISGID, "S_ISGID"),
    set_id("openat", 3, S_ISUID, "S_ISUID"),
    set_id("openat", 3, S_ISGID, "S_ISGID"),
    set_id("creat", 1, S_ISUID, "S_ISUID"),
    set_id("creat", 1, S_ISGID, "S_ISGID"),
    set_id("mknod", 1, S_ISUID, "S_ISUID"),
    set_id("mknod", 1, S_ISGID, "S_ISGID"),
    set_id("mknodat", 2, S_ISUID, "S_ISUID"),
    set_id("mknodat", 2, S_ISGID, "S_ISGID"),
    Denial {
        syscall: "openat2",
        condition: Condition::Always,
        action: Action::Enosys,
        why: "its mode sits behind a pointer seccomp cannot read; ENOSYS makes callers fall back to \
              openat(2), whose mode is checked above",
    },
    eperm("ioperm", "raw I/O port access"),
];
