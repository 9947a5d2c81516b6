//! The workspace as a transaction (issue #30): each writable root under a private
//! copy-on-write layer, so nothing the command writes reaches the host while the jail lives.
//!
//! - **Planning**: joins a run whose plan asks for the layer ([`WorkspaceMode::Layer`], which
//!   the default `auto` becomes on a backend that makes one: bubblewrap; the launcher resolves
//!   the mode against the backend before any feature plans, `launcher/start.rs`). It
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
//! - **After**: each root's upper is committed (`cordon_commit::commit_root`: judged, applied
//!   through a journal in the workspace's state directory, the rest kept there), or under
//!   `--review` ([`WorkspaceMode::Review`]) judged and kept; refused and held changes are
//!   violations, conflicts warnings, the reports the result's `changes`. A committed layer is
//!   removed; one whose commit failed is kept and named.
//! - **Recovery**: nothing is registered with the session reaper. A launcher killed while the
//!   jail ran leaves the host's tree as it was and the run's layer directory in cordon's state
//!   (`jail-*`, not applied); one killed while committing leaves a journal that the next
//!   commit in that workspace, or `cordon recover`, finishes or discards.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cordon_policy::WorkspaceMode;

use super::{Arguments, Changes, Feature, Host, Outcome, RootChanges, Run, layer_abandoned};
use crate::error::LaunchError;
use crate::stage::LayerOperand;
use crate::violations::{Violation, ViolationKind};

use super::layer_abandoned::{STARTED, remove_layer};

struct Layer {
    /// The run's layer directory, once made.
    run_dir: Option<PathBuf>,
    /// Each layered root with its layer directory.
    layers: Vec<(PathBuf, PathBuf)>,
    /// `--review`: judged and kept, nothing applied.
    review: bool,
    /// The run's start marker, locked while this launcher lives (`layer_abandoned.rs`).
    marker: Option<std::fs::File>,
    /// What recovering the workspace's abandoned runs did, said after the run.
    recovered: Vec<String>,
}

