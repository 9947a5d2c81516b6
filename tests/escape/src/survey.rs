//! Class 3 again, by survey: every credential store of `docs/credential-stores.md` (the table is
//! read from that file, the one place it lives) planted in a fresh home, and stores that the
//! launcher's environment moves out of the home planted where the variables point, and the stores
//! of its second table (beside a `PATH` entry's programs, inside shown toolchain trees) planted
//! with those entries on the jail's `PATH`. No jailed command may read one; with no jail every
//! one is read.

use std::path::PathBuf;

use super::creds::{clear_home, leak, leak_in_workspace};
use super::harness::{Ctx, RunOut, STD_PATH, q};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

/// The survey, as documented.
const SURVEY: &str = include_str!("../../../docs/credential-stores.md");

/// The home-relative paths of the survey's table (`~/` stripped; a trailing `/` kept: a
/// directory).
pub fn survey_paths() -> Vec<String> {
    SURVEY
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split('|').nth(4))
        .filter_map(|cell| {
            cell.trim()
                .strip_prefix("`~/")
                .and_then(|p| p.strip_suffix('`'))
                .map(str::to_owned)
        })
        .collect()
}

pub fn cases() -> Vec<Case> {
    let c = Class::Credentials;
    vec![
        Case::attack(
            "creds/survey-every-store",
            c,
            "read every credential store of docs/credential-stores.md planted in the home (cat, find, cp into the workspace)",
            every_store,
        ),
        Case::attack(
            "creds/survey-shown-trees",
            c,
            "read every store of docs/credential-stores.md's second table: tokens beside a PATH entry's programs (Pulumi, flyctl, Foundry, a global npm prefix, …) with those entries on PATH, configuration inside shown toolchain trees and interpreter prefixes",
            shown_trees,
        ),
        Case::attack(
            "creds/steer-path-walk",
            c,
            "links and #! lines planted in the workspace (a PATH entry there, a host link into it) name stores of the home, so that the next run's PATH walk would show them",
            steer_path_walk,
        ),
        Case::attack(
            "creds/moved-by-environment",
            c,
            "read stores the launcher's environment moved out of the home (GNUPGHOME, DOCKER_CONFIG, KUBECONFIG, XDG_CONFIG_HOME, CARGO_HOME, …)",
            moved,
        ),
    ]
}

/// Plants `what` (a file, or a directory holding one when it ends in `/`) below `base`.
fn plant_store(ctx: &Ctx<'_>, base: &std::path::Path, what: &str) -> Result<PathBuf, String> {
    let path = base.join(what.trim_end_matches('/'));
    if what.ends_with('/') {
        ctx.plant(&path.join("stored"), &ctx.secret(what))?;
    } else {
        ctx.plant(&path, &ctx.secret(what))?;
    }
    Ok(path)
}

/// Reads every path, by every means the shell has, and copies it into the workspace.
fn read_paths(ctx: &Ctx<'_>, paths: &[String]) -> RunOut {
    let _ = ctx.scratch();
    let list = paths.iter().map(|p| q(p)).collect::<Vec<_>>().join(" ");
    ctx.sh_steps(&[
        &format!(
            "n=0; for f in {list}; do n=$((n+1)); cat \"$f\" 2>/dev/null; find \"$f\" -type f -exec cat {{}} + 2>/dev/null; \
             cp -r \"$f\" ./scratch/copied-$n 2>/dev/null; done; true"
        ),
        "ls -laR ~ 2>/dev/null | head -c 200000 >/dev/null",
    ])
}

fn judge(ctx: &Ctx<'_>, out: &RunOut, planted: usize) -> Outcome {
    let mut seen = leak(ctx, &out.all());
    seen.extend(leak_in_workspace(ctx));
    ctx.judge(
        out,
        !seen.is_empty(),
        if seen.is_empty() {
            format!("{planted} store(s) planted, none read")
        } else {
            format!("{} read, e.g. {:?}", seen.len(), &seen[..seen.len().min(5)])
        },
    )
}

fn every_store(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let rows = survey_paths();
    if rows.len() < 100 {
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "harness: docs/credential-stores.md lists {} stores, fewer than 100",
                rows.len()
            ),
        );
    }
    let mut planted = Vec::new();
    for r in &rows {
        match plant_store(ctx, &ctx.home, r) {
            Ok(p) => planted.push(p.display().to_string()),
            Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
        }
    }
    let out = read_paths(ctx, &planted);
    judge(ctx, &out, planted.len())
}

/// The rows of the survey's second table: its id, the store (home-relative, `~/` stripped) and
/// what shows its tree (`PATH ~/x/bin`, `interpreter prefix ~/p`, `vetted ~/t`).
pub fn shown_rows() -> Vec<(String, String, String)> {
    SURVEY
        .lines()
        .filter(|l| l.starts_with("| S") && l[3..].starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let store = cells.get(3)?.trim_matches('`').strip_prefix("~/")?;
            Some((
                cells.get(1)?.to_string(),
                store.to_owned(),
                cells.get(4)?.replace('`', ""),
            ))
        })
        .collect()
}

