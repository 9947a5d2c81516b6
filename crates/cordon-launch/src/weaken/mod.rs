//! Deliberately weakened launchers, for the escape suite's mutants run only: the one place a
//! test-only weakening is chosen and applied.
//!
//! The escape suite proves it can fail: it runs its cases against a launcher with one defence
//! taken away and expects at least one case to read ESCAPED. A weakening is one value,
//! [`Weakening`], that the caller (the CLI of a mutants build) sets on the launcher with
//! `Launcher::weakened`; the library reads no environment for it. This module is compiled
//! only when the `mutants` feature is on *and* debug assertions are on, so neither a default
//! build of the library nor a release build of the CLI contains any of it (the escape suite
//! checks the binaries for the names the CLI reads).
//!
//! Every weakening also skips the probe (without touching the probe cache) and the in-jail
//! self-check: those would refuse the weakened jail, which is right, but the suite must show
//! that its *cases* notice. Jails built ahead of their command (a prepared session, `cordon
//! serve`) are weakened the same way.

//! Every site of the launcher asks a [`Weak`] handle (always compiled): in a build without
//! the `mutants` feature and debug assertions it is empty and every method is the identity, so
//! no other module needs a `cfg`. Each weakening takes away one defence of one feature or
//! backend ([`Weakening::feature`]) and is applied at exactly one of the handle's methods.

#[cfg(all(feature = "mutants", debug_assertions))]
mod imp;
#[cfg(all(feature = "mutants", debug_assertions))]
pub use imp::Weakening;

use std::borrow::Cow;
use std::ffi::OsString;

use cordon_policy::Plan;

/// The weakening a launcher and its backends carry (none, always, outside a mutants build).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Weak {
    #[cfg(all(feature = "mutants", debug_assertions))]
    pub(crate) weakening: Option<Weakening>,
}

impl Weak {
    /// The handle of a mutants build's launcher with `weakening`.
    #[cfg(all(feature = "mutants", debug_assertions))]
    pub(crate) fn of(weakening: Weakening) -> Weak {
        Weak {
            weakening: Some(weakening),
        }
    }

    /// Whether any defence is taken away (the probe and the self-check are then skipped).
    pub(crate) fn any(self) -> bool {
        #[cfg(all(feature = "mutants", debug_assertions))]
        return self.weakening.is_some();
        #[cfg(not(all(feature = "mutants", debug_assertions)))]
        false
    }

    /// Planning: the plan with the plan-level weakening applied (masks, protected paths, the
    /// hidden home, the private `/tmp`).
    pub(crate) fn plan(self, plan: &Plan) -> Cow<'_, Plan> {
        #[cfg(all(feature = "mutants", debug_assertions))]
        if let Some(w) = self.weakening {
            return Cow::Owned(imp::plan(w, plan));
        }
        Cow::Borrowed(plan)
    }

    /// The backend's arguments: the self-check, the environment and the timeout.
    pub(crate) fn arguments(
        self,
        _check: &mut crate::stage::SelfCheck,
        _env: &mut crate::features::env::JailEnv,
        _timeout: &mut Option<std::time::Duration>,
        _host_env: &[(OsString, OsString)],
    ) {
        #[cfg(all(feature = "mutants", debug_assertions))]
        if let Some(w) = self.weakening {
            *_check = imp::self_check(w, _check);
            _env.replace(imp::env(w, _env.vars(), _host_env));
            *_timeout = imp::timeout(w, *_timeout);
        }
    }

    /// Whether a jail dies with its launcher (parent-death signals, the session reaper's kill).
    pub(crate) fn dies_with_launcher(self) -> bool {
        #[cfg(all(feature = "mutants", debug_assertions))]
        return imp::dies_with_launcher(self.weakening);
        #[cfg(not(all(feature = "mutants", debug_assertions)))]
        true
    }

    /// Whether the Landlock backend's jail is served by its supervisor (`cordon-supervisor`).
    pub(crate) fn unsupervised(self) -> bool {
        #[cfg(all(feature = "mutants", debug_assertions))]
        return !imp::supervised(self.weakening);
        #[cfg(not(all(feature = "mutants", debug_assertions)))]
        false
    }

    /// Preparing the host: under `no-kill-after-launcher-death` the session reaper is told to
    /// kill nothing.
    pub(crate) fn session(self, _session: Option<&'static crate::host::reaper::Session>) {
        #[cfg(all(feature = "mutants", debug_assertions))]
        if !self.dies_with_launcher()
            && let Some(session) = _session
        {
            session.kill_nothing();
        }
    }

    /// bubblewrap's option steps, weakened: the `--args` bytes and the shown options.
    #[cfg(linux_backends)]
    pub(crate) fn bwrap_options(
        self,
        built: &cordon_bwrap::BwrapArgs,
    ) -> Result<(Vec<u8>, Vec<OsString>), cordon_bwrap::BwrapError> {
        #[cfg(all(feature = "mutants", debug_assertions))]
        if let Some(w) = self.weakening {
            let steps = imp::options(w, built.steps());
            return Ok((imp::nul_separated(&steps), steps.concat()));
        }
        Ok((built.to_nul_separated()?, built.options()))
    }

    /// The descriptors the payload keeps beyond the backend's own (`keep-fds`).
    #[cfg(linux_backends)]
    pub(crate) fn kept_fds(self) -> Vec<std::os::fd::RawFd> {
        #[cfg(all(feature = "mutants", debug_assertions))]
        if let Some(w) = self.weakening {
            return imp::kept_fds(w);
        }
        Vec::new()
    }
}
