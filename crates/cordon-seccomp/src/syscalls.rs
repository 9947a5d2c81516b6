//! Syscall numbers for exactly the calls the filter names, per architecture.
//!
//! `libc::SYS_*` only describes the host, and a filter must be buildable for either architecture on
//! any host, so the numbers are kept here. They are kernel ABI facts: x86_64 from
//! `arch/x86/entry/syscalls/syscall_64.tbl`, aarch64 from the generic table
//! (`include/uapi/asm-generic/unistd.h`). Calls added since Linux 5.1 share one number on every
//! architecture. The unit tests below compare the host's column with `libc::SYS_*`.

use crate::Arch;

/// `(name, x86_64 number, aarch64 number)`; `None` where the architecture has no such call.
const TABLE: &[(&str, Option<u32>, Option<u32>)] = &[
    // The mount family, old API then new API.
    ("mount", Some(165), Some(40)),
    ("umount2", Some(166), Some(39)),
    ("pivot_root", Some(155), Some(41)),
    ("chroot", Some(161), Some(51)),
    ("open_tree", Some(428), Some(428)),
    ("move_mount", Some(429), Some(429)),
    ("fsopen", Some(430), Some(430)),
    ("fsconfig", Some(431), Some(431)),
    ("fsmount", Some(432), Some(432)),
    ("fspick", Some(433), Some(433)),
    ("mount_setattr", Some(442), Some(442)),
    ("open_tree_attr", Some(467), Some(467)),
    // Namespaces.
    ("unshare", Some(272), Some(97)),
    ("setns", Some(308), Some(268)),
    ("clone", Some(56), Some(220)),
    ("clone3", Some(435), Some(435)),
    // Other processes' memory, and kernel-side programs.
    ("ptrace", Some(101), Some(117)),
    ("process_vm_readv", Some(310), Some(270)),
    ("process_vm_writev", Some(311), Some(271)),
    ("bpf", Some(321), Some(280)),
    ("perf_event_open", Some(298), Some(241)),
    ("userfaultfd", Some(323), Some(282)),
    ("io_uring_setup", Some(425), Some(425)),
    ("io_uring_enter", Some(426), Some(426)),
    ("io_uring_register", Some(427), Some(427)),
    // Keyrings.
    ("add_key", Some(248), Some(217)),
    ("request_key", Some(249), Some(218)),
    ("keyctl", Some(250), Some(219)),
    // Sessions and process groups (the Landlock backend's filter).
    ("setsid", Some(112), Some(157)),
    ("setpgid", Some(109), Some(154)),
    // Other processes' limits, priority and scheduling (the Landlock backend's filter).
    ("prlimit64", Some(302), Some(261)),
    ("setpriority", Some(141), Some(140)),
    ("sched_setaffinity", Some(203), Some(122)),
    ("sched_setscheduler", Some(144), Some(119)),
    ("sched_setparam", Some(142), Some(118)),
    ("sched_setattr", Some(314), Some(274)),
    ("ioprio_set", Some(251), Some(30)),
    // System V IPC and POSIX message queues (the Landlock backend's filter).
    ("shmget", Some(29), Some(194)),
    ("shmat", Some(30), Some(196)),
    ("shmctl", Some(31), Some(195)),
    ("msgget", Some(68), Some(186)),
    ("msgsnd", Some(69), Some(189)),
    ("msgrcv", Some(70), Some(188)),
    ("msgctl", Some(71), Some(187)),
    ("semget", Some(64), Some(190)),
    ("semop", Some(65), Some(193)),
    ("semtimedop", Some(220), Some(192)),
    ("semctl", Some(66), Some(191)),
    ("mq_open", Some(240), Some(180)),
    ("mq_unlink", Some(241), Some(181)),
    ("mq_timedsend", Some(242), Some(182)),
    ("mq_timedreceive", Some(243), Some(183)),
    ("mq_notify", Some(244), Some(184)),
    ("mq_getsetattr", Some(245), Some(185)),
    // Kernel modules and kexec.
    ("init_module", Some(175), Some(105)),
    ("finit_module", Some(313), Some(273)),
    ("delete_module", Some(176), Some(106)),
    ("kexec_load", Some(246), Some(104)),
    ("kexec_file_load", Some(320), Some(294)),
    // File handles.
    ("name_to_handle_at", Some(303), Some(264)),
    ("open_by_handle_at", Some(304), Some(265)),
    // Terminals.
    ("ioctl", Some(16), Some(29)),
    // Network.
    ("socket", Some(41), Some(198)),
    // Host administration.
    ("swapon", Some(167), Some(224)),
    ("swapoff", Some(168), Some(225)),
    ("reboot", Some(169), Some(142)),
    ("acct", Some(163), Some(89)),
    ("syslog", Some(103), Some(116)),
    ("iopl", Some(172), None),
    ("ioperm", Some(173), None),
    // Set-user-ID and set-group-ID bits (mode arguments).
    ("chmod", Some(90), None),
    ("fchmod", Some(91), Some(52)),
    ("fchmodat", Some(268), Some(53)),
    ("fchmodat2", Some(452), Some(452)),
    ("open", Some(2), None),
    ("openat", Some(257), Some(56)),
    ("creat", Some(85), None),
    ("mknod", Some(133), None),
    ("mknodat", Some(259), Some(33)),
    ("openat2", Some(437), Some(437)),
    // Names and metadata (the supervisor's calls, cordon-supervisor).
    ("mkdir", Some(83), None),
    ("mkdirat", Some(258), Some(34)),
    ("rmdir", Some(84), None),
    ("unlink", Some(87), None),
    ("unlinkat", Some(263), Some(35)),
    ("rename", Some(82), None),
    ("renameat", Some(264), Some(38)),
    ("renameat2", Some(316), Some(276)),
    ("link", Some(86), None),
    ("linkat", Some(265), Some(37)),
    ("symlink", Some(88), None),
    ("symlinkat", Some(266), Some(36)),
    ("truncate", Some(76), Some(45)),
    ("chown", Some(92), None),
    ("fchown", Some(93), Some(55)),
    ("lchown", Some(94), None),
    ("fchownat", Some(260), Some(54)),
    ("utime", Some(132), None),
    ("utimes", Some(235), None),
    ("futimesat", Some(261), None),
    ("utimensat", Some(280), Some(88)),
    ("setxattr", Some(188), Some(5)),
    ("lsetxattr", Some(189), Some(6)),
    ("fsetxattr", Some(190), Some(7)),
    ("removexattr", Some(197), Some(14)),
    ("lremovexattr", Some(198), Some(15)),
    ("fremovexattr", Some(199), Some(16)),
    ("setxattrat", Some(463), Some(463)),
    ("removexattrat", Some(466), Some(466)),
    // The calls that name an address (the supervisor's, when the network is denied without a
    // network namespace).
    ("bind", Some(49), Some(200)),
    ("connect", Some(42), Some(203)),
    ("listen", Some(50), Some(201)),
    ("sendto", Some(44), Some(206)),
    ("sendmsg", Some(46), Some(211)),
    ("sendmmsg", Some(307), Some(269)),
];

