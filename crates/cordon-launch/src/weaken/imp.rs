//! The weakenings themselves (compiled only in a debug build with the `mutants` feature).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use cordon_policy::Plan;

use crate::stage::{KEEP_FDS_MARK, LayerOperand, SelfCheck};

/// One defence taken away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Weakening {
    /// No `--unshare-net`: the host's network namespace.
    NoNetns,
    /// No `--seccomp`: no filter at all.
    NoSeccomp,
    /// No `--unshare-pid`, and the host's `/proc` instead of a fresh one.
    NoPidns,
    /// No credential masks.
    NoMasks,
    /// `--bind / /` instead of `--ro-bind / /`.
    RootWritable,
    /// Inherited descriptors reach the payload.
    KeepFds,
    /// The host environment is passed whole.
    EnvWhole,
    /// The host's `/tmp` and `/var/tmp` instead of private ones.
    NoPrivateTmp,
    /// No protected paths.
    ProtectedWritable,
    /// The home directory shown as on the host (no private home), with only the masks the
    /// hidden home left in the plan: what `home = "visible"` would be without its masks.
    HomeVisible,
    /// No wall-clock timeout.
    NoTimeout,
    /// Nothing ends a jail whose launcher died: no parent-death signal (neither the spawn's
    /// nor bubblewrap's `--die-with-parent`), and the session reaper kills nothing (it still
    /// removes what the run made). A launcher ended by SIGTERM, SIGINT or SIGHUP still ends
    /// its jails itself.
    NoKillAfterLauncherDeath,
}

impl Weakening {
    /// The feature (or backend defence) whose one defence this takes away.
    pub fn feature(self) -> &'static str {
        match self {
            Weakening::NoNetns | Weakening::NoSeccomp | Weakening::NoPidns => "backend",
            Weakening::RootWritable | Weakening::NoPrivateTmp => "backend",
            Weakening::NoMasks => "masks",
            Weakening::HomeVisible => "home",
            Weakening::ProtectedWritable => "autorun",
            Weakening::KeepFds => "stage",
            Weakening::EnvWhole => "env",
            Weakening::NoTimeout => "limits",
            Weakening::NoKillAfterLauncherDeath => "reaper",
        }
    }

    /// Every weakening with its name.
    pub const ALL: [(&'static str, Weakening); 12] = [
        ("no-netns", Weakening::NoNetns),
        ("no-seccomp", Weakening::NoSeccomp),
        ("no-pidns", Weakening::NoPidns),
        ("no-masks", Weakening::NoMasks),
        ("root-writable", Weakening::RootWritable),
        ("keep-fds", Weakening::KeepFds),
        ("env-whole", Weakening::EnvWhole),
        ("no-private-tmp", Weakening::NoPrivateTmp),
        ("protected-writable", Weakening::ProtectedWritable),
        ("home-visible", Weakening::HomeVisible),
        ("no-timeout", Weakening::NoTimeout),
        (
            "no-kill-after-launcher-death",
            Weakening::NoKillAfterLauncherDeath,
        ),
    ];
}

impl std::str::FromStr for Weakening {
    type Err = String;

    /// A weakening by name; an unknown name is an error, so a typo can never pass for a
    /// weakening the suite failed to notice.
    fn from_str(name: &str) -> Result<Weakening, String> {
        Weakening::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
            .ok_or_else(|| {
                format!(
                    "unknown weakening {name:?}; known: {}",
                    Weakening::ALL.map(|(n, _)| n).join(", ")
                )
            })
    }
}

/// The plan with the weakening applied (plan-level weakenings only).
pub(crate) fn plan(weakening: Weakening, plan: &Plan) -> Plan {
    let mut plan = plan.clone();
    match weakening {
        Weakening::NoMasks => {
            plan.masks.clear();
            plan.host_sockets.clear();
        }
        Weakening::ProtectedWritable => plan.protected.clear(),
        Weakening::HomeVisible => {
            let home = plan.home.clone();
            plan.private_dirs.retain(|d| *d != home);
            plan.home_access = cordon_policy::HomeMode::Visible;
        }
        Weakening::NoPrivateTmp => plan
            .private_dirs
            .retain(|d| d != &PathBuf::from("/tmp") && d != &PathBuf::from("/var/tmp")),
        _ => {}
    }
    plan
}

