//! `cordon apply RUN [PATH...]`: a run's held and pending changes onto the workspace, on the
//! user's consent (each judged again for conflicts with the host).

use std::io::Write;

use crate::cli::ApplyArgs;
use crate::error::CliError;

/// Runs `cordon apply`.
pub fn run(args: &ApplyArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (_, state) = super::workspace_state(args.run.workspace.as_deref())?;
    let report = cordon_commit::apply_held(&state, &args.run.run, &args.paths)?;
    if args.run.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    super::print_report(&report, out)
}