/// Planning: see the module documentation.
pub(crate) fn plan(run: &Run<'_>, refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    if !asked(run) {
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
        review: run.plan.workspace_mode == WorkspaceMode::Review,
        marker: None,
        recovered: Vec::new(),
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
    for root in layered_roots(run) {
        if base.starts_with(root) {
            return Err(format!(
                "the writable root {} holds cordon's own state ({}), where the layer's commit keeps its journal",
                root.display(),
                base.display()
            ));
        }
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

/// The roots a run puts under the layer (none when it runs live), for the guard to leave them
/// to the commit.
pub(crate) fn roots(run: &Run<'_>) -> Vec<PathBuf> {
    if !asked(run) {
        return Vec::new();
    }
    layered_roots(run).cloned().collect()
}

/// Whether the run is layered: its mode asks for the layer and its backend makes one (a run
/// the layer cannot be made for is refused, never run live).
fn asked(run: &Run<'_>) -> bool {
    run.plan.workspace_mode.layered() && run.backend.layers()
}

/// The roots a layer covers: the run's writable roots but cordon's own (the workspace's
/// private toolchain cache and anything else below cordon's cache directory, the parent of
/// the layers' own: cordon's state, not the user's tree).
fn layered_roots<'a>(run: &'a Run<'_>) -> impl Iterator<Item = &'a PathBuf> + 'a {
    let cache = run.plan.caches.as_ref().map(|c| &c.root);
    let own = run.layers.and_then(Path::parent);
    run.plan
        .writable
        .iter()
        .filter(move |r| Some(*r) != cache && !own.is_some_and(|o| r.starts_with(o)))
}

impl Layer {
    fn paths(run: &Run<'_>, run_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
        layered_roots(run)
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
        let state = base.join(key);
        let name = format!("{}-{}", std::process::id(), crate::host::token::nonce());
        let run_dir = state.join(format!("{}{name}", layer_abandoned::RUN_PREFIX));
        let layers = Layer::paths(run, &run_dir);
        if run.dry {
            // Shown in the list as the layer's bind, not made.
            host.layers = layers;
            return Ok(());
        }
        // Commits a killed launcher left are finished or discarded by their journal; runs whose
        // launcher died before their commit are kept for review, never applied.
        match cordon_commit::recover(&state) {
            Ok(done) => self
                .recovered
                .extend(done.iter().map(layer_abandoned::describe_recovered)),
            Err(e) => self.recovered.push(format!(
                "recovering the workspace's killed commits failed: {e}"
            )),
        }
        self.recovered.extend(
            layer_abandoned::recover_abandoned(&state)
                .iter()
                .map(layer_abandoned::describe),
        );
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
        // Made under a temporary name, its start marker locked, then named `jail-*`: a
        // `jail-*` directory whose marker is unlocked has lost its launcher.
        let making = state.join(format!("{}{name}", layer_abandoned::NEW_PREFIX));
        // A spare left by a run that changed nothing is taken when there is one (a rename
        // instead of making and later removing five directories); else a new one is made.
        if layer_abandoned::take_spare(&state, &making) {
            let _ = std::fs::remove_file(making.join(STARTED));
        } else {
            make(&making)?;
        }
        // The start marker: its time is the run's start for the commit's conflict check.
        // The roots, NUL-terminated (any other byte may be in a path).
        let roots: Vec<std::ffi::OsString> = layered_roots(run)
            .map(|r| r.clone().into_os_string())
            .collect();
        let roots = crate::stage::encode_command(&roots).unwrap_or_default();
        let marker = layer_abandoned::create_marker(&making.join(STARTED), &roots).map_err(
            LaunchError::io(format!(
                "writing the layer's start marker in {}",
                making.display()
            )),
        )?;
        for i in 0..layers.len() {
            make(&making.join(i.to_string()).join("upper"))?;
            make(&making.join(i.to_string()).join("work"))?;
        }
        std::fs::rename(&making, &run_dir).map_err(LaunchError::io(format!(
            "naming the layer directory {}",
            run_dir.display()
        )))?;
        self.marker = Some(marker);
        super::layer_prune::record_workspace(&state, &run.plan.workspace);
        self.recovered.extend(super::layer_prune::prune(
            base,
            super::layer_prune::IDLE,
            false,
        ));
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

    /// A jail built ahead: the run starts when its command comes. The start marker's change
    /// time, which the commit's conflict check counts from, is made now (a host edit before it
    /// is one the command sees: the stage mounts the layer only once it has its command).
    fn command_given(&mut self) {
        if let Some(marker) = &self.marker {
            let _ = marker.set_modified(std::time::SystemTime::now());
        }
    }

    fn after(&mut self, _writable: &[PathBuf], outcome: &mut Outcome) {
        outcome.warnings.append(&mut self.recovered);
        let Some(run_dir) = self.run_dir.take() else {
            return;
        };
        let Some(state) = run_dir.parent() else {
            return;
        };
        let mode = if self.review {
            cordon_commit::Mode::Review
        } else {
            cordon_commit::Mode::Apply
        };
        let started = run_dir.join(STARTED);
        let mut roots = Vec::with_capacity(self.layers.len());
        let mut finished = true;
        let mut untouched = true;
        for (root, dir) in &self.layers {
            let upper = dir.join("upper");
            if std::fs::read_dir(&upper).is_ok_and(|mut e| e.next().is_none()) {
                // Nothing changed: no commit, no journal, no lock (most commands of an agent).
                roots.push(RootChanges {
                    root: root.clone(),
                    report: Some(unchanged(!self.review)),
                    error: None,
                });
                continue;
            }
            untouched = false;
            // From here the commit's journal decides what a killed launcher left.
            let _ = std::fs::write(dir.join(layer_abandoned::COMMITTING), "");
            match cordon_commit::commit_root(root, &dir.join("upper"), state, &started, mode) {
                Ok(report) => {
                    for (word, listed) in [("refused", &report.refused), ("held", &report.held)] {
                        outcome
                            .violations
                            .extend(listed.iter().map(|l| refused_change(root, word, l)));
                    }
                    // Applied without what the judge dropped (a git configuration's keys that
                    // run commands): the dropped part is a refusal too.
                    for listed in report.added.iter().chain(&report.modified) {
                        match &listed.finding {
                            Some(f) if !f.keys.is_empty() => outcome
                                .violations
                                .extend(f.keys.iter().map(|k| dropped_key(root, listed, k))),
                            Some(_) => outcome.violations.push(refused_change(
                                root,
                                "applied without what was refused",
                                listed,
                            )),
                            None => {}
                        }
                    }
                    for c in &report.conflicts {
                        outcome.warnings.push(format!(
                            "{} changed on the host while the command ran: the host's version stays, the command's is kept (cordon changes)",
                            root.join(&c.path).display()
                        ));
                    }
                    if let Some(how) = &report.apply_with {
                        outcome.warnings.push(format!(
                            "changes are kept for review in {}: apply them with `{}`",
                            root.display(),
                            how.join(" ")
                        ));
                    }
                    roots.push(RootChanges {
                        root: root.clone(),
                        report: serde_json::to_value(&report).ok(),
                        error: None,
                    });
                }
                Err(e) => {
                    finished = false;
                    outcome.warnings.push(format!(
                        "the commit of {} failed, nothing of it was applied: {e}; the command's writes are kept in {}",
                        root.display(),
                        run_dir.display()
                    ));
                    roots.push(RootChanges {
                        root: root.clone(),
                        report: None,
                        error: Some(e.to_string()),
                    });
                }
            }
        }
        if finished && untouched {
            layer_abandoned::park_spare(state, &run_dir, &self.layers);
        } else if finished {
            remove_layer(&run_dir);
        }
        outcome.changes = Some(Changes {
            applied: finished && !self.review,
            roots,
            kept: (!finished).then_some(run_dir),
        });
    }
}

impl Drop for Layer {
    /// A run that ended before its commit (the jail could not start, the launcher returned
    /// early): an unchanged layer goes; one with changes stays for the next run's recovery
    /// (`layer_abandoned.rs`), which keeps them for review once this marker is unlocked.
    fn drop(&mut self) {
        if let Some(dir) = self.run_dir.take() {
            let unchanged = self.layers.iter().all(|(_, d)| {
                std::fs::read_dir(d.join("upper")).map_or(true, |mut e| e.next().is_none())
            });
            if unchanged {
                remove_layer(&dir);
            }
        }
    }
}

/// The report of a root the command did not change: a commit's report with every list empty.
fn unchanged(applied: bool) -> serde_json::Value {
    serde_json::json!({
        "run": null,
        "run_dir": null,
        "applied": applied,
        "added": [],
        "modified": [],
        "deleted": [],
        "refused": [],
        "held": [],
        "conflicts": [],
    })
}

/// A key the commit dropped from a git configuration it applied, as the git broker of a live
/// run names one: the configuration's path, the key, and why.
fn dropped_key(
    root: &Path,
    listed: &cordon_commit::Listed,
    k: &cordon_commit::DroppedKey,
) -> Violation {
    let path = root.join(&listed.path);
    let mut line = format!("git config: {} changed in the jail was not kept", k.key);
    line.truncate(line.floor_char_boundary(240));
    Violation {
        kind: ViolationKind::GitConfigRefused,
        line,
        path: Some(path.display().to_string()),
        rule: Some(format!(
            "rule git-config-key: {}; dropped at the commit, the rest of {} applied",
            k.why,
            listed.path.display()
        )),
        host: None,
        port: None,
        key: Some(k.key.clone()),
        operation: None,
    }
}

/// A change the commit refused or held, as a violation naming the path, the rule and the
/// program that would have run it.
fn refused_change(root: &Path, word: &str, listed: &cordon_commit::Listed) -> Violation {
    let path = root.join(&listed.path);
    let rule = listed.finding.as_ref().map(|f| {
        let program = if f.program.is_empty() {
            String::new()
        } else {
            format!(" ({} would run it)", f.program)
        };
        if word.starts_with("applied") {
            format!(
                "rule {}: {}{program}; dropped, the rest applied",
                f.rule, f.why
            )
        } else {
            format!(
                "rule {}: {}{program}; {word}, kept in cordon's state for review (cordon changes)",
                f.rule, f.why
            )
        }
    });
    let mut line = format!("{word}: {}", path.display());
    line.truncate(line.floor_char_boundary(240));
    Violation {
        kind: ViolationKind::ChangeRefused,
        line,
        path: Some(path.display().to_string()),
        rule,
        host: None,
        port: None,
        key: None,
        operation: None,
    }
}
