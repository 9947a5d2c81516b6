//! `cordon policy show`: the effective policy, where each value came from, and its plan here.

use std::collections::BTreeMap;
use std::io::Write;

use cordon_policy::DisplayPath;
use cordon_policy::Overrides;
use cordon_policy::{Limits, Plan, Policy, Source};
use serde::Serialize;

use crate::cli::ShowArgs;
use crate::context::Context;
use crate::error::CliError;

#[derive(Serialize)]
struct Sourced {
    value: String,
    source: String,
}

#[derive(Serialize)]
struct Report<'a> {
    profile: Sourced,
    posture: Sourced,
    network: Sourced,
    /// `network.allow` (proxy mode), absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    network_allow: Vec<Sourced>,
    unavailable: Sourced,
    home: Sourced,
    read: Vec<Sourced>,
    limits: BTreeMap<&'static str, Sourced>,
    writable: Vec<Sourced>,
    credential_masks: Vec<Sourced>,
    protected: Vec<Sourced>,
    env_pass: Vec<Sourced>,
    /// Names only: explicit values may be secrets.
    env_set: Vec<Sourced>,
    policy_hash: String,
    /// The workspace's private home (the jail's writable home), when the plan hides the real
    /// home: where it is, and whether a run has made it yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    private_home: Option<PrivateHomeRow>,
    plan: &'a Plan,
}

/// `private_home` of `cordon policy show --json`.
#[derive(Debug, Serialize)]
struct PrivateHomeRow {
    path: String,
    exists: bool,
}

/// The workspace's private home: the plan's when it exists, else where the first run makes it
/// (the host posture with the home hidden and a cache base).
fn private_home(plan: &Plan, cache_base: Option<&std::path::Path>) -> Option<PrivateHomeRow> {
    if let Some(p) = plan.private_home() {
        return Some(PrivateHomeRow {
            path: DisplayPath(p.to_path_buf()).to_string(),
            exists: true,
        });
    }
    let hidden = plan.posture == cordon_policy::Posture::Host
        && plan.home_access == cordon_policy::HomeMode::Hidden
        && plan.private_dirs.contains(&plan.home);
    let base = cache_base.filter(|_| hidden && plan.caches.is_none())?;
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let key = cordon_policy::CacheLayout::workspace_key(&plan.workspace);
    Some(PrivateHomeRow {
        path: DisplayPath(base.join(format!("{key}{}", cordon_policy::CacheLayout::HOME_SUFFIX)))
            .to_string(),
        exists: false,
    })
}

/// Runs `cordon policy show`.
pub fn run(args: &ShowArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let ctx = Context::from_process(args.cwd.as_deref())?;
    let overrides = Overrides {
        profile: args.profile,
        ..Overrides::default()
    };
    let effective = ctx.effective(&overrides)?;
    let plan = ctx.plan(&effective.policy)?;
    let mut report = report(&effective.policy, &effective.provenance, &plan);
    report.private_home = private_home(&plan, ctx.cache_base.as_deref());
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&report, out)?;
    }
    Ok(())
}

fn report<'a>(
    policy: &Policy,
    provenance: &BTreeMap<String, Source>,
    plan: &'a Plan,
) -> Report<'a> {
    let source_of = |key: &str| -> String {
        provenance
            .get(key)
            .map_or_else(|| "profile".to_owned(), ToString::to_string)
    };
    let sourced = |value: String, key: &str| Sourced {
        value,
        source: source_of(key),
    };
    let limits = limit_rows(policy.limits())
        .into_iter()
        .map(|(name, value)| {
            let key = format!("limits.{name}");
            let source = provenance
                .get(&key)
                .or_else(|| provenance.get("limits"))
                .map_or_else(|| "profile".to_owned(), ToString::to_string);
            (name, Sourced { value, source })
        })
        .collect();
    let mut writable = vec![Sourced {
        value: format!("{} (the workspace)", DisplayPath(plan.workspace.clone())),
        source: "invocation".into(),
    }];
    writable.extend(policy.writable().iter().map(|w| {
        sourced(
            w.path.to_string(),
            &format!("filesystem.writable:{}", w.path),
        )
    }));
    Report {
        profile: sourced(policy.profile().to_string(), "profile"),
        posture: sourced(policy.posture().to_string(), "posture"),
        network: sourced(policy.network().to_string(), "network.mode"),
        network_allow: policy
            .network_allow()
            .iter()
            .map(|e| sourced(e.clone(), &format!("network.allow:{e}")))
            .collect(),
        unavailable: sourced(policy.unavailable().to_string(), "backend.unavailable"),
        home: sourced(policy.home().to_string(), "filesystem.home"),
        read: policy
            .read()
            .iter()
            .map(|r| sourced(r.to_string(), &format!("filesystem.read:{r}")))
            .collect(),
        limits,
        writable,
        credential_masks: policy
            .masks()
            .iter()
            .map(|m| sourced(m.to_string(), &format!("filesystem.deny_read:{m}")))
            .collect(),
        protected: policy
            .protected()
            .iter()
            .map(|p| sourced(p.to_string(), &format!("filesystem.deny_write:{p}")))
            .collect(),
        env_pass: policy
            .env()
            .pass
            .iter()
            .map(|n| sourced(n.clone(), &format!("env.pass:{n}")))
            .collect(),
        env_set: policy
            .env()
            .set
            .keys()
            .map(|n| sourced(n.clone(), &format!("env.set:{n}")))
            .collect(),
        policy_hash: policy.hash().to_string(),
        private_home: None,
        plan,
    }
}

