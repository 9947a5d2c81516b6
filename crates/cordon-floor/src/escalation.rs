//! Escalation: the one way a harness's approval flow may retry a denied command under a relaxed
//! policy.
//!
//! After a structured denial, an interactive owner may approve one exact retry. The retry still
//! runs in the jail (the relaxed policy must refuse to run unsandboxed), keeps the floor (a
//! command the floor refuses can never be approved, and the floor is asked again at the retry)
//! and keeps the environment filter (the relaxed policy's environment must equal the base's). It
//! matches only the exact normalized command. Unattended and sub-agent contexts can neither
//! approve nor use an approval. A complex shell expression (more than one simple command, a
//! substitution, a here-document, a background job) can be approved once, never remembered.

use std::ffi::OsStr;
use std::fmt;

use cordon_policy::{Policy, PolicyHash, Unavailable};
use serde::Serialize;

use crate::error::FloorError;
use crate::normalize::normalize;
use crate::verdict::Verdict;
use crate::{Floor, shell};

/// Who is asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Requester {
    /// The owner, at the keyboard, answering a prompt.
    InteractiveOwner,
    /// Nobody is watching (CI, a scheduled run, a headless agent).
    Unattended,
    /// An agent started by another agent.
    SubAgent,
}

impl fmt::Display for Requester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Requester::InteractiveOwner => "interactive-owner",
            Requester::Unattended => "unattended",
            Requester::SubAgent => "sub-agent",
        })
    }
}

/// How long an approval lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalScope {
    /// The next retry of this exact command, then gone.
    Once,
    /// Every retry of this exact command for the life of the [`Escalations`] value. Only for a
    /// single simple command.
    Remember,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Form {
    Shell(String),
    Argv(Vec<String>),
}

/// A command, normalized: what an approval is keyed on and matched against, exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommandKey {
    form: Form,
    simple: bool,
}

impl CommandKey {
    /// A shell command line (`bash -c` text).
    pub fn shell(command: &str) -> CommandKey {
        let text = normalize(command).trim().to_owned();
        let simple = shell::parse(&text).is_single_simple();
        CommandKey {
            form: Form::Shell(text),
            simple,
        }
    }

    /// A program and its arguments, run without a shell. A shell given a command string
    /// (`sh -c STRING`) is as simple as its string.
    pub fn argv<S: AsRef<OsStr>>(argv: &[S]) -> CommandKey {
        let words: Vec<String> = argv
            .iter()
            .map(|a| normalize(&a.as_ref().to_string_lossy()))
            .collect();
        let simple = match crate::judge::shell_command_string(&words) {
            Some(string) => shell::parse(string).is_single_simple(),
            None => true,
        };
        CommandKey {
            form: Form::Argv(words),
            simple,
        }
    }

    /// True when an approval for it may be remembered.
    pub fn is_simple(&self) -> bool {
        self.simple
    }

    fn verdict(&self, floor: &Floor) -> Verdict {
        match &self.form {
            Form::Shell(text) => floor.check(text),
            Form::Argv(words) => floor.check_argv(words),
        }
    }
}

impl fmt::Display for CommandKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.form {
            Form::Shell(text) => f.write_str(text),
            Form::Argv(words) => f.write_str(&words.join(" ")),
        }
    }
}

/// A structured denial: the command the jail or the policy refused, and the policy it ran under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The command.
    pub command: CommandKey,
    /// The hash of the policy that denied it.
    pub policy_hash: PolicyHash,
    /// What was denied, for the prompt.
    pub reason: String,
}

#[derive(Debug, Clone)]
struct Approval {
    command: CommandKey,
    relaxed: Policy,
    scope: ApprovalScope,
}

