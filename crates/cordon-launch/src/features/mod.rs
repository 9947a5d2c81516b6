//! A jail is a pipeline of features: each module here is one feature, and takes part in the
//! phases it needs. The launcher (`launcher/start.rs`) runs the phases in order, and each phase
//! runs every feature of the run in the order of [`for_run`]:
//!
//! 1. **Planning** ([`for_run`]): each feature looks at the plan and the chosen backend and
//!    either joins the run, stays out, or refuses the command (nothing is made on the host
//!    before every feature has agreed).
//! 2. **Preparing the host** ([`Feature::prepare_host`]): what the jail needs on the host,
//!    each thing registered in the run's [`Cleanup`] (and so with the session reaper) before
//!    it exists. Under `cordon explain` ([`Run::dry`]) a feature names what it would make.
//! 3. **The backend's arguments** ([`Feature::arguments`]): variables set in the jail (each
//!    with its reason, [`crate::features::env`]), descriptors handed to the stage, binds of
//!    what was made on the host.
//! 4. **Confining the command** ([`Feature::confine`]): control groups around the spawned
//!    process; **starting** ([`Feature::starting`], [`Feature::started`]): what runs beside
//!    the jail (the proxy) and what the stage reads once it runs (the second wall's rules).
//! 5. **After the jail's last process is gone** ([`Feature::refusal`], [`Feature::after`]):
//!    what the command left is judged, merged back or moved aside.
//! 6. **Recovery after a killed launcher**: what a feature made is registered with the session
//!    reaper before it exists (`host/reaper.rs`), which removes it when the launcher is gone,
//!    however it ended; each feature's module says what it registers.
//!
//! The plan is never edited here: it is complete when `cordon-policy` hands it over
//! ([`cordon_policy::Plan::guard`] included). What a feature made on the host reaches the
//! backend as an argument ([`Host::brokers`]).
//!
//! Where a new feature goes: a module here with a `plan` function for [`for_run`], and the
//! [`Feature`] methods of the phases it takes part in. Its test-only weakening, if it has one,
//! is a [`crate::weaken`] variant applied where that module says.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use cordon_policy::{ConfigBroker, GuardedPlan, Plan};
use serde::Serialize;

use crate::backend::Backend;
use crate::error::LaunchError;
use crate::host::cleanup::Cleanup;
use crate::stage::SelfCheck;
use crate::violations::Violation;

pub(crate) mod autorun;
pub(crate) mod caches;
pub(crate) mod env;
pub(crate) mod git;
pub(crate) mod home;
#[cfg(linux_backends)]
pub(crate) mod layer;
#[cfg(linux_backends)]
pub(crate) mod layer_abandoned;
#[cfg(linux_backends)]
pub(crate) mod layer_probe;
#[cfg(linux_backends)]
pub(crate) mod layer_prune;
pub(crate) mod limits;
#[cfg(linux_backends)]
pub(crate) mod memory;
pub(crate) mod network;
pub(crate) mod objects;
#[cfg(linux_backends)]
pub(crate) mod pids;
pub(crate) mod proxy;
pub(crate) mod second_wall;
pub(crate) mod sweep;

/// One run as every feature sees it.
pub(crate) struct Run<'a> {
    /// The plan, complete.
    pub(crate) plan: &'a Plan,
    /// The backend chosen by its probe.
    pub(crate) backend: &'a dyn Backend,
    /// Whether the jail is built before its command is known (a session's jail built ahead).
    pub(crate) awaiting: bool,
    /// `cordon explain`: name what would be made on the host, make nothing.
    pub(crate) dry: bool,
    /// The launcher's proxy rules for this plan (parsed once per list), when its network is
    /// `proxy`.
    pub(crate) proxy_rules: Option<std::sync::Arc<proxy::Rules>>,
    /// cordon's directory for the runs' copy-on-write layers (`features/layer.rs`), if the
    /// launcher has one.
    pub(crate) layers: Option<&'a std::path::Path>,
}

/// What preparing the host gave the run.
pub(crate) struct Host {
    /// The plan with its guard (`Plan::guard`): placeholders listed, pins added. Those the host
    /// could not take are left out by the guard itself.
    pub(crate) guarded: GuardedPlan,
    /// What was made on the host for the run, removed when dropped.
    pub(crate) cleanup: Cleanup,
    /// The git configuration broker's shadows the host holds: binds for the backend.
    pub(crate) brokers: Vec<ConfigBroker>,
    /// What `cordon explain` lists as created for the run (a shadow named, not made).
    pub(crate) named: Vec<PathBuf>,
    /// The writable roots under a copy-on-write layer, each with the run's layer directory
    /// (`features/layer.rs`): binds for the backend.
    pub(crate) layers: Vec<(PathBuf, PathBuf)>,
}

/// The backend's arguments as the features build them.
pub(crate) struct Arguments {
    /// What the stage checks and the descriptors it reads.
    pub(crate) check: SelfCheck,
    /// Descriptors the stage inherits.
    pub(crate) inherit: Vec<OwnedFd>,
    /// The jail's environment, each variable with who set it and why.
    pub(crate) env: env::JailEnv,
    /// The wall-clock timeout.
    pub(crate) timeout: Option<Duration>,
    /// Host sockets the jail may reach although the network is denied (inodes; the proxy's
    /// listener under the Landlock backend).
    pub(crate) granted_sockets: Vec<u64>,
}

