//! Whether this kernel lets this user mount an overlay inside a user namespace, with its upper
//! directory in cordon's layer directory (`userxattr`: the layer's own records in `user.`
//! extended attributes, which that filesystem must keep).
//!
//! The proof is the real thing, small: the stage binary in its `layer-probe` mode, on the host,
//! enters a new user and mount namespace, mounts an overlay over a directory of a throwaway
//! tree in the layer directory, writes through it, and checks that the write landed in the
//! upper directory and not in the lower one. A success is remembered for the process and in a
//! marker file named by the kernel's release and the directory's device, so later runs start no
//! probe; a failure is not remembered (the run is refused with the probe's words, and the next
//! run probes again).
//!
//! Recovery: the throwaway tree is removed after the probe; a killed launcher can leave one
//! (`probe-*` in the layer directory), which the next probe of that name replaces.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::stage::layer::PROBE_MODE;

fn remembered() -> &'static Mutex<HashMap<PathBuf, ()>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, ()>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `Ok` when a layer can be made with its upper directory in `base`; else why not. One probe
/// at a time in a process: its threads (a harness's concurrent runs, `cordon serve`) would
/// otherwise share the probe's tree, named by the process, and remove it under each other.
pub(crate) fn usable(base: &Path, stage: Option<&Path>) -> Result<(), String> {
    let known = || {
        remembered()
            .lock()
            .map(|m| m.contains_key(base))
            .unwrap_or(false)
    };
    if known() {
        return Ok(());
    }
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _probing = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if known() {
        return Ok(());
    }
    make_dir(base)?;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let device = std::fs::metadata(base).map(|m| m.dev()).unwrap_or_default();
    let marker = base.join(format!(
        "probe-ok-{}-{device}",
        release.trim().replace('/', "_")
    ));
    if !marker.exists() {
        let stage = stage.ok_or("the backend has no stage binary to probe with")?;
        probe(base, stage)?;
        // Only a cache: a run without it probes again.
        let _ = std::fs::write(&marker, b"");
    }
    if let Ok(mut m) = remembered().lock() {
        m.insert(base.to_path_buf(), ());
    }
    Ok(())
}

fn make_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            format!(
                "cannot make cordon's layer directory {}: {e}",
                dir.display()
            )
        })
}

fn probe(base: &Path, stage: &Path) -> Result<(), String> {
    let tree = base.join(format!("probe-{}", std::process::id()));
    remove(&tree);
    for d in ["lower", "upper", "work"] {
        make_dir(&tree.join(d))?;
    }
    let out = std::process::Command::new(stage)
        .arg(crate::stage::STAGE_ARG)
        .arg(PROBE_MODE)
        .arg(&tree)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output();
    remove(&tree);
    match out {
        Err(e) => Err(format!(
            "cannot run the layer probe ({}): {e}",
            stage.display()
        )),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "this kernel refused an overlay in a user namespace on {}: {}",
            base.display(),
            crate::host::token::first_line(&o.stderr)
        )),
    }
}

/// Removes a probe's tree, its overlay work directory (mode 0) included.
fn remove(tree: &Path) {
    super::layer_abandoned::open_work_dir(&tree.join("work"));
    let _ = std::fs::remove_dir_all(tree);
}
