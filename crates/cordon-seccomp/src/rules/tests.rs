use super::*;
use crate::syscalls::{self, Lookup};

fn spec(arch: Arch, deny_sockets: bool) -> FilterSpec {
    FilterSpec {
        arch,
        deny_sockets,
        own_network_namespace: false,
        keep_process_group: false,
        sessions_reaped: false,
        supervised: false,
    }
}

#[test]
fn process_group_rules_follow_the_spec() {
    let has = |spec: FilterSpec, name: &str| rule_table(&spec).iter().any(|r| r.syscall == name);
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
        // With a reaper the command cannot signal, only the sessions are let through.
        let reaped = alone.with_sessions_reaped();
        assert_eq!(
            has(reaped, name),
            !matches!(name, "setsid" | "setpgid"),
            "{name}"
        );
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
