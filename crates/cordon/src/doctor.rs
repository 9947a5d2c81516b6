//! `cordon doctor`: what enforces here, how that was proven, and counts — never values.

use std::collections::BTreeMap;
use std::io::Write;

use cordon_launch::{BackendReport, Launcher, ProbeOutcome, StageReport};
use cordon_policy::Overrides;
use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::context::Context;
use crate::error::CliError;
use crate::policy_show::limit_rows;

#[derive(Serialize)]
struct Doctor {
    enforcing: bool,
    backend: Option<String>,
    probes: Vec<ProbeOutcome>,
    backends: Vec<BackendReport>,
    /// Where the stage binary (this cordon) is, and whether each backend's jail can execute it.
    stage: Vec<StageReport>,
    seccomp_filter_version: u32,
    seccomp_arch: Option<String>,
    user_namespaces: BTreeMap<&'static str, String>,
    /// When bubblewrap cannot start here: which layer refuses it, the one change that would let
    /// it start, and what the fallback does not do (`null` when bubblewrap enforces).
    namespaces: Option<cordon_launch::NamespaceDiagnosis>,
    profile: String,
    limits: BTreeMap<&'static str, String>,
    /// What bounds the jail's memory and its private temporary filesystems here.
    resources: BTreeMap<&'static str, String>,
    counts: Counts,
    /// The session preparation's walk of the writable roots (Launcher::prepare).
    preparation: Option<cordon_launch::PreparationReport>,
    plan_error: Option<String>,
}

#[derive(Serialize, Default)]
struct Counts {
    writable_roots: usize,
    credential_masks: usize,
    masks_not_present: usize,
    protected_paths: usize,
    env_host_variables: usize,
    env_passed: usize,
    env_dropped: BTreeMap<String, usize>,
}

/// Runs `cordon doctor`; returns whether a backend enforces.
pub fn run(args: &DoctorArgs, out: &mut dyn Write) -> Result<bool, CliError> {
    let ctx = Context::from_process(None)?;
    let overrides = Overrides {
        profile: args.profile,
        ..Overrides::default()
    };
    let effective = ctx.effective(&overrides)?;
    let exe = std::env::current_exe().map_err(CliError::CurrentDir)?;
    let launcher = Launcher::linux(Launcher::default_config(
        exe,
        ctx.home.clone(),
        std::env::var_os("XDG_CACHE_HOME"),
    ));
    let (backend, probes) = launcher.select();

    let mut counts = Counts::default();
    let mut plan_error = None;
    let mut preparation = None;
    let mut stage = Vec::new();
    match ctx.plan(&effective.policy) {
        Ok(plan) => {
            stage = launcher.stage_reports(&plan);
            match cordon_launch::Preparation::walk(&plan) {
                Ok(p) => preparation = Some(p.report()),
                Err(e) => plan_error = Some(format!("the preparation walk failed: {e}")),
            }
            counts.writable_roots = plan.writable.len();
            counts.credential_masks = plan.masks.len();
            counts.protected_paths = plan.protected.len();
            counts.masks_not_present = plan
                .skipped
                .iter()
                .filter(|s| s.reason == cordon_policy::SkipReason::MaskMissing)
                .count();
            let host = cordon_env::host_snapshot();
            counts.env_host_variables = host.len();
            if let Ok(child) = cordon_env::ChildEnv::build(host, &plan.env) {
                counts.env_passed = child.vars.len();
                counts.env_dropped = child
                    .dropped_counts()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
            }
        }
        Err(e) => plan_error = Some(format!("{e} (counts are for the current directory)")),
    }
    let mut userns = BTreeMap::new();
    for (name, file) in [
        ("max_user_namespaces", "/proc/sys/user/max_user_namespaces"),
        (
            "unprivileged_userns_clone",
            "/proc/sys/kernel/unprivileged_userns_clone",
        ),
        (
            "apparmor_restrict_unprivileged_userns",
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        ),
    ] {
        let value = std::fs::read_to_string(file)
            .map_or_else(|_| "absent".to_owned(), |v| v.trim().to_owned());
        userns.insert(name, value);
    }
    let reports = launcher.reports();
    let bwrap_report = reports.iter().find(|b| b.name == "bubblewrap");
    let bwrap_failure = probes
        .iter()
        .find(|p| p.backend == "bubblewrap")
        .filter(|p| !p.enforcing)
        .map(|p| p.detail.clone())
        .or_else(|| {
            bwrap_report.and_then(|b| b.unusable.clone()).filter(|_| {
                !probes
                    .iter()
                    .any(|p| p.backend == "bubblewrap" && p.enforcing)
            })
        });
    let bwrap_path = bwrap_report
        .and_then(|b| b.binary.as_deref())
        .map(std::path::PathBuf::from);
    let namespaces = cordon_launch::diagnose_namespaces(&cordon_launch::NamespaceFacts::read(
        bwrap_path.as_deref(),
        bwrap_failure,
    ));
    let limits = effective.policy.limits();
    let mut resources = BTreeMap::new();
    resources.insert(
        "memory",
        match (limits.memory_bytes, cordon_launch::memory_group()) {
            (None, _) => "not bounded: limits.memory_bytes is unset".to_owned(),
            (Some(n), Ok(parent)) => format!(
                "{n} bytes for the whole jail (limits.memory_bytes), in a memory control group made in {}",
                parent.display()
            ),
            (Some(_), Err(why)) => format!(
                "NOT bounded for this user: {why}; only the private tmpfs sizes bound it"
            ),
        },
    );
    let sized = reports
        .iter()
        .find(|b| b.name == "bubblewrap")
        .is_some_and(|b| {
            b.unusable.is_none() && !b.degradations.iter().any(|d| d.contains("--size"))
        });
    resources.insert(
        "tmp",
        match (limits.tmp_bytes, sized) {
            (Some(n), true) => format!(
                "each private tmpfs of a bubblewrap jail (/tmp, /var/tmp, /run, /dev/shm) holds at most {n} bytes (limits.tmp_bytes); the Landlock backend's TMPDIR is on disk"
            ),
            (Some(_), false) => "NOT sized: bubblewrap cannot set a tmpfs size (--size) or is unusable".to_owned(),
            (None, _) => "not sized: limits.tmp_bytes is unset".to_owned(),
        },
    );
    let report = Doctor {
        enforcing: backend.is_some(),
        backend: backend.map(|b| b.name().to_owned()),
        probes,
        backends: reports,
        stage,
        seccomp_filter_version: cordon_seccomp::FILTER_VERSION,
        seccomp_arch: cordon_seccomp::Arch::host().ok().map(|a| a.to_string()),
        user_namespaces: userns,
        namespaces,
        profile: effective.policy.profile().to_string(),
        limits: limit_rows(limits).into_iter().collect(),
        resources,
        counts,
        preparation,
        plan_error,
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&report, out)?;
    }
    Ok(report.enforcing)
}

