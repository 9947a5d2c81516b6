//! `cordon diff RUN`: what a run keeps, each change with why, and for a kept text file its
//! difference from the host's version (lines removed `-`, added `+`).

use std::io::Write;
use std::path::Path;

use cordon_commit::{ChangeWord, Entry, NodeWord, Status};

use crate::cli::RunRef;
use crate::error::CliError;

/// Files over this many bytes, or over [`MAX_LINES`] lines, are summarized, not compared.
const MAX_BYTES: u64 = 256 * 1024;
const MAX_LINES: usize = 2000;

/// Runs `cordon diff`.
pub fn run(args: &RunRef, out: &mut dyn Write) -> Result<(), CliError> {
    let (_, state) = super::workspace_state(args.workspace.as_deref())?;
    let (manifest, dir) = cordon_commit::read_run(&state, &args.run)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &manifest)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "run {} of {}", manifest.run, manifest.root.display())?;
    let kept = dir.join(cordon_commit::KEPT_DIR);
    for e in manifest
        .entries
        .iter()
        .filter(|e| e.status != Status::Applied)
    {
        header(e, out)?;
        if e.node == NodeWord::File && e.kept && e.change != ChangeWord::Deleted {
            let old = text(&manifest.root.join(&e.path));
            let new = text(&kept.join(&e.path));
            match (old, new) {
                (Some(old), Some(new)) => lines(&old, &new, out)?,
                (None, Some(new)) if e.change == ChangeWord::Added => lines("", &new, out)?,
                _ => writeln!(out, "  (binary or large: not compared)")?,
            }
        } else if let Some(target) = &e.target {
            writeln!(out, "  -> {}", target.display())?;
        }
    }
    Ok(())
}

fn header(e: &Entry, out: &mut dyn Write) -> Result<(), CliError> {
    let status = match e.status {
        Status::Pending => "pending",
        Status::Held => "held",
        Status::Refused => "refused",
        Status::Conflict => "conflict",
        Status::Applied => "applied",
    };
    let change = match e.change {
        ChangeWord::Added => "added",
        ChangeWord::Modified => "modified",
        ChangeWord::Deleted => "deleted",
    };
    write!(out, "{status} {change} {}", e.path.display())?;
    if let Some(f) = &e.finding {
        write!(out, " ({}", f.rule)?;
        if !f.program.is_empty() {
            write!(out, ", {}", f.program)?;
        }
        write!(out, "): {}", f.why)?;
    }
    writeln!(out)?;
    Ok(())
}

/// A regular file's text, when it is small UTF-8.
fn text(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// The lines of `old` and `new` compared by their longest common subsequence.
fn lines(old: &str, new: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a.len() > MAX_LINES || b.len() > MAX_LINES {
        writeln!(
            out,
            "  ({} lines -> {} lines: not compared)",
            a.len(),
            b.len()
        )?;
        return Ok(());
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u16; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1].saturating_add(1)
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            writeln!(out, "  +{}", b[j])?;
            j += 1;
        } else {
            writeln!(out, "  -{}", a[i])?;
            i += 1;
        }
    }
    Ok(())
}