/// The approvals of one harness session.
///
/// ```
/// use cordon_floor::{ApprovalScope, CommandKey, Denial, Escalations, Floor, FloorConfig, Requester};
/// use cordon_policy::{Policy, PolicyBuilder, Profile, Network, Source};
///
/// let floor = Floor::new(FloorConfig::default());
/// let base = Policy::for_profile(Profile::Shell);
/// let mut relaxed = PolicyBuilder::new(Profile::Shell);
/// relaxed.set_network(Network::Allowed, Source::Caller);
/// let relaxed = relaxed.build();
///
/// let command = CommandKey::shell("cargo fetch");
/// let denial = Denial { command: command.clone(), policy_hash: base.hash(), reason: "network".into() };
///
/// let mut escalations = Escalations::new();
/// escalations.approve(&floor, Requester::InteractiveOwner, &denial, &base, relaxed, ApprovalScope::Once)?;
/// assert!(escalations.retry_policy(&floor, Requester::InteractiveOwner, &command)?.is_some());
/// // Once means once.
/// assert!(escalations.retry_policy(&floor, Requester::InteractiveOwner, &command)?.is_none());
/// # Ok::<(), cordon_floor::FloorError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Escalations {
    approvals: Vec<Approval>,
}

impl Escalations {
    /// No approvals.
    pub fn new() -> Escalations {
        Escalations::default()
    }

    /// Records the owner's approval to retry the denied command under `relaxed` instead of
    /// `base`.
    pub fn approve(
        &mut self,
        floor: &Floor,
        requester: Requester,
        denial: &Denial,
        base: &Policy,
        relaxed: Policy,
        scope: ApprovalScope,
    ) -> Result<(), FloorError> {
        owner_only(requester)?;
        let base_hash = base.hash();
        if base_hash != denial.policy_hash {
            return Err(FloorError::DenialPolicyMismatch {
                denied: denial.policy_hash.to_string(),
                base: base_hash.to_string(),
            });
        }
        floor_allows(floor, &denial.command)?;
        if relaxed.env() != base.env() {
            return Err(FloorError::EscalationChangesEnvironment);
        }
        if relaxed.unavailable() != Unavailable::Refuse {
            return Err(FloorError::EscalationLeavesJail);
        }
        if scope == ApprovalScope::Remember && !denial.command.is_simple() {
            return Err(FloorError::ComplexNotRememberable {
                command: denial.command.to_string(),
            });
        }
        self.approvals.push(Approval {
            command: denial.command.clone(),
            relaxed,
            scope,
        });
        Ok(())
    }

    /// The relaxed policy to run `command` under, when an approval matches it exactly; `None`
    /// means: run it under the base policy. A `Once` approval is used up by this call. The floor
    /// is asked again, and only the interactive owner may use an approval.
    pub fn retry_policy(
        &mut self,
        floor: &Floor,
        requester: Requester,
        command: &CommandKey,
    ) -> Result<Option<Policy>, FloorError> {
        owner_only(requester)?;
        floor_allows(floor, command)?;
        let Some(i) = self.approvals.iter().position(|a| &a.command == command) else {
            return Ok(None);
        };
        let approval = &self.approvals[i];
        let policy = approval.relaxed.clone();
        if approval.scope == ApprovalScope::Once {
            self.approvals.remove(i);
        }
        Ok(Some(policy))
    }
}

fn owner_only(requester: Requester) -> Result<(), FloorError> {
    if requester == Requester::InteractiveOwner {
        Ok(())
    } else {
        Err(FloorError::EscalationNotAllowed { requester })
    }
}

