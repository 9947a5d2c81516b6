//! `cordon recover [--workspace DIR]`: finishes a sealed commit a killed cordon left, discards
//! one never sealed, keeps for review what a run killed before its commit wrote (never applied:
//! `cordon_launch::recover_abandoned`), and says which.

use std::io::Write;

use cordon_commit::Recovered;

use crate::cli::ChangesArgs;
use crate::error::CliError;

/// Runs `cordon recover`.
pub fn run(args: &ChangesArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (_, state) = super::workspace_state(args.workspace.as_deref())?;
    let done = cordon_commit::recover(&state)?;
    let abandoned = cordon_launch::recover_abandoned(&state);
    if args.json {
        serde_json::to_writer_pretty(
            &mut *out,
            &serde_json::json!({ "recovered": done, "abandoned": abandoned }),
        )?;
        writeln!(out)?;
        return Ok(());
    }
    if done.is_empty() && abandoned.is_empty() {
        writeln!(out, "nothing to recover")?;
    }
    // The same sentences the next run's warnings give (cordon-launch words them once).
    for a in &abandoned {
        writeln!(out, "{}", cordon_launch::describe_abandoned(a))?;
        for report in &a.kept {
            super::print_report(report, out)?;
        }
    }
    for r in &done {
        writeln!(out, "{}", cordon_launch::describe_recovered(r))?;
        if let Recovered::RolledForward { report, .. } = r {
            super::print_report(report, out)?;
        }
    }
    Ok(())
}
