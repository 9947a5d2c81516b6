//! What the floor says about a command, and the rules it says it by.

use std::fmt;

use serde::Serialize;

/// A floor rule. Its [`id`](Rule::id) is stable: harnesses match on it, and it only ever gains
/// siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Rule {
    /// `recursive-delete`: recursive deletion of `/`, the home directory, a top-level system
    /// directory, or everything in one of them.
    RecursiveDelete,
    /// `make-filesystem`: making a filesystem on (or wiping the signatures of) a device.
    MakeFilesystem,
    /// `write-block-device`: writing a disk, partition or memory device.
    WriteBlockDevice,
    /// `fork-bomb`: a process that multiplies itself without bound.
    ForkBomb,
    /// `kill-all-processes`: a signal to every process (`kill -1`, `killall5`).
    KillAllProcesses,
    /// `signal-init`: a signal to PID 1.
    SignalInit,
    /// `power-state`: shutdown, reboot, halt, poweroff, suspend, runlevel changes, SysRq.
    PowerState,
    /// `sudo-password-guess`: `sudo -S` when the harness configured no password.
    SudoPasswordGuess,
    /// `recursive-permissions-root`: recursive chmod/chown/chgrp/setfacl of `/` or a system tree.
    RecursivePermissionsRoot,
    /// `self-preservation`: stopping the host agent (the harness names its processes).
    SelfPreservation,
    /// `nesting-depth`: wrappers, shells or substitutions nested past the cap.
    NestingDepth,
    /// `too-complex`: more readings of a command than the floor will examine.
    TooComplex,
}

impl Rule {
    /// Every rule, in a stable order.
    pub const ALL: &'static [Rule] = &[
        Rule::RecursiveDelete,
        Rule::MakeFilesystem,
        Rule::WriteBlockDevice,
        Rule::ForkBomb,
        Rule::KillAllProcesses,
        Rule::SignalInit,
        Rule::PowerState,
        Rule::SudoPasswordGuess,
        Rule::RecursivePermissionsRoot,
        Rule::SelfPreservation,
        Rule::NestingDepth,
        Rule::TooComplex,
    ];

    /// The stable identifier.
    pub fn id(self) -> &'static str {
        match self {
            Rule::RecursiveDelete => "recursive-delete",
            Rule::MakeFilesystem => "make-filesystem",
            Rule::WriteBlockDevice => "write-block-device",
            Rule::ForkBomb => "fork-bomb",
            Rule::KillAllProcesses => "kill-all-processes",
            Rule::SignalInit => "signal-init",
            Rule::PowerState => "power-state",
            Rule::SudoPasswordGuess => "sudo-password-guess",
            Rule::RecursivePermissionsRoot => "recursive-permissions-root",
            Rule::SelfPreservation => "self-preservation",
            Rule::NestingDepth => "nesting-depth",
            Rule::TooComplex => "too-complex",
        }
    }

    /// The rule with this identifier.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// The floor's verdict on one command.
///
/// Deliberately exhaustive: a verdict is allow or refuse, and a harness should not need a
/// wildcard arm to act on one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing on the floor stops it; the policy and the jail still apply.
    Allow,
    /// Never run it, whatever the mode, approval or configuration.
    Refuse {
        /// The rule.
        rule: Rule,
        /// Why, in words a user can act on.
        reason: String,
        /// The command (after normalization and unwrapping) the rule matched.
        evidence: String,
    },
}

impl Verdict {
    /// True for [`Verdict::Allow`].
    pub fn is_allow(&self) -> bool {
        matches!(self, Verdict::Allow)
    }

    /// The rule, when refused.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Verdict::Allow => None,
            Verdict::Refuse { rule, .. } => Some(*rule),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Allow => f.write_str("allow"),
            Verdict::Refuse {
                rule,
                reason,
                evidence,
            } => write!(f, "refuse: {rule}: {reason} (in `{evidence}`)"),
        }
    }
}

/// A refusal on its way out of the judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub rule: Rule,
    pub reason: String,
    pub evidence: String,
}

impl From<Refusal> for Verdict {
    fn from(r: Refusal) -> Verdict {
        Verdict::Refuse {
            rule: r.rule,
            reason: r.reason,
            evidence: r.evidence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        for rule in Rule::ALL {
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }

    #[test]
    fn serializes_with_the_id() {
        let v = Verdict::Refuse {
            rule: Rule::ForkBomb,
            reason: "r".into(),
            evidence: "e".into(),
        };
        let json = serde_json::to_value(&v).unwrap_or_default();
        assert_eq!(json["verdict"], "refuse");
        assert_eq!(json["rule"], "fork-bomb");
        assert_eq!(
            serde_json::to_value(Verdict::Allow).unwrap_or_default()["verdict"],
            "allow"
        );
    }
}
