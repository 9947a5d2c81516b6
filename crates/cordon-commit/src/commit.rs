//! One writable root's layer onto the host: read, judged, moved aside into the run, recorded,
//! and (in apply mode) applied through a sealed journal.

use std::path::{Path, PathBuf};

use cordon_changes::{ChangeKind, Contents, Node, Rules};
use rustix::fs::{AtFlags, FileType, StatxFlags};

use crate::beneath::{Found, Tree};
use crate::decide::{self, Started};
use crate::error::CommitError;
use crate::journal::{self, Journal, Point};
use crate::layer::{self, Limits};
use crate::report::{ChangeWord, CommitReport, Entry, Manifest, NodeWord, Status};
use crate::runs;
use crate::store::{self, Lock};

/// What a commit may be told besides its inputs.
#[derive(Default)]
pub struct CommitOptions<'a> {
    /// Bounds on the layer's walk.
    pub limits: Limits,
    /// Called at each point of the commit (tests kill the process there).
    pub hook: Option<&'a mut dyn FnMut(Point)>,
}

impl std::fmt::Debug for CommitOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitOptions")
            .field("limits", &self.limits)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

/// The judge's view of the layer and the host.
struct LayerContents<'a> {
    root: &'a Tree,
    upper: &'a Tree,
}

impl Contents for LayerContents<'_> {
    fn new_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>> {
        self.upper.read_capped(path, limit)
    }
    fn old_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>> {
        self.root.read_capped(path, limit)
    }
    fn old_node(&self, path: &Path) -> Option<Node> {
        match self.root.lookup(path).ok()? {
            Found::Entry(m) => layer::node_of(self.root, path, &m).ok(),
            _ => None,
        }
    }
}

fn absolute(what: &'static str, path: &Path) -> Result<(), CommitError> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(CommitError::NotAbsolute {
            what,
            path: path.to_path_buf(),
        })
    }
}