impl Arguments {
    /// A socket pair whose one end the stage inherits (its number in the self-check's field
    /// `slot` chooses); the launcher's end is returned. Under `cordon explain` the number is
    /// shown as `-1` and no socket is made.
    pub(crate) fn channel(
        &mut self,
        dry: bool,
        what: &'static str,
        slot: fn(&mut SelfCheck) -> &mut Option<i32>,
    ) -> Result<Option<OwnedFd>, LaunchError> {
        if dry {
            *slot(&mut self.check) = Some(-1);
            return Ok(None);
        }
        let (read, write) =
            crate::host::sys::socket_pair().map_err(LaunchError::io(format!("creating {what}")))?;
        *slot(&mut self.check) = Some(crate::host::sys::raw(&read));
        self.inherit.push(read);
        Ok(Some(write))
    }
}

/// What the features found once the jail was gone, added to the result in pipeline order.
#[derive(Default)]
pub(crate) struct Outcome {
    /// Violations the features recognised (a refused destination, a planted file, a refused
    /// git key).
    pub(crate) violations: Vec<Violation>,
    /// Warnings for the caller.
    pub(crate) warnings: Vec<String>,
    /// What a `proxy` network's proxy saw.
    pub(crate) network: Option<cordon_proxy::server::Record>,
    /// What a copy-on-write layer holds of the command's writes (`features/layer.rs`).
    pub(crate) changes: Option<Changes>,
}

/// What became of the command's copy-on-write layer (the result's `changes`): per root, the
/// commit's report (`cordon_commit::CommitReport`: added, modified, deleted, refused, held,
/// conflicts, and how to apply what is held).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// Whether the judged changes were applied (`false` under `--review`, or when a commit
    /// failed: then everything stays in the layer, named in `kept`).
    pub applied: bool,
    /// Each layered root's commit.
    pub roots: Vec<RootChanges>,
    /// Where the layer is kept when its commit did not finish (it is removed after a commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<std::path::PathBuf>,
}

/// One layered root of [`Changes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RootChanges {
    /// The writable root (in JSON lossily as UTF-8, like every path of a result).
    #[serde(serialize_with = "lossy_path")]
    pub root: std::path::PathBuf,
    /// The commit's report (its JSON), or `null` when it failed (`error` says why).
    pub report: Option<serde_json::Value>,
    /// Why the commit of this root failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn lossy_path<S: serde::Serializer>(path: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// One feature of one run. Every method has a default that takes no part in its phase.
pub(crate) trait Feature: Send {
    /// The feature's name (`cordon explain`, errors).
    fn name(&self) -> &'static str;

    /// Preparing the host: make what the jail needs (or, when `run.dry`, name it in
    /// `host.named`), registered in `host.cleanup` before it exists.
    fn prepare_host(&mut self, _run: &Run<'_>, _host: &mut Host) -> Result<(), LaunchError> {
        Ok(())
    }

    /// The backend's arguments: variables, descriptors for the stage.
    fn arguments(
        &mut self,
        _run: &Run<'_>,
        _host: &Host,
        _args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        Ok(())
    }

    /// The spawned command, before it starts: a warning for each bound that could not be
    /// applied.
    fn confine(&mut self, _command: &mut Command, _cleanup: &mut Cleanup) -> Vec<String> {
        Vec::new()
    }

    /// Right before the spawn: what runs beside the jail.
    fn starting(&mut self) -> Result<(), LaunchError> {
        Ok(())
    }

    /// Right after the spawn: what the stage reads once it runs (`args` as the stage got them).
    fn started(
        &mut self,
        _run: &Run<'_>,
        _host: &Host,
        _args: &Arguments,
    ) -> Result<(), LaunchError> {
        Ok(())
    }

    /// A jail built ahead of its command is given it now (`session/warm.rs`): what counts from
    /// the command's start starts here.
    fn command_given(&mut self) {}

    /// Once the jail's processes are gone, before anything else is judged: a reason the
    /// command must count as not run.
    fn refusal(&mut self) -> Option<String> {
        None
    }

    /// Once the jail's processes are gone and the command ran: judge what it left.
    fn after(&mut self, _writable: &[PathBuf], _outcome: &mut Outcome) {}
}

/// A feature's planning: it joins the run (or stays out) and may refuse the command, saying
/// why in `refusals`.
pub(crate) type Planner = fn(&Run<'_>, &mut Vec<String>) -> Option<Box<dyn Feature>>;

/// Planning: the features of this run, in pipeline order, and the refusals they gave (a run
/// with any refuses with the first; `cordon explain` shows them all). Nothing has been made on
/// the host yet.
pub(crate) fn for_run(run: &Run<'_>) -> (Vec<Box<dyn Feature>>, Vec<String>) {
    const PIPELINE: &[Planner] = &[
        #[cfg(linux_backends)]
        layer::plan,
        network::plan,
        objects::plan,
        autorun::plan,
        git::plan,
        home::plan,
        second_wall::plan,
        limits::plan,
    ];
    let mut features = Vec::with_capacity(PIPELINE.len());
    let mut refusals = Vec::new();
    for planner in PIPELINE {
        if let Some(feature) = planner(run, &mut refusals) {
            features.push(feature);
        }
    }
    (features, refusals)
}

/// The names of the features a jail of `run` has, in pipeline order (`cordon explain`).
pub(crate) fn names(features: &[Box<dyn Feature>]) -> Vec<&'static str> {
    features.iter().map(|f| f.name()).collect()
}
