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
    for a in &abandoned {
        let name = a
            .layer
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        if let Some(e) = &a.error {
            writeln!(
                out,
                "layer {name}: its launcher was killed before the commit; it could not be kept for review ({e}); the workspace untouched, the layer stays"
            )?;
            continue;
        }
        if a.kept.is_empty() {
            writeln!(
                out,
                "layer {name}: its launcher was killed before the commit; it changed nothing, removed"
            )?;
        }
        for report in &a.kept {
            writeln!(
                out,
                "layer {name}: its launcher was killed before the commit; the workspace untouched, its changes kept as run {} for `cordon apply {}` or `cordon drop {}`",
                report.run, report.run, report.run
            )?;
            super::print_report(report, out)?;
        }
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
