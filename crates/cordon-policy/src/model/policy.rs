//! `Policy`: what a command may do, independent of any host. Built once, then immutable.

use std::collections::{BTreeMap, BTreeSet};

use cordon_env::EnvPolicy;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::modes::{HomeMode, Limits, Network, Posture, Unavailable};
use super::profile::Profile;
use crate::error::PolicyError;
use crate::paths::PathSpec;
use crate::{autorun, defaults};

/// Bumped whenever the meaning of a normalized policy changes, so equal hashes keep meaning equal
/// behaviour across cordon versions.
pub(crate) const POLICY_FORMAT_EPOCH: u32 = 2;

/// An extra writable root and whether it must resolve inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct WritableSpec {
    /// The path.
    pub path: PathSpec,
    /// Set for roots a project file added: they are refused if they resolve outside the workspace
    /// (through a symlink, say).
    pub confined_to_workspace: bool,
}

/// Where a value of the effective policy came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", content = "file", rename_all = "lowercase")]
pub enum Source {
    /// The profile's defaults.
    Profile,
    /// The global configuration file.
    Global(String),
    /// The project's `.cordon.toml`.
    Project(String),
    /// The caller (command-line flags or library overrides).
    Caller,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Profile => f.write_str("profile"),
            Source::Global(file) => write!(f, "global {file}"),
            Source::Project(file) => write!(f, "project {file}"),
            Source::Caller => f.write_str("caller"),
        }
    }
}

/// The effective policy: immutable once built (fields are private; read them through accessors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    profile: Profile,
    posture: Posture,
    writable: BTreeSet<WritableSpec>,
    masks: BTreeSet<PathSpec>,
    protected: BTreeSet<PathSpec>,
    network: Network,
    /// `network.allow`: the destinations a `proxy` network reaches, each entry in its
    /// normalized spelling (`cordon_proxy::Pattern`). Left out of the hash's body when empty,
    /// so a policy without one hashes as before the mode existed.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    network_allow: BTreeSet<String>,
    env: EnvPolicy,
    limits: Limits,
    unavailable: Unavailable,
    git_admin_writable: bool,
    home: HomeMode,
    read: BTreeSet<PathSpec>,
}