/// Limits as (configuration key, shown value) rows; `none` means unlimited.
pub fn limit_rows(limits: &Limits) -> Vec<(&'static str, String)> {
    let show = |v: Option<u64>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
    vec![
        ("cpu_secs", show(limits.cpu_secs)),
        ("file_size_bytes", show(limits.file_size_bytes)),
        ("open_files", show(limits.open_files)),
        ("processes", show(limits.processes)),
        ("address_space_bytes", show(limits.address_space_bytes)),
        ("tmp_bytes", show(limits.tmp_bytes)),
        ("memory_bytes", show(limits.memory_bytes)),
        ("timeout_secs", show(limits.timeout_secs)),
        ("output_cap_bytes", limits.output_cap_bytes.to_string()),
    ]
}

fn print_text(r: &Report<'_>, out: &mut dyn Write) -> Result<(), CliError> {
    let row = |out: &mut dyn Write, indent: &str, name: &str, s: &Sourced| -> std::io::Result<()> {
        writeln!(out, "{indent}{name:<22}{:<40} ({})", s.value, s.source)
    };
    row(out, "", "profile", &r.profile)?;
    row(out, "", "posture", &r.posture)?;
    row(out, "", "network", &r.network)?;
    for s in &r.network_allow {
        row(out, "  ", "allow", s)?;
    }
    row(out, "", "backend.unavailable", &r.unavailable)?;
    row(out, "", "filesystem.home", &r.home)?;
    writeln!(out, "limits")?;
    for (name, s) in &r.limits {
        row(out, "  ", name, s)?;
    }
    let list = |out: &mut dyn Write, title: &str, items: &[Sourced]| -> std::io::Result<()> {
        writeln!(out, "{title} ({})", items.len())?;
        for s in items {
            writeln!(out, "  {:<60} ({})", s.value, s.source)?;
        }
        Ok(())
    };
    list(out, "writable roots", &r.writable)?;
    list(out, "read grants", &r.read)?;
    list(out, "credential masks", &r.credential_masks)?;
    list(out, "protected paths", &r.protected)?;
    list(out, "env passed by name", &r.env_pass)?;
    list(out, "env set explicitly (values hidden)", &r.env_set)?;
    writeln!(out, "policy hash {}", r.policy_hash)?;
    let plan = r.plan;
    writeln!(out, "on this host")?;
    writeln!(out, "  cwd {}", DisplayPath(plan.cwd.clone()))?;
    match plan.home_access {
        _ if let Some(private) = &r.private_home => writeln!(
            out,
            "  home      {} hidden: the workspace's private home {}{} (writable, kept between runs) but for the trees below",
            DisplayPath(plan.home.clone()),
            private.path,
            if private.exists {
                ""
            } else {
                ", made by the first run"
            }
        )?,
        cordon_policy::HomeMode::Hidden if plan.private_dirs.contains(&plan.home) => writeln!(
            out,
            "  home      {} hidden: a private, empty directory but for the trees below",
            DisplayPath(plan.home.clone())
        )?,
        _ => writeln!(
            out,
            "  home      {} visible{}",
            DisplayPath(plan.home.clone()),
            if plan.posture == cordon_policy::Posture::Minimal {
                " only through the minimal posture's trees"
            } else {
                " (read-only, minus the masks)"
            }
        )?,
    }
    for t in &plan.home_trees {
        writeln!(
            out,
            "  home tree {} ({})",
            DisplayPath(t.path.clone()),
            t.why
        )?;
    }
    writeln!(
        out,
        "  stores moved by the environment ({})",
        plan.relocated.len()
    )?;
    for r in &plan.relocated {
        writeln!(
            out,
            "    {}={} {}",
            r.variable,
            DisplayPath(r.path.clone()),
            r.outcome
        )?;
    }
    for w in &plan.writable {
        writeln!(out, "  writable  {}", DisplayPath(w.clone()))?;
    }
    for p in &plan.protected {
        writeln!(out, "  read-only {}", DisplayPath(p.path.clone()))?;
    }
    for m in &plan.masks {
        writeln!(out, "  masked    {}", DisplayPath(m.target.clone()))?;
    }
    writeln!(
        out,
        "  {} mask(s) and protected path(s) not present on this host (see --json for the list)",
        plan.skipped.len()
    )?;
    Ok(())
}
