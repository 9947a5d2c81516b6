//! `cordon cache show|clear`: prints what `cordon_launch::caches` finds and removes.

use std::io::Write;

use cordon_launch::CacheEntry;
use cordon_launch::caches::{clear, entries};
use cordon_policy::{CacheLayout, ToolCache};
use serde::Serialize;

use crate::cli::{CacheArgs, CacheCommand};
use crate::context::Context;
use crate::error::CliError;

/// `cordon cache show --json`.
#[derive(Debug, Serialize)]
struct ShowReport<'a> {
    base: Option<String>,
    max_bytes: u64,
    total_bytes: u64,
    current: Option<String>,
    caches: &'a [CacheEntry],
    tools: &'static [ToolCache],
}

/// Runs `cordon cache show|clear`.
pub fn run(args: &CacheArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let ctx = Context::from_process(args.cwd.as_deref())?;
    let current = std::fs::canonicalize(&ctx.cwd)
        .ok()
        .map(|w| CacheLayout::workspace_key(&w));
    let base = ctx.cache_base.clone();
    match args.command {
        CacheCommand::Show => {
            let list = base.as_deref().map(entries).unwrap_or_default();
            let total: u64 = list.iter().map(|e| e.bytes).sum();
            if args.json {
                let report = ShowReport {
                    base: base.as_ref().map(|b| b.display().to_string()),
                    max_bytes: CacheLayout::DEFAULT_MAX_BYTES,
                    total_bytes: total,
                    current: current.clone(),
                    caches: &list,
                    tools: ToolCache::ALL,
                };
                serde_json::to_writer_pretty(&mut *out, &report)?;
                writeln!(out)?;
                return Ok(());
            }
            match &base {
                Some(b) => writeln!(out, "toolchain caches and private homes: {}", b.display())?,
                None => writeln!(out, "toolchain caches: none (HOME is not absolute)")?,
            }
            for e in &list {
                let mark = if Some(&e.key) == current.as_ref() {
                    "*"
                } else {
                    " "
                };
                writeln!(
                    out,
                    "{mark} {:>14} bytes  {}  {}  (private home {} bytes)",
                    e.bytes,
                    e.key,
                    e.workspace.as_deref().unwrap_or("(workspace unknown)"),
                    e.home_bytes
                )?;
            }
            writeln!(
                out,
                "{} cache(s), {total} of at most {} bytes",
                list.len(),
                CacheLayout::DEFAULT_MAX_BYTES
            )?;
        }
        CacheCommand::Clear => {
            let Some(base) = base else {
                return Ok(());
            };
            let keys: Vec<String> = if args.all {
                entries(&base).into_iter().map(|e| e.key).collect()
            } else {
                current.into_iter().collect()
            };
            for key in &keys {
                clear(&base, key)?;
                writeln!(
                    out,
                    "cleared {} and its private home {}",
                    base.join(key).display(),
                    base.join(format!("{key}{}", CacheLayout::HOME_SUFFIX))
                        .display()
                )?;
            }
        }
    }
    Ok(())
}
