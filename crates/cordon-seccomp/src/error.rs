//! The crate's one error type.

use crate::{Action, Arch};

/// Why a filter could not be built.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// The host is not an architecture cordon builds filters for.
    #[error(
        "no seccomp filter for host architecture {arch}: cordon builds filters for little-endian \
         64-bit x86_64 and aarch64 only"
    )]
    UnsupportedHostArch {
        /// The host architecture as Rust names it, with any ABI detail that disqualified it.
        arch: String,
    },

    /// A rule names a system call missing from the per-architecture number table.
    #[error(
        "the {arch} filter names system call {syscall}, which is not in cordon-seccomp's number \
         table; add its number for every architecture"
    )]
    UnknownSyscall {
        /// The architecture being compiled.
        arch: Arch,
        /// The system call name.
        syscall: &'static str,
    },

    /// One system call was given two different actions, so the result would depend on order.
    #[error("the {arch} filter gives {syscall} two actions, {first:?} and {second:?}")]
    ConflictingActions {
        /// The architecture being compiled.
        arch: Arch,
        /// The system call name.
        syscall: &'static str,
        /// The action of the first rule naming it.
        first: Action,
        /// The action of the later rule.
        second: Action,
    },

    /// A row of the rule table has a condition/action pairing the compiler does not implement.
    #[error("the {arch} filter cannot express rule `{syscall}: {condition} -> {action:?}`")]
    UnsupportedRule {
        /// The architecture being compiled.
        arch: Arch,
        /// The system call name, or `*` for rows that match every call.
        syscall: &'static str,
        /// The condition, as the rule table prints it.
        condition: String,
        /// The action.
        action: Action,
    },

    /// seccompiler refused part of the program.
    #[error("seccompiler refused the {arch} filter ({what}): {source}")]
    Backend {
        /// The architecture being compiled.
        arch: Arch,
        /// What was being built: a rule for a named call, or the whole filter.
        what: String,
        /// seccompiler's error.
        source: seccompiler::BackendError,
    },

    /// seccompiler produced a program whose layout is not the one the x32 guard and the
    /// per-action splicing rely on; refusing beats guessing at jump targets.
    #[error(
        "seccompiler's {arch} program has an unexpected layout at instruction {index}: found \
         {found}, expected {expected}; refusing to splice into a program that is not understood"
    )]
    UnexpectedProgram {
        /// The architecture being compiled.
        arch: Arch,
        /// Index of the first instruction that differs.
        index: usize,
        /// The instruction found there.
        found: String,
        /// The instruction expected there.
        expected: String,
    },

    /// The finished program is longer than the kernel accepts.
    #[error("the {arch} filter has {instructions} instructions; the kernel accepts at most {max}")]
    TooLarge {
        /// The architecture being compiled.
        arch: Arch,
        /// The program's length.
        instructions: usize,
        /// `BPF_MAXINSNS`.
        max: usize,
    },
}