/// Plants an executable file.
fn plant_program(ctx: &Ctx<'_>, path: &std::path::Path, text: &str) -> Result<(), String> {
    ctx.plant(path, text)?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// Plants what shows a row's tree (a program in a `PATH` entry, a script whose interpreter lies
/// in a prefix) and gives the `PATH` entry to add, if any.
fn plant_shown_by(ctx: &Ctx<'_>, id: &str, by: &str) -> Result<Option<PathBuf>, String> {
    let at = |p: &str| ctx.home.join(p.trim_start_matches("~/"));
    if let Some(entry) = by.strip_prefix("PATH ") {
        let dir = at(entry);
        plant_program(
            ctx,
            &dir.join(format!("prog-{id}")),
            "#!/bin/sh
echo ran
",
        )?;
        Ok(Some(dir))
    } else if let Some(prefix) = by.strip_prefix("interpreter prefix ") {
        let bin = at(prefix).join("bin");
        let interp = bin.join("interp");
        plant_program(
            ctx,
            &bin.join(format!("tool-{id}")),
            &format!(
                "#!{}
echo ran
",
                interp.display()
            ),
        )?;
        if !interp.exists() {
            std::os::unix::fs::symlink("/bin/sh", &interp)
                .map_err(|e| format!("cannot link {}: {e}", interp.display()))?;
            ctx.own(&interp)?;
        }
        Ok(Some(bin))
    } else if by.starts_with("vetted ") {
        Ok(None)
    } else {
        Err(format!("{id}: unknown shown-by {by:?}"))
    }
}

fn shown_trees(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let rows = shown_rows();
    if rows.len() < 20 {
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "harness: docs/credential-stores.md's second table lists {} stores, fewer than 20",
                rows.len()
            ),
        );
    }
    let mut planted = Vec::new();
    let mut entries: Vec<String> = Vec::new();
    for (id, store, by) in &rows {
        let shown = plant_store(ctx, &ctx.home, store).and_then(|p| {
            planted.push(p.display().to_string());
            plant_shown_by(ctx, id, by)
        });
        match shown {
            Ok(Some(dir)) => entries.push(dir.display().to_string()),
            Ok(None) => {}
            Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
        }
    }
    entries.dedup();
    let _ = ctx.scratch();
    let list = planted.iter().map(|p| q(p)).collect::<Vec<_>>().join(" ");
    let out = ctx
        .cordon()
        .path(&format!("{}:{STD_PATH}", entries.join(":")))
        .steps(&[
            &format!(
                "n=0; for f in {list}; do n=$((n+1)); cat \"$f\" 2>/dev/null; find \"$f\" -type f -exec cat {{}} + 2>/dev/null; \
                 cp -r \"$f\" ./scratch/shown-$n 2>/dev/null; done; true"
            ),
            "ls -laR ~ 2>/dev/null | head -c 200000 >/dev/null",
        ])
        .run();
    judge(ctx, &out, planted.len())
}

