//! Which options the installed bubblewrap understands, read from its own `--version` and
//! `--help` text, and which of them cordon cannot do without.
//!
//! The help text, not the version number, decides: distributions backport options (Debian's
//! 0.8.0 has `--bind-fd`, which upstream added later), and a version string proves nothing about
//! a patched build. The version is kept for reports.

/// The oldest bubblewrap that has every [`Need::Required`] option: `--clearenv` and `--perms`
/// (which also sets the mode of a `--tmpfs`) arrived in 0.5.0; the others are older.
pub const MIN_VERSION: (u32, u32, u32) = (0, 5, 0);

pub(crate) const MIN_VERSION_TEXT: &str = "0.5.0";

/// Whether cordon refuses to use a bubblewrap that lacks an option, or uses it without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Without it the backend does not enforce the policy; the launcher refuses and says why.
    Required,
    /// Defence in depth or tidiness: used when present, reported as a degradation when absent.
    BestEffort,
}

/// One bubblewrap option cordon uses, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureUse {
    /// The option, as bubblewrap spells it.
    pub flag: &'static str,
    /// Required or best effort.
    pub need: Need,
    /// What it buys, for `cordon doctor`.
    pub why: &'static str,
}

/// Every option whose presence varies between bubblewrap builds and that cordon uses. Options
/// every bubblewrap has had since 0.1 (`--unshare-pid`, `--ro-bind`, `--tmpfs`, ...) are not listed.
pub const FEATURE_USES: &[FeatureUse] = &[
    FeatureUse {
        flag: "--args",
        need: Need::Required,
        why: "the options, environment values included, reach bubblewrap through a descriptor \
              instead of its command line, which other local users can read in /proc",
    },
    FeatureUse {
        flag: "--seccomp",
        need: Need::Required,
        why: "bubblewrap loads cordon's seccomp filter after it has built the namespaces and mounts",
    },
    FeatureUse {
        flag: "--clearenv",
        need: Need::Required,
        why: "the jail's environment is exactly the one cordon computed; nothing is inherited",
    },
    FeatureUse {
        flag: "--cap-drop",
        need: Need::Required,
        why: "no capability survives into the jail, even when cordon runs as root",
    },
    FeatureUse {
        flag: "--die-with-parent",
        need: Need::Required,
        why: "the jail is killed with the launcher, so no jailed process outlives its supervisor",
    },
    FeatureUse {
        flag: "--new-session",
        need: Need::Required,
        why: "the jailed command leaves the caller's terminal session, so it cannot inject input \
              into it",
    },
    FeatureUse {
        flag: "--perms",
        need: Need::Required,
        why: "a masked directory is an unreadable (mode 0000) tmpfs, not just an empty one",
    },
    FeatureUse {
        flag: "--disable-userns",
        need: Need::BestEffort,
        why: "defence in depth: the kernel refuses new user namespaces in the jail; without it \
              the seccomp filter still refuses unshare, setns and clone with namespace flags",
    },
    FeatureUse {
        flag: "--size",
        need: Need::BestEffort,
        why: "each private tmpfs (/tmp, /var/tmp, /run, /dev/shm) is bounded by limits.tmp_bytes; \
              without it each may take half of the machine's memory (the memory control group, \
              where there is one, still bounds the whole jail)",
    },
    FeatureUse {
        flag: "--unshare-cgroup-try",
        need: Need::BestEffort,
        why: "hides the host's cgroup paths from the jail (information only, no access)",
    },
];

/// What the installed bubblewrap supports. Plain data: build it with [`Features::parse`], or
/// write it out in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features {
    /// The version from `bwrap --version`, if it could be read.
    pub version: Option<(u32, u32, u32)>,
    /// `--args FD`: NUL-separated options read from a descriptor.
    pub args_fd: bool,
    /// `--seccomp FD`: one seccomp BPF program read from a descriptor.
    pub seccomp_fd: bool,
    /// `--add-seccomp-fd FD`: repeatable seccomp programs (0.5.0).
    pub add_seccomp_fd: bool,
    /// `--clearenv` (0.5.0).
    pub clearenv: bool,
    /// `--perms OCTAL` for the next `--tmpfs`, `--dir`, `--file`... (0.5.0).
    pub perms: bool,
    /// `--size BYTES` for the next `--tmpfs`.
    pub size: bool,
    /// `--cap-drop CAP`.
    pub cap_drop: bool,
    /// `--die-with-parent`.
    pub die_with_parent: bool,
    /// `--new-session`.
    pub new_session: bool,
    /// `--unshare-cgroup-try`.
    pub unshare_cgroup_try: bool,
    /// `--disable-userns` (0.8.0).
    pub disable_userns: bool,
    /// `--assert-userns-disabled` (0.8.0).
    pub assert_userns_disabled: bool,
    /// `--bind-fd`/`--ro-bind-fd`: binds of an open descriptor.
    pub bind_fd: bool,
    /// `--argv0`.
    pub argv0: bool,
    /// `--overlay` and its family.
    pub overlay: bool,
}

