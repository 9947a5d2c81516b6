//! Named checks over a configuration, for reviewers: `cordon audit` prints them and fails when one
//! fails. Each check names what it looked at; none of them reads a host path.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::config::{ConfigLayer, Overrides, effective_policy};
use super::modes::{HomeMode, Network, Unavailable};
use super::policy::{PolicyBuilder, Source};
use super::profile::Profile;
use crate::defaults;
use crate::paths::PathSpec;

/// The outcome of one named check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable name, e.g. `network-allowed-in-shell`.
    pub name: &'static str,
    /// Whether the configuration passes it.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// Every check, in a stable order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditReport {
    /// The checks.
    pub checks: Vec<Check>,
}

impl AuditReport {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// Audits the configuration layers as they would combine for a caller with `overrides`
/// (`Overrides::default()` for none; the `--write` roots of `cordon audit`, say). `home` is used
/// to recognise an absolute writable root that is the home directory or above it, `workspace`
/// (the directory audited from) one that holds the workspace; both lexically.
pub fn audit(
    global: Option<&ConfigLayer>,
    project: Option<&ConfigLayer>,
    overrides: &Overrides,
    home: Option<&Path>,
    workspace: Option<&Path>,
) -> AuditReport {
    let mut checks = Vec::new();
    let effective = match effective_policy(global, project, overrides) {
        Ok(e) => {
            checks.push(pass(
                "config-valid",
                "every layer parses and the project file only tightens".into(),
            ));
            Some(e)
        }
        Err(e) => {
            checks.push(fail("config-valid", e.to_string()));
            None
        }
    };
    let Some(effective) = effective else {
        return AuditReport { checks };
    };
    let policy = &effective.policy;

    checks.push(
        if policy.profile() == Profile::Shell && policy.network() == Network::Allowed {
            fail(
                "network-allowed-in-shell",
                "the shell profile may reach the network".into(),
            )
        } else {
            pass(
                "network-allowed-in-shell",
                format!(
                    "network is {} for profile {}",
                    policy.network(),
                    policy.profile()
                ),
            )
        },
    );

    checks.push(if policy.unavailable() == Unavailable::Warn {
        fail(
            "unavailable-warn",
            "commands run unsandboxed when no backend enforces".into(),
        )
    } else {
        pass(
            "unavailable-warn",
            "commands are refused when no backend enforces".into(),
        )
    });

    let broad: Vec<String> = policy
        .writable()
        .iter()
        .filter(|w| is_broad(&w.path, home))
        .map(|w| w.path.to_string())
        .collect();
    checks.push(if broad.is_empty() {
        pass("writable-home-or-system", format!("{} extra writable root(s), none broad", policy.writable().len()))
    } else {
        fail(
            "writable-home-or-system",
            format!("writable roots that are the home directory, an ancestor of it, or a system tree: {}", broad.join(", ")),
        )
    });

    // The host's own caches: a jail that writes one poisons what the host's tools build and
    // install. cordon gives every jail a private cache instead (`CacheLayout`).
    let in_caches: Vec<String> = policy
        .writable()
        .iter()
        .filter_map(|w| {
            let path = match &w.path {
                PathSpec::Absolute(p) => p.clone(),
                PathSpec::Home(rel) => home?.join(rel),
                PathSpec::Relative(_) => return None,
            };
            let cache = host_cache_containing(&path, home?, None)?;
            Some(format!("{} (inside {})", w.path, cache.display()))
        })
        .collect();
    checks.push(if in_caches.is_empty() {
        pass(
            "writable-host-cache",
            "no extra writable root lies in the home directory's caches (jails get cordon's private caches)".into(),
        )
    } else {
        fail(
            "writable-host-cache",
            format!(
                "writable roots inside the host's own caches, which a jail could poison for the host's builds: {}",
                in_caches.join(", ")
            ),
        )
    });

    // A root holding the workspace makes its files writable in every jail; cordon keeps the
    // workspace's protected paths read-only inside it, but everything else of the workspace
    // (and every other repository below the root) is open to every command.
    let holding: Vec<String> = match workspace {
        Some(ws) => policy
            .writable()
            .iter()
            .filter(|w| holds(&w.path, home, ws))
            .map(|w| w.path.to_string())
            .collect(),
        None => Vec::new(),
    };
    checks.push(match workspace {
        None => pass(
            "writable-contains-workspace",
            "no workspace to compare with".into(),
        ),
        Some(ws) if holding.is_empty() => pass(
            "writable-contains-workspace",
            format!(
                "no extra writable root holds the workspace {}",
                ws.display()
            ),
        ),
        Some(ws) => fail(
            "writable-contains-workspace",
            format!(
                "writable roots that hold the workspace {}: {}",
                ws.display(),
                holding.join(", ")
            ),
        ),
    });

    let defaults_policy = PolicyBuilder::new(policy.profile()).build();
    let removed: Vec<String> = defaults_policy
        .masks()
        .difference(policy.masks())
        .map(ToString::to_string)
        .collect();
    checks.push(if removed.is_empty() {
        pass(
            "default-mask-removed",
            format!(
                "all {} default credential masks in force",
                defaults_policy.masks().len()
            ),
        )
    } else {
        fail(
            "default-mask-removed",
            format!("default credential masks removed: {}", removed.join(", ")),
        )
    });

    checks.push(match policy.home() {
        HomeMode::Visible => fail(
            "home-visible",
            "filesystem.home = \"visible\": the whole home directory is readable in the host posture, every credential store the masks do not name included".into(),
        ),
        HomeMode::Hidden => pass(
            "home-visible",
            format!(
                "the home directory is hidden but for the vetted toolchain trees, PATH trees and {} read grant(s)",
                policy.read().len()
            ),
        ),
    });

    let long_running = matches!(
        policy.profile(),
        Profile::LanguageServer | Profile::McpStdio
    );
    checks.push(match policy.limits().timeout_secs {
        None if !long_running => fail(
            "timeout-missing",
            format!("profile {} has no wall-clock timeout", policy.profile()),
        ),
        None => pass(
            "timeout-missing",
            format!("profile {} is long-running by design", policy.profile()),
        ),
        Some(t) => pass("timeout-missing", format!("timeout {t} s")),
    });

    let from_project = effective
        .provenance
        .values()
        .filter(|s| matches!(s, Source::Project(_)))
        .count();
    checks.push(pass(
        "project-layer",
        format!("{from_project} value(s) set by the project file, all tightening"),
    ));

    AuditReport { checks }
}

/// The host's own caches below `home`: a writable root inside one of them lets a jail poison
/// what the host's tools build and install (`cordon audit` fails it: `writable-host-cache`).
const HOST_CACHES_IN_HOME: &[&str] = &[
    ".cache",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/bin",
    ".rustup",
    "go",
    ".npm",
    ".pnpm-store",
    ".local/share/pnpm",
    ".yarn",
    ".gradle",
    ".m2",
    ".ccache",
    ".pyenv",
    ".nvm",
    ".local/share/uv",
];

/// The host cache (below `home`, or `xdg_cache_home` itself) that `path` lies in, if any.
/// Lexical: `path` and `home` are taken as spelled.
fn host_cache_containing(
    path: &Path,
    home: &Path,
    xdg_cache_home: Option<&Path>,
) -> Option<PathBuf> {
    let mut caches: Vec<PathBuf> = HOST_CACHES_IN_HOME.iter().map(|c| home.join(c)).collect();
    caches.extend(xdg_cache_home.map(Path::to_path_buf));
    caches.into_iter().find(|c| path.starts_with(c))
}

fn is_broad(path: &PathSpec, home: Option<&Path>) -> bool {
    match path {
        PathSpec::Home(rel) => rel.as_os_str().is_empty(),
        PathSpec::Absolute(p) => {
            home.is_some_and(|h| h.starts_with(p))
                || defaults::BROAD_DIRS.iter().any(|d| p == Path::new(d))
                || defaults::SYSTEM_TREES.iter().any(|t| p.starts_with(t))
        }
        PathSpec::Relative(_) => false,
    }
}

/// Whether the root `path` is a strict ancestor of `workspace` (lexically; a relative root lies
/// inside the workspace by construction).
fn holds(path: &PathSpec, home: Option<&Path>, workspace: &Path) -> bool {
    let root = match path {
        PathSpec::Absolute(p) => p.clone(),
        PathSpec::Home(rel) => match home {
            Some(h) => h.join(rel),
            None => return false,
        },
        PathSpec::Relative(_) => return false,
    };
    workspace != root && workspace.starts_with(&root)
}

fn pass(name: &'static str, detail: String) -> Check {
    Check {
        name,
        passed: true,
        detail,
    }
}

fn fail(name: &'static str, detail: String) -> Check {
    Check {
        name,
        passed: false,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_caches_are_recognised_lexically() {
        let home = Path::new("/home/u");
        assert_eq!(
            host_cache_containing(Path::new("/home/u/.cache/go-build"), home, None),
            Some(PathBuf::from("/home/u/.cache"))
        );
        assert!(
            host_cache_containing(Path::new("/home/u/.cargo/registry/src"), home, None).is_some()
        );
        assert!(host_cache_containing(Path::new("/home/u/proj"), home, None).is_none());
        assert!(
            host_cache_containing(
                Path::new("/data/cache/x"),
                home,
                Some(Path::new("/data/cache"))
            )
            .is_some()
        );
    }
}
