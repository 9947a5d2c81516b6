//! The filter as plain data: one row per decision, in the order the program makes them.
//!
//! [`rule_table`] is what [`compile`](crate::compile) turns into BPF, and what a reviewer reads
//! in the snapshot tests, so the two cannot drift apart.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::syscalls::{self, Lookup};
use crate::{Arch, FilterSpec};

mod always;
mod no_namespace;
mod sockets;
mod supervised;
#[cfg(test)]
mod tests;

use always::ALWAYS_DENIED;
use no_namespace::{NO_NAMESPACE_DENIALS, SESSION_DENIALS};
use sockets::{LOOPBACK_SOCKET_DENIALS, SOCKET_DENIAL, SUPERVISED_SOCKET_DENIALS};
use supervised::{SUPERVISED, SUPERVISED_NET};

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
    /// Stop the caller and hand the call to the supervisor listening on the filter
    /// (`SECCOMP_RET_USER_NOTIF`). Matched after every refusal, so a call a refusal covers
    /// never reaches the supervisor.
    #[serde(rename = "NOTIFY (the supervisor decides and performs it)")]
    Notify,
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
    /// Argument `arg`, all 64 bits, is not zero: a pointer is passed (`sendto(2)`'s
    /// destination). Compared whole, since a pointer's low half can be zero.
    PointerSet {
        /// Argument index, 0-based.
        arg: u8,
        /// The pointer's meaning.
        name: &'static str,
    },
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
            Condition::PointerSet { arg, name } => write!(f, "arg{arg} ({name}) is not NULL"),
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
#[derive(Clone, Copy)]
pub(super) struct Denial {
    pub(super) syscall: &'static str,
    pub(super) condition: Condition,
    pub(super) action: Action,
    pub(super) why: &'static str,
}

pub(super) const fn eperm(syscall: &'static str, why: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::Always,
        action: Action::Eperm,
        why,
    }
}

/// The filter for `spec`, row by row, in the order the program decides.
///
/// The first rows refuse foreign ABIs; then come the per-call rules (a call that matches one of
/// them gets its action, and no call has two actions but a refusal followed by
/// [`Action::Notify`]); the last row is the default, `ALLOW`.
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
        (true, false) if spec.supervised => &SUPERVISED_SOCKET_DENIALS,
        (true, false) => std::slice::from_ref(&SOCKET_DENIAL),
        (true, true) => &LOOPBACK_SOCKET_DENIALS,
    };
    let group: &[Denial] = if spec.keep_process_group {
        &NO_NAMESPACE_DENIALS
    } else {
        &[]
    };
    let sessions: &[Denial] = if spec.keep_process_group && !spec.sessions_reaped {
        &SESSION_DENIALS
    } else {
        &[]
    };
    let supervised: &[Denial] = if spec.supervised { &SUPERVISED } else { &[] };
    // A supervisor judges addresses where no network namespace holds the jail.
    let supervised_net: &[Denial] =
        if spec.supervised && spec.deny_sockets && !spec.own_network_namespace {
            &SUPERVISED_NET
        } else {
            &[]
        };
    for denial in ALWAYS_DENIED
        .iter()
        .chain(socket)
        .chain(sessions)
        .chain(group)
        .chain(supervised)
        .chain(supervised_net)
    {
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