fn steer_path_walk(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let secret = ctx.home.join(".tea/config.yml");
    let beside = ctx.home.join(".tea/secret");
    let interp = ctx.home.join(".tea/bin/x");
    let bin = ctx.work.join("planted-bin");
    let link = |target: &std::path::Path, at: &std::path::Path| -> Result<(), String> {
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("mkdir: {e}"))?;
        }
        std::os::unix::fs::symlink(target, at)
            .map_err(|e| format!("cannot link {}: {e}", at.display()))?;
        ctx.own(at)
    };
    let planted = ctx
        .plant(&secret, &ctx.secret("tea-config"))
        .and_then(|()| ctx.plant(&beside, &ctx.secret("tea-beside")))
        .and_then(|()| plant_program(ctx, &interp, "#!/bin/sh\ncat \"$1\"\n"))
        // What a jailed command can leave in the workspace: a link in a PATH entry there, a
        // script whose #! names a program beside the store.
        .and_then(|()| link(&secret, &bin.join("x")))
        .and_then(|()| plant_program(ctx, &bin.join("s"), &format!("#!{}\n", interp.display())))
        // The host's own link into the workspace, which a planted link continues.
        .and_then(|()| link(&ctx.work.join("tool"), &ctx.home.join(".local/bin/tool")))
        .and_then(|()| link(&beside, &ctx.work.join("tool")));
    if let Err(e) = planted {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let _ = ctx.scratch();
    let files = [&secret, &beside]
        .iter()
        .map(|p| q(&p.display().to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let out = ctx
        .cordon()
        .path(&format!(
            "{}:{}:{STD_PATH}",
            bin.display(),
            ctx.home.join(".local/bin").display()
        ))
        .steps(&[&format!(
            "for f in {files}; do cat \"$f\" 2>/dev/null; cp \"$f\" ./scratch/ 2>/dev/null; done; \
             cat {} 2>/dev/null; true",
            q(&ctx.home.join(".tea").display().to_string())
        )])
        .run();
    // The planted links themselves point at the stores: only what the run printed or copied
    // into the scratch directory counts, not the links left in the workspace.
    let mut seen = leak(ctx, &out.all());
    seen.extend(
        leak_in_workspace(ctx)
            .into_iter()
            .filter(|p| p.contains("/scratch/")),
    );
    ctx.judge(
        &out,
        !seen.is_empty(),
        if seen.is_empty() {
            "2 stores named by planted links and #! lines, none read".to_owned()
        } else {
            format!("read: {:?}", &seen[..seen.len().min(5)])
        },
    )
}

/// Each variable, the store it names (below `outside/moved`), and what is planted there.
const MOVED: &[(&str, &str, &str)] = &[
    ("GNUPGHOME", "gnupg", "gnupg/private-keys-v1.d/key.key"),
    ("DOCKER_CONFIG", "docker", "docker/config.json"),
    (
        "AWS_SHARED_CREDENTIALS_FILE",
        "aws-credentials",
        "aws-credentials",
    ),
    ("AWS_CONFIG_FILE", "aws-config", "aws-config"),
    ("KUBECONFIG", "kube-a:KUBE-B", "kube-a"),
    ("XDG_CONFIG_HOME", "xdg-config", "xdg-config/gh/hosts.yml"),
    (
        "XDG_DATA_HOME",
        "xdg-data",
        "xdg-data/keyrings/login.keyring",
    ),
    ("XDG_STATE_HOME", "xdg-state", "xdg-state/zsh/history"),
    ("CARGO_HOME", "cargo", "cargo/credentials.toml"),
    ("HF_HOME", "hf", "hf/token"),
    ("RCLONE_CONFIG", "rclone.conf", "rclone.conf"),
    ("NETRC", "netrc", "netrc"),
    ("PGPASSFILE", "pgpass", "pgpass"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "sa.json", "sa.json"),
    ("SOPS_AGE_KEY_FILE", "age.txt", "age.txt"),
    ("PASSWORD_STORE_DIR", "pass", "pass/email.gpg"),
];

fn moved(ctx: &Ctx<'_>) -> Outcome {
    let base = ctx.outside.join("moved");
    let mut run = ctx.cordon();
    let mut planted = Vec::new();
    for (variable, value, store) in MOVED {
        let value = value
            .split(':')
            .map(|v| base.join(v.to_lowercase()).display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        run = run.env(variable, &value);
        match plant_store(ctx, &base, store) {
            Ok(p) => planted.push(p.display().to_string()),
            Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
        }
    }
    // The second KUBECONFIG entry too.
    if let Err(e) = plant_store(ctx, &base, "kube-b") {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    planted.push(base.join("kube-b").display().to_string());
    let _ = ctx.scratch();
    let list = planted.iter().map(|p| q(p)).collect::<Vec<_>>().join(" ");
    let out = run
        .steps(&[
            &format!(
                "n=0; for f in {list}; do n=$((n+1)); cat \"$f\" 2>/dev/null; find \"$f\" -type f -exec cat {{}} + 2>/dev/null; \
                 cp -r \"$f\" ./scratch/moved-$n 2>/dev/null; done; true"
            ),
            &format!("ls -laR {} 2>/dev/null >/dev/null; true", q(&base.display().to_string())),
        ])
        .run();
    judge(ctx, &out, planted.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_second_table_has_rows_each_shown_by_a_known_kind() {
        let rows = super::shown_rows();
        assert!(rows.len() >= 20, "{}", rows.len());
        for (id, store, by) in &rows {
            assert!(!store.is_empty() && !store.ends_with('/'), "{id}");
            assert!(
                ["PATH ~/", "interpreter prefix ~/", "vetted ~/"]
                    .iter()
                    .any(|k| by.starts_with(k)),
                "{id}: {by}"
            );
        }
    }

    #[test]
    fn the_survey_has_at_least_a_hundred_distinct_home_paths() {
        let rows = super::survey_paths();
        assert!(rows.len() >= 100, "{}", rows.len());
        let mut sorted = rows.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), rows.len(), "a store listed twice");
        // No store is planted inside another that is a file.
        for a in &rows {
            for b in &rows {
                assert!(
                    a == b || a.ends_with('/') || !b.starts_with(&format!("{a}/")),
                    "{b} lies inside the file {a}"
                );
            }
        }
    }
}
