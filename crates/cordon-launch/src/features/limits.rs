//! Limits beyond the resource limits every spawn sets (`host/sys.rs`): the wall-clock timeout,
//! root's process limit in a `pids` control group (`pids.rs`: the kernel exempts root from
//! `RLIMIT_NPROC`) and the whole jail's memory in a memory control group (`memory.rs`).
//!
//! Recovery: each control group is registered with the session reaper before it is made, and
//! removed by it when the launcher is killed.

use std::process::Command;
use std::time::Duration;

use super::{Arguments, Feature, Host, Run};
use crate::error::LaunchError;
use crate::host::cleanup::Cleanup;

struct Limits {
    processes: Option<u64>,
    memory_bytes: Option<u64>,
}

/// Planning: every jail has limits.
pub(crate) fn plan(run: &Run<'_>, _refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    Some(Box::new(Limits {
        processes: run.plan.limits.processes,
        memory_bytes: run.plan.limits.memory_bytes,
    }))
}

impl Feature for Limits {
    fn name(&self) -> &'static str {
        "limits"
    }

    fn arguments(
        &mut self,
        run: &Run<'_>,
        _host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        args.timeout = run.plan.limits.timeout_secs.map(Duration::from_secs);
        Ok(())
    }

    #[cfg(not(linux_backends))]
    fn confine(&mut self, _command: &mut Command, _cleanup: &mut Cleanup) -> Vec<String> {
        let _ = (self.processes, self.memory_bytes);
        Vec::new()
    }

    #[cfg(linux_backends)]
    fn confine(&mut self, command: &mut Command, cleanup: &mut Cleanup) -> Vec<String> {
        // Root is exempt from RLIMIT_NPROC: a pids control group bounds its jail.
        let pids = super::pids::confine(command, self.processes, cleanup)
            .err()
            .map(|why| format!("the process limit is not enforced for root: {why}"));
        // The whole jail's memory, private temporary files included. Said in the result for
        // root, who always can; an unprivileged user's host says so in `doctor`.
        let memory = super::memory::confine(command, self.memory_bytes, cleanup)
            .err()
            .filter(|_| rustix::process::geteuid().is_root())
            .map(|why| format!("the memory limit is not enforced: {why}"));
        pids.into_iter().chain(memory).collect()
    }
}
