//! The compiled program, read back: its layout, and what it answers for any call.

use proptest::prelude::*;

use super::*;
use crate::bpf::eval::{self, Data};

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

/// Every shape of spec the launcher builds, on every architecture: bubblewrap's (with and
/// without the network, with its own loopback) and the Landlock backend's.
fn all_specs() -> Vec<FilterSpec> {
    Arch::ALL
        .iter()
        .flat_map(|&arch| {
            [
                spec(arch, true),
                spec(arch, false),
                spec(arch, true).with_own_network_namespace(),
                spec(arch, true).without_pid_namespace(),
                spec(arch, false).without_pid_namespace(),
                spec(arch, true).without_pid_namespace().with_supervisor(),
                spec(arch, false).without_pid_namespace().with_supervisor(),
            ]
        })
        .collect()
}

fn program(spec: &FilterSpec) -> Vec<sock_filter> {
    bpf::decode(compile(spec).unwrap().bytes())
}

const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;
const EPERM: u32 = 0x0005_0001;
const ENOSYS: u32 = 0x0005_0026;

#[test]
fn every_spec_compiles_to_whole_instructions() {
    for spec in all_specs() {
        let filter = compile(&spec).unwrap();
        assert_eq!(filter.bytes().len() % 8, 0, "{spec:?}");
        assert_eq!(filter.bytes().len(), filter.instruction_count() * 8);
        assert!(
            filter.instruction_count() > 50,
            "{spec:?}: suspiciously short"
        );
        assert_eq!(filter.arch(), spec.arch);
    }
}

#[test]
fn version_is_recorded() {
    assert_eq!(FILTER_VERSION, 8);
    assert_eq!(
        compile(&spec(Arch::Aarch64, true)).unwrap().version(),
        FILTER_VERSION
    );
}

/// What seccompiler itself emits first, read from its own output rather than assumed.
#[test]
fn seccompiler_opens_with_the_three_instruction_arch_check() {
    for arch in Arch::ALL {
        let rules = [(libc::SYS_getpid, Vec::new())].into_iter().collect();
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(1),
            arch.target(),
        )
        .unwrap();
        let program = BpfProgram::try_from(filter).unwrap();
        assert_eq!(program[..3], arch_check(arch)[..], "{arch}");
        // The check's only jump (jt = 1 from index 1) lands on index 3, and the body begins
        // there by loading the syscall number: the place the x32 guard goes.
        assert_eq!((program[1].jt, program[1].jf), (1, 0));
        assert_eq!(program[3], bpf::stmt(LD_W_ABS, DATA_NR));
    }
}

#[test]
fn x32_guard_follows_the_arch_check_on_x86_64() {
    for deny_sockets in [true, false] {
        let program = program(&spec(Arch::X86_64, deny_sockets));
        assert_eq!(program[..3], arch_check(Arch::X86_64)[..]);
        assert_eq!(
            program[3..6],
            [
                bpf::stmt(LD_W_ABS, DATA_NR),
                bpf::jump(JGE_K, 0x4000_0000, 0, 1),
                bpf::stmt(RET_K, KILL_PROCESS),
            ]
        );
        assert_eq!(
            program[6],
            bpf::stmt(LD_W_ABS, DATA_NR),
            "the first segment reloads nr"
        );
    }
}

#[test]
fn aarch64_has_no_x32_guard() {
    let program = program(&spec(Arch::Aarch64, true));
    assert_eq!(program[..3], arch_check(Arch::Aarch64)[..]);
    assert_eq!(program[3], bpf::stmt(LD_W_ABS, DATA_NR));
    assert!(
        !program
            .iter()
            .any(|insn| insn.code == JGE_K && insn.k == 0x4000_0000)
    );
}

#[test]
fn every_jump_lands_inside_the_program() {
    for spec in all_specs() {
        let program = program(&spec);
        for (pc, insn) in program.iter().enumerate() {
            let targets = match insn.code {
                JA => vec![pc + 1 + insn.k as usize],
                code if code & 0x07 == 0x05 => {
                    vec![pc + 1 + usize::from(insn.jt), pc + 1 + usize::from(insn.jf)]
                }
                _ => vec![],
            };
            assert!(
                targets.iter().all(|&t| t < program.len()),
                "{spec:?}: jump at {pc}"
            );
        }
        assert_eq!(program.last(), Some(&bpf::stmt(RET_K, ALLOW)));
    }
}

