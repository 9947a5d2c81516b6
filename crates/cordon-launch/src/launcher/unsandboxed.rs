//! The one run without a jail: no backend enforces, and the configuration says
//! `unavailable = "warn"` (never the default). Reported in the result's warnings.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use crate::error::LaunchError;
use crate::features::env::JailEnv;
use crate::host::supervise::{self, Supervision};
use crate::host::sys;
use crate::launcher::RunRequest;
use crate::launcher::result::{RunResult, finish};

pub(crate) fn run(
    req: &RunRequest<'_>,
    env: &JailEnv,
    policy_hash: String,
    env_dropped: BTreeMap<String, usize>,
    detail: String,
) -> Result<RunResult, LaunchError> {
    let warning = format!(
        "RAN WITHOUT A JAIL: no backend enforces the policy on this host ({detail}), and the configuration says unavailable = \"warn\""
    );
    let mut command = Command::new(&req.argv[0]);
    command
        .args(&req.argv[1..])
        .env_clear()
        .envs(env.vars())
        .current_dir(&req.plan.cwd);
    sys::prepare_child(&mut command, &req.plan.limits, &[]);
    let supervised = supervise::supervise(
        command,
        Supervision {
            timeout: req.plan.limits.timeout_secs.map(Duration::from_secs),
            output_cap: req.plan.limits.output_cap_bytes,
            forward: req.forward,
            status: None,
            inherit_stdin: req.inherit_stdin,
            hold: Vec::new(),
            session: None,
            from_long_lived_thread: false,
            supervisor: None,
        },
    )
    .map_err(LaunchError::io(format!(
        "starting {}",
        req.argv[0].to_string_lossy()
    )))?;
    Ok(finish(
        supervised,
        None,
        false,
        policy_hash,
        env_dropped,
        vec![warning],
    ))
}
