//! The filter as plain data: one row per decision, in the order the program makes them.
//!
//! [`rule_table`] is what [`compile`](crate::compile) turns into BPF, and what a reviewer reads
//! in the snapshot tests, so the two cannot drift apart.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::syscalls::{self, Lookup};
use crate::{Arch, FilterSpec};

/// What the filter answers when a rule matches.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Action {
    /// Let the call through to the kernel.
    #[serde(rename = "ALLOW")]
    Allow,
    /// Fail the call with `EPERM`, as a missing privilege would.
    #[serde(rename = "EPERM")]
    Eperm,
    /// Fail the call with `ENOSYS`, as a kernel without the call would, so libc falls back.
    #[serde(rename = "ENOSYS")]
    Enosys,
    /// Kill the whole process with `SIGSYS`.
    #[serde(rename = "KILL_PROCESS")]
    KillProcess,
    /// Nothing: the architecture has no such call, so there is nothing to filter.
    #[serde(rename = "NONE (no such call on this arch)")]
    Absent,
}

/// When a rule applies. Displayed (and serialized) as the text a reviewer reads.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    /// Every invocation of the call.
    Always,
    /// The call arrives through another ABI than the filter's (`seccomp_data.arch` differs).
    ForeignArch {
        /// The filter's `AUDIT_ARCH_*` value.
        expected: u32,
        /// Its constant's name.
        name: &'static str,
    },
    /// The call arrives through the x32 ABI: an x86_64 `arch` with `__X32_SYSCALL_BIT` set in
    /// the number.
    X32Abi,
    /// Argument `arg`, low 32 bits, has bit `flag` set.
    ArgFlagSet {
        /// Argument index, 0-based.
        arg: u8,
        /// A single-bit flag.
        flag: u32,
        /// The flag's constant name.
        name: &'static str,
    },
    /// Argument `arg`, low 32 bits, equals `value` (the high 32 bits are ignored, as the kernel
    /// ignores them for this argument).
    ArgLow32Equals {
        /// Argument index, 0-based.
        arg: u8,
        /// The value compared.
        value: u32,
        /// The value's constant name.
        name: &'static str,
    },
    /// Argument `arg`, low 32 bits, differs from `value`: the call names something other than
    /// the caller (several such rows of one call refuse it when any of them matches).
    ArgLow32NotEquals {
        /// Argument index, 0-based.
        arg: u8,
        /// The only value let through.
        value: u32,
        /// The value's meaning.
        name: &'static str,
    },
    /// Every comparison holds (a conjunction; several rows of one call are a disjunction).
    All(&'static [Cmp]),
    /// No earlier row matched: the filter's default.
    Otherwise,
}

/// One comparison of a [`Condition::All`], on an argument's low 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cmp {
    /// Argument index, 0-based.
    pub arg: u8,
    /// How it is compared.
    pub op: CmpOp,
    /// The value compared with.
    pub value: u32,
    /// The value's constant name.
    pub name: &'static str,
}

/// How a [`Cmp`] compares.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// `(arg & mask) == value`.
    MaskedEq(u32),
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Cmp {
            arg,
            op,
            value,
            name,
        } = *self;
        match op {
            CmpOp::Eq => write!(f, "arg{arg} == {name} ({value:#x})"),
            CmpOp::Ne => write!(f, "arg{arg} != {name} ({value:#x})"),
            CmpOp::MaskedEq(mask) => write!(f, "arg{arg} & {mask:#x} == {name} ({value:#x})"),
        }
    }
}

impl Cmp {
    /// Whether the comparison holds for `arg`'s low 32 bits.
    pub fn holds(&self, arg: u64) -> bool {
        let low = arg as u32;
        match self.op {
            CmpOp::Eq => low == self.value,
            CmpOp::Ne => low != self.value,
            CmpOp::MaskedEq(mask) => low & mask == self.value,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Always => f.write_str("always"),
            Condition::ForeignArch { expected, name } => {
                write!(f, "arch != {name} ({expected:#x})")
            }
            Condition::X32Abi => {
                write!(f, "nr >= {X32_SYSCALL_BIT:#x} (__X32_SYSCALL_BIT: x32 ABI)")
            }
            Condition::ArgFlagSet { arg, flag, name } => {
                write!(f, "arg{arg} & {name} ({flag:#x}), low 32 bits")
            }
            Condition::ArgLow32Equals { arg, value, name } => {
                write!(f, "arg{arg} == {name} ({value:#x}), low 32 bits")
            }
            Condition::ArgLow32NotEquals { arg, value, name } => {
                write!(f, "arg{arg} != {name} ({value:#x}), low 32 bits")
            }
            Condition::All(cmps) => {
                for (i, c) in cmps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" && ")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str(", low 32 bits")
            }
            Condition::Otherwise => f.write_str("no rule above matched"),
        }
    }
}

impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One decision of the filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The system call's name, or `*` for the rows that look at every call.
    pub syscall: &'static str,
    /// Its number on the filter's architecture; `None` for `*` rows and for calls the
    /// architecture does not have.
    pub number: Option<u32>,
    /// When the rule applies.
    pub condition: Condition,
    /// What the filter answers then.
    pub action: Action,
    /// Why the rule exists.
    pub why: &'static str,
}

/// `__X32_SYSCALL_BIT`: x32 system calls enter with the x86_64 audit arch and this bit set.
pub(crate) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A syscall rule before it is resolved for an architecture.
struct Denial {
    syscall: &'static str,
    condition: Condition,
    action: Action,
    why: &'static str,
}

const fn eperm(syscall: &'static str, why: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::Always,
        action: Action::Eperm,
        why,
    }
}

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

/// Refuses `syscall` when argument `arg` is not `value` (the caller itself).
const fn unless_self(syscall: &'static str, arg: u8, value: u32, name: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::ArgLow32NotEquals { arg, value, name },
        action: Action::Eperm,
        why: OTHER_PROCESSES,
    }
}

const OTHER_PROCESSES: &str = "no PID namespace holds the jail: host processes of the same user \
     are addressable by pid, and neither Landlock nor the signal scope covers their resource \
     limits, priority, scheduling or CPU affinity; only the caller itself (0) may be named, so a \
     thread naming itself by its own id is refused too (EPERM, which callers such as \
     pthread_setaffinity_np report and go on)";

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
const ALWAYS_DENIED: &[Denial] = &[
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

const SOCKET_DENIAL: Denial = eperm(
    "socket",
    "network denied: no socket of any domain, AF_UNIX included, since a host socket file stays \
     connectable through a read-only bind; socketpair(2) stays allowed",
);

const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
const AF_NETLINK: u32 = 16;
const NETLINK_ROUTE: u32 = 0;
const SOCK_TYPE_MASK: u32 = 0xf;
const SOCK_RAW: u32 = 3;
const SOCK_PACKET: u32 = 10;

const fn socket_when(cmps: &'static [Cmp], why: &'static str) -> Denial {
    Denial {
        syscall: "socket",
        condition: Condition::All(cmps),
        action: Action::Eperm,
        why,
    }
}

const fn cmp(arg: u8, op: CmpOp, value: u32, name: &'static str) -> Cmp {
    Cmp {
        arg,
        op,
        value,
        name,
    }
}

const OWN_LOOPBACK: &str = "network denied, in a network namespace of the jail's own (bubblewrap's, \
     holding only `lo`): IPv4 and IPv6 reach only the jail's loopback, so local test servers \
     work; every other domain stays refused (AF_UNIX included: a host socket file stays \
     connectable through a read-only bind)";

/// Network denied, with a network namespace of the jail's own: `socket(2)` only for IPv4 and
/// IPv6 (not raw, not packet) and route netlink, which reach nothing but that namespace.
const LOOPBACK_SOCKET_DENIALS: [Denial; 6] = [
    socket_when(
        &[
            cmp(0, CmpOp::Ne, AF_INET, "AF_INET"),
            cmp(0, CmpOp::Ne, AF_INET6, "AF_INET6"),
            cmp(0, CmpOp::Ne, AF_NETLINK, "AF_NETLINK"),
        ],
        OWN_LOOPBACK,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_NETLINK, "AF_NETLINK"),
            cmp(2, CmpOp::Ne, NETLINK_ROUTE, "NETLINK_ROUTE"),
        ],
        "only route netlink, which libc's getaddrinfo reads the jail's addresses through; the \
         other netlink families reach kernel subsystems beyond the namespace",
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET, "AF_INET"),
            cmp(1, CmpOp::MaskedEq(SOCK_TYPE_MASK), SOCK_RAW, "SOCK_RAW"),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET6, "AF_INET6"),
            cmp(1, CmpOp::MaskedEq(SOCK_TYPE_MASK), SOCK_RAW, "SOCK_RAW"),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET, "AF_INET"),
            cmp(
                1,
                CmpOp::MaskedEq(SOCK_TYPE_MASK),
                SOCK_PACKET,
                "SOCK_PACKET",
            ),
        ],
        RAW_SOCKETS,
    ),
    socket_when(
        &[
            cmp(0, CmpOp::Eq, AF_INET6, "AF_INET6"),
            cmp(
                1,
                CmpOp::MaskedEq(SOCK_TYPE_MASK),
                SOCK_PACKET,
                "SOCK_PACKET",
            ),
        ],
        RAW_SOCKETS,
    ),
];