fn print_text(r: &Doctor, out: &mut dyn Write) -> Result<(), CliError> {
    let verdict = if r.enforcing {
        "enforcing"
    } else {
        "NOT ENFORCING: every run is refused"
    };
    writeln!(out, "cordon doctor: {verdict}")?;
    for p in &r.probes {
        writeln!(
            out,
            "probe     {} enforcing={} ({}): {}",
            p.backend, p.enforcing, p.source, p.detail
        )?;
    }
    for b in &r.backends {
        writeln!(
            out,
            "backend   {} {} {}",
            b.name,
            b.binary.as_deref().unwrap_or("-"),
            b.version.as_deref().unwrap_or("")
        )?;
        for f in &b.features {
            writeln!(out, "  feature {f}")?;
        }
        for d in &b.degradations {
            writeln!(out, "  degraded {d}")?;
        }
        if let Some(u) = &b.unusable {
            writeln!(out, "  unusable: {u}")?;
        }
    }
    for s in &r.stage {
        match &s.refused {
            None => writeln!(
                out,
                "stage     {} {}: executable ({})",
                s.backend, s.path, s.how
            )?,
            Some(why) => writeln!(out, "stage     {} {}: REFUSED: {why}", s.backend, s.path)?,
        }
    }
    writeln!(
        out,
        "seccomp   filter version {} for {}",
        r.seccomp_filter_version,
        r.seccomp_arch
            .as_deref()
            .unwrap_or("an unsupported architecture")
    )?;
    for (k, v) in &r.user_namespaces {
        writeln!(out, "userns    {k} = {v}")?;
    }
    if let Some(d) = &r.namespaces {
        writeln!(
            out,
            "refused   bubblewrap cannot start here: {} ({})",
            d.layer, d.evidence
        )?;
        writeln!(out, "  change  {}", d.change)?;
        for l in &d.fallback_lacks {
            writeln!(out, "  lacks   {l}")?;
        }
    }
    writeln!(out, "profile   {}", r.profile)?;
    for (k, v) in &r.limits {
        writeln!(out, "limit     {k} = {v}")?;
    }
    for (k, v) in &r.resources {
        writeln!(out, "bound     {k}: {v}")?;
    }
    let c = &r.counts;
    writeln!(
        out,
        "counts    {} writable root(s), {} credential mask(s) in force, {} not present, {} protected path(s)",
        c.writable_roots, c.credential_masks, c.masks_not_present, c.protected_paths
    )?;
    writeln!(
        out,
        "env       {} host variable(s), {} passed, dropped by reason: {:?}",
        c.env_host_variables, c.env_passed, c.env_dropped
    )?;
    if let Some(p) = &r.preparation {
        writeln!(
            out,
            "prepare   {} root(s): {} dir(s), {} file(s) walked in {:.1} ms, once per session; {}",
            p.roots.len(),
            p.counts.dirs,
            p.counts.files,
            p.took_ms,
            if p.findings_total == 0 {
                "nothing refused".to_owned()
            } else {
                format!(
                    "REFUSED ({} finding(s)), first: {}",
                    p.findings_total,
                    p.findings.join("; ")
                )
            }
        )?;
    }
    if let Some(e) = &r.plan_error {
        writeln!(out, "note      {e}")?;
    }
    Ok(())
}
