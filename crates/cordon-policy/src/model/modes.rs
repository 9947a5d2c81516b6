//! The plain data a policy is made of: its posture, network, home directory, what to do
//! without a backend, and its resource limits.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What the jail's filesystem looks like before writable roots and masks are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Posture {
    /// The whole host filesystem is readable (read-only) except the credential masks.
    Host,
    /// An empty root with only vetted trees bound read-only, and a private `HOME`.
    Minimal,
}

/// Whether, and how, the jail may reach a network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Network {
    /// A new, empty network namespace, and no new sockets (seccomp).
    #[serde(rename = "deny")]
    Denied,
    /// The host's network.
    #[serde(rename = "allow")]
    Allowed,
    /// The jail's own network namespace, like `Denied`, with one way out: a proxy outside the
    /// jail that allows only the destinations `network.allow` names (cordon-proxy).
    #[serde(rename = "proxy")]
    Proxy,
}

/// What to do when no backend has been proven to enforce the policy on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unavailable {
    /// Refuse to run anything (exit 126). The default.
    Refuse,
    /// Run unsandboxed and say so loudly. Only ever set explicitly.
    Warn,
}

/// How a jailed command's writes to its writable roots reach the host.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceMode {
    /// The default: [`Layer`] on a backend that makes one (bubblewrap), and [`Live`] on one that
    /// does not (the Landlock fallback, Seatbelt), which the run's warnings say. Where the
    /// backend makes layers but this run's cannot be made (no state directory, a root of
    /// another owner, a kernel that refuses an overlay in a user namespace), the run is refused
    /// naming `--live`, as for [`Layer`]: never run live in silence.
    ///
    /// [`Layer`]: WorkspaceMode::Layer
    /// [`Live`]: WorkspaceMode::Live
    #[default]
    Auto,
    /// Through a private copy-on-write layer (issue #30): the host's tree is unchanged while the
    /// jail lives. Only the bubblewrap backend makes one; where it cannot, the run is refused,
    /// never run live in silence.
    Layer,
    /// A layer whose changes are judged and kept for review, none applied (`--review`): a
    /// harness (or `cordon apply`/`cordon drop`) decides.
    Review,
    /// Written through, as they happen (`--live`): what a watched dev server needs.
    Live,
}

impl WorkspaceMode {
    /// Whether the command's writes go to a copy-on-write layer (`auto`, `layer` or `review`;
    /// [`WorkspaceMode::on_backend`] says what `auto` becomes).
    pub fn layered(self) -> bool {
        self != WorkspaceMode::Live
    }

    /// The mode's name in reports (`auto`, `layer`, `review`, `live`).
    pub fn name(self) -> &'static str {
        match self {
            WorkspaceMode::Auto => "auto",
            WorkspaceMode::Layer => "layer",
            WorkspaceMode::Review => "review",
            WorkspaceMode::Live => "live",
        }
    }

    /// The mode a run has on a backend that does (`layers`) or does not make copy-on-write
    /// layers: `auto` becomes `layer` or `live`, the others stay. Err, the refusal's reason,
    /// for `layer` or `review` asked of a backend that makes no layer.
    pub fn on_backend(self, layers: bool, backend: &str) -> Result<WorkspaceMode, String> {
        match (self, layers) {
            (WorkspaceMode::Auto, true) => Ok(WorkspaceMode::Layer),
            (WorkspaceMode::Auto, false) => Ok(WorkspaceMode::Live),
            (WorkspaceMode::Layer | WorkspaceMode::Review, false) => Err(format!(
                "the {backend} backend makes no copy-on-write layer, and `{}` needs one; `--live` runs the command without it (its writes then reach the workspace as they happen)",
                if self == WorkspaceMode::Review {
                    "--review"
                } else {
                    "--layer"
                }
            )),
            (mode, _) => Ok(mode),
        }
    }
}

/// Resource limits. `None` means "no limit of this kind".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Limits {
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_secs: Option<u64>,
    /// Largest file the command may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Open descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Processes of the user (`RLIMIT_NPROC`; counted per real user, see docs/limits.md).
    pub processes: Option<u64>,
    /// Address space in bytes (`RLIMIT_AS`); off where it breaks common runtimes.
    pub address_space_bytes: Option<u64>,
    /// Wall-clock timeout in seconds; the whole process tree is killed when it passes.
    pub timeout_secs: Option<u64>,
    /// Size of each private temporary filesystem of the jail, in bytes (`/tmp`, `/var/tmp`,
    /// `/run`, `/dev/shm` under bubblewrap): they are memory, and unsized each could take half
    /// of the machine's.
    pub tmp_bytes: Option<u64>,
    /// Memory of the whole jail, in bytes, its private temporary files included: a memory
    /// control group where the host lets cordon make one (root), see docs/limits.md.
    pub memory_bytes: Option<u64>,
    /// Bytes of stdout and of stderr kept in memory, each; the rest is dropped and flagged.
    pub output_cap_bytes: u64,
}

impl Limits {
    /// True when every limit of `self` is at least as tight as the one in `other`.
    pub fn no_looser_than(&self, other: &Limits) -> bool {
        fn le(a: Option<u64>, b: Option<u64>) -> bool {
            match (a, b) {
                (_, None) => true,
                (None, Some(_)) => false,
                (Some(a), Some(b)) => a <= b,
            }
        }
        le(self.cpu_secs, other.cpu_secs)
            && le(self.file_size_bytes, other.file_size_bytes)
            && le(self.open_files, other.open_files)
            && le(self.processes, other.processes)
            && le(self.address_space_bytes, other.address_space_bytes)
            && le(self.tmp_bytes, other.tmp_bytes)
            && le(self.memory_bytes, other.memory_bytes)
            && le(self.timeout_secs, other.timeout_secs)
            && self.output_cap_bytes <= other.output_cap_bytes
    }
}

impl fmt::Display for Posture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Posture::Host => "host",
            Posture::Minimal => "minimal",
        })
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Network::Denied => "deny",
            Network::Allowed => "allow",
            Network::Proxy => "proxy",
        })
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unavailable::Refuse => "refuse",
            Unavailable::Warn => "warn",
        })
    }
}

/// Whether the home directory is hidden (the default) or visible, as before the allowlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HomeMode {
    /// A private, empty home in the jail, except the allowlist.
    Hidden,
    /// The real home, read-only, minus the credential masks (global configuration or caller
    /// only; `cordon audit` fails it).
    Visible,
}

impl fmt::Display for HomeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HomeMode::Hidden => "hidden",
            HomeMode::Visible => "visible",
        })
    }
}
