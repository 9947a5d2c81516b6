//! Without bubblewrap's namespaces (the Landlock backend): what the PID and IPC namespaces
//! would have held.

use super::{Action, Condition, Denial, eperm};

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

/// Without bubblewrap's namespaces, unless a process of the jail the command cannot signal ends
/// every process of it (`FilterSpec::sessions_reaped`): a new session or group would outlive
/// the run.
pub(super) const SESSION_DENIALS: [Denial; 2] = [
    eperm(
        "setsid",
        "no PID namespace holds the jail: a new session would leave the process group that the \
         launcher kills when the run ends",
    ),
    eperm(
        "setpgid",
        "no PID namespace holds the jail: another process group would outlive the run",
    ),
];

/// Without bubblewrap's namespaces (the Landlock backend): what the PID and IPC namespaces would
/// have held.
pub(super) const NO_NAMESPACE_DENIALS: [Denial; 26] = [
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