impl Policy {
    /// The credential masks below the home directory that every policy starts with (relative to
    /// the home directory): unreadable in every profile unless a global configuration or the
    /// caller removes them (which `cordon audit` reports).
    pub const HOME_CREDENTIAL_MASKS: &'static [&'static str] = defaults::HOME_CREDENTIAL_MASKS;

    /// The credential masks outside the home directory (absolute) that every policy starts with.
    pub const SYSTEM_CREDENTIAL_MASKS: &'static [&'static str] = defaults::SYSTEM_CREDENTIAL_MASKS;

    /// The profile's defaults with no configuration applied.
    pub fn for_profile(profile: Profile) -> Policy {
        PolicyBuilder::new(profile).build()
    }

    /// The profile this policy started from.
    pub fn profile(&self) -> Profile {
        self.profile
    }
    /// Filesystem posture.
    pub fn posture(&self) -> Posture {
        self.posture
    }
    /// Extra writable roots beyond the workspace.
    pub fn writable(&self) -> &BTreeSet<WritableSpec> {
        &self.writable
    }
    /// Credential masks.
    pub fn masks(&self) -> &BTreeSet<PathSpec> {
        &self.masks
    }
    /// Protected paths (relative ones apply below every writable root).
    pub fn protected(&self) -> &BTreeSet<PathSpec> {
        &self.protected
    }
    /// Network.
    pub fn network(&self) -> Network {
        self.network
    }
    /// `network.allow`, normalized entries (meaningful in `proxy` mode).
    pub fn network_allow(&self) -> &BTreeSet<String> {
        &self.network_allow
    }
    /// Environment policy.
    pub fn env(&self) -> &EnvPolicy {
        &self.env
    }
    /// Limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
    /// What to do without an enforcing backend.
    pub fn unavailable(&self) -> Unavailable {
        self.unavailable
    }
    /// Whether linked-worktree git administrative directories become writable.
    pub fn git_admin_writable(&self) -> bool {
        self.git_admin_writable
    }
    /// Whether the home directory is hidden (host posture; the minimal posture always hides it).
    pub fn home(&self) -> HomeMode {
        self.home
    }
    /// Paths granted read-only on top of the home allowlist (`[filesystem] read`).
    pub fn read(&self) -> &BTreeSet<PathSpec> {
        &self.read
    }

    /// The stable hash of this policy: SHA-256 over the format epoch and the normalized policy.
    pub fn hash(&self) -> PolicyHash {
        self.hash_with(&[])
    }

    /// The hash with extra named components folded in (the launcher adds the seccomp filter
    /// version, for example), so a harness sees a change in any of them.
    pub fn hash_with(&self, extra: &[(&str, &str)]) -> PolicyHash {
        let mut hasher = Sha256::new();
        hasher.update(format!("cordon-policy-epoch:{POLICY_FORMAT_EPOCH}\n").as_bytes());
        // Serializing plain data with sorted collections cannot fail; an error here would be a bug
        // in a Serialize impl, and an empty body still yields a hash distinct from any real policy.
        let body = serde_json::to_string(self).unwrap_or_default();
        hasher.update(body.as_bytes());
        for (key, value) in extra {
            hasher.update(format!("\n{key}={value}").as_bytes());
        }
        let digest = hasher.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        PolicyHash(format!("sha256:{hex}"))
    }

    /// True when `self` allows nothing that `other` does not: used to prove that project files
    /// only tighten.
    pub fn no_looser_than(&self, other: &Policy) -> bool {
        // A root confined to the workspace and written relative to it adds nothing the workspace
        // did not already allow.
        let writable_ok = self.writable.iter().all(|w| {
            other.writable.contains(w) || (w.confined_to_workspace && w.path.is_relative())
        });
        let network_ok = match (self.network, other.network) {
            (Network::Denied, _) | (_, Network::Allowed) => true,
            (Network::Proxy, Network::Proxy) => self.network_allow.is_subset(&other.network_allow),
            _ => false,
        };
        let posture_ok = self.posture == other.posture || self.posture == Posture::Minimal;
        let unavailable_ok =
            self.unavailable == Unavailable::Refuse || other.unavailable == Unavailable::Warn;
        writable_ok
            && self.masks.is_superset(&other.masks)
            && self.protected.is_superset(&other.protected)
            && network_ok
            && posture_ok
            && unavailable_ok
            && self.env.pass.is_subset(&other.env.pass)
            && self.env.set == other.env.set
            && self.limits.no_looser_than(&other.limits)
            && (!self.git_admin_writable || other.git_admin_writable)
            && (self.home == HomeMode::Hidden || other.home == HomeMode::Visible)
            && self.read.is_subset(&other.read)
    }
}

/// A policy hash, `sha256:` followed by 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct PolicyHash(pub String);

impl std::fmt::Display for PolicyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds a [`Policy`] layer by layer and records where each value came from.
#[derive(Debug, Clone)]
pub struct PolicyBuilder {
    policy: Policy,
    provenance: BTreeMap<String, Source>,
}

impl PolicyBuilder {
    /// Starts from a profile's defaults and the default lists.
    pub fn new(profile: Profile) -> PolicyBuilder {
        let d = profile.defaults();
        let mut masks = BTreeSet::new();
        let mut provenance = BTreeMap::new();
        for m in defaults::HOME_CREDENTIAL_MASKS {
            masks.insert(PathSpec::Home((*m).into()));
        }
        for m in defaults::SYSTEM_CREDENTIAL_MASKS {
            masks.insert(PathSpec::Absolute((*m).into()));
        }
        let protected: BTreeSet<PathSpec> = autorun::root_paths()
            .map(|p| PathSpec::Relative(p.into()))
            .collect();
        for key in [
            "profile",
            "posture",
            "network.mode",
            "backend.unavailable",
            "limits",
            "filesystem.home",
        ] {
            provenance.insert(key.to_owned(), Source::Profile);
        }
        for m in &masks {
            provenance.insert(format!("filesystem.deny_read:{m}"), Source::Profile);
        }
        for p in &protected {
            provenance.insert(format!("filesystem.deny_write:{p}"), Source::Profile);
        }
        PolicyBuilder {
            policy: Policy {
                profile,
                posture: d.posture,
                writable: BTreeSet::new(),
                masks,
                protected,
                network: d.network,
                network_allow: BTreeSet::new(),
                env: EnvPolicy::default(),
                limits: d.limits,
                unavailable: Unavailable::Refuse,
                git_admin_writable: d.git_admin_writable,
                home: HomeMode::Hidden,
                read: BTreeSet::new(),
            },
            provenance,
        }
    }