#[test]
fn listing_x86_64_network_denied() {
    insta::assert_snapshot!(eval::listing(&program(&spec(Arch::X86_64, true))));
}

#[test]
fn listing_aarch64_network_denied() {
    insta::assert_snapshot!(eval::listing(&program(&spec(Arch::Aarch64, true))));
}

fn data(arch: Arch, nr: u32, args: [u64; 6]) -> Data {
    Data {
        nr,
        arch: arch.audit_arch(),
        args,
    }
}

fn number(arch: Arch, name: &str) -> u32 {
    match syscalls::lookup(arch, name) {
        Lookup::Number(number) => number,
        other => panic!("{name} on {arch}: {other:?}"),
    }
}

#[test]
fn spot_checks_through_the_interpreter() {
    for arch in Arch::ALL {
        let program = program(&spec(arch, true));
        let run = |name, args| eval::run(&program, &data(arch, number(arch, name), args));
        assert_eq!(run("mount", [0; 6]), EPERM, "{arch}");
        assert_eq!(run("clone3", [0; 6]), ENOSYS, "{arch}");
        assert_eq!(run("socket", [1, 1, 0, 0, 0, 0]), EPERM, "{arch}");
        assert_eq!(
            run("clone", [0x1000_0000 | 0x11, 0, 0, 0, 0, 0]),
            EPERM,
            "{arch}"
        );
        assert_eq!(
            run("clone", [0x0120_0011, 0, 0, 0, 0, 0]),
            ALLOW,
            "{arch}: fork flags"
        );
        assert_eq!(run("ioctl", [0, 0x5412, 0, 0, 0, 0]), EPERM, "{arch}");
        assert_eq!(
            run("ioctl", [0, 0xdead_0000_5412, 0, 0, 0, 0]),
            EPERM,
            "{arch}"
        );
        assert_eq!(run("ioctl", [0, 0x541c, 0, 0, 0, 0]), EPERM, "{arch}");
        assert_eq!(run("ioctl", [0, 0x5413, 0, 0, 0, 0]), ALLOW, "{arch}");
        assert_eq!(
            run("ioctl", [0x5412, 0, 0, 0, 0, 0]),
            ALLOW,
            "{arch}: fd, not request"
        );
        let foreign = Data {
            arch: 0x4000_0003,
            ..data(arch, 0, [0; 6])
        };
        assert_eq!(eval::run(&program, &foreign), KILL_PROCESS, "{arch}: i386");
    }
    let allowed = program(&spec(Arch::X86_64, false));
    let socket = data(Arch::X86_64, 41, [2, 1, 0, 0, 0, 0]);
    assert_eq!(eval::run(&allowed, &socket), ALLOW);
    let x32_getpid = data(Arch::X86_64, 0x4000_0000 | 39, [0; 6]);
    assert_eq!(eval::run(&allowed, &x32_getpid), KILL_PROCESS);
}

#[test]
fn the_supervisor_gets_writes_and_metadata_after_every_refusal() {
    const NOTIFY: u32 = 0x7fc0_0000;
    for arch in Arch::ALL {
        let program = program(&spec(arch, true).without_pid_namespace().with_supervisor());
        let run = |name, args| eval::run(&program, &data(arch, number(arch, name), args));
        // openat(dirfd, path, flags, mode)
        assert_eq!(run("openat", [0; 6]), ALLOW, "{arch}: O_RDONLY");
        assert_eq!(
            run("openat", [0, 0, 0o2_000_000, 0, 0, 0]),
            ALLOW,
            "{arch}: O_CLOEXEC"
        );
        for flags in [0o1, 0o2, 0o3, 0o100, 0o1000, 0o2_000_101] {
            assert_eq!(
                run("openat", [0, 0, flags, 0, 0, 0]),
                NOTIFY,
                "{arch}: {flags:#o}"
            );
        }
        // A set-id mode is refused before the supervisor sees it.
        assert_eq!(run("openat", [0, 0, 0o101, 0o4755, 0, 0]), EPERM, "{arch}");
        assert_eq!(run("fchmodat", [0, 0, 0o4755, 0, 0, 0]), EPERM, "{arch}");
        assert_eq!(run("fchmodat", [0, 0, 0o755, 0, 0, 0]), NOTIFY, "{arch}");
        for name in [
            "mkdirat",
            "unlinkat",
            "renameat2",
            "linkat",
            "symlinkat",
            "utimensat",
        ] {
            assert_eq!(run(name, [0; 6]), NOTIFY, "{arch}: {name}");
        }
        assert_eq!(run("openat2", [0; 6]), ENOSYS, "{arch}");
        assert_eq!(run("mount", [0; 6]), EPERM, "{arch}");
        assert_eq!(run("setsid", [0; 6]), EPERM, "{arch}");
    }
    // Without a supervisor nothing is notified.
    let plain = program(&spec(Arch::X86_64, true).without_pid_namespace());
    let write_open = data(Arch::X86_64, 257, [0, 0, 1, 0, 0, 0]);
    assert_eq!(eval::run(&plain, &write_open), ALLOW);
}

