//! The one error type of this crate.

use std::fmt;

use crate::rules::Rule;

/// Which list of the environment policy an offending name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyList {
    /// `EnvPolicy::pass`: host variables passed through by name.
    Pass,
    /// `EnvPolicy::set`: explicit values set inside the jail.
    Set,
    /// `EnvPolicy::owned`: values cordon itself sets (its private toolchain caches).
    Owned,
}

impl fmt::Display for PolicyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyList::Pass => "pass",
            PolicyList::Set => "set",
            PolicyList::Owned => "owned",
        })
    }
}

/// What is wrong with a variable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// The name contains `=`, which would end the name early in `NAME=value`.
    ContainsEquals,
    /// The name contains a NUL byte, which would end the entry early.
    ContainsNul,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameProblem::Empty => "a variable name cannot be empty",
            NameProblem::ContainsEquals => "a variable name cannot contain '='",
            NameProblem::ContainsNul => "a variable name cannot contain a NUL byte",
        })
    }
}

/// Why an environment policy was refused. Nothing is built when any of these is returned.
///
/// Errors name the variable, never its value: values are often secrets and errors get logged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// A name in `pass` or `set` cannot be a variable name.
    #[error("invalid variable name {name:?} in the environment `{list}` list: {problem}")]
    InvalidName {
        /// The offending name.
        name: String,
        /// The list it appeared in.
        list: PolicyList,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// An explicit value contains a NUL byte.
    #[error(
        "the value given for {name} in the environment `set` list contains a NUL byte at byte \
         {offset}; an environment value cannot contain NUL (the value is not shown)"
    )]
    NulInValue {
        /// The variable whose value is invalid.
        name: String,
        /// Byte offset of the first NUL in the value.
        offset: usize,
    },
    /// An explicit value was given for a dynamic-loader or language-injection variable.
    #[error(
        "refusing to set {name} inside the jail: it matches the {class} rule `{pattern}` ({why}); \
         {class} variables act before the jail holds or on cordon itself, so they are never set, \
         not even explicitly",
        class = .rule.class,
        pattern = .rule.pattern,
        why = .rule.why
    )]
    Refused {
        /// The refused variable.
        name: String,
        /// The rule it matched.
        rule: Rule,
    },
}

impl EnvError {
    /// The variable name the error is about.
    pub fn name(&self) -> &str {
        match self {
            EnvError::InvalidName { name, .. }
            | EnvError::NulInValue { name, .. }
            | EnvError::Refused { name, .. } => name,
        }
    }
}
