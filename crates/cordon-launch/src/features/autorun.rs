//! Protected paths and the auto-run registry: the plan's guard with its placeholders made on
//! the host (`host/placeholders.rs`), and after the run the sweep (`sweep.rs`): auto-run files
//! the command created where none existed are moved aside, files the plan restores are put
//! back. Under the copy-on-write layer (`layer.rs`) neither is made for a layered root: the
//! commit judges what the command planted there.
//!
//! Recovery: every placeholder is registered with the session reaper before it exists, so a
//! killed launcher's placeholders are removed (when still exactly what was made). The sweep
//! needs the jail gone and does not run for a killed launcher (docs/limits.md).

use std::path::PathBuf;

use cordon_policy::RealHost;

use super::{Feature, Host, Outcome, Run};
use crate::host::cleanup::Cleanup;
use crate::host::reaper::Session;

/// Preparing the host, first step: the plan's guard, its placeholders made (or joined) and
/// registered with `session`, or only listed under `cordon explain`.
pub(crate) fn guard(run: &Run<'_>, session: Option<&'static Session>) -> Host {
    let mut cleanup = Cleanup::new(session);
    // Under the copy-on-write layer no placeholder is made in a layered root: the host would
    // see it while the jail lives, and what the command plants there lands in its layer, where
    // the commit judges it (issue #30). The workspace's toolchain cache, cordon's own, is not
    // layered and keeps them.
    let layered = layered(run);
    let own_cache = run.plan.caches.as_ref().map(|c| c.root.clone());
    let in_layer =
        |p: &std::path::Path| layered && !own_cache.as_ref().is_some_and(|c| p.starts_with(c));
    let mut guarded = if run.dry {
        run.plan
            .guard_with(&RealHost::new(None), &mut |p| !in_layer(&p.path))
    } else {
        run.plan.guard_with(&RealHost::new(None), &mut |p| {
            !in_layer(&p.path) && cleanup.placeholder(&p.path, p.kind).unwrap_or(false)
        })
    };
    if layered {
        guarded.leave_to_the_commit(own_cache.as_deref());
    }
    Host {
        guarded,
        cleanup,
        brokers: Vec::new(),
        named: Vec::new(),
        layers: Vec::new(),
    }
}

/// Whether the run's roots are under the copy-on-write layer (`layer.rs`).
fn layered(run: &Run<'_>) -> bool {
    run.plan.workspace_mode.layered() && run.backend.layers()
}

/// The sweep of one run.
struct Autorun {
    sweep: Option<Box<super::sweep::Sweep>>,
}

/// Planning: every jail takes part (its guard is the plan's).
pub(crate) fn plan(_run: &Run<'_>, _refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    Some(Box::new(Autorun { sweep: None }))
}

impl Feature for Autorun {
    fn name(&self) -> &'static str {
        "autorun"
    }

    /// What to look for (and put back) after the run, read once the host is prepared (the
    /// git broker's directories made) and before the jail exists.
    fn arguments(
        &mut self,
        run: &Run<'_>,
        host: &Host,
        _args: &mut super::Arguments,
    ) -> Result<(), crate::LaunchError> {
        // Under the layer nothing is planted on the host: the commit is the judge, no sweep.
        if !run.dry && !layered(run) {
            self.sweep = Some(Box::new(super::sweep::Sweep::of(&host.guarded)));
        }
        Ok(())
    }

    fn after(&mut self, _writable: &[PathBuf], outcome: &mut Outcome) {
        // The jail's processes are gone: what it created at auto-run names is moved aside.
        if let Some(sweep) = &self.sweep {
            outcome.violations.extend(sweep.run());
        }
    }
}