const RAW_SOCKETS: &str = "raw and packet sockets build their own headers: refused even on the \
     jail's loopback (the jail has no capability for them either)";

/// Without bubblewrap's namespaces (the Landlock backend): what the PID and IPC namespaces would
/// have held.
const NO_NAMESPACE_DENIALS: [Denial; 28] = [
    eperm(
        "setsid",
        "no PID namespace holds the jail: a new session would leave the process group that the \
         launcher kills when the run ends",
    ),
    eperm(
        "setpgid",
        "no PID namespace holds the jail: another process group would outlive the run",
    ),
    eperm("shmget", SYSV_IPC),
    eperm("shmat", SYSV_IPC),
    eperm("shmctl", SYSV_IPC),
    eperm("msgget", SYSV_IPC),
    eperm("msgsnd", SYSV_IPC),
    eperm("msgrcv", SYSV_IPC),
    eperm("msgctl", SYSV_IPC),
    eperm("semget", SYSV_IPC),
    eperm("semop", SYSV_IPC),
    eperm("semtimedop", SYSV_IPC),
    eperm("semctl", SYSV_IPC),
    eperm("mq_open", POSIX_MQ),
    eperm("mq_unlink", POSIX_MQ),
    eperm("mq_timedsend", POSIX_MQ),
    eperm("mq_timedreceive", POSIX_MQ),
    eperm("mq_notify", POSIX_MQ),
    eperm("mq_getsetattr", POSIX_MQ),
    unless_self("prlimit64", 0, 0, "0: the caller"),
    unless_self("setpriority", 0, 0, "PRIO_PROCESS"),
    unless_self("setpriority", 1, 0, "0: the caller"),
    unless_self("sched_setaffinity", 0, 0, "0: the caller"),
    unless_self("sched_setscheduler", 0, 0, "0: the caller"),
    unless_self("sched_setparam", 0, 0, "0: the caller"),
    unless_self("sched_setattr", 0, 0, "0: the caller"),
    unless_self("ioprio_set", 0, 1, "IOPRIO_WHO_PROCESS"),
    unless_self("ioprio_set", 1, 0, "0: the caller"),
];

const SYSV_IPC: &str = "no IPC namespace holds the jail: System V objects are the host's, found by \
     key or id and not covered by Landlock";
const POSIX_MQ: &str = "no IPC namespace holds the jail: POSIX message queues are the host's, \
     opened by name through a system call Landlock does not see";

