//! `cordon drop RUN`: discards a run and everything it keeps; the workspace is not touched.

use std::io::Write;

use crate::cli::RunRef;
use crate::error::CliError;

/// Runs `cordon drop`.
pub fn run(args: &RunRef, out: &mut dyn Write) -> Result<(), CliError> {
    let (_, state) = super::workspace_state(args.workspace.as_deref())?;
    cordon_commit::drop_run(&state, &args.run)?;
    if args.json {
        serde_json::to_writer(&mut *out, &serde_json::json!({"dropped": args.run}))?;
        writeln!(out)?;
    } else {
        writeln!(out, "dropped run {}", args.run)?;
    }
    Ok(())
}
