//! From the rule table to the BPF program bubblewrap loads.
//!
//! seccompiler gives each filter exactly one "match" action, and it does not guard the x32 ABI,
//! so the program is assembled from parts:
//!
//! ```text
//! arch check          seccompiler's 3 instructions: ld [arch]; jeq AUDIT_ARCH, +1; ret KILL_PROCESS
//! x32 guard           x86_64 only: ld [nr]; jge #0x40000000; ret KILL_PROCESS
//! one segment/action  seccompiler's body for that action's calls, its "ret ALLOW" exits
//!                     rewritten to jumps past the segment, so a call no rule of the segment
//!                     matches falls through to the next segment
//! default             ret ALLOW
//! ```
//!
//! Splicing is safe because classic BPF only jumps forward, relative to the next instruction:
//! the arch check's only jump skips its own `ret`, landing on the first instruction after it,
//! which is an `ld [nr]` with or without the guard; within a segment every jump stays inside it.
//! The layout seccompiler produced is checked before anything is spliced into it.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

use crate::bpf::{self, DATA_ARCH, DATA_NR, JA, JEQ_K, JGE_K, LD_W_ABS, RET_K};
use crate::rules::X32_SYSCALL_BIT;
use crate::syscalls::{self, Lookup};
use crate::{
    Action, Arch, CmpOp, Condition, FILTER_VERSION, FilterSpec, Rule, SeccompError, rule_table,
};

/// A filter ready for `bwrap --seccomp FD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledFilter {
    arch: Arch,
    bytes: Vec<u8>,
}

impl CompiledFilter {
    /// The `struct sock_filter` array, 8 bytes an instruction (u16 code, u8 jt, u8 jf, u32 k, in
    /// the architecture's byte order): what bubblewrap reads from the descriptor.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The number of BPF instructions.
    pub fn instruction_count(&self) -> usize {
        self.bytes.len() / bpf::INSTRUCTION_BYTES
    }

    /// The [`FILTER_VERSION`] this filter was built under.
    pub fn version(&self) -> u32 {
        FILTER_VERSION
    }

    /// The architecture the filter is for.
    pub fn arch(&self) -> Arch {
        self.arch
    }
}

/// Builds the BPF program for `spec`: exactly the decisions of [`rule_table`].
///
/// # Errors
///
/// A [`SeccompError`] if the rule table names a call with no number, gives a call two actions,
/// if seccompiler refuses a rule or lays its program out differently than expected, or if the
/// program is too long for the kernel. None of these depends on the spec's values at run time:
/// the unit tests compile every spec.
pub fn compile(spec: &FilterSpec) -> Result<CompiledFilter, SeccompError> {
    let arch = spec.arch;
    let plan = Plan::from_table(arch, &rule_table(spec))?;

    let mut program = arch_check(arch);
    if let Some(action) = plan.x32 {
        program.extend([
            bpf::stmt(LD_W_ABS, DATA_NR),
            bpf::jump(JGE_K, X32_SYSCALL_BIT, 0, 1),
            bpf::stmt(RET_K, seccomp_ret(action)),
        ]);
    }
    for segment in plan.segments {
        program.extend(segment.compile(arch)?);
    }
    program.push(bpf::stmt(RET_K, seccomp_ret(Action::Allow)));

    if program.len() > bpf::MAX_INSTRUCTIONS {
        return Err(SeccompError::TooLarge {
            arch,
            instructions: program.len(),
            max: bpf::MAX_INSTRUCTIONS,
        });
    }
    Ok(CompiledFilter {
        arch,
        bytes: bpf::encode(&program),
    })
}

/// The rule table sorted into what each part of the program must do.
struct Plan {
    x32: Option<Action>,
    segments: Vec<Segment>,
}

/// The calls that share one action, with their conditions.
struct Segment {
    action: Action,
    calls: BTreeMap<u32, Call>,
}

enum Call {
    /// Every invocation (absorbs any conditional rule for the same call).
    Unconditional,
    /// Invocations matching any of these rules.
    Conditional(Vec<SeccompRule>),
}

