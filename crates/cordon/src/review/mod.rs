//! `cordon changes`, `diff`, `apply`, `drop` and `recover`: what the workspace's runs keep
//! (cordon-commit), one module per subcommand.

pub mod apply;
pub mod changes;
pub mod diff;
pub mod drop;
pub mod recover;

use std::io::Write;
use std::path::{Path, PathBuf};

use cordon_commit::{CommitReport, Listed};
use cordon_launch::CordonDirs;

use crate::error::CliError;

/// The workspace `dir` (default: the current directory), canonical, and its state directory:
/// `<cache>/layers/<workspace key>`, where the layer feature keeps its runs.
pub fn workspace_state(dir: Option<&Path>) -> Result<(PathBuf, PathBuf), CliError> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(CliError::CurrentDir)?,
    };
    let workspace = std::fs::canonicalize(&dir).map_err(|e| {
        CliError::CurrentDir(std::io::Error::new(
            e.kind(),
            format!("the workspace {}: {e}", dir.display()),
        ))
    })?;
    let cache = CordonDirs::from_process().cache().ok_or_else(|| {
        CliError::CurrentDir(std::io::Error::other(
            "cordon's state directory is unknown: HOME and XDG_CACHE_HOME are not absolute",
        ))
    })?;
    let state = cache
        .join("layers")
        .join(cordon_policy::CacheLayout::workspace_key(&workspace));
    Ok((workspace, state))
}

/// Prints a commit's report for people.
pub fn print_report(report: &CommitReport, out: &mut dyn Write) -> Result<(), CliError> {
    let verb = if report.applied { "" } else { "pending " };
    let groups: [(&str, &[Listed]); 6] = [
        ("added", &report.added),
        ("modified", &report.modified),
        ("deleted", &report.deleted),
        ("refused", &report.refused),
        ("held", &report.held),
        ("conflict", &report.conflicts),
    ];
    for (i, (word, list)) in groups.iter().enumerate() {
        for l in *list {
            let prefix = if i < 3 { verb } else { "" };
            write!(out, "{prefix}{word} {}", l.path.display())?;
            if let Some(f) = &l.finding {
                write!(out, " ({}", f.rule)?;
                if !f.program.is_empty() {
                    write!(out, ", {}", f.program)?;
                }
                write!(out, "): {}", f.why)?;
            }
            writeln!(out)?;
        }
    }
    if !report.held.is_empty() {
        writeln!(
            out,
            "held changes wait for `cordon apply {} [PATH...]` or `cordon drop {}`",
            report.run, report.run
        )?;
    }
    Ok(())
}