/// `path` with its longest existing ancestor resolved (it may not exist yet).
fn resolved(path: &Path) -> PathBuf {
    for up in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(up) {
            let rest = path.strip_prefix(up).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// The change time of the run's start marker.
fn started_at(marker: &Path) -> Result<Started, CommitError> {
    let s = rustix::fs::statx(
        rustix::fs::CWD,
        marker,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::CTIME,
    )
    .map_err(CommitError::errno("reading the start marker", marker))?;
    Ok((s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec))
}

/// Commits the overlay upper directory `upper` of the writable root `root`: every change is
/// judged ([`cordon_changes::judge`]); in [`crate::Mode::Apply`] what passes is applied through a
/// journal in the workspace's state directory `state_dir`, and the rest (refused, held,
/// conflicts: paths the host changed at or after the change time of `started_marker`) is kept in
/// the run's directory there; in [`crate::Mode::Review`] everything is kept until
/// [`crate::apply_held`] or [`crate::drop_run`]. Jails committing into one workspace take turns
/// on its lock; a journal left by a killed commit is finished first.
///
/// `upper` must stay until this returns: what is kept is moved out of it.
pub fn commit_root(
    root: &Path,
    upper: &Path,
    state_dir: &Path,
    started_marker: &Path,
    mode: crate::Mode,
) -> Result<CommitReport, CommitError> {
    commit_root_with(
        root,
        upper,
        state_dir,
        started_marker,
        mode,
        CommitOptions::default(),
    )
}

/// [`commit_root`] with [`CommitOptions`].
pub fn commit_root_with(
    root: &Path,
    upper: &Path,
    state_dir: &Path,
    started_marker: &Path,
    mode: crate::Mode,
    mut options: CommitOptions<'_>,
) -> Result<CommitReport, CommitError> {
    absolute("the writable root", root)?;
    absolute("the layer's upper directory", upper)?;
    absolute("the state directory", state_dir)?;
    let mut nothing = |_: Point| {};
    let hook: &mut dyn FnMut(Point) = match options.hook.take() {
        Some(h) => h,
        None => &mut nothing,
    };
    let root_canonical = std::fs::canonicalize(root).map_err(CommitError::io("resolving", root))?;
    if resolved(state_dir).starts_with(&root_canonical) {
        return Err(CommitError::StateInsideRoot {
            state: state_dir.to_path_buf(),
            root: root.to_path_buf(),
        });
    }
    let _lock = Lock::take(state_dir)?;
    runs::recover_locked(state_dir)?;
    let started = started_at(started_marker)?;
    let root_tree = Tree::open(root)?;
    let upper_tree = Tree::open(upper)?;
    let layer = layer::read(&root_tree, &upper_tree, options.limits)?;
    let verdicts = cordon_changes::judge(
        &layer.set,
        &LayerContents {
            root: &root_tree,
            upper: &upper_tree,
        },
        &Rules::default(),
    );
    let decided = decide::decide(&layer, verdicts, started);
    let (run, run_dir) = store::new_run(state_dir)?;
    let mut entries = Vec::with_capacity(decided.len());
    let mut keeper = store::Keeper::default();
    for (i, (change, d)) in layer.set.changes.iter().zip(decided).enumerate() {
        let host_dir = matches!(layer.host[i], Found::Entry(m) if m.kind == FileType::Directory);
        let mut entry = Entry {
            path: change.path.clone(),
            change: match change.kind {
                ChangeKind::Added => ChangeWord::Added,
                ChangeKind::Modified => ChangeWord::Modified,
                ChangeKind::Deleted => ChangeWord::Deleted,
            },
            node: NodeWord::Special,
            mode: None,
            target: None,
            host_dir,
            status: d.status,
            finding: d.finding,
            kept: false,
        };
        match &change.node {
            Node::Dir { mode } => {
                entry.node = NodeWord::Dir;
                entry.mode = Some(d.mode.unwrap_or(*mode) & 0o775);
            }
            Node::File { mode, .. } => {
                entry.node = NodeWord::File;
                entry.mode = Some(d.mode.unwrap_or(*mode) & 0o777);
            }
            Node::Symlink { target } => {
                entry.node = NodeWord::Symlink;
                entry.target = Some(target.clone());
            }
            Node::Special(_) => {}
        }
        let movable = matches!(entry.node, NodeWord::File | NodeWord::Symlink)
            && change.kind != ChangeKind::Deleted
            && change.path.to_str().is_some();
        if movable {
            let kept = store::keep(
                &mut keeper,
                &upper_tree,
                &change.path,
                &run_dir,
                d.rewrite.as_deref(),
                d.mode,
            )?;
            entry.kept = true;
            if kept.mode.is_some() {
                entry.mode = kept.mode;
            }
        }
        if change.path.to_str().is_none() {
            entry.path = PathBuf::from(change.path.to_string_lossy().into_owned());
        }
        entries.push(entry);
        hook(Point::KeptAside(i));
    }
    let manifest = Manifest {
        version: 1,
        run,
        root: root.to_path_buf(),
        started,
        entries,
    };
    store::write_json(&run_dir, store::MANIFEST, &manifest)?;
    hook(Point::Recorded);
    let pending: Vec<&Entry> = manifest
        .entries
        .iter()
        .filter(|e| e.status == Status::Pending)
        .collect();
    if mode == crate::Mode::Review || pending.is_empty() {
        let keeps = manifest.entries.iter().any(|e| e.status != Status::Applied);
        if !keeps {
            std::fs::remove_dir_all(&run_dir).map_err(CommitError::io("removing", &run_dir))?;
        }
        return Ok(CommitReport::of(
            &manifest,
            mode == crate::Mode::Apply,
            keeps.then_some(run_dir),
            None,
        ));
    }
    apply_entries(&run_dir, &manifest, &pending, hook)
}

/// Seals a journal that applies `chosen` (entries of the run in `run_dir`) and rolls it forward.
pub(crate) fn apply_entries(
    run_dir: &Path,
    manifest: &Manifest,
    chosen: &[&Entry],
    hook: &mut dyn FnMut(Point),
) -> Result<CommitReport, CommitError> {
    let journal = Journal {
        root: manifest.root.clone(),
        applies: chosen.iter().map(|e| e.path.clone()).collect(),
        ops: journal::ops_for(chosen),
    };
    journal::seal(run_dir, &journal)?;
    hook(Point::Sealed);
    journal::roll_forward(run_dir, hook)
}