/// What the rule table says the verdict is, read row by row.
fn table_verdict(table: &[Rule], arch: Arch, data: &Data) -> u32 {
    for rule in table {
        let applies = match (rule.condition, rule.number) {
            (Condition::ForeignArch { expected, .. }, _) => data.arch != expected,
            (Condition::X32Abi, _) => data.nr >= 0x4000_0000,
            (Condition::Otherwise, _) => true,
            (_, None) => false,
            (_, Some(number)) if number != data.nr => false,
            (Condition::Always, _) => true,
            (Condition::ArgFlagSet { arg, flag, .. }, _) => {
                data.args[usize::from(arg)] as u32 & flag == flag
            }
            (Condition::ArgLow32Equals { arg, value, .. }, _) => {
                data.args[usize::from(arg)] as u32 == value
            }
            (Condition::ArgLow32NotEquals { arg, value, .. }, _) => {
                data.args[usize::from(arg)] as u32 != value
            }
            (Condition::All(cmps), _) => {
                cmps.iter().all(|c| c.holds(data.args[usize::from(c.arg)]))
            }
            (Condition::PointerSet { arg, .. }, _) => data.args[usize::from(arg)] != 0,
        };
        if applies {
            return seccomp_ret(rule.action);
        }
    }
    panic!("no row applied on {arch}: the table lost its default row");
}

#[test]
fn every_row_is_what_the_program_does() {
    for spec in all_specs() {
        let table = rule_table(&spec);
        let program = program(&spec);
        for rule in &table {
            let Some(nr) = rule.number else { continue };
            let mut args = [0; 6];
            match rule.condition {
                Condition::ArgFlagSet { arg, flag, .. } => args[usize::from(arg)] = flag.into(),
                Condition::ArgLow32Equals { arg, value, .. } => {
                    args[usize::from(arg)] = value.into();
                }
                // Every argument the call's rows let through, except this row's: it alone
                // decides. (A row of `ioprio_set` lets 1 through on arg0 and 0 on arg1.)
                Condition::ArgLow32NotEquals { arg, value, .. } => {
                    for other in table.iter().filter(|r| r.syscall == rule.syscall) {
                        if let Condition::ArgLow32NotEquals { arg, value, .. } = other.condition {
                            args[usize::from(arg)] = value.into();
                        }
                    }
                    args[usize::from(arg)] = u64::from(value) + 1;
                }
                // A value each comparison accepts: the value itself for Eq and MaskedEq, and for
                // Ne one outside every Ne of that argument.
                Condition::All(cmps) => {
                    for c in cmps {
                        let i = usize::from(c.arg);
                        args[i] = match c.op {
                            CmpOp::Ne => {
                                let taken: Vec<u32> = cmps
                                    .iter()
                                    .filter(|o| o.arg == c.arg && o.op == CmpOp::Ne)
                                    .map(|o| o.value)
                                    .collect();
                                u64::from((1..).find(|v| !taken.contains(v)).unwrap_or(0))
                            }
                            _ => u64::from(c.value),
                        };
                    }
                }
                // A pointer whose low half is zero: only a 64-bit comparison sees it.
                Condition::PointerSet { arg, .. } => args[usize::from(arg)] = 0x7f00_0000_0000,
                _ => {}
            }
            let data = data(spec.arch, nr, args);
            assert_eq!(
                eval::run(&program, &data),
                seccomp_ret(rule.action),
                "{rule:?}"
            );
            assert_eq!(
                table_verdict(&table, spec.arch, &data),
                seccomp_ret(rule.action)
            );
        }
    }
}