    /// The policy as built so far.
    pub fn current(&self) -> &Policy {
        &self.policy
    }

    /// Adds a writable root.
    pub fn add_writable(&mut self, path: PathSpec, confined: bool, source: Source) {
        self.provenance
            .insert(format!("filesystem.writable:{path}"), source);
        self.policy.writable.insert(WritableSpec {
            path,
            confined_to_workspace: confined,
        });
    }

    /// Adds a credential mask.
    pub fn add_mask(&mut self, path: PathSpec, source: Source) -> Result<(), PolicyError> {
        check_literal(&path)?;
        self.provenance
            .insert(format!("filesystem.deny_read:{path}"), source);
        self.policy.masks.insert(path);
        Ok(())
    }

    /// Removes a credential mask (global configuration and caller only).
    pub fn remove_mask(&mut self, path: &PathSpec, source: Source) {
        if self.policy.masks.remove(path) {
            self.provenance
                .insert(format!("filesystem.allow_read:{path}"), source);
            self.provenance
                .remove(&format!("filesystem.deny_read:{path}"));
        }
    }

    /// Adds a protected path.
    pub fn add_protected(&mut self, path: PathSpec, source: Source) -> Result<(), PolicyError> {
        check_literal(&path)?;
        self.provenance
            .insert(format!("filesystem.deny_write:{path}"), source);
        self.policy.protected.insert(path);
        Ok(())
    }

    /// Shows or hides the home directory (global configuration and caller only).
    pub fn set_home(&mut self, home: HomeMode, source: Source) {
        self.policy.home = home;
        self.provenance.insert("filesystem.home".into(), source);
    }

