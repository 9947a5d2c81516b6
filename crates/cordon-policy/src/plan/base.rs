//! The posture's base: the private directories of every jail, and on the minimal posture the
//! vetted system and toolchain trees (read-only) with the symlinks that lead to them.

use std::path::{Path, PathBuf};

use super::Plan;
use super::host::{EntryKind, HostFacts};
use super::parts::{Bind, Symlink};
use super::roots::minimal_cover;
use crate::defaults;
use crate::model::modes::{Network, Posture};
use crate::paths::is_within;

impl Plan {
    /// Adds the posture's private directories, and on the minimal posture its read-only trees
    /// and their symlinks; on the host posture with the network, a `resolv.conf` that points into
    /// a private directory.
    pub(super) fn add_base(&mut self, host: &dyn HostFacts) {
        for dir in defaults::PRIVATE_DIRS {
            let dir = Path::new(dir);
            let exists = host.resolved_kind(dir) == Some(EntryKind::Dir);
            // On the host posture the root is the host's, read-only: bubblewrap can only mount a
            // private directory where one exists. On the minimal posture the root is empty.
            if self.posture == Posture::Minimal || exists {
                let dir = host.canonicalize(dir).unwrap_or_else(|| dir.to_path_buf());
                self.private_dirs.push(dir);
            }
        }
        match self.posture {
            Posture::Host => {
                if self.network == Network::Allowed {
                    // A resolv.conf that points into /run would vanish under the private /run.
                    let resolv = Path::new("/etc/resolv.conf");
                    if let Some(target) = host.canonicalize(resolv)
                        && self.private_dirs.iter().any(|d| is_within(&target, d))
                    {
                        self.read_only.push(Bind {
                            source: target.clone(),
                            dest: target,
                        });
                    }
                }
            }
            Posture::Minimal => {
                self.private_dirs.push(self.home.clone());
                let mut wanted: Vec<PathBuf> = defaults::MINIMAL_SYSTEM_TREES
                    .iter()
                    .map(PathBuf::from)
                    .collect();
                wanted.extend(
                    defaults::MINIMAL_HOME_TREES
                        .iter()
                        .map(|t| self.home.join(t)),
                );
                let mut symlinks = Vec::new();
                let mut binds: Vec<PathBuf> = Vec::new();
                for path in wanted {
                    match host.kind(&path) {
                        Some(EntryKind::Symlink) => {
                            if let (Some(target), Some(stored)) =
                                (host.canonicalize(&path), host.read_link(&path))
                            {
                                symlinks.push(Symlink {
                                    link: path,
                                    target: stored,
                                });
                                binds.push(target);
                            }
                        }
                        Some(_) => binds.push(path),
                        None => {}
                    }
                }
                let binds = minimal_cover(binds);
                self.read_only = binds
                    .into_iter()
                    .map(|p| Bind {
                        source: p.clone(),
                        dest: p,
                    })
                    .collect();
                symlinks.sort();
                self.symlinks = symlinks;
            }
        }
        self.private_dirs.sort();
        self.private_dirs.dedup();
    }
}
