//! `cordon recover [--workspace DIR]`: finishes a sealed commit a killed cordon left, discards
//! one never sealed, and says which.

use std::io::Write;

use cordon_commit::Recovered;

use crate::cli::ChangesArgs;
use crate::error::CliError;

/// Runs `cordon recover`.
pub fn run(args: &ChangesArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (_, state) = super::workspace_state(args.workspace.as_deref())?;
    let done = cordon_commit::recover(&state)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "recovered": done }))?;
        writeln!(out)?;
        return Ok(());
    }
    if done.is_empty() {
        writeln!(out, "nothing to recover")?;
    }
    for r in &done {
        match r {
            Recovered::RolledForward { run, report } => {
                writeln!(out, "run {run}: its sealed commit was finished")?;
                super::print_report(report, out)?;
            }
            Recovered::Discarded { run } => {
                writeln!(
                    out,
                    "run {run}: killed before it was recorded; discarded, the workspace untouched"
                )?;
            }
            Recovered::NotSealed { run } => {
                writeln!(
                    out,
                    "run {run}: killed before its journal was sealed; the workspace untouched, its changes wait for `cordon apply {run}` or `cordon drop {run}`"
                )?;
            }
            _ => writeln!(out, "{r:?}")?,
        }
    }
    Ok(())
}
