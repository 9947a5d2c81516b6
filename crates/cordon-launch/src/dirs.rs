//! cordon's own directories on the host, named once: where the global configuration, the probe
//! caches and the workspaces' private toolchain caches live. Every crate and command that needs
//! one asks a [`CordonDirs`]; the jail keeps all of them read-only (the policy's own-state rule,
//! fed by [`CordonDirs::own_state`]) but for the one workspace cache it is given.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// cordon's directories for one user, from `HOME`, `XDG_CONFIG_HOME` and `XDG_CACHE_HOME`
/// (relative values are ignored, as the XDG specification requires).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CordonDirs {
    home: Option<PathBuf>,
    xdg_config_home: Option<PathBuf>,
    xdg_cache_home: Option<PathBuf>,
}

fn absolute(v: Option<&OsStr>) -> Option<PathBuf> {
    v.map(PathBuf::from).filter(|p| p.is_absolute())
}

impl CordonDirs {
    /// From the variables' values.
    pub fn from_vars(
        home: Option<&OsStr>,
        xdg_config_home: Option<&OsStr>,
        xdg_cache_home: Option<&OsStr>,
    ) -> CordonDirs {
        CordonDirs {
            home: absolute(home),
            xdg_config_home: absolute(xdg_config_home),
            xdg_cache_home: absolute(xdg_cache_home),
        }
    }

    /// From this process's environment.
    pub fn from_process() -> CordonDirs {
        CordonDirs::from_vars(
            std::env::var_os("HOME").as_deref(),
            std::env::var_os("XDG_CONFIG_HOME").as_deref(),
            std::env::var_os("XDG_CACHE_HOME").as_deref(),
        )
    }

    /// `$XDG_CACHE_HOME/cordon`, else `~/.cache/cordon`.
    pub fn cache(&self) -> Option<PathBuf> {
        self.xdg_cache_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".cache")))
            .map(|c| c.join("cordon"))
    }

    /// The global configuration file: `$XDG_CONFIG_HOME/cordon/config.toml`, else
    /// `~/.config/cordon/config.toml` (it may not exist).
    pub fn global_config(&self) -> Option<PathBuf> {
        cordon_policy::ConfigLayer::global_path(
            self.xdg_config_home.as_deref().map(Path::as_os_str),
            self.home.as_deref().map(Path::as_os_str),
        )
    }

    /// The base of every workspace's private toolchain cache: `<cache>/tools`.
    pub fn tools_caches(&self) -> Option<PathBuf> {
        self.cache()
            .map(|c| c.join(cordon_policy::CacheLayout::TOOLS_DIR))
    }

    /// The bubblewrap probe's cache file for this user: `<cache>/probe-<euid>.json`.
    pub fn probe_cache(&self) -> Option<PathBuf> {
        let euid = rustix::process::geteuid().as_raw();
        self.cache().map(|c| c.join(format!("probe-{euid}.json")))
    }

    /// The `#!` lines of the programs on `PATH`, per directory, and the `PATH` walks'
    /// answers: `<cache>/heads` ([`crate::CachingHost`]).
    pub fn heads(&self) -> Option<PathBuf> {
        self.cache().map(|c| c.join("heads"))
    }

    /// cordon's state for the runs' copy-on-write layers: `<cache>/layers` (a directory per
    /// workspace, then per run; `features/layer.rs`).
    pub fn layers(&self) -> Option<PathBuf> {
        self.cache().map(|c| layers_in(&c))
    }

    /// The `cordon` directories the XDG variables name, for
    /// [`cordon_policy::Invocation::with_own_state`] (the defaults below the home directory are
    /// the policy's own).
    pub fn own_state(&self) -> Vec<PathBuf> {
        cordon_policy::Invocation::xdg_own_state(
            self.xdg_config_home.as_deref().map(Path::as_os_str),
            self.xdg_cache_home.as_deref().map(Path::as_os_str),
        )
    }
}

/// The layers' directory in cordon's cache directory `cache` ([`CordonDirs::layers`]).
pub(crate) fn layers_in(cache: &Path) -> PathBuf {
    cache.join("layers")
}

/// The Landlock probe's cache file, beside bubblewrap's `bwrap_cache` (`landlock-<its name>`).
pub(crate) fn landlock_cache_beside(bwrap_cache: &Path) -> PathBuf {
    let name = bwrap_cache
        .file_name()
        .map(|n| format!("landlock-{}", n.to_string_lossy()))
        .unwrap_or_else(|| "landlock-probe.json".into());
    bwrap_cache.with_file_name(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn xdg_wins_relative_values_are_ignored() {
        let d = CordonDirs::from_vars(
            Some("/home/u".as_ref()),
            Some("rel".as_ref()),
            Some("/x/cache".as_ref()),
        );
        assert_eq!(d.cache().unwrap(), Path::new("/x/cache/cordon"));
        assert_eq!(
            d.tools_caches().unwrap(),
            Path::new("/x/cache/cordon/tools")
        );
        assert_eq!(
            d.global_config().unwrap(),
            Path::new("/home/u/.config/cordon/config.toml")
        );
        let probe = d.probe_cache().unwrap();
        assert_eq!(probe.parent().unwrap(), Path::new("/x/cache/cordon"));
        assert!(probe.to_string_lossy().ends_with(".json"), "{probe:?}");
        assert!(
            landlock_cache_beside(&probe)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("landlock-probe-")
        );
        assert_eq!(d.own_state(), vec![PathBuf::from("/x/cache/cordon")]);
        assert_eq!(d.heads().unwrap(), Path::new("/x/cache/cordon/heads"));
        let none = CordonDirs::from_vars(None, None, Some("rel".as_ref()));
        assert_eq!(none.cache(), None);
    }
}
