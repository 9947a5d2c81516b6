//! A jail built ahead of its command: the session's next jail, made while the agent thinks.
//!
//! Most of a command's launch is bubblewrap building the jail (namespaces, every mount and mask)
//! and the stage checking it and raising the second wall; none of that depends on the command
//! line. So after each [`Launcher::run_prepared`](crate::Launcher::run_prepared) the launcher
//! starts the next jail for the same plan, environment and output handling, with the stage told
//! to wait: it runs every self-check, applies the Landlock rules, reports, and only then reads
//! the command (each argument NUL-terminated) from a socket. A layered jail does all of that
//! after the command came, the layer's mount first ([`eligible`]): ahead, it is bubblewrap's
//! jail and the stage's process. The next `run_prepared` whose
//! request fits hands its command over and times it from there; one that does not fit (another
//! plan, environment, output handling, or stdin to pass through) discards the jail and runs cold.
//!
//! Nothing about the isolation changes: each command still gets a jail of its own, built for it
//! alone and never reused, with the same checks before the payload runs; a jail that failed its
//! self-check refuses the command that claims it, as a cold one would. It is registered with the
//! session reaper from its spawn like any jail, and killed (with what was made for it on the
//! host) when the [`Preparation`](crate::Preparation) is dropped.
//!
//! What a waiting jail protects in the workspace is decided when it is built, after the previous
//! command ended, from the state of a few paths (guard.rs: the roots, `.git` and what redirects
//! git, each protected path and the directories above it). Those paths are looked at again when
//! a command claims the jail ([`Seen`]); if any of them appeared, went or was replaced in
//! between (a person ran `git init` in the workspace, another session's jail made or removed a
//! placeholder), the jail is discarded and the command runs in one built now.

use std::ffi::OsString;
use std::sync::Mutex;

use cordon_policy::Plan;

use crate::host::supervise::Forward;
use crate::launcher::seen::Seen;
use crate::launcher::{Jail, RunRequest};

/// What a request must match to take a waiting jail: everything the jail was built from.
#[derive(Debug, PartialEq, Eq)]
struct Key {
    backend: &'static str,
    plan: Plan,
    host_env: Vec<(OsString, OsString)>,
    forward: Forward,
}

impl Key {
    fn of(backend: &'static str, req: &RunRequest<'_>) -> Key {
        Key {
            backend,
            plan: req.plan.clone(),
            host_env: req.host_env.to_vec(),
            forward: req.forward,
        }
    }

    fn fits(&self, backend: &'static str, req: &RunRequest<'_>) -> bool {
        self.backend == backend
            && self.forward == req.forward
            && *req.plan == self.plan
            && req.host_env == self.host_env.as_slice()
    }
}

/// Whether `req` can use a jail built ahead on `backend`: its stdin is not passed through (a
/// waiting jail's stdin is `/dev/null`), and a layered one's network is not the proxy's.
///
/// A copy-on-write layer is taken when its command comes, never ahead: an overlay whose lower
/// tree the host changes while it is mounted is undefined (it may miss what changed in
/// between, issue #30). So a layered jail built ahead is bubblewrap's jail and the stage's
/// process only: the stage says `ready`, and mounts the layer, installs its filter, checks the
/// jail and raises the second wall once the command came, as a cold jail does; the layer's
/// start marker is stamped then. The proxy's listener is handed over by those checks, so a
/// layered proxy run is built cold.
pub(crate) fn eligible(req: &RunRequest<'_>, backend: &dyn crate::backend::Backend) -> bool {
    let layered = req.plan.workspace_mode.layered() && backend.layers();
    let proxied = req.plan.network == cordon_policy::Network::Proxy;
    let proxied_layer = layered && proxied;
    !req.inherit_stdin && !proxied_layer
}

/// The session's slot for its waiting jail (shared by a [`Preparation`](crate::Preparation)'s
/// clones). Dropping it kills the jail.
#[derive(Default)]
pub(crate) struct Slot(Mutex<Option<(Key, Jail)>>);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.0.lock().map(|g| g.is_some()).unwrap_or(false);
        f.debug_struct("Slot").field("waiting", &waiting).finish()
    }
}

impl Slot {
    /// Takes the waiting jail if it was built for `req` on `backend` and is still alive; any
    /// other waiting jail is discarded.
    pub(crate) fn take_fitting(&self, backend: &'static str, req: &RunRequest<'_>) -> Option<Jail> {
        let (key, jail) = self.0.lock().ok()?.take()?;
        if key.fits(backend, req)
            && !jail.has_ended()
            && jail.seen.as_ref().is_some_and(Seen::unchanged)
        {
            Some(jail)
        } else {
            // Still judged as a run would be (a jail that ended early failed its self-check):
            // nothing of it is reported, and the command runs cold.
            jail.discard();
            None
        }
    }

    /// Whether a jail built for `req` on `backend` is already waiting (a concurrent run left
    /// one): then no other needs to be built.
    pub(crate) fn holds_fitting(&self, backend: &'static str, req: &RunRequest<'_>) -> bool {
        self.0
            .lock()
            .map(|slot| {
                slot.as_ref()
                    .is_some_and(|(key, jail)| key.fits(backend, req) && !jail.has_ended())
            })
            .unwrap_or(false)
    }

    /// Keeps `jail`, just built for `req` on `backend`, for the next command; a jail already
    /// waiting (from a concurrent run) is discarded.
    pub(crate) fn put(&self, backend: &'static str, req: &RunRequest<'_>, jail: Jail) {
        let entry = (Key::of(backend, req), jail);
        let previous = match self.0.lock() {
            Ok(mut slot) => slot.replace(entry),
            Err(_) => Some(entry),
        };
        if let Some((_, old)) = previous {
            old.discard();
        }
    }

    /// Waits up to `timeout` for the waiting jail's stage to report; false when none is waiting
    /// or it did not report in time.
    pub(crate) fn wait_for_report(&self, timeout: std::time::Duration) -> bool {
        match self.0.lock() {
            Ok(slot) => slot
                .as_ref()
                .is_some_and(|(_, jail)| jail.wait_for_report(timeout)),
            Err(_) => false,
        }
    }

    /// Discards the waiting jail, if any.
    pub(crate) fn clear(&self) {
        let taken = self.0.lock().ok().and_then(|mut slot| slot.take());
        if let Some((_, jail)) = taken {
            jail.discard();
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.clear();
    }
}
