//! `cordon changes [--workspace DIR] [--json]`: the workspace's runs that keep changes.

use std::io::Write;
use std::path::Path;

use crate::cli::ChangesArgs;
use crate::error::CliError;

/// Runs `cordon changes`.
pub fn run(args: &ChangesArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (workspace, state) = super::workspace_state(args.workspace.as_deref())?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &listing(&workspace, &state)?)?;
        writeln!(out)?;
        return Ok(());
    }
    let runs = cordon_commit::list_runs(&state)?;
    if runs.is_empty() {
        writeln!(out, "no run of {} keeps changes", workspace.display())?;
    }
    for r in &runs {
        writeln!(
            out,
            "{}  {}: {} pending, {} held, {} refused, {} conflicts, {} applied",
            r.run,
            r.root.display(),
            r.pending,
            r.held,
            r.refused,
            r.conflicts,
            r.applied
        )?;
    }
    Ok(())
}

/// What `--json` prints (and `cordon serve` answers to `{"changes": true}`).
pub fn listing(workspace: &Path, state: &Path) -> Result<serde_json::Value, CliError> {
    let runs = cordon_commit::list_runs(state)?;
    Ok(serde_json::json!({
        "workspace": workspace,
        "state": state,
        "runs": runs,
    }))
}