impl Plan {
    fn from_table(arch: Arch, table: &[Rule]) -> Result<Plan, SeccompError> {
        let mut plan = Plan {
            x32: None,
            segments: Vec::new(),
        };
        let mut actions: BTreeMap<u32, Action> = BTreeMap::new();
        for rule in table {
            let unsupported = || SeccompError::UnsupportedRule {
                arch,
                syscall: rule.syscall,
                condition: rule.condition.to_string(),
                action: rule.action,
            };
            match (rule.number, rule.condition, rule.action) {
                // The program opens with the check seccompiler emits (always KILL_PROCESS);
                // each segment's own copy is verified identical, then dropped.
                (None, Condition::ForeignArch { expected, .. }, Action::KillProcess)
                    if expected == arch.audit_arch() => {}
                (None, Condition::X32Abi, action) if arch == Arch::X86_64 => {
                    seccomp_action(action).ok_or_else(unsupported)?;
                    plan.x32 = Some(action);
                }
                (None, Condition::Otherwise, Action::Allow) => {}
                (None, _, Action::Absent) => match syscalls::lookup(arch, rule.syscall) {
                    Lookup::Absent => {}
                    Lookup::Number(_) => return Err(unsupported()),
                    Lookup::Unknown => {
                        return Err(SeccompError::UnknownSyscall {
                            arch,
                            syscall: rule.syscall,
                        });
                    }
                },
                (Some(number), _, action) => {
                    if action == Action::Allow || seccomp_action(action).is_none() {
                        return Err(unsupported());
                    }
                    let first = *actions.entry(number).or_insert(action);
                    // A refusal, then the supervisor: the refusal's segment comes first (the
                    // table lists refusals first), and what it does not match falls through.
                    let fallback = action == Action::Notify && first != Action::Notify;
                    if first != action && !fallback {
                        return Err(SeccompError::ConflictingActions {
                            arch,
                            syscall: rule.syscall,
                            first,
                            second: action,
                        });
                    }
                    let condition = seccomp_condition(arch, rule)?;
                    plan.segment(action).add(number, condition);
                }
                _ => return Err(unsupported()),
            }
        }
        Ok(plan)
    }

    fn segment(&mut self, action: Action) -> &mut Segment {
        let index = match self.segments.iter().position(|s| s.action == action) {
            Some(index) => index,
            None => {
                self.segments.push(Segment {
                    action,
                    calls: BTreeMap::new(),
                });
                self.segments.len() - 1
            }
        };
        &mut self.segments[index]
    }
}

impl Segment {
    /// Adds a rule for `number`; `None` means unconditional.
    fn add(&mut self, number: u32, condition: Option<SeccompRule>) {
        let call = self
            .calls
            .entry(number)
            .or_insert_with(|| Call::Conditional(Vec::new()));
        match (call, condition) {
            (call, None) => *call = Call::Unconditional,
            (Call::Unconditional, Some(_)) => {}
            (Call::Conditional(rules), Some(rule)) => rules.push(rule),
        }
    }

    /// seccompiler's program for this segment alone, arch check removed, with its "no match"
    /// exits turned into jumps to the end of the segment.
    fn compile(self, arch: Arch) -> Result<Vec<sock_filter>, SeccompError> {
        let backend = |source| SeccompError::Backend {
            arch,
            what: format!("the {:?} segment", self.action),
            source,
        };
        let matched = seccomp_action(self.action).ok_or_else(|| SeccompError::UnsupportedRule {
            arch,
            syscall: "*",
            condition: "segment".to_owned(),
            action: self.action,
        })?;
        let marker = u32::from(matched.clone());
        let rules = self
            .calls
            .into_iter()
            .map(|(number, call)| {
                let rules = match call {
                    Call::Unconditional => Vec::new(),
                    Call::Conditional(rules) => rules,
                };
                (i64::from(number), rules)
            })
            .collect();
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, matched, arch.target())
            .map_err(backend)?;
        let program = BpfProgram::try_from(filter).map_err(backend)?;

        let prologue = arch_check(arch);
        expect_prefix(arch, &program, &prologue, 0)?;
        expect_prefix(
            arch,
            &program,
            &[bpf::stmt(LD_W_ABS, DATA_NR)],
            prologue.len(),
        )?;

        let mut body = program[prologue.len()..].to_vec();
        let allow = seccomp_ret(Action::Allow);
        let len = body.len();
        for (pc, insn) in body.iter_mut().enumerate() {
            if self.action == Action::Notify && insn.code == RET_K && insn.k == marker {
                insn.k = libc::SECCOMP_RET_USER_NOTIF;
            }
            if insn.code == RET_K && insn.k == allow {
                // Lossless: seccompiler refuses programs of BPF_MAXINSNS instructions or more.
                let to_end = u32::try_from(len - 1 - pc).unwrap_or(u32::MAX);
                *insn = bpf::stmt(JA, to_end);
            }
        }
        Ok(body)
    }
}

/// The 3-instruction check seccompiler opens every program with.
fn arch_check(arch: Arch) -> Vec<sock_filter> {
    vec![
        bpf::stmt(LD_W_ABS, DATA_ARCH),
        bpf::jump(JEQ_K, arch.audit_arch(), 1, 0),
        bpf::stmt(RET_K, seccomp_ret(Action::KillProcess)),
    ]
}