    /// Grants a read of `path` on top of the home allowlist (global configuration and caller
    /// only). The whole home directory and `/` are refused here; a grant inside a mask is
    /// refused when the plan is resolved.
    pub fn add_read(&mut self, path: PathSpec, source: Source) -> Result<(), PolicyError> {
        check_literal(&path)?;
        let why = match &path {
            PathSpec::Home(rel) if rel.as_os_str().is_empty() => {
                Some("it is the whole home directory")
            }
            PathSpec::Absolute(p) if p == std::path::Path::new("/") => {
                Some("it is the whole filesystem")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(PolicyError::ReadGrantRefused {
                path: path.to_string(),
                why: why.into(),
            });
        }
        self.provenance
            .insert(format!("filesystem.read:{path}"), source);
        self.policy.read.insert(path);
        Ok(())
    }

    /// Keeps only the read grants in `keep` (a project file's `read` list: it can only remove).
    pub fn retain_read(&mut self, keep: &BTreeSet<PathSpec>, source: Source) {
        let removed: Vec<PathSpec> = self.policy.read.difference(keep).cloned().collect();
        for path in removed {
            self.policy.read.remove(&path);
            self.provenance
                .insert(format!("filesystem.read-removed:{path}"), source.clone());
            self.provenance.remove(&format!("filesystem.read:{path}"));
        }
    }

    /// Sets the network.
    pub fn set_network(&mut self, network: Network, source: Source) {
        self.policy.network = network;
        self.provenance.insert("network.mode".into(), source);
    }

    /// Adds a `network.allow` entry, checked and normalized (`cordon_proxy::Pattern`).
    pub fn allow_host(&mut self, entry: &str, source: Source) -> Result<(), PolicyError> {
        let pattern = cordon_proxy::Pattern::parse(entry)?;
        let normalized = pattern.to_string();
        self.provenance
            .insert(format!("network.allow:{normalized}"), source);
        self.policy.network_allow.insert(normalized);
        Ok(())
    }

    /// Keeps only the `network.allow` entries `keep` also names (a project file's list).
    pub fn keep_allowed_hosts(&mut self, keep: &BTreeSet<String>) {
        let gone: Vec<String> = self
            .policy
            .network_allow
            .iter()
            .filter(|e| !keep.contains(*e))
            .cloned()
            .collect();
        for entry in gone {
            self.policy.network_allow.remove(&entry);
            self.provenance.remove(&format!("network.allow:{entry}"));
        }
    }

    /// Sets the posture.
    pub fn set_posture(&mut self, posture: Posture, source: Source) {
        self.policy.posture = posture;
        self.provenance.insert("posture".into(), source);
    }

    /// Sets what happens without an enforcing backend.
    pub fn set_unavailable(&mut self, unavailable: Unavailable, source: Source) {
        self.policy.unavailable = unavailable;
        self.provenance.insert("backend.unavailable".into(), source);
    }

    /// Replaces the limits.
    pub fn set_limits(&mut self, limits: Limits, key: &str, source: Source) {
        self.policy.limits = limits;
        self.provenance.insert(format!("limits.{key}"), source);
    }

    /// Passes a host variable by name.
    pub fn pass_env(&mut self, name: String, source: Source) {
        self.provenance.insert(format!("env.pass:{name}"), source);
        self.policy.env.pass.insert(name);
    }

    /// Sets an explicit variable inside the jail.
    pub fn set_env(&mut self, name: String, value: String, source: Source) {
        self.provenance.insert(format!("env.set:{name}"), source);
        self.policy.env.set.insert(name, value);
    }

    /// Drops a variable from both the passed names and the explicit values.
    pub fn drop_env(&mut self, name: &str, source: Source) {
        self.policy.env.pass.remove(name);
        self.policy.env.set.remove(name);
        self.provenance.insert(format!("env.drop:{name}"), source);
    }

    /// Records that `key` was last set by `source`.
    pub fn record(&mut self, key: &str, source: Source) {
        self.provenance.insert(key.to_owned(), source);
    }

    /// Finishes the policy.
    pub fn build(self) -> Policy {
        self.policy
    }

    /// Finishes the policy and returns where each value came from.
    pub fn build_with_provenance(self) -> (Policy, BTreeMap<String, Source>) {
        (self.policy, self.provenance)
    }
}

fn check_literal(path: &PathSpec) -> Result<(), PolicyError> {
    let text = path.to_string();
    if text.contains(['*', '?', '[', ']', '{', '}']) {
        return Err(PolicyError::GlobNotSupported { path: text });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_changes_with_meaning() {
        let a = Policy::for_profile(Profile::Shell);
        let b = Policy::for_profile(Profile::Shell);
        assert_eq!(a.hash(), b.hash());
        assert!(a.hash().0.starts_with("sha256:") && a.hash().0.len() == 7 + 64);
        let mut builder = PolicyBuilder::new(Profile::Shell);
        builder.set_network(Network::Allowed, Source::Caller);
        assert_ne!(builder.build().hash(), a.hash());
        assert_ne!(a.hash_with(&[("seccomp", "1")]), a.hash());
        assert_ne!(
            Policy::for_profile(Profile::QualityGate).hash(),
            a.hash(),
            "profiles with different limits hash differently"
        );
    }

    #[test]
    fn default_masks_cover_the_design_list() {
        let p = Policy::for_profile(Profile::Shell);
        for m in [
            "~/.ssh",
            "~/.aws",
            "~/.gnupg",
            "~/.config/gcloud",
            "~/.azure",
            "~/.config/gh",
            "~/.netrc",
            "~/.git-credentials",
            "~/.cargo/credentials",
            "~/.cargo/credentials.toml",
            "~/.npmrc",
            "~/.pypirc",
        ] {
            assert!(p.masks().contains(&PathSpec::parse(m).unwrap()), "{m}");
        }
    }

    #[test]
    fn glob_masks_are_refused_with_the_rule() {
        let mut b = PolicyBuilder::new(Profile::Shell);
        let err = b
            .add_mask(
                PathSpec::parse("~/.cargo/credentials*").unwrap(),
                Source::Caller,
            )
            .unwrap_err();
        assert!(err.to_string().contains("glob"), "{err}");
    }
}
