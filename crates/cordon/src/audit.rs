//! `cordon audit`: named checks over a configuration.

use std::io::Write;

use cordon_policy::{AuditReport, Check, ConfigLayer, LayerKind, Overrides, audit};

use crate::cli::AuditArgs;
use crate::context::Context;
use crate::error::CliError;

/// Runs `cordon audit`; returns whether every check passed.
pub fn run(args: &AuditArgs, out: &mut dyn Write) -> Result<bool, CliError> {
    let ctx = Context::from_process(None)?;
    let (global, project) = match &args.config {
        Some(file) => {
            let kind = if file
                .file_name()
                .is_some_and(|n| n == ConfigLayer::PROJECT_FILE)
            {
                LayerKind::Project
            } else {
                LayerKind::Global
            };
            let layer = ConfigLayer::load(file, kind)?;
            match kind {
                LayerKind::Global => (Some(layer), None),
                LayerKind::Project => (None, Some(layer)),
            }
        }
        None => ctx.layers()?,
    };
    let home = ctx.home.as_deref().map(std::path::Path::new);
    let workspace = std::fs::canonicalize(&ctx.cwd).unwrap_or_else(|_| ctx.cwd.clone());
    let mut overrides = Overrides::default();
    for dir in &args.write {
        overrides
            .writable
            .push(std::path::absolute(dir).map_err(CliError::CurrentDir)?);
    }
    let mut report = audit(
        global.as_ref(),
        project.as_ref(),
        &overrides,
        home,
        Some(&workspace),
    );
    report
        .checks
        .push(env_pass_check(global.as_ref(), project.as_ref()));
    report.checks.push(workspace_check(args.live));
    let passed = report.passed();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&report, global.as_ref(), project.as_ref(), out)?;
    }
    Ok(passed)
}

/// The workspace mode: a live run's writes reach the workspace while it runs, before any
/// judgement, so a host program reading it meanwhile sees them.
fn workspace_check(live: bool) -> Check {
    Check {
        name: "workspace-live",
        passed: !live,
        detail: if live {
            "--live: the command writes the workspace as it runs; a host program reading it meanwhile sees what it planted before the sweep".into()
        } else {
            "workspace mode auto: under bubblewrap the command's writes wait in a copy-on-write layer the commit judges; the Landlock backend writes live and says so on each run".into()
        },
    }
}

/// A `pass` name that reads as a credential is dropped at run time anyway; configuring it is a
/// sign that someone expected a secret to reach the jail.
fn env_pass_check(global: Option<&ConfigLayer>, project: Option<&ConfigLayer>) -> Check {
    let flagged: Vec<String> = global
        .into_iter()
        .chain(project)
        .flat_map(|l| l.env_pass().iter())
        .filter(|n| {
            cordon_env::reads_as_credential(n)
                || cordon_env::classify(n).is_some_and(|c| !c.passes_from_host())
        })
        .cloned()
        .collect();
    if flagged.is_empty() {
        Check {
            name: "env-pass-credential",
            passed: true,
            detail: "no configured pass name reads as a credential or a never-passed family".into(),
        }
    } else {
        Check {
            name: "env-pass-credential",
            passed: false,
            detail: format!(
                "pass names that will never be passed: {}",
                flagged.join(", ")
            ),
        }
    }
}

fn print_text(
    report: &AuditReport,
    global: Option<&ConfigLayer>,
    project: Option<&ConfigLayer>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for (what, layer) in [("global", global), ("project", project)] {
        match layer {
            Some(l) => writeln!(
                out,
                "{what} file: {}",
                cordon_policy::DisplayPath(l.file.clone())
            )?,
            None => writeln!(out, "{what} file: none")?,
        }
    }
    for c in &report.checks {
        let mark = if c.passed { "pass" } else { "FAIL" };
        writeln!(out, "{mark}  {:<28} {}", c.name, c.detail)?;
    }
    let failed = report.checks.iter().filter(|c| !c.passed).count();
    writeln!(out, "{} check(s), {failed} failed", report.checks.len())?;
    Ok(())
}
