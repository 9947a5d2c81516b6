//! The eight named profiles and the defaults each one starts from.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::modes::{Limits, Network, Posture};
use crate::error::PolicyError;

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// The kind of caller a policy is for. Callers choose a profile and roots; they never pass
/// bubblewrap flags or Seatbelt text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// An agent's shell command: host posture so toolchains work, workspace writable, no network,
    /// ten minutes. The default.
    Shell,
    /// A repository hook (pre-commit, formatters) run on the agent's behalf: like `Shell`, but a
    /// hook should be quick (five minutes) and never needs more processes than a build.
    RepositoryHook,
    /// A long-lived language server: host posture to find toolchains, no wall-clock timeout (it
    /// lives as long as the editor session), larger output cap for its protocol stream.
    LanguageServer,
    /// A linter or analyzer over the workspace: host posture, no network, fifteen minutes.
    StaticAnalyzer,
    /// A test suite or CI-style gate: host posture, no network, thirty minutes, room for parallel
    /// compilers and test processes.
    QualityGate,
    /// A parser of untrusted documents (PDF, office files, archives): minimal posture, tight CPU,
    /// memory and time limits, because the input is hostile by assumption.
    DocumentParser,
    /// An MCP server speaking over stdio: minimal posture (third-party code), no network unless
    /// granted, no wall-clock timeout (it lives as long as the session), address space capped.
    McpStdio,
    /// Work in a linked git worktree: like `Shell`, plus the worktree's administrative directory
    /// and the shared object and ref stores made writable so `git commit` works there.
    GitWorktree,
}

/// The starting point a profile gives before configuration layers apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProfileDefaults {
    /// Filesystem posture.
    pub(crate) posture: Posture,
    /// Network.
    pub(crate) network: Network,
    /// Limits.
    pub(crate) limits: Limits,
    /// Whether a linked worktree's git administrative directories become writable.
    pub(crate) git_admin_writable: bool,
}

impl Profile {
    /// Every profile, in a stable order.
    pub const ALL: [Profile; 8] = [
        Profile::Shell,
        Profile::RepositoryHook,
        Profile::LanguageServer,
        Profile::StaticAnalyzer,
        Profile::QualityGate,
        Profile::DocumentParser,
        Profile::McpStdio,
        Profile::GitWorktree,
    ];

    /// The name used in configuration files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Shell => "shell",
            Profile::RepositoryHook => "repository-hook",
            Profile::LanguageServer => "language-server",
            Profile::StaticAnalyzer => "static-analyzer",
            Profile::QualityGate => "quality-gate",
            Profile::DocumentParser => "document-parser",
            Profile::McpStdio => "mcp-stdio",
            Profile::GitWorktree => "git-worktree",
        }
    }

    /// Looks a profile up by its name.
    pub fn from_name(name: &str) -> Result<Profile, PolicyError> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| PolicyError::UnknownProfile {
                name: name.to_owned(),
                known: Profile::ALL.map(Profile::name).join(", "),
            })
    }

    /// The defaults this profile starts from.
    pub(crate) fn defaults(self) -> ProfileDefaults {
        // Address space stays unlimited for host-posture profiles: JVMs, V8 and sanitizers reserve
        // far more virtual memory than they use, and a cap breaks them in confusing ways.
        let shell = Limits {
            cpu_secs: Some(1200),
            file_size_bytes: Some(8 * GIB),
            open_files: Some(4096),
            processes: Some(4096),
            address_space_bytes: None,
            timeout_secs: Some(600),
            output_cap_bytes: 4 * MIB,
            tmp_bytes: Some(GIB),
            memory_bytes: Some(8 * GIB),
        };
        let (posture, network, limits, git_admin_writable) = match self {
            Profile::Shell => (Posture::Host, Network::Denied, shell, false),
            Profile::RepositoryHook => (
                Posture::Host,
                Network::Denied,
                Limits {
                    cpu_secs: Some(600),
                    timeout_secs: Some(300),
                    ..shell
                },
                false,
            ),
            Profile::LanguageServer => (
                Posture::Host,
                Network::Denied,
                Limits {
                    cpu_secs: None,
                    timeout_secs: None,
                    output_cap_bytes: 64 * MIB,
                    ..shell
                },
                false,
            ),
            Profile::StaticAnalyzer => (
                Posture::Host,
                Network::Denied,
                Limits {
                    cpu_secs: Some(1800),
                    timeout_secs: Some(900),
                    ..shell
                },
                false,
            ),
            Profile::QualityGate => (
                Posture::Host,
                Network::Denied,
                Limits {
                    cpu_secs: Some(3600),
                    timeout_secs: Some(1800),
                    processes: Some(8192),
                    ..shell
                },
                false,
            ),
            Profile::DocumentParser => (
                Posture::Minimal,
                Network::Denied,
                Limits {
                    cpu_secs: Some(60),
                    file_size_bytes: Some(GIB),
                    open_files: Some(256),
                    processes: Some(256),
                    address_space_bytes: Some(4 * GIB),
                    timeout_secs: Some(120),
                    output_cap_bytes: 16 * MIB,
                    tmp_bytes: Some(256 * MIB),
                    memory_bytes: Some(2 * GIB),
                },
                false,
            ),
            Profile::McpStdio => (
                Posture::Minimal,
                Network::Denied,
                Limits {
                    cpu_secs: None,
                    open_files: Some(1024),
                    processes: Some(512),
                    address_space_bytes: Some(8 * GIB),
                    timeout_secs: None,
                    output_cap_bytes: 64 * MIB,
                    tmp_bytes: Some(256 * MIB),
                    memory_bytes: Some(4 * GIB),
                    ..shell
                },
                false,
            ),
            Profile::GitWorktree => (Posture::Host, Network::Denied, shell, true),
        };
        ProfileDefaults {
            posture,
            network,
            limits,
            git_admin_writable,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for p in Profile::ALL {
            assert_eq!(Profile::from_name(p.name()).unwrap(), p);
        }
        let err = Profile::from_name("shel").unwrap_err().to_string();
        assert!(
            err.contains("\"shel\"") && err.contains("git-worktree"),
            "{err}"
        );
    }

    #[test]
    fn untrusted_input_profiles_are_minimal_and_every_profile_denies_network() {
        for p in Profile::ALL {
            let d = p.defaults();
            assert_eq!(d.network, Network::Denied, "{p}");
            let minimal = matches!(p, Profile::DocumentParser | Profile::McpStdio);
            assert_eq!(d.posture == Posture::Minimal, minimal, "{p}");
        }
    }
}
