//! Building the child environment from a host environment and an environment policy.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fmt;

use serde::Serialize;

use crate::error::{EnvError, NameProblem, PolicyList};
use crate::policy::EnvPolicy;
use crate::rules::{NameClass, classify, matching_rule};

#[cfg(test)]
mod tests;

/// The exact environment a jailed command receives, and what was left out.
///
/// `Debug` shows the variable names only: values are often secrets, and `Debug` output ends up
/// in logs.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ChildEnv {
    /// Every variable of the child, by name. The launcher clears the environment and sets these.
    pub vars: BTreeMap<OsString, OsString>,
    /// Every host variable and every requested name that did not make it into `vars`, sorted by
    /// name. Names only, never values: harnesses log this and `cordon doctor` counts it.
    pub dropped: Vec<Dropped>,
}

/// A name that did not make it into the child's environment, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Dropped {
    /// The variable's name. A host name that is not UTF-8 is shown lossily (U+FFFD).
    pub name: String,
    /// Why it was dropped.
    pub reason: DropReason,
    /// True when the policy's `pass` list asked for it; the CLI warns about these.
    pub requested: bool,
}

/// Why a name did not make it into the child's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DropReason {
    /// The name reads as a credential ([`crate::reads_as_credential`]).
    Credential,
    /// A dynamic-loader variable.
    Loader,
    /// A language-injection variable.
    Injection,
    /// A command a tool runs for one action (editor, pager, askpass, ssh transport).
    CommandHook,
    /// A proxy variable.
    Proxy,
    /// An agent or control socket.
    AgentSocket,
    /// A desktop-session socket.
    Desktop,
    /// One of cordon's own variables (`CORDON_*`).
    Own,
    /// Neither allowlisted nor requested by `pass`.
    NotRequested,
    /// cordon sets this variable itself (a private toolchain cache), so the host's value is
    /// replaced by cordon's.
    CordonOwned,
    /// Requested by `pass`, but the host has no such variable.
    NotOnHost,
    /// The host name is not UTF-8, so no allowlist entry or `pass` name can match it.
    NonUnicodeName,
    /// The host entry cannot be an environment entry: an empty name, `=` or NUL in the name, or
    /// NUL in the value. Only a hand-built host can contain one.
    Malformed,
}

impl DropReason {
    /// The reason a host variable of `class` is dropped, or `None` when the class passes.
    pub const fn for_class(class: NameClass) -> Option<DropReason> {
        match class {
            NameClass::Allowlisted => None,
            NameClass::Loader => Some(DropReason::Loader),
            NameClass::Injection => Some(DropReason::Injection),
            NameClass::CommandHook => Some(DropReason::CommandHook),
            NameClass::Proxy => Some(DropReason::Proxy),
            NameClass::AgentSocket => Some(DropReason::AgentSocket),
            NameClass::Desktop => Some(DropReason::Desktop),
            NameClass::Credential => Some(DropReason::Credential),
            NameClass::Own => Some(DropReason::Own),
        }
    }

    /// The reason as it appears in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::Credential => "credential-shaped",
            DropReason::Loader => "dynamic-loader",
            DropReason::Injection => "language-injection",
            DropReason::CommandHook => "command-hook",
            DropReason::Proxy => "proxy",
            DropReason::AgentSocket => "agent-socket",
            DropReason::Desktop => "desktop",
            DropReason::Own => "cordon's own",
            DropReason::NotRequested => "not requested",
            DropReason::CordonOwned => "replaced by cordon's own value",
            DropReason::NotOnHost => "not on the host",
            DropReason::NonUnicodeName => "name is not UTF-8",
            DropReason::Malformed => "malformed entry",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A snapshot of the calling process's environment, in the order the OS gives it, for
/// [`ChildEnv::build`]. Reading is all it does.
pub fn host_snapshot() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

impl ChildEnv {
    /// Builds the child environment from `host` (name, value pairs) and `policy`.
    ///
    /// 1. Every host variable whose name is on the allowlist (or `LC_*`) is kept.
    /// 2. A host variable named in `policy.pass` is kept when [`classify`] gives it no class;
    ///    credential-shaped, loader, injection, command-hook, proxy, agent-socket and desktop
    ///    names are dropped with that reason.
    /// 3. Every `policy.owned` value (cordon's own: its private toolchain caches) is applied,
    ///    replacing a host value of the same name, passed or not
    ///    ([`DropReason::CordonOwned`] when one was requested or allowlisted).
    /// 4. Every `policy.set` value is applied, replacing a host or owned value of the same name.
    ///
    /// When `host` holds a name twice, the first entry wins, as with `getenv`. Host values are
    /// kept byte for byte, UTF-8 or not.
    ///
    /// # Errors
    ///
    /// Nothing is built when the policy holds an invalid name (empty, `=`, NUL), a `set` value
    /// with a NUL byte, or a `set` name of the dynamic-loader or language-injection family.
    /// `pass` is checked before `set`, each in sorted order, and the first problem is returned.
    pub fn build<I, K, V>(host: I, policy: &EnvPolicy) -> Result<ChildEnv, EnvError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        check_policy(policy)?;