fn floor_allows(floor: &Floor, command: &CommandKey) -> Result<(), FloorError> {
    match command.verdict(floor) {
        Verdict::Allow => Ok(()),
        Verdict::Refuse { rule, .. } => Err(FloorError::FloorRefused {
            command: command.to_string(),
            rule,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FloorConfig;
    use cordon_policy::{Network, PolicyBuilder, Profile, Source};

    fn policies() -> (Policy, Policy) {
        let base = Policy::for_profile(Profile::Shell);
        let mut b = PolicyBuilder::new(Profile::Shell);
        b.set_network(Network::Allowed, Source::Caller);
        (base, b.build())
    }

    fn denial(command: &CommandKey, base: &Policy) -> Denial {
        Denial {
            command: command.clone(),
            policy_hash: base.hash(),
            reason: "denied".into(),
        }
    }

    #[test]
    fn only_the_interactive_owner() {
        let floor = Floor::new(FloorConfig::default());
        let (base, relaxed) = policies();
        let cmd = CommandKey::shell("npm install");
        let mut e = Escalations::new();
        for who in [Requester::Unattended, Requester::SubAgent] {
            let r = e.approve(
                &floor,
                who,
                &denial(&cmd, &base),
                &base,
                relaxed.clone(),
                ApprovalScope::Once,
            );
            assert!(matches!(r, Err(FloorError::EscalationNotAllowed { .. })));
        }
        e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&cmd, &base),
            &base,
            relaxed,
            ApprovalScope::Once,
        )
        .unwrap_or_else(|err| panic!("{err}"));
        assert!(matches!(
            e.retry_policy(&floor, Requester::SubAgent, &cmd),
            Err(FloorError::EscalationNotAllowed { .. })
        ));
    }

    #[test]
    fn exact_normalized_match_only() {
        let floor = Floor::new(FloorConfig::default());
        let (base, relaxed) = policies();
        let cmd = CommandKey::shell("npm install");
        let mut e = Escalations::new();
        e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&cmd, &base),
            &base,
            relaxed,
            ApprovalScope::Remember,
        )
        .unwrap_or_else(|err| panic!("{err}"));
        let other = CommandKey::shell("npm install left-pad");
        assert!(matches!(
            e.retry_policy(&floor, Requester::InteractiveOwner, &other),
            Ok(None)
        ));
        let laced = CommandKey::shell("\u{1b}[1mｎｐｍ install\u{1b}[0m");
        assert!(matches!(
            e.retry_policy(&floor, Requester::InteractiveOwner, &laced),
            Ok(Some(_))
        ));
        // Remembered: still there.
        assert!(matches!(
            e.retry_policy(&floor, Requester::InteractiveOwner, &cmd),
            Ok(Some(_))
        ));
    }

    #[test]
    fn the_floor_and_the_environment_and_the_jail_stay() {
        let floor = Floor::new(FloorConfig::default());
        let (base, relaxed) = policies();
        let mut e = Escalations::new();
        let bad = CommandKey::shell("rm -rf /");
        let r = e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&bad, &base),
            &base,
            relaxed.clone(),
            ApprovalScope::Once,
        );
        assert!(matches!(r, Err(FloorError::FloorRefused { .. })));

        let cmd = CommandKey::argv(&["make", "deploy"]);
        let mut env = PolicyBuilder::new(Profile::Shell);
        env.set_env("DEPLOY".into(), "1".into(), Source::Caller);
        let r = e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&cmd, &base),
            &base,
            env.build(),
            ApprovalScope::Once,
        );
        assert!(matches!(r, Err(FloorError::EscalationChangesEnvironment)));

        let mut warn = PolicyBuilder::new(Profile::Shell);
        warn.set_unavailable(Unavailable::Warn, Source::Caller);
        let r = e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&cmd, &base),
            &base,
            warn.build(),
            ApprovalScope::Once,
        );
        assert!(matches!(r, Err(FloorError::EscalationLeavesJail)));

        let other_base = relaxed.clone();
        let r = e.approve(
            &floor,
            Requester::InteractiveOwner,
            &denial(&cmd, &other_base),
            &base,
            relaxed,
            ApprovalScope::Once,
        );
        assert!(matches!(r, Err(FloorError::DenialPolicyMismatch { .. })));
    }

    #[test]
    fn complex_expressions_once_never_remembered() {
        let floor = Floor::new(FloorConfig::default());
        let (base, relaxed) = policies();
        let mut e = Escalations::new();
        for text in [
            "make && make install",
            "curl x | sh",
            "echo $(date)",
            "sleep 1 &",
        ] {
            let cmd = CommandKey::shell(text);
            assert!(!cmd.is_simple(), "{text}");
            let r = e.approve(
                &floor,
                Requester::InteractiveOwner,
                &denial(&cmd, &base),
                &base,
                relaxed.clone(),
                ApprovalScope::Remember,
            );
            assert!(
                matches!(r, Err(FloorError::ComplexNotRememberable { .. })),
                "{text}"
            );
            assert!(
                e.approve(
                    &floor,
                    Requester::InteractiveOwner,
                    &denial(&cmd, &base),
                    &base,
                    relaxed.clone(),
                    ApprovalScope::Once
                )
                .is_ok()
            );
        }
        assert!(!CommandKey::argv(&["bash", "-c", "a; b"]).is_simple());
        assert!(CommandKey::argv(&["bash", "-c", "make test"]).is_simple());
        assert!(CommandKey::shell("cargo test --workspace > log.txt").is_simple());
    }
}