/// Lookup result for one syscall on one architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The call exists with this number.
    Number(u32),
    /// The architecture has no such call (aarch64 has no `iopl`).
    Absent,
    /// The name is not in [`TABLE`]: a programming error in the rule table, reported as an error.
    Unknown,
}

/// The number of `name` on `arch`.
pub(crate) fn lookup(arch: Arch, name: &str) -> Lookup {
    match TABLE.iter().find(|(n, _, _)| *n == name) {
        None => Lookup::Unknown,
        Some((_, x86_64, aarch64)) => {
            let number = match arch {
                Arch::X86_64 => *x86_64,
                Arch::Aarch64 => *aarch64,
            };
            number.map_or(Lookup::Absent, Lookup::Number)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, (name, _, _)) in TABLE.iter().enumerate() {
            assert!(
                TABLE[i + 1..].iter().all(|(other, _, _)| other != name),
                "{name} is listed twice"
            );
        }
    }

    #[test]
    fn unknown_and_absent_are_told_apart() {
        assert_eq!(lookup(Arch::X86_64, "iopl"), Lookup::Number(172));
        assert_eq!(lookup(Arch::Aarch64, "iopl"), Lookup::Absent);
        assert_eq!(lookup(Arch::Aarch64, "no_such_call"), Lookup::Unknown);
    }

    /// The host column must agree with the libc crate, which is generated from kernel headers.
    /// `open_tree_attr` (Linux 6.15) is newer than the libc crate's table.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn host_column_matches_libc() {
        let host = if cfg!(target_arch = "x86_64") {
            Arch::X86_64
        } else {
            Arch::Aarch64
        };
        let mut libc_numbers: Vec<(&str, libc::c_long)> = vec![
            ("mount", libc::SYS_mount),
            ("umount2", libc::SYS_umount2),
            ("pivot_root", libc::SYS_pivot_root),
            ("chroot", libc::SYS_chroot),
            ("open_tree", libc::SYS_open_tree),
            ("move_mount", libc::SYS_move_mount),
            ("fsopen", libc::SYS_fsopen),
            ("fsconfig", libc::SYS_fsconfig),
            ("fsmount", libc::SYS_fsmount),
            ("fspick", libc::SYS_fspick),
            ("mount_setattr", libc::SYS_mount_setattr),
            ("unshare", libc::SYS_unshare),
            ("setns", libc::SYS_setns),
            ("clone", libc::SYS_clone),
            ("clone3", libc::SYS_clone3),
            ("ptrace", libc::SYS_ptrace),
            ("process_vm_readv", libc::SYS_process_vm_readv),
            ("process_vm_writev", libc::SYS_process_vm_writev),
            ("bpf", libc::SYS_bpf),
            ("perf_event_open", libc::SYS_perf_event_open),
            ("userfaultfd", libc::SYS_userfaultfd),
            ("io_uring_setup", libc::SYS_io_uring_setup),
            ("io_uring_enter", libc::SYS_io_uring_enter),
            ("io_uring_register", libc::SYS_io_uring_register),
            ("add_key", libc::SYS_add_key),
            ("request_key", libc::SYS_request_key),
            ("keyctl", libc::SYS_keyctl),
            ("setsid", libc::SYS_setsid),
            ("setpgid", libc::SYS_setpgid),
            ("shmget", libc::SYS_shmget),
            ("shmat", libc::SYS_shmat),
            ("shmctl", libc::SYS_shmctl),
            ("msgget", libc::SYS_msgget),
            ("msgsnd", libc::SYS_msgsnd),
            ("msgrcv", libc::SYS_msgrcv),
            ("msgctl", libc::SYS_msgctl),
            ("semget", libc::SYS_semget),
            ("semop", libc::SYS_semop),
            ("semtimedop", libc::SYS_semtimedop),
            ("semctl", libc::SYS_semctl),
            ("mq_open", libc::SYS_mq_open),
            ("mq_unlink", libc::SYS_mq_unlink),
            ("mq_timedsend", libc::SYS_mq_timedsend),
            ("mq_timedreceive", libc::SYS_mq_timedreceive),
            ("mq_notify", libc::SYS_mq_notify),
            ("mq_getsetattr", libc::SYS_mq_getsetattr),
            ("prlimit64", libc::SYS_prlimit64),
            ("setpriority", libc::SYS_setpriority),
            ("sched_setaffinity", libc::SYS_sched_setaffinity),
            ("sched_setscheduler", libc::SYS_sched_setscheduler),
            ("sched_setparam", libc::SYS_sched_setparam),
            ("sched_setattr", libc::SYS_sched_setattr),
            ("ioprio_set", libc::SYS_ioprio_set),
            ("init_module", libc::SYS_init_module),
            ("finit_module", libc::SYS_finit_module),
            ("delete_module", libc::SYS_delete_module),
            ("kexec_load", libc::SYS_kexec_load),
            ("kexec_file_load", libc::SYS_kexec_file_load),
            ("name_to_handle_at", libc::SYS_name_to_handle_at),
            ("open_by_handle_at", libc::SYS_open_by_handle_at),
            ("ioctl", libc::SYS_ioctl),
            ("socket", libc::SYS_socket),
            ("swapon", libc::SYS_swapon),
            ("swapoff", libc::SYS_swapoff),
            ("reboot", libc::SYS_reboot),
            ("acct", libc::SYS_acct),
            ("syslog", libc::SYS_syslog),
            ("fchmod", libc::SYS_fchmod),
            ("fchmodat", libc::SYS_fchmodat),
            ("fchmodat2", libc::SYS_fchmodat2),
            ("openat", libc::SYS_openat),
            ("openat2", libc::SYS_openat2),
            ("mknodat", libc::SYS_mknodat),
            ("mkdirat", libc::SYS_mkdirat),
            ("unlinkat", libc::SYS_unlinkat),
            ("renameat", libc::SYS_renameat),
            ("renameat2", libc::SYS_renameat2),
            ("linkat", libc::SYS_linkat),
            ("symlinkat", libc::SYS_symlinkat),
            ("truncate", libc::SYS_truncate),
            ("fchown", libc::SYS_fchown),
            ("fchownat", libc::SYS_fchownat),
            ("utimensat", libc::SYS_utimensat),
            ("setxattr", libc::SYS_setxattr),
            ("lsetxattr", libc::SYS_lsetxattr),
            ("fsetxattr", libc::SYS_fsetxattr),
            ("removexattr", libc::SYS_removexattr),
            ("lremovexattr", libc::SYS_lremovexattr),
            ("fremovexattr", libc::SYS_fremovexattr),
            ("bind", libc::SYS_bind),
            ("connect", libc::SYS_connect),
            ("listen", libc::SYS_listen),
            ("sendto", libc::SYS_sendto),
            ("sendmsg", libc::SYS_sendmsg),
            ("sendmmsg", libc::SYS_sendmmsg),
        ];
        #[cfg(target_arch = "x86_64")]
        libc_numbers.extend([
            ("iopl", libc::SYS_iopl),
            ("ioperm", libc::SYS_ioperm),
            ("chmod", libc::SYS_chmod),
            ("open", libc::SYS_open),
            ("creat", libc::SYS_creat),
            ("mknod", libc::SYS_mknod),
            ("mkdir", libc::SYS_mkdir),
            ("rmdir", libc::SYS_rmdir),
            ("unlink", libc::SYS_unlink),
            ("rename", libc::SYS_rename),
            ("link", libc::SYS_link),
            ("symlink", libc::SYS_symlink),
            ("chown", libc::SYS_chown),
            ("lchown", libc::SYS_lchown),
            ("utime", libc::SYS_utime),
            ("utimes", libc::SYS_utimes),
            ("futimesat", libc::SYS_futimesat),
        ]);

        for (name, expected) in &libc_numbers {
            let expected = u32::try_from(*expected).unwrap();
            assert_eq!(
                lookup(host, name),
                Lookup::Number(expected),
                "{name} on {host}"
            );
        }
        // Every row of the table is checked, except the calls libc does not know yet and the
        // calls this host lacks.
        let checked = libc_numbers.len() + 3;
        let absent = TABLE
            .iter()
            .filter(|(name, _, _)| lookup(host, name) == Lookup::Absent)
            .count();
        assert_eq!(
            checked + absent,
            TABLE.len(),
            "a table row is not compared with libc"
        );
        assert_eq!(lookup(host, "open_tree_attr"), Lookup::Number(467));
        assert_eq!(lookup(host, "setxattrat"), Lookup::Number(463));
        assert_eq!(lookup(host, "removexattrat"), Lookup::Number(466));
    }
}
