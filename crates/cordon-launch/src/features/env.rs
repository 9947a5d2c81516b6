//! The jail's environment, built once per run, with who set each variable and why: the table
//! `cordon explain` prints is the map the backend gets.
//!
//! The sources, in the order a later one wins: the host's variables the allowlist passes
//! (`cordon-env`, under the plan's `EnvPolicy`), the values the plan owns (a private cache's
//! variables, the git identity), the caller's explicit grants, the proxy's variables in a
//! `proxy` network, and what the plan sets itself ([`Plan::jail_env`]).

use std::collections::BTreeMap;
use std::ffi::OsString;

use cordon_env::ChildEnv;
use cordon_policy::Plan;

use crate::error::LaunchError;

/// Why a variable is in the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvSource {
    /// A host variable the allowlist (or a `pass_env` name) lets through.
    Host,
    /// A value the plan owns: a private toolchain cache's variable, the git identity.
    Plan,
    /// An explicit grant from the caller (`--env`, `[env] set`): it acts only inside the jail.
    Explicit,
    /// A `proxy` network: every tool that honours a proxy variable goes through cordon's proxy.
    Proxy,
    /// What the plan sets itself: with the home hidden, git reads no global configuration.
    Jail,
    /// The workspace's private home, named by `HOME` where the backend has no mount namespace
    /// (and rustup's toolchains, which it would look for there).
    PrivateHome,
}

impl EnvSource {
    /// The reason, in words.
    pub fn reason(self) -> &'static str {
        match self {
            EnvSource::Host => "host variable passed by the allowlist",
            EnvSource::Plan => "set by the plan (a private toolchain cache, the git identity)",
            EnvSource::Explicit => "explicit grant from the caller; acts only inside the jail",
            EnvSource::Proxy => "network proxy: tools are pointed at cordon's proxy",
            EnvSource::Jail => "hidden home: git reads no global configuration",
            EnvSource::PrivateHome => {
                "the workspace's private home (the backend has no mount namespace to put it at the home's path)"
            }
        }
    }
}

/// One variable of the jail's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRow {
    /// The name.
    pub name: OsString,
    /// The value.
    pub value: OsString,
    /// Who set it.
    pub source: EnvSource,
}

/// The jail's environment and what the filter left out.
#[derive(Debug, Clone)]
pub(crate) struct JailEnv {
    /// The filter's result (its `vars` are kept equal to the table's).
    pub(crate) child: ChildEnv,
    sources: BTreeMap<OsString, EnvSource>,
}

impl JailEnv {
    /// The host's environment filtered by `plan`'s policy, with what the plan sets itself.
    pub(crate) fn build(
        plan: &Plan,
        host_env: &[(OsString, OsString)],
    ) -> Result<JailEnv, LaunchError> {
        let child = ChildEnv::build(host_env.iter().cloned(), &plan.env)?;
        let mut sources = BTreeMap::new();
        for name in child.vars.keys() {
            let utf8 = name.to_str().unwrap_or("");
            let source = if plan.env.set.contains_key(utf8) {
                EnvSource::Explicit
            } else if plan.env.owned.contains_key(utf8) {
                EnvSource::Plan
            } else {
                EnvSource::Host
            };
            sources.insert(name.clone(), source);
        }
        let mut env = JailEnv { child, sources };
        for (name, value) in plan.jail_env() {
            env.set(name, value, EnvSource::Jail);
        }
        Ok(env)
    }

    /// Sets `name` to `value` for the reason `source` (it wins over any earlier value).
    pub(crate) fn set(&mut self, name: &str, value: &str, source: EnvSource) {
        self.child.vars.insert(name.into(), value.into());
        self.sources.insert(name.into(), source);
    }

    /// Whether `name` is set.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.child.vars.contains_key(std::ffi::OsStr::new(name))
    }

    /// The exact variables the backend gets.
    pub(crate) fn vars(&self) -> &BTreeMap<OsString, OsString> {
        &self.child.vars
    }

    /// Replaces the variables (the `env-whole` weakening of the mutants run).
    #[cfg(all(feature = "mutants", debug_assertions))]
    pub(crate) fn replace(&mut self, vars: BTreeMap<OsString, OsString>) {
        self.sources = vars.keys().map(|k| (k.clone(), EnvSource::Host)).collect();
        self.child.vars = vars;
    }

    /// The table: every variable with its source, sorted by name.
    pub(crate) fn rows(&self) -> Vec<EnvRow> {
        self.child
            .vars
            .iter()
            .map(|(name, value)| EnvRow {
                name: name.clone(),
                value: value.clone(),
                source: self.sources.get(name).copied().unwrap_or(EnvSource::Host),
            })
            .collect()
    }

    /// A warning for each `pass` name that was asked for and not passed: the caller expected it.
    pub(crate) fn requested_but_dropped(&self) -> Vec<String> {
        self.child
            .dropped
            .iter()
            .filter(|d| d.requested)
            .map(|d| format!("pass-env {} was not passed: {}", d.name, d.reason))
            .collect()
    }

    /// How many host variables the filter dropped, by reason.
    pub(crate) fn dropped_counts(&self) -> BTreeMap<String, usize> {
        self.child
            .dropped_counts()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
}
