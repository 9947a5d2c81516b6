//! Protected paths and the auto-run registry: the plan's guard with its placeholders made on
//! the host (`host/placeholders.rs`), and after the run the sweep (`sweep.rs`): auto-run files
//! the command created where none existed are moved aside, files the plan restores are put
//! back. The roots under the copy-on-write layer (`layer.rs`) get neither: no guard, no
//! placeholder, no sweep, no put-back. The commit judges what the command changed there
//! (`cordon-changes` refuses every new auto-run name at any depth, which is more than the sweep
//! looks for), and what appears there on the host during the run is the host's own.
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
    // The roots under the copy-on-write layer are left to the commit (`layer.rs`): no
    // placeholder is made in them, nothing of them is bound read-only.
    let layered = layered_roots(run);
    let guarded = if run.dry {
        run.plan.guard_beside_layer(&RealHost::new(None), &layered)
    } else {
        run.plan
            .guard_beside_layer_with(&RealHost::new(None), &layered, &mut |p| {
                cleanup.placeholder(&p.path, p.kind).unwrap_or(false)
            })
    };
    Host {
        guarded,
        cleanup,
        brokers: Vec::new(),
        named: Vec::new(),
        layers: Vec::new(),
    }
}

/// The roots the run puts under the copy-on-write layer (none where no backend makes one).
fn layered_roots(run: &Run<'_>) -> Vec<PathBuf> {
    #[cfg(linux_backends)]
    return super::layer::roots(run);
    #[cfg(not(linux_backends))]
    {
        let _ = run;
        Vec::new()
    }
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
        if !run.dry {
            // Exactly the roots the layer took (`layer.rs` fills `host.layers`).
            let layered: Vec<PathBuf> = host.layers.iter().map(|(root, _)| root.clone()).collect();
            self.sweep = Some(Box::new(super::sweep::Sweep::of(&host.guarded, &layered)));
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
