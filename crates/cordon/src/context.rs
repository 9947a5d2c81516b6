//! What every subcommand reads from the process once: the home directory, the configuration
//! files, the working directory. Everything after this is plain data.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_launch::{CachingHost, CordonDirs, Launcher};
use cordon_policy::{
    ConfigLayer, Effective, Invocation, LayerKind, Overrides, Plan, effective_policy,
};

use crate::error::CliError;

/// The process facts a subcommand starts from.
#[derive(Debug, Clone)]
pub struct Context {
    /// `HOME`.
    pub home: Option<OsString>,
    /// The global configuration file, when one is configured (it may not exist).
    pub global_path: Option<PathBuf>,
    /// The absolute working directory (not yet canonical).
    pub cwd: PathBuf,
    /// cordon's own directories that `XDG_CONFIG_HOME` and `XDG_CACHE_HOME` name (the defaults
    /// below `HOME` are the policy crate's), kept read-only in every jail.
    pub own_state: Vec<PathBuf>,
    /// The base of cordon's private toolchain caches ([`CordonDirs::tools_caches`]), made by
    /// the launcher's planning when a run needs it.
    pub cache_base: Option<PathBuf>,
    /// Where the planning host keeps the `#!` lines of the programs on `PATH`
    /// ([`CordonDirs::heads`]).
    pub heads_cache: Option<PathBuf>,
}

impl Context {
    /// Reads `HOME`, `XDG_CONFIG_HOME`, `XDG_CACHE_HOME` and the working directory.
    pub fn from_process(cwd: Option<&Path>) -> Result<Context, CliError> {
        let home = std::env::var_os("HOME");
        let dirs = CordonDirs::from_process();
        let cwd = match cwd {
            Some(dir) => std::path::absolute(dir).map_err(CliError::CurrentDir)?,
            None => std::env::current_dir().map_err(CliError::CurrentDir)?,
        };
        Ok(Context {
            global_path: dirs.global_config(),
            own_state: dirs.own_state(),
            cache_base: dirs.tools_caches(),
            heads_cache: dirs.heads(),
            home,
            cwd,
        })
    }

    /// The global file if it exists, and the project file at the workspace root if it exists.
    pub fn layers(&self) -> Result<(Option<ConfigLayer>, Option<ConfigLayer>), CliError> {
        let global = match &self.global_path {
            Some(path) if path.exists() => Some(ConfigLayer::load(path, LayerKind::Global)?),
            _ => None,
        };
        let project_path = self.cwd.join(ConfigLayer::PROJECT_FILE);
        let project = if project_path.exists() {
            Some(ConfigLayer::load(&project_path, LayerKind::Project)?)
        } else {
            None
        };
        Ok((global, project))
    }

    /// The effective policy for these overrides.
    pub fn effective(&self, overrides: &Overrides) -> Result<Effective, CliError> {
        let (global, project) = self.layers()?;
        Ok(effective_policy(
            global.as_ref(),
            project.as_ref(),
            overrides,
        )?)
    }

    /// The real host, as the policy crate reads it (with the `PATH` programs' `#!` lines
    /// remembered in cordon's cache).
    pub fn host(&self) -> CachingHost {
        CachingHost::new(self.home.clone(), self.heads_cache.clone())
    }

    /// Resolves a policy into a plan for this working directory, making nothing (`doctor`,
    /// `explain`, `policy show`): a workspace cache is used when it already exists.
    pub fn plan(&self, policy: &cordon_policy::Policy) -> Result<Plan, CliError> {
        // The host's listening sockets, as `Launcher::plan` reads them for a run.
        let invocation = self
            .invocation()
            .with_host_sockets(cordon_launch::listening_unix_sockets());
        Ok(Plan::resolve(policy, &invocation, &self.host())?)
    }

    /// Resolves a policy into a plan for a run, through the launcher's planning (which makes
    /// the workspace's private toolchain cache, as for every caller of the library); returns
    /// the plan and its warnings.
    pub fn plan_for_run(
        &self,
        policy: &cordon_policy::Policy,
    ) -> Result<(Plan, Vec<String>), CliError> {
        Ok(Launcher::plan(policy, &self.invocation(), &self.host())?)
    }

    fn invocation(&self) -> Invocation {
        let mut invocation = Invocation::at(self.cwd.clone())
            .with_own_state(self.own_state.iter().cloned())
            .with_host_env(std::env::vars_os());
        if let Some(base) = &self.cache_base {
            invocation = invocation.with_caches(base.clone());
        }
        invocation
    }
}
