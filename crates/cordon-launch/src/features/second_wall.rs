//! The second wall: Landlock rules the stage applies inside a bubblewrap jail
//! (`cordon-landlock`). They go to the stage on a socket *after* the spawn: they are computed
//! while bubblewrap builds the jail, and the stage reads them once it runs. A jail built ahead
//! of its command computes them on a thread, off the caller's path.
//!
//! Recovery: nothing is made on the host.

use std::os::fd::OwnedFd;

use cordon_policy::Plan;

use super::{Arguments, Feature, Host, Run};
use crate::error::LaunchError;

struct SecondWall {
    channel: Option<OwnedFd>,
    /// For a jail built ahead: the thread computing and sending the rules.
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
}

/// Planning: the backends that put a second wall inside their jail.
pub(crate) fn plan(run: &Run<'_>, _refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    run.backend.second_wall().then(|| {
        Box::new(SecondWall {
            channel: None,
            thread: None,
        }) as Box<dyn Feature>
    })
}

impl Feature for SecondWall {
    fn name(&self) -> &'static str {
        "second-wall"
    }

    fn arguments(
        &mut self,
        run: &Run<'_>,
        _host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        if run.dry {
            return Ok(());
        }
        self.channel = args.channel(false, "the Landlock rules channel", |c| &mut c.landlock_fd)?;
        Ok(())
    }

    fn started(&mut self, run: &Run<'_>, host: &Host, args: &Arguments) -> Result<(), LaunchError> {
        // A self-check without the descriptor (the mutants run) reads no rules.
        let Some(channel) = self
            .channel
            .take()
            .filter(|_| args.check.landlock_fd.is_some())
        else {
            return Ok(());
        };
        if run.awaiting {
            // Off the caller's path: the jail waits for its command anyway. A failure is kept
            // for `refusal`, and the stage, reading no rules, refuses.
            let plan = host.guarded.plan().clone();
            self.thread = Some(std::thread::spawn(move || {
                send_rules(&plan, &channel).map_err(|e| e.to_string())
            }));
            Ok(())
        } else {
            send_rules(&host.guarded, &channel)
        }
    }

    fn refusal(&mut self) -> Option<String> {
        let why = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .and_then(Result::err)?;
        Some(format!(
            "the second wall's rules could not be computed, the command was not run: {why}"
        ))
    }
}

/// Computes the second wall's rules for `plan` and sends them to the stage on `channel`. A
/// stage that already ended gives EPIPE, which is not an error here: its own report is judged
/// at the end, and a stage that read a cut-short list refuses to run anything.
#[cfg(not(linux_backends))]
fn send_rules(_plan: &Plan, _channel: &OwnedFd) -> Result<(), LaunchError> {
    // No backend with a second wall exists off Linux: `second_wall()` is false for each.
    Ok(())
}

#[cfg(linux_backends)]
fn send_rules(plan: &Plan, channel: &OwnedFd) -> Result<(), LaunchError> {
    // The stage is bound at STAGE_PATH; it stays executable under the second wall (bubblewrap's
    // private /run already lets it run, so this adds a rule only if that ever changes).
    let rules = cordon_landlock::Rules::from_plan(
        plan,
        &cordon_landlock::Options::inside_bubblewrap().with_executable(cordon_bwrap::STAGE_PATH),
        &cordon_landlock::FsLister,
    )?;
    let _ = crate::host::sys::send_all(channel, &rules.encode());
    Ok(())
}
