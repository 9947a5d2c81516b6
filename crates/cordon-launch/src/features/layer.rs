//! The workspace as a transaction (issue #30): each writable root under a private
//! copy-on-write layer, so nothing the command writes reaches the host while the jail lives.
//!
//! - **Planning**: joins a run whose plan asks for the layer ([`WorkspaceMode::Layer`]) on a
//!   backend that makes one (bubblewrap); on another backend the run is live and says so. It
//!   refuses, naming why and `--live`, where the layer cannot be made: no state directory, a
//!   root that is not a directory or not the caller's (an overlay copies a file up as its
//!   mounter, and an id the jail does not map fails with `EOVERFLOW`: docs/limits.md), a kernel
//!   or filesystem the probe (`layer_probe.rs`) saw refuse an overlay in a user namespace.
//! - **Preparing the host**: the run's layer directory, `<state>/<workspace key>/<run>/`, one
//!   `N/upper` and `N/work` per root, and its start marker `started`. Cordon's state directory
//!   is in its cache (`~/.cache/cordon/layers`), which every jail sees read-only at most (the
//!   policy's own-state rule). When that is another filesystem than a root's, the overlay
//!   still works (its upper may be anywhere); the commit then copies instead of renaming.
//! - **Arguments**: the layer binds reach bubblewrap through `JailSpec::layers`
//!   (`cordon_bwrap::build_layered`), the roots and the seccomp filter reach the stage on two
//!   descriptors (`stage/layer.rs` mounts the overlay, carries bubblewrap's inner mounts over,
//!   confines itself).
//! - **After**: the layer is kept, not applied, and reported as the result's `changes` (the
//!   commit, `cordon-commit`, is not in this build yet).
//! - **Recovery**: nothing is registered with the session reaper: a killed launcher leaves the
//!   run's layer directory in cordon's state, for the commit's recovery to finish or discard.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cordon_policy::WorkspaceMode;

use super::{Arguments, Feature, Host, Outcome, Run};
use crate::error::LaunchError;
use crate::launcher::result::{Changes, LayerRootReport};
use crate::stage::LayerOperand;

/// The name of the start marker in a run's layer directory.
pub(crate) const STARTED: &str = "started";

struct Layer {
    /// The run's layer directory, once made.
    run_dir: Option<PathBuf>,
    /// Each layered root with its layer directory.
    layers: Vec<(PathBuf, PathBuf)>,
}

/// Planning: see the module documentation.
pub(crate) fn plan(run: &Run<'_>, refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    if run.plan.workspace_mode != WorkspaceMode::Layer || !run.backend.layers() {
        return None;
    }
    if let Err(why) = refusal(run) {
        refusals.push(format!(
            "the copy-on-write layer cannot be made: {why}; `cordon run --live` runs the command without it (its writes then reach the workspace as they happen)"
        ));
        return None;
    }
    Some(Box::new(Layer {
        run_dir: None,
        layers: Vec::new(),
    }))
}

fn refusal(run: &Run<'_>) -> Result<(), String> {
    let base = run
        .layers
        .ok_or("cordon has no state directory for it (HOME and XDG_CACHE_HOME are unset)")?;
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    for root in layered_roots(run.plan) {
        let meta = std::fs::metadata(root)
            .map_err(|e| format!("cannot read the writable root {}: {e}", root.display()))?;
        if !meta.is_dir() {
            return Err(format!(
                "the writable root {} is not a directory",
                root.display()
            ));
        }
        if meta.uid() != uid || meta.gid() != gid {
            return Err(format!(
                "the writable root {} belongs to uid {} gid {}, not to this user (uid {uid} gid {gid}): the layer could not copy it up (EOVERFLOW, docs/limits.md)",
                root.display(),
                meta.uid(),
                meta.gid()
            ));
        }
    }
    if run.dry {
        return Ok(());
    }
    super::layer_probe::usable(base, run.backend.stage_binary())
}