fn expect_prefix(
    arch: Arch,
    program: &[sock_filter],
    expected: &[sock_filter],
    at: usize,
) -> Result<(), SeccompError> {
    for (i, want) in expected.iter().enumerate() {
        let index = at + i;
        let found = program.get(index);
        if found != Some(want) {
            return Err(SeccompError::UnexpectedProgram {
                arch,
                index,
                found: found.map_or_else(|| "the end of the program".to_owned(), bpf::describe),
                expected: bpf::describe(want),
            });
        }
    }
    Ok(())
}

fn seccomp_action(action: Action) -> Option<SeccompAction> {
    match action {
        Action::Allow => Some(SeccompAction::Allow),
        Action::Eperm => Some(SeccompAction::Errno(libc::EPERM.unsigned_abs())),
        Action::Enosys => Some(SeccompAction::Errno(libc::ENOSYS.unsigned_abs())),
        Action::KillProcess => Some(SeccompAction::KillProcess),
        // seccompiler has no user-notification action: its segment is compiled with this
        // marker, whose return instructions are then rewritten (`Segment::compile`).
        Action::Notify => Some(SeccompAction::Trace(NOTIFY_MARKER)),
        Action::Absent => None,
    }
}

/// The `SECCOMP_RET_TRACE` data that stands for [`Action::Notify`] while seccompiler compiles.
const NOTIFY_MARKER: u32 = 0x0c0d;

/// The `SECCOMP_RET_*` value of an action that has one (every action but `Absent`, which the
/// planner never hands on).
fn seccomp_ret(action: Action) -> u32 {
    if action == Action::Notify {
        return libc::SECCOMP_RET_USER_NOTIF;
    }
    seccomp_action(action).map_or(libc::SECCOMP_RET_KILL_PROCESS, u32::from)
}

/// The seccompiler rule for a syscall row's condition; `None` for [`Condition::Always`].
fn seccomp_condition(arch: Arch, rule: &Rule) -> Result<Option<SeccompRule>, SeccompError> {
    let (syscall, condition) = (rule.syscall, rule.condition);
    let one = |arg: u8, op: SeccompCmpOp, value: u32| (arg, op, value);
    let cmps: Vec<(u8, SeccompCmpOp, u32)> = match condition {
        Condition::Always => return Ok(None),
        // (arg & flag) == flag on the low 32 bits: the bit is set. Legacy clone(2) reads only the
        // low 32 bits of its flags.
        Condition::ArgFlagSet { arg, flag, .. } => {
            vec![one(arg, SeccompCmpOp::MaskedEq(u64::from(flag)), flag)]
        }
        // The low 32 bits only: ioctl(2)'s request is an unsigned int, so the kernel drops the
        // high bits a caller might set to slip past a 64-bit comparison.
        Condition::ArgLow32Equals { arg, value, .. } => vec![one(arg, SeccompCmpOp::Eq, value)],
        // pid_t and id_t are 32-bit: the kernel reads only the low half.
        Condition::ArgLow32NotEquals { arg, value, .. } => {
            vec![one(arg, SeccompCmpOp::Ne, value)]
        }
        // socket(2)'s domain, type and protocol are ints: low halves again.
        Condition::All(list) => list
            .iter()
            .map(|c| {
                let op = match c.op {
                    CmpOp::Eq => SeccompCmpOp::Eq,
                    CmpOp::Ne => SeccompCmpOp::Ne,
                    CmpOp::MaskedEq(mask) => SeccompCmpOp::MaskedEq(u64::from(mask)),
                };
                one(c.arg, op, c.value)
            })
            .collect(),
        Condition::PointerSet { arg, .. } => {
            let whole = SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                .map_err(|source| SeccompError::Backend {
                    arch,
                    what: format!("rule `{syscall}: {condition}`"),
                    source,
                })?;
            return SeccompRule::new(vec![whole]).map(Some).map_err(|source| {
                SeccompError::Backend {
                    arch,
                    what: format!("rule `{syscall}: {condition}`"),
                    source,
                }
            });
        }
        other => {
            return Err(SeccompError::UnsupportedRule {
                arch,
                syscall,
                condition: other.to_string(),
                action: rule.action,
            });
        }
    };
    let backend = |source| SeccompError::Backend {
        arch,
        what: format!("rule `{syscall}: {condition}`"),
        source,
    };
    let conditions = cmps
        .into_iter()
        .map(|(arg, op, value)| {
            SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, u64::from(value))
                .map_err(backend)
        })
        .collect::<Result<Vec<_>, _>>()?;
    SeccompRule::new(conditions).map(Some).map_err(backend)
}

#[cfg(test)]
mod tests;
