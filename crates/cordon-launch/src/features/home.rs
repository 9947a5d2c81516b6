//! The workspace's private home where the backend has no mount namespace (the Landlock backend,
//! Seatbelt): the home cannot be replaced at its own path there, so `HOME` names the private
//! home's real path, a writable root of the plan (`cordon_policy::Plan::private_home`). Under
//! bubblewrap this feature stays out: the private home is bound at the home's own path
//! (`cordon-bwrap`), and `HOME` keeps its value.
//!
//! rustup finds its toolchains through `$HOME/.rustup` when `RUSTUP_HOME` is unset; with `HOME`
//! moved it would find none, so `RUSTUP_HOME` names the host's `~/.rustup` (a vetted tree,
//! readable in the jail) when it exists and nobody set the variable. Other tools that find their
//! own installation through `HOME` rather than `PATH` are docs/home.md's known limit.
//!
//! Recovery: nothing is made; the private home is created with the caches (`caches.rs`).

use std::path::PathBuf;

use super::env::EnvSource;
use super::{Arguments, Feature, Host, Run};
use crate::error::LaunchError;

/// The feature, for a run whose home is a private home named by `HOME`.
struct PrivateHome {
    home: PathBuf,
    rustup: Option<PathBuf>,
}

/// Planning: joins when the plan has a private home and the backend runs in place.
pub(crate) fn plan(run: &Run<'_>, _refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    if !run.backend.runs_stage_in_place() {
        return None;
    }
    let home = run.plan.private_home()?.to_path_buf();
    let rustup = Some(run.plan.home.join(".rustup")).filter(|r| r.is_dir());
    Some(Box::new(PrivateHome { home, rustup }))
}

impl Feature for PrivateHome {
    fn name(&self) -> &'static str {
        "home"
    }

    fn arguments(
        &mut self,
        _run: &Run<'_>,
        _host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        // A path that is not UTF-8 cannot be a value of the table; the plan refuses such a
        // cache base already (`CacheLayout::for_workspace`), so this is never taken.
        let Some(home) = self.home.to_str() else {
            return Ok(());
        };
        args.env.set("HOME", home, EnvSource::PrivateHome);
        if let Some(rustup) = self.rustup.as_deref().and_then(|r| r.to_str())
            && !args.env.contains("RUSTUP_HOME")
        {
            args.env.set("RUSTUP_HOME", rustup, EnvSource::PrivateHome);
        }
        Ok(())
    }
}