/// The roots a layer covers: the plan's writable roots but cordon's own (the workspace's
/// private toolchain cache, which is cordon's state, not the user's tree).
fn layered_roots(plan: &cordon_policy::Plan) -> impl Iterator<Item = &PathBuf> {
    let cache = plan.caches.as_ref().map(|c| &c.root);
    plan.writable.iter().filter(move |r| Some(*r) != cache)
}

impl Layer {
    fn paths(run: &Run<'_>, run_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
        layered_roots(run.plan)
            .enumerate()
            .map(|(i, root)| (root.clone(), run_dir.join(i.to_string())))
            .collect()
    }
}

impl Feature for Layer {
    fn name(&self) -> &'static str {
        "layer"
    }

    fn prepare_host(&mut self, run: &Run<'_>, host: &mut Host) -> Result<(), LaunchError> {
        let Some(base) = run.layers else {
            return Ok(());
        };
        let key = cordon_policy::CacheLayout::workspace_key(&run.plan.workspace);
        let run_dir = base.join(key).join(format!(
            "{}-{}",
            std::process::id(),
            crate::host::token::nonce()
        ));
        let layers = Layer::paths(run, &run_dir);
        if run.dry {
            host.named.push(run_dir);
            host.layers = layers;
            return Ok(());
        }
        let make = |dir: &Path| {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(LaunchError::io(format!(
                    "making the layer directory {}",
                    dir.display()
                )))
        };
        for (_, dir) in &layers {
            make(&dir.join("upper"))?;
            make(&dir.join("work"))?;
        }
        // The start marker: its time is the run's start for the commit's conflict check.
        let roots: String = layered_roots(run.plan)
            .map(|r| format!("{}\n", r.display()))
            .collect();
        std::fs::write(run_dir.join(STARTED), roots).map_err(LaunchError::io(format!(
            "writing the layer's start marker in {}",
            run_dir.display()
        )))?;
        host.layers = layers.clone();
        self.layers = layers;
        self.run_dir = Some(run_dir);
        Ok(())
    }

    fn arguments(
        &mut self,
        run: &Run<'_>,
        host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        if run.dry {
            args.check.layer = LayerOperand::Layered {
                roots_fd: -1,
                filter_fd: -1,
            };
            return Ok(());
        }
        let roots: Vec<std::ffi::OsString> = host
            .layers
            .iter()
            .map(|(root, _)| root.clone().into_os_string())
            .collect();
        let encoded = crate::stage::encode_command(&roots).ok_or_else(|| LaunchError::Io {
            what: "encoding the layered roots".into(),
            source: std::io::Error::other("a root holds a NUL byte"),
        })?;
        let roots_fd = crate::host::sys::memfd_with("cordon-layer-roots", &encoded)
            .map_err(LaunchError::io("creating the layer roots descriptor"))?;
        let filter =
            crate::backend::bwrap::filter(run.plan.network != cordon_policy::Network::Allowed)?;
        let filter_fd = crate::host::sys::memfd_with("cordon-seccomp", filter.bytes())
            .map_err(LaunchError::io("creating the seccomp descriptor"))?;
        args.check.layer = LayerOperand::Layered {
            roots_fd: crate::host::sys::raw(&roots_fd),
            filter_fd: crate::host::sys::raw(&filter_fd),
        };
        args.inherit.extend([roots_fd, filter_fd]);
        Ok(())
    }

    fn after(&mut self, _writable: &[PathBuf], outcome: &mut Outcome) {
        let Some(run_dir) = self.run_dir.clone() else {
            return;
        };
        outcome.warnings.push(format!(
            "the command's writes are kept in its copy-on-write layer at {}, not applied to the workspace (this build has no commit yet)",
            run_dir.display()
        ));
        outcome.changes = Some(Changes {
            mode: "layer",
            applied: false,
            roots: self
                .layers
                .iter()
                .map(|(root, dir)| LayerRootReport {
                    root: root.clone(),
                    upper: dir.join("upper"),
                })
                .collect(),
            kept: run_dir,
        });
    }
}
