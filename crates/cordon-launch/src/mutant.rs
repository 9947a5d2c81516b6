//! Deliberately weakened launchers, for `cargo xtask escape-suite --mutants` only.
//!
//! The escape suite proves it can fail: it runs its cases against a launcher with one defence
//! taken away and expects at least one case to read ESCAPED. This module is compiled only when
//! the `mutants` feature is on *and* debug assertions are on, so neither a default build of the
//! library nor a release build of the CLI contains any of it (the escape suite checks the
//! default binary ignores both variables below).
//!
//! - `CORDON_MUTANT=<name>` takes one defence away (see [`Mutant`]). Every mutant also skips the
//!   probe (without touching the probe cache) and the in-jail self-check: those would refuse the
//!   weakened jail, which is right, but the suite must show that its *cases* notice.
//! - `CORDON_TEST_BWRAP=/a:/b` replaces the trusted bubblewrap candidates, so the suite can show
//!   the launcher's refusals (missing, untrusted, non-jailing bubblewrap) through the real CLI.
//!   It changes nothing else: the candidates are still checked and probed as usual.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use cordon_policy::Plan;

use crate::error::LaunchError;
use crate::probe::ProbeOutcome;
use crate::stage::SelfCheck;

/// The variable that selects a weakening.
pub(crate) const MUTANT_ENV: &str = "CORDON_MUTANT";
/// The variable that replaces the bubblewrap candidates.
pub(crate) const BWRAP_ENV: &str = "CORDON_TEST_BWRAP";
/// The masked-path operand that tells the stage to keep inherited descriptors.
pub(crate) const KEEP_FDS_MARK: &str = "cordon-mutant-keep-fds";

/// One weakening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mutant {
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
    /// No wall-clock timeout.
    NoTimeout,
}

impl Mutant {
    const ALL: [(&'static str, Mutant); 10] = [
        ("no-netns", Mutant::NoNetns),
        ("no-seccomp", Mutant::NoSeccomp),
        ("no-pidns", Mutant::NoPidns),
        ("no-masks", Mutant::NoMasks),
        ("root-writable", Mutant::RootWritable),
        ("keep-fds", Mutant::KeepFds),
        ("env-whole", Mutant::EnvWhole),
        ("no-private-tmp", Mutant::NoPrivateTmp),
        ("protected-writable", Mutant::ProtectedWritable),
        ("no-timeout", Mutant::NoTimeout),
    ];
}

/// The weakening selected by `CORDON_MUTANT`, if any; an unknown name is an error, so a typo can
/// never pass for a mutant the suite failed to notice.
pub(crate) fn active() -> Result<Option<Mutant>, LaunchError> {
    let Some(name) = std::env::var_os(MUTANT_ENV) else {
        return Ok(None);
    };
    Mutant::ALL
        .iter()
        .find(|(n, _)| name == *n)
        .map(|(_, m)| Some(*m))
        .ok_or_else(|| LaunchError::Io {
            what: format!("{MUTANT_ENV}={}", name.to_string_lossy()),
            source: std::io::Error::other(format!(
                "unknown mutant; known: {}",
                Mutant::ALL.map(|(n, _)| n).join(", ")
            )),
        })
}

fn any_active() -> bool {
    std::env::var_os(MUTANT_ENV).is_some()
}

/// `CORDON_TEST_BWRAP`'s candidates, when set.
pub(crate) fn bwrap_candidates(default: &[String]) -> Vec<String> {
    match std::env::var(BWRAP_ENV) {
        Ok(list) => list.split(':').map(str::to_owned).collect(),
        Err(_) => default.to_vec(),
    }
}

/// Under a mutant the probe is skipped (and so never cached): the weakened jail would fail it.
pub(crate) fn probe_outcome() -> Option<ProbeOutcome> {
    any_active().then(|| ProbeOutcome {
        enforcing: true,
        backend: "bubblewrap".into(),
        detail: "MUTANT: probe skipped".into(),
        source: "mutant".into(),
    })
}

/// The plan with the weakening applied (plan-level mutants only).
pub(crate) fn plan(mutant: Mutant, plan: &Plan) -> Plan {
    let mut plan = plan.clone();
    match mutant {
        Mutant::NoMasks => plan.masks.clear(),
        Mutant::ProtectedWritable => plan.protected.clear(),
        Mutant::NoPrivateTmp => plan
            .private_dirs
            .retain(|d| d != &PathBuf::from("/tmp") && d != &PathBuf::from("/var/tmp")),
        _ => {}
    }
    plan
}

/// A self-check that passes in any jail: the outside path cannot be created anywhere (`/proc`),
/// no mask and no socket are checked. Under `keep-fds` it also tells the stage to keep
/// descriptors.
pub(crate) fn self_check(mutant: Mutant, status_fd: i32) -> SelfCheck {
    SelfCheck {
        status_fd,
        deny_network: false,
        // Never created (the weakened jail is not checked), but unique: it is also the marker
        // the session reaper kills a killed launcher's jail by, and a shared one would have a
        // killed launcher's reaper kill every other mutant jail running at the time.
        outside: PathBuf::from(format!(
            "/proc/.cordon-mutant-no-self-check-{}-{}",
            std::process::id(),
            crate::backend::nonce()
        )),
        masked: (mutant == Mutant::KeepFds).then(|| (PathBuf::from(KEEP_FDS_MARK), false)),
        // A weakened first wall must show in the escape suite, not be hidden by the second.
        landlock_fd: None,
        command_fd: None,
    }
}

/// The environment the jail gets: the host's, whole, under `env-whole`.
pub(crate) fn env(
    mutant: Mutant,
    filtered: &BTreeMap<OsString, OsString>,
    host: &[(OsString, OsString)],
) -> BTreeMap<OsString, OsString> {
    match mutant {
        Mutant::EnvWhole => host.iter().cloned().collect(),
        _ => filtered.clone(),
    }
}

/// The wall-clock timeout, none under `no-timeout`.
pub(crate) fn timeout(
    mutant: Mutant,
    timeout: Option<std::time::Duration>,
) -> Option<std::time::Duration> {
    match mutant {
        Mutant::NoTimeout => None,
        _ => timeout,
    }
}

/// bubblewrap's option steps with the weakening applied.
pub(crate) fn options(mutant: Mutant, steps: &[Vec<OsString>]) -> Vec<Vec<OsString>> {
    let mut out: Vec<Vec<OsString>> = Vec::with_capacity(steps.len());
    for step in steps {
        let words: Vec<&str> = step.iter().map(|w| w.to_str().unwrap_or("")).collect();
        match (mutant, words.as_slice()) {
            (Mutant::NoNetns, ["--unshare-net"])
            | (Mutant::NoSeccomp, ["--seccomp", _])
            | (Mutant::NoPidns, ["--unshare-pid"]) => {}
            (Mutant::NoPidns, ["--proc", dest]) => {
                out.push(vec!["--ro-bind".into(), "/proc".into(), (*dest).into()]);
            }
            (Mutant::RootWritable, ["--ro-bind", "/", "/"]) => {
                out.push(vec!["--bind".into(), "/".into(), "/".into()]);
            }
            _ => out.push(step.clone()),
        }
    }
    out
}

/// Under `keep-fds`: every descriptor this process inherited (open without close-on-exec; the
/// launcher opens all of its own with it) is handed on as well.
pub(crate) fn kept_fds(mutant: Mutant) -> Vec<RawFd> {
    if mutant != Mutant::KeepFds {
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