impl Features {
    /// Reads the output of `bwrap --version` and `bwrap --help`. An option counts when a line of
    /// the help text starts with it (after indentation); an option merely mentioned inside a
    /// description does not. Text that cannot be read yields a bubblewrap without features, which
    /// [`Features::missing_required`] then refuses.
    pub fn parse(version_output: &str, help_output: &str) -> Features {
        let mut features = Features {
            version: parse_version(version_output),
            ..Features::default()
        };
        for line in help_output.lines() {
            let line = line.trim_start();
            if !line.starts_with("--") {
                continue;
            }
            if let Some(flag) = line.split_whitespace().next()
                && let Some(slot) = features.slot(flag)
            {
                *slot = true;
            }
        }
        features
    }

    /// Whether bubblewrap understands `flag`; `None` when `flag` is not one this type tracks.
    pub fn supports(&self, flag: &str) -> Option<bool> {
        let mut copy = *self;
        copy.slot(flag).map(|present| *present)
    }

    /// The [`Need::Required`] options this bubblewrap lacks, in the order of [`FEATURE_USES`].
    /// Not empty means the bubblewrap backend does not enforce, and [`crate::build`] refuses.
    pub fn missing_required(&self) -> Vec<&'static str> {
        self.missing(Need::Required)
    }

    /// The [`Need::BestEffort`] options this bubblewrap lacks: the jail is built without them,
    /// and `doctor` should report each as a degradation.
    pub fn degradations(&self) -> Vec<&'static str> {
        self.missing(Need::BestEffort)
    }

    /// The version as text, for messages: `0.8.0`, or `of unknown version`.
    pub fn version_text(&self) -> String {
        match self.version {
            Some((major, minor, patch)) => format!("{major}.{minor}.{patch}"),
            None => "of unknown version".to_owned(),
        }
    }

    fn missing(&self, need: Need) -> Vec<&'static str> {
        FEATURE_USES
            .iter()
            .filter(|f| f.need == need && self.supports(f.flag) != Some(true))
            .map(|f| f.flag)
            .collect()
    }

    /// The one place that ties an option's spelling to its field.
    fn slot(&mut self, flag: &str) -> Option<&mut bool> {
        Some(match flag {
            "--args" => &mut self.args_fd,
            "--seccomp" => &mut self.seccomp_fd,
            "--add-seccomp-fd" => &mut self.add_seccomp_fd,
            "--clearenv" => &mut self.clearenv,
            "--perms" => &mut self.perms,
            "--size" => &mut self.size,
            "--cap-drop" => &mut self.cap_drop,
            "--die-with-parent" => &mut self.die_with_parent,
            "--new-session" => &mut self.new_session,
            "--unshare-cgroup-try" => &mut self.unshare_cgroup_try,
            "--disable-userns" => &mut self.disable_userns,
            "--assert-userns-disabled" => &mut self.assert_userns_disabled,
            "--bind-fd" => &mut self.bind_fd,
            "--argv0" => &mut self.argv0,
            "--overlay" => &mut self.overlay,
            _ => return None,
        })
    }
}

/// `bubblewrap 0.8.0` → `(0, 8, 0)`; a missing patch level reads as 0.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let mut words = line.split_whitespace();
    if words.next()? != "bubblewrap" {
        return None;
    }
    let mut parts = words.next()?.split('.').map(|part| {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("bubblewrap 0.8.0\n"), Some((0, 8, 0)));
        assert_eq!(parse_version("bubblewrap 0.11.1"), Some((0, 11, 1)));
        assert_eq!(parse_version("bubblewrap 0.4"), Some((0, 4, 0)));
        assert_eq!(parse_version("bubblewrap 0.10.0-rc1"), Some((0, 10, 0)));
        assert_eq!(parse_version("bwrap: command not found"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn every_listed_use_has_a_field() {
        let f = Features::default();
        for use_ in FEATURE_USES {
            assert_eq!(f.supports(use_.flag), Some(false), "{}", use_.flag);
        }
        assert_eq!(f.supports("--no-such-option"), None);
    }

    #[test]
    fn options_mentioned_in_descriptions_do_not_count() {
        let help = "    --share-net    Retain the network namespace (can only combine with --unshare-all)\n\
                    --perms OCTAL  Set permissions\n";
        let f = Features::parse("bubblewrap 0.5.0", help);
        assert!(f.perms);
        assert!(!f.args_fd);
        let nothing = Features::parse("", "");
        assert_eq!(nothing.missing_required().len(), 7);
        assert_eq!(nothing.version_text(), "of unknown version");
    }
}
