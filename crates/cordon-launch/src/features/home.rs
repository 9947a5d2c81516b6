//! The workspace's private home (`cordon_policy::Plan::private_home`) on the host and in the
//! environment.
//!
//! Where the backend has no mount namespace (the Landlock backend, Seatbelt) the home cannot be
//! replaced at its own path, so `HOME` names the private home's real path, a writable root of
//! the plan. Under bubblewrap the private home is bound at the home's own path (`cordon-bwrap`)
//! and `HOME` keeps its value; the symlinks the plan recreates below the home
//! (`~/.cargo -> /data/cargo`) are made here, in the private home, before the jail starts:
//! the home persists, and bubblewrap 0.8 refuses `--symlink` over an existing link, so the
//! generator leaves them to this feature. A wrong link there (a jail's) is replaced; anything
//! else in its place refuses the run with the path.
//!
//! rustup finds its toolchains through `$HOME/.rustup` when `RUSTUP_HOME` is unset; with `HOME`
//! moved it would find none, so `RUSTUP_HOME` names the host's `~/.rustup` (a vetted tree,
//! readable in the jail) when it exists and nobody set the variable. Other tools that find their
//! own installation through `HOME` rather than `PATH` are docs/home.md's known limit.
//!
//! Recovery: nothing is made for a run alone; the links belong to the private home, created
//! with the caches (`caches.rs`).

use std::path::PathBuf;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::env::EnvSource;
use super::{Arguments, Feature, Host, Run};
use crate::error::LaunchError;

/// The feature, for a run whose home is the workspace's private home.
struct PrivateHome {
    home: PathBuf,
    /// `HOME` names the private home (a backend without a mount namespace).
    named: bool,
    rustup: Option<PathBuf>,
    /// The plan's symlinks below the home: (path below the private home, stored target).
    links: Vec<(PathBuf, PathBuf)>,
}

/// Planning: joins when the plan has a private home.
pub(crate) fn plan(run: &Run<'_>, _refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    let home = run.plan.private_home()?.to_path_buf();
    let named = run.backend.runs_stage_in_place();
    let rustup = Some(run.plan.home.join(".rustup")).filter(|r| named && r.is_dir());
    let links = if named {
        Vec::new()
    } else {
        run.plan
            .symlinks
            .iter()
            .filter_map(|s| {
                let rel = s.link.strip_prefix(&run.plan.home).ok()?;
                Some((rel.to_path_buf(), s.target.clone()))
            })
            .collect()
    };
    Some(Box::new(PrivateHome {
        home,
        named,
        rustup,
        links,
    }))
}

impl PrivateHome {
    /// Each link in the private home, made where missing, replaced where a different link is.
    fn make_links(&self) -> Result<(), LaunchError> {
        let what = |rel: &std::path::Path| {
            format!(
                "making the link {} in the private home",
                self.home.join(rel).display()
            )
        };
        let root = rustix::fs::open(
            &self.home,
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::empty(),
        )
        .map_err(|e| LaunchError::io(what(std::path::Path::new("")))(e.into()))?;
        for (rel, target) in &self.links {
            let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
                continue;
            };
            let dir = super::caches::walk_down(&root, parent, &self.home)
                .map_err(|e| LaunchError::io(what(rel))(std::io::Error::other(e.to_string())))?
                .ok_or_else(|| {
                    LaunchError::io(what(rel))(std::io::Error::other(
                        "a component on the way is not a directory (`cordon cache clear` resets the private home)",
                    ))
                })?;
            match rustix::fs::symlinkat(target, &dir, name) {
                Ok(()) => continue,
                Err(Errno::EXIST) => {}
                Err(e) => return Err(LaunchError::io(what(rel))(e.into())),
            }
            match rustix::fs::readlinkat(&dir, name, Vec::new()) {
                Ok(stored) if stored.as_bytes() == target.as_os_str().as_encoded_bytes() => {}
                Ok(_) => {
                    rustix::fs::unlinkat(&dir, name, AtFlags::empty())
                        .and_then(|()| rustix::fs::symlinkat(target, &dir, name))
                        .map_err(|e| LaunchError::io(what(rel))(e.into()))?;
                }
                Err(_) => {
                    return Err(LaunchError::io(what(rel))(std::io::Error::other(
                        "something that is not a link is in its place (`cordon cache clear` resets the private home)",
                    )));
                }
            }
        }
        Ok(())
    }
}

impl Feature for PrivateHome {
    fn name(&self) -> &'static str {
        "home"
    }

    fn prepare_host(&mut self, run: &Run<'_>, _host: &mut Host) -> Result<(), LaunchError> {
        if run.dry || self.links.is_empty() {
            return Ok(());
        }
        self.make_links()
    }

    fn arguments(
        &mut self,
        _run: &Run<'_>,
        _host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        if !self.named {
            return Ok(());
        }
        // A path that is not UTF-8 cannot be a value of the table; the plan refuses such a
        // cache base already (`CacheLayout::for_workspace`), so this is never taken.
        let Some(home) = self.home.to_str() else {
            return Ok(());
        };
        args.env.set("HOME", home, EnvSource::PrivateHome);
        if let Some(rustup) = self.rustup.as_deref().and_then(|r| r.to_str())
            && !args.env.contains("RUSTUP_HOME")
        {
            args.env.set("RUSTUP_HOME", rustup, EnvSource::PrivateHome);
        }
        Ok(())
    }
}