fn interesting_arg(values: Vec<u32>) -> impl Strategy<Value = u64> {
    let values = prop::sample::select(values);
    prop_oneof![
        any::<u64>(),
        values.clone().prop_map(u64::from),
        (values, any::<u32>()).prop_map(|(low, high)| u64::from(high) << 32 | u64::from(low)),
        (any::<u32>(), any::<u64>()).prop_map(|(bits, noise)| noise | u64::from(bits)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The program and the table agree on every call, whatever its number and arguments.
    #[test]
    fn program_means_the_table(
        spec_pick in any::<prop::sample::Index>(),
        nr_pick in any::<prop::sample::Index>(),
        nr_kind in 0u8..4,
        random_nr in any::<u32>(),
        foreign_arch in any::<u32>(),
        arch_is_foreign in prop::bool::weighted(0.1),
        args in prop::array::uniform6(interesting_arg(vec![
            0x5412, 0x541c, 0x0002_0000, 0x0200_0000, 0x0400_0000, 0x0800_0000, 0x1000_0000,
            0x2000_0000, 0x4000_0000, 0x80, 0x11, 0, 1, 2, 3, 10, 16, 0x80803, 0x8000a,
        ])),
    ) {
        let specs = all_specs();
        let spec = specs[spec_pick.index(specs.len())];
        let arch = spec.arch;
        let table = rule_table(&spec);
        let numbers: Vec<u32> = table.iter().filter_map(|rule| rule.number).collect();
        let listed = numbers[nr_pick.index(numbers.len())];
        let nr = match nr_kind {
            0 | 1 => listed,
            2 => listed | 0x4000_0000,
            _ => random_nr,
        };
        let audit = if arch_is_foreign { foreign_arch } else { arch.audit_arch() };
        let data = Data { nr, arch: audit, args };
        let program = program(&spec);
        prop_assert_eq!(eval::run(&program, &data), table_verdict(&table, arch, &data));
    }
}

fn row(syscall: &'static str, number: Option<u32>, action: Action) -> Rule {
    Rule {
        syscall,
        number,
        condition: Condition::Always,
        action,
        why: "test",
    }
}

#[test]
fn a_call_with_two_actions_is_refused() {
    let table = [
        row("mount", Some(165), Action::Eperm),
        row("mount", Some(165), Action::Enosys),
    ];
    let err = Plan::from_table(Arch::X86_64, &table).err().unwrap();
    assert!(
        matches!(
            err,
            SeccompError::ConflictingActions {
                syscall: "mount",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_absent_call_is_refused() {
    let table = [row("no_such_call", None, Action::Absent)];
    let err = Plan::from_table(Arch::Aarch64, &table).err().unwrap();
    assert!(matches!(
        err,
        SeccompError::UnknownSyscall {
            syscall: "no_such_call",
            ..
        }
    ));
    assert!(err.to_string().contains("no_such_call"), "{err}");
}

#[test]
fn an_allow_rule_for_a_call_is_refused() {
    let table = [row("mount", Some(165), Action::Allow)];
    let err = Plan::from_table(Arch::X86_64, &table).err().unwrap();
    assert!(
        matches!(
            err,
            SeccompError::UnsupportedRule {
                syscall: "mount",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn unconditional_rule_absorbs_conditional_ones() {
    let conditional = Rule {
        condition: Condition::ArgLow32Equals {
            arg: 1,
            value: 7,
            name: "SEVEN",
        },
        ..row("ioctl", Some(16), Action::Eperm)
    };
    let table = [conditional, row("ioctl", Some(16), Action::Eperm)];
    let plan = Plan::from_table(Arch::X86_64, &table).unwrap();
    assert!(matches!(plan.segments[0].calls[&16], Call::Unconditional));
}

#[test]
fn sendto_reaches_the_supervisor_only_with_a_destination() {
    let supervised = program(
        &spec(Arch::X86_64, true)
            .without_pid_namespace()
            .with_supervisor(),
    );
    let sendto = |dest: u64| data(Arch::X86_64, 44, [3, 0x1000, 4, 0, dest, 16]);
    assert_eq!(eval::run(&supervised, &sendto(0)), ALLOW);
    assert_eq!(
        eval::run(&supervised, &sendto(0x7f00_0000_0000)),
        libc::SECCOMP_RET_USER_NOTIF
    );
    assert_eq!(
        eval::run(&supervised, &sendto(0x1_0000)),
        libc::SECCOMP_RET_USER_NOTIF
    );
    // With a network namespace of its own the jail's sockets reach only it: nothing notified.
    let own = program(
        &spec(Arch::X86_64, true)
            .with_supervisor()
            .with_own_network_namespace(),
    );
    assert_eq!(eval::run(&own, &sendto(0x1_0000)), ALLOW);
}