        let mut vars = BTreeMap::new();
        let mut dropped = Vec::new();
        let mut seen: BTreeSet<OsString> = BTreeSet::new();
        for (name, value) in host {
            let (name, value) = (name.as_ref(), value.as_ref());
            if !seen.insert(name.to_os_string()) {
                continue;
            }
            let Some(utf8) = name.to_str() else {
                dropped.push(Dropped {
                    name: name.to_string_lossy().into_owned(),
                    reason: DropReason::NonUnicodeName,
                    requested: false,
                });
                continue;
            };
            if policy.set.contains_key(utf8) {
                // The explicit value replaces the host's; it is applied below.
                continue;
            }
            let requested = policy.pass.contains(utf8);
            if policy.owned.contains_key(utf8) {
                // cordon's own value replaces the host's, passed or not; applied below.
                if requested || classify(utf8) == Some(NameClass::Allowlisted) {
                    dropped.push(Dropped {
                        name: utf8.to_owned(),
                        reason: DropReason::CordonOwned,
                        requested,
                    });
                }
                continue;
            }
            let verdict = if name_problem(utf8).is_some() || nul_offset(value).is_some() {
                Err(DropReason::Malformed)
            } else {
                host_verdict(utf8, requested)
            };
            match verdict {
                Ok(()) => {
                    vars.insert(name.to_os_string(), value.to_os_string());
                }
                Err(reason) => dropped.push(Dropped {
                    name: utf8.to_owned(),
                    reason,
                    requested,
                }),
            }
        }

        for name in &policy.pass {
            if policy.set.contains_key(name)
                || policy.owned.contains_key(name)
                || seen.contains(OsStr::new(name))
            {
                continue;
            }
            let reason = classify(name)
                .and_then(DropReason::for_class)
                .unwrap_or(DropReason::NotOnHost);
            dropped.push(Dropped {
                name: name.clone(),
                reason,
                requested: true,
            });
        }

        for (name, value) in policy.owned.iter().chain(&policy.set) {
            vars.insert(OsString::from(name), OsString::from(value));
        }

        dropped.sort();
        Ok(ChildEnv { vars, dropped })
    }

    /// [`ChildEnv::build`] over [`host_snapshot`]: the calling process's environment is read,
    /// never changed.
    ///
    /// # Errors
    ///
    /// As [`ChildEnv::build`].
    pub fn from_current_process(policy: &EnvPolicy) -> Result<ChildEnv, EnvError> {
        ChildEnv::build(host_snapshot(), policy)
    }

    /// How many names were dropped for each reason, for `cordon doctor`.
    pub fn dropped_counts(&self) -> BTreeMap<DropReason, usize> {
        let mut counts = BTreeMap::new();
        for d in &self.dropped {
            *counts.entry(d.reason).or_insert(0) += 1;
        }
        counts
    }

    /// The value the child sees for `name`, if any.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }
}

impl fmt::Debug for ChildEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildEnv")
            .field(
                "vars (values hidden)",
                &self.vars.keys().collect::<Vec<_>>(),
            )
            .field("dropped", &self.dropped)
            .finish()
    }
}

/// Whether a valid host variable `name` passes, and if not, why.
fn host_verdict(name: &str, requested: bool) -> Result<(), DropReason> {
    match classify(name) {
        Some(class) => DropReason::for_class(class).map_or(Ok(()), Err),
        None if requested => Ok(()),
        None => Err(DropReason::NotRequested),
    }
}

fn check_policy(policy: &EnvPolicy) -> Result<(), EnvError> {
    for name in &policy.pass {
        check_name(name, PolicyList::Pass)?;
    }
    for (name, value) in &policy.set {
        check_name(name, PolicyList::Set)?;
        if let Some(offset) = nul_offset(OsStr::new(value)) {
            return Err(EnvError::NulInValue {
                name: name.clone(),
                offset,
            });
        }
        if let Some(rule) = matching_rule(name).filter(|r| r.class.refused_as_explicit()) {
            return Err(EnvError::Refused {
                name: name.clone(),
                rule: *rule,
            });
        }
    }
    // cordon's own values are paths it chose: checked for shape only (a name of an injection
    // family, such as `npm_config_cache`, is how the tool is told where its cache is).
    for (name, value) in &policy.owned {
        check_name(name, PolicyList::Owned)?;
        if let Some(offset) = nul_offset(OsStr::new(value)) {
            return Err(EnvError::NulInValue {
                name: name.clone(),
                offset,
            });
        }
    }
    Ok(())
}

fn check_name(name: &str, list: PolicyList) -> Result<(), EnvError> {
    match name_problem(name) {
        Some(problem) => Err(EnvError::InvalidName {
            name: name.to_owned(),
            list,
            problem,
        }),
        None => Ok(()),
    }
}

fn name_problem(name: &str) -> Option<NameProblem> {
    if name.is_empty() {
        Some(NameProblem::Empty)
    } else if name.contains('=') {
        Some(NameProblem::ContainsEquals)
    } else if name.contains('\0') {
        Some(NameProblem::ContainsNul)
    } else {
        None
    }
}

fn nul_offset(value: &OsStr) -> Option<usize> {
    value.as_encoded_bytes().iter().position(|&b| b == 0)
}