/// The filter for `spec`, row by row, in the order the program decides.
///
/// The first rows refuse foreign ABIs; then come the per-call rules (a call that matches one of
/// them gets its action, and no call has two actions); the last row is the default, `ALLOW`.
/// Calls the architecture lacks are listed with [`Action::Absent`] and no number.
pub fn rule_table(spec: &FilterSpec) -> Vec<Rule> {
    let arch = spec.arch;
    let mut rules = vec![Rule {
        syscall: "*",
        number: None,
        condition: Condition::ForeignArch {
            expected: arch.audit_arch(),
            name: arch.audit_arch_name(),
        },
        action: Action::KillProcess,
        why: "another ABI numbers system calls differently, so no rule below would mean what it \
              says (i386 through int 0x80, arm32 compat)",
    }];
    if arch == Arch::X86_64 {
        rules.push(Rule {
            syscall: "*",
            number: None,
            condition: Condition::X32Abi,
            action: Action::KillProcess,
            why: "x32 calls carry the x86_64 audit arch, so the check above lets them through \
                  with numbers no rule below matches; killed like any other foreign ABI, since \
                  no ordinary program uses x32 and a process that tries is probing the filter",
        });
    }
    let socket: &[Denial] = match (spec.deny_sockets, spec.own_network_namespace) {
        (false, _) => &[],
        (true, false) => std::slice::from_ref(&SOCKET_DENIAL),
        (true, true) => &LOOPBACK_SOCKET_DENIALS,
    };
    let group: &[Denial] = if spec.keep_process_group {
        &NO_NAMESPACE_DENIALS
    } else {
        &[]
    };
    for denial in ALWAYS_DENIED.iter().chain(socket).chain(group) {
        let (number, action) = match syscalls::lookup(arch, denial.syscall) {
            Lookup::Number(number) => (Some(number), denial.action),
            // An unknown name is a bug in the tables; `compile` reports it as an error.
            Lookup::Absent | Lookup::Unknown => (None, Action::Absent),
        };
        rules.push(Rule {
            syscall: denial.syscall,
            number,
            condition: denial.condition,
            action,
            why: denial.why,
        });
    }
    rules.push(Rule {
        syscall: "*",
        number: None,
        condition: Condition::Otherwise,
        action: Action::Allow,
        why: "a deny list: everything not refused above is left to bubblewrap's namespaces and \
              mounts",
    });
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(arch: Arch, deny_sockets: bool) -> FilterSpec {
        FilterSpec {
            arch,
            deny_sockets,
            own_network_namespace: false,
            keep_process_group: false,
        }
    }

    #[test]
    fn process_group_rules_follow_the_spec() {
        let has =
            |spec: FilterSpec, name: &str| rule_table(&spec).iter().any(|r| r.syscall == name);
        let plain = spec(Arch::X86_64, true);
        assert!(!has(plain, "setsid") && !has(plain, "setpgid"));
        let alone = plain.without_pid_namespace();
        for name in [
            "setsid",
            "setpgid",
            "shmget",
            "shmat",
            "msgget",
            "semget",
            "mq_open",
            "prlimit64",
            "setpriority",
            "sched_setaffinity",
            "sched_setscheduler",
            "sched_setparam",
            "sched_setattr",
            "ioprio_set",
        ] {
            assert!(has(alone, name), "{name}");
            assert!(!has(plain, name), "{name}");
        }
    }

    #[test]
    fn snapshot_x86_64_network_denied() {
        insta::assert_yaml_snapshot!(rule_table(&spec(Arch::X86_64, true)));
    }

    /// bubblewrap's filter with the network denied: its own namespace's loopback stays usable.
    #[test]
    fn snapshot_x86_64_own_loopback() {
        insta::assert_yaml_snapshot!(rule_table(
            &spec(Arch::X86_64, true).with_own_network_namespace()
        ));
    }

    /// The Landlock backend's filter: no namespace holds the jail.
    #[test]
    fn snapshot_x86_64_without_namespaces() {
        insta::assert_yaml_snapshot!(rule_table(
            &spec(Arch::X86_64, true).without_pid_namespace()
        ));
    }

    #[test]
    fn snapshot_x86_64_network_allowed() {
        insta::assert_yaml_snapshot!(rule_table(&spec(Arch::X86_64, false)));
    }

    #[test]
    fn snapshot_aarch64_network_denied() {
        insta::assert_yaml_snapshot!(rule_table(&spec(Arch::Aarch64, true)));
    }

    #[test]
    fn snapshot_aarch64_network_allowed() {
        insta::assert_yaml_snapshot!(rule_table(&spec(Arch::Aarch64, false)));
    }

    #[test]
    fn every_named_call_has_a_number_somewhere() {
        for denial in ALWAYS_DENIED.iter().chain([&SOCKET_DENIAL]) {
            let known = Arch::ALL
                .iter()
                .any(|&arch| matches!(syscalls::lookup(arch, denial.syscall), Lookup::Number(_)));
            assert!(known, "{} is missing from the number table", denial.syscall);
        }
    }

    #[test]
    fn socket_rule_follows_deny_sockets() {
        let has_socket = |deny| {
            rule_table(&spec(Arch::X86_64, deny))
                .iter()
                .any(|rule| rule.syscall == "socket")
        };
        assert!(has_socket(true));
        assert!(!has_socket(false));
    }

    #[test]
    fn the_brief_list_is_covered() {
        let table = rule_table(&spec(Arch::Aarch64, true));
        let action_of = |name: &str| {
            table
                .iter()
                .filter(|rule| rule.syscall == name)
                .map(|rule| rule.action)
                .collect::<Vec<_>>()
        };
        for name in [
            "mount",
            "umount2",
            "pivot_root",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
            "unshare",
            "setns",
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "bpf",
            "perf_event_open",
            "add_key",
            "request_key",
            "keyctl",
            "init_module",
            "finit_module",
            "delete_module",
            "kexec_load",
            "kexec_file_load",
            "open_by_handle_at",
            "name_to_handle_at",
            "userfaultfd",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            "socket",
        ] {
            assert_eq!(action_of(name), [Action::Eperm], "{name}");
        }
        assert_eq!(action_of("clone"), [Action::Eperm; 8]);
        assert_eq!(action_of("ioctl"), [Action::Eperm; 2]);
        assert_eq!(action_of("clone3"), [Action::Enosys]);
        assert_eq!(action_of("iopl"), [Action::Absent]);
    }

    #[test]
    fn conditions_read_as_text() {
        let flag = Condition::ArgFlagSet {
            arg: 0,
            flag: 0x1000_0000,
            name: "CLONE_NEWUSER",
        };
        assert_eq!(
            flag.to_string(),
            "arg0 & CLONE_NEWUSER (0x10000000), low 32 bits"
        );
        assert_eq!(
            Condition::X32Abi.to_string(),
            "nr >= 0x40000000 (__X32_SYSCALL_BIT: x32 ABI)"
        );
    }
}