/// A self-check that passes in any jail: the outside path cannot be created anywhere (`/proc`),
/// no mask and no socket are checked. Under `keep-fds` it also tells the stage to keep
/// descriptors. A jail built ahead keeps its command descriptor.
pub(crate) fn self_check(weakening: Weakening, check: &SelfCheck) -> SelfCheck {
    SelfCheck {
        status_fd: check.status_fd,
        deny_network: false,
        // Never created (the weakened jail is not checked), but unique: it is also the marker
        // the session reaper kills a killed launcher's jail by, and a shared one would have a
        // killed launcher's reaper kill every other mutant jail running at the time.
        outside: PathBuf::from(format!(
            "/proc/.cordon-mutant-no-self-check-{}-{}",
            std::process::id(),
            crate::host::token::nonce()
        )),
        masked: (weakening == Weakening::KeepFds).then(|| (PathBuf::from(KEEP_FDS_MARK), false)),
        // A weakened first wall must show in the escape suite, not be hidden by the second.
        landlock_fd: None,
        command_fd: check.command_fd,
        // The proxy's bridge is not a defence: a weakened jail still gets its way out.
        proxy_fd: check.proxy_fd,
        // The layer is the jail's, not a check: kept. A live jail's confinement is not checked.
        layer: match check.layer {
            layered @ LayerOperand::Layered { .. } => layered,
            _ => LayerOperand::Unchecked,
        },
        sentinel_port: None,
        init: check.init,
    }
}

/// The environment the jail gets: the host's, whole, under `env-whole`.
pub(crate) fn env(
    weakening: Weakening,
    filtered: &BTreeMap<OsString, OsString>,
    host: &[(OsString, OsString)],
) -> BTreeMap<OsString, OsString> {
    match weakening {
        Weakening::EnvWhole => host.iter().cloned().collect(),
        _ => filtered.clone(),
    }
}

/// The wall-clock timeout, none under `no-timeout`.
pub(crate) fn timeout(
    weakening: Weakening,
    timeout: Option<std::time::Duration>,
) -> Option<std::time::Duration> {
    match weakening {
        Weakening::NoTimeout => None,
        _ => timeout,
    }
}

/// Whether a jail dies with its launcher (parent-death signals, the session reaper's kill):
/// not under `no-kill-after-launcher-death`.
pub(crate) fn dies_with_launcher(weakening: Option<Weakening>) -> bool {
    weakening != Some(Weakening::NoKillAfterLauncherDeath)
}

/// Whether the Landlock backend's supervisor serves the jail: not under `protected-writable`,
/// whose protected paths (already gone from the plan) the supervisor's names would still hold.
pub(crate) fn supervised(weakening: Option<Weakening>) -> bool {
    weakening != Some(Weakening::ProtectedWritable)
}

/// bubblewrap's option steps with the weakening applied.
#[cfg(linux_backends)]
pub(crate) fn options(weakening: Weakening, steps: &[Vec<OsString>]) -> Vec<Vec<OsString>> {
    let mut out: Vec<Vec<OsString>> = Vec::with_capacity(steps.len());
    for step in steps {
        let words: Vec<&str> = step.iter().map(|w| w.to_str().unwrap_or("")).collect();
        match (weakening, words.as_slice()) {
            (Weakening::NoNetns, ["--unshare-net"])
            | (Weakening::NoSeccomp, ["--seccomp", _])
            | (Weakening::NoPidns, ["--unshare-pid"])
            | (Weakening::NoKillAfterLauncherDeath, ["--die-with-parent"]) => {}
            (Weakening::NoPidns, ["--proc", dest]) => {
                out.push(vec!["--ro-bind".into(), "/proc".into(), (*dest).into()]);
            }
            (Weakening::RootWritable, ["--ro-bind", "/", "/"]) => {
                out.push(vec!["--bind".into(), "/".into(), "/".into()]);
            }
            _ => out.push(step.clone()),
        }
    }
    out
}

/// Under `keep-fds`: every descriptor this process inherited (open without close-on-exec; the
/// launcher opens all of its own with it) is handed on as well.
#[cfg(linux_backends)]
pub(crate) fn kept_fds(weakening: Weakening) -> Vec<RawFd> {
    if weakening != Weakening::KeepFds {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| fd > 2)
        .filter(|&fd| is_cloexec(fd) == Some(false))
        .collect()
}

/// Whether descriptor `fd` is close-on-exec, read from `/proc/self/fdinfo` (no `unsafe`).
#[cfg(linux_backends)]
fn is_cloexec(fd: RawFd) -> Option<bool> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))?
        .trim()
        .to_owned();
    let flags = u32::from_str_radix(&flags, 8).ok()?;
    Some(flags & 0o2000000 != 0)
}

/// The `--args` bytes of weakened steps: every option followed by a NUL byte.
#[cfg(linux_backends)]
pub(crate) fn nul_separated(steps: &[Vec<OsString>]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in steps.iter().flatten() {
        bytes.extend_from_slice(word.as_encoded_bytes());
        bytes.push(0);
    }
    bytes
}
