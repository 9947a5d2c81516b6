//! cordon's hard floor: the few things an agent never gets to attempt, below every permission
//! mode, approval and configuration.
//!
//! [`Floor::check`] judges a shell command line, and [`Floor::check_argv`] a program with its
//! arguments, before anything runs. The command is normalized first (escape sequences, NUL bytes
//! and invisible characters removed, Unicode NFKC), so a full-width or ANSI-laced spelling is
//! judged like the plain one; what an escape sequence could hide from that view (a `;` in its
//! parameters) is judged too. It is then read like a shell reads it, with quoting, `;`, `&&`,
//! `||`, pipes, `$(…)`, backticks, subshells, functions, here-documents and `sh -c` strings
//! looked into, and launcher wrappers (`sudo`, `env`, `timeout`, `xargs`, `nice`, …) unwrapped to
//! the program they run, up to a nesting cap whose overflow refuses. Every program that would run
//! is put to the [`Rule`]s: recursive deletion of `/`, the home directory or a top-level system
//! directory; making a filesystem on a device; writing a block device; fork bombs; signals to
//! every process or to PID 1; power-state changes; `sudo -S` without a configured password;
//! recursive permission changes of `/`; and stopping the host agent, whose process names the
//! harness configures.
//!
//! For file tools that write without a shell, [`validate_write_path`] checks a path against a
//! [`Plan`](cordon_policy::Plan) (writable roots, protected paths, no symlink on the way), and
//! [`open_beneath`] opens it with `openat2` so it cannot leave its root even under a race.
//! [`Escalations`] is the one API through which an approval flow may retry a denied command
//! under a relaxed policy, and it keeps the floor, the jail and the environment filter.
//!
//! The floor is not the sandbox. It reads commands lexically, never touching the filesystem, so
//! a symlink, a script file or a variable it cannot see can hide a target from it; the jail is
//! what holds then. It stops the few operations no jail configuration should ever be asked to
//! contain, and it must not refuse everyday development work: `rm -rf ./build`, `git clean -fdx`,
//! `dd` into an image file and `kill %1` are allowed.
//!
//! ```
//! use cordon_floor::{Floor, FloorConfig, Rule, Verdict};
//!
//! let floor = Floor::new(FloorConfig::default());
//! assert_eq!(floor.check("rm -rf ./build && cargo build"), Verdict::Allow);
//!
//! let verdict = floor.check("cd /tmp && sudo -u root bash -c 'rm -fr \"/\"'");
//! assert_eq!(verdict.rule(), Some(Rule::RecursiveDelete));
//!
//! // Full-width letters and terminal escapes read like the plain command.
//! assert_eq!(floor.check("ｒｍ -rf \u{1b}[0m/").rule(), Some(Rule::RecursiveDelete));
//!
//! assert_eq!(floor.check_argv(&["kill", "-9", "-1"]).rule(), Some(Rule::KillAllProcesses));
//! ```

mod beneath;
mod error;
mod escalation;
mod judge;
mod normalize;
mod options;
mod paths;
mod rules;
mod shell;
mod verdict;
mod wrappers;
mod write_path;

use std::ffi::OsStr;
use std::path::PathBuf;

pub use beneath::{OFlags, open_beneath};
pub use error::FloorError;
pub use escalation::{ApprovalScope, CommandKey, Denial, Escalations, Requester};
pub use normalize::normalize;
pub use verdict::{Rule, Verdict};
pub use write_path::{WritePath, validate_write_path};

use crate::judge::{Arg, Judge};
use crate::rules::ProcessNames;

/// What the harness tells the floor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloorConfig {
    /// Process names of the host agent and its supervisor; stopping them is refused.
    pub protected_processes: Vec<String>,
    /// Whether the harness configured a sudo password. Without one, `sudo -S` (password on stdin)
    /// can only be fed a guess, and is refused.
    pub sudo_password_configured: bool,
    /// The home directory, so `/home/u` is known to be `~`. `~` and `$HOME` are recognized
    /// without it.
    pub home: Option<PathBuf>,
}

impl FloorConfig {
    /// The process names protected when the harness names none: the agents cordon is built for,
    /// and cordon itself.
    pub const DEFAULT_PROTECTED_PROCESSES: &'static [&'static str] = &["claude", "codex", "cordon"];
}

impl Default for FloorConfig {
    fn default() -> FloorConfig {
        FloorConfig {
            protected_processes: Self::DEFAULT_PROTECTED_PROCESSES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            sudo_password_configured: false,
            home: None,
        }
    }
}

/// The floor, configured once and asked about every command.
#[derive(Debug, Clone)]
pub struct Floor {
    config: FloorConfig,
    home: Option<Vec<String>>,
    names: ProcessNames,
}

impl Floor {
    /// A floor with this configuration.
    pub fn new(config: FloorConfig) -> Floor {
        let home = config
            .home
            .as_ref()
            .map(|h| paths::components(&h.to_string_lossy()));
        let names = ProcessNames::new(&config.protected_processes);
        Floor {
            config,
            home,
            names,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &FloorConfig {
        &self.config
    }

    fn judge(&self) -> Judge<'_> {
        Judge::new(
            self.home.as_deref(),
            &self.names,
            self.config.sudo_password_configured,
        )
    }

    /// Judges a shell command line (what a harness would pass to `bash -c`).
    pub fn check(&self, command: &str) -> Verdict {
        let script = shell::parse(&normalize(command));
        if let Err(refusal) = self.judge().command_line(&script) {
            return refusal.into();
        }
        self.check_hidden(command)
    }

    /// Judges a program and its arguments, run without a shell in between. A shell given a
    /// command string (`sh -c STRING`) has the string judged.
    pub fn check_argv<S: AsRef<OsStr>>(&self, argv: &[S]) -> Verdict {
        let texts: Vec<String> = argv
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        let args: Vec<Arg> = texts.iter().map(|t| Arg::plain(normalize(t))).collect();
        if let Err(refusal) = self.judge().argv(&args) {
            return refusal.into();
        }
        for text in &texts {
            let verdict = self.check_hidden(text);
            if !verdict.is_allow() {
                return verdict;
            }
        }
        Verdict::Allow
    }

    /// What an escape sequence could hide from the display view (see [`normalize`]).
    fn check_hidden(&self, text: &str) -> Verdict {
        let tails = match normalize::hidden_tails(text) {
            Ok(tails) => tails,
            Err(too) => {
                let reason = match too {
                    normalize::TooComplex::Tails => format!(
                        "more than {} escape sequences that could hide a command",
                        normalize::MAX_TAILS
                    ),
                    normalize::TooComplex::Text(chars) => format!(
                        "escape sequences that could hide a command are followed by {chars} \
                         characters to judge in all (at most {})",
                        normalize::MAX_TAIL_CHARS
                    ),
                };
                return Verdict::Refuse {
                    rule: Rule::TooComplex,
                    reason,
                    evidence: normalize(text),
                };
            }
        };
        for tail in tails {
            let inner = shell::parse(&tail.inner);
            let mut glued = shell::parse(&tail.glued);
            glued.pipelines.truncate(1);
            for script in [inner, glued] {
                if let Err(refusal) = self.judge().command_line(&script) {
                    return refusal.into();
                }
            }
        }
        Verdict::Allow
    }
}
