//! The probe cache under concurrency: several `cordon run` processes start at once with no cache
//! file (a home of their own); all of them must succeed, and what is left must be exactly one
//! valid cache file, private to the user, whose key matches this host's bubblewrap.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::runner::{self, cut};

/// The directory of cordon's private toolchain caches, beside the probe cache in
/// `~/.cache/cordon` (docs/caches.md): it persists across runs by design.
pub const TOOL_CACHES: &str = ".cache/cordon/tools";

/// How long one CLI may take before the harness calls it hung.
const DEADLINE: Duration = Duration::from_secs(60);

/// What the concurrent start showed.
#[derive(Debug, Clone, Serialize)]
pub struct CacheReport {
    /// CLI processes started at once.
    pub processes: usize,
    /// How many printed the expected output with exit 0.
    pub succeeded: usize,
    /// Wall time from the first spawn to the last exit, ms.
    pub wall_ms: f64,
    /// What the cache directory held afterwards.
    pub cache_dir_entries: Vec<String>,
    /// Whether the cache file parsed and its key matched (read back through the library).
    pub cache_valid: bool,
}

/// The home the test uses, below `base`; its workspaces are `ws-<i>` inside it.
pub fn home(base: &Path) -> PathBuf {
    base.join("probe-home")
}

/// Lays out the home and `count` workspaces (before the "before" listings are taken).
pub fn prepare(base: &Path, count: usize) -> std::io::Result<()> {
    for i in 0..count {
        std::fs::create_dir_all(home(base).join(format!("ws-{i}")))?;
    }
    Ok(())
}

/// Starts `count` CLIs at once; the problems found, and the report.
pub fn concurrent_start(
    cordon: &Path,
    base: &Path,
    count: usize,
    session: &str,
    cli_pids: &mut Vec<u32>,
) -> (Vec<String>, CacheReport) {
    let home = home(base);
    let euid = rustix::process::geteuid().as_raw();
    let cache_dir = home.join(".cache").join("cordon");
    let cache_file = cache_dir.join(format!("probe-{euid}.json"));
    let mut problems = Vec::new();
    if cache_dir.exists() {
        problems.push(format!("{} exists before the test", cache_dir.display()));
    }
    let started = Instant::now();
    let mut children = Vec::new();
    for i in 0..count {
        let name = format!("loadjail-{session}p{i}");
        let argv = [
            "/bin/sh".into(),
            "-c".into(),
            "printf 'probe-ok %s' \"$0\"".into(),
            name.clone().into(),
        ];
        let work = home.join(format!("ws-{i}"));
        match runner::cli(cordon, &home, &work, &["--json"], &argv).spawn() {
            Ok(mut child) => {
                cli_pids.push(child.id());
                let out = runner::slurp(child.stdout.take());
                let err = runner::slurp(child.stderr.take());
                children.push((name, child, out, err));
            }
            Err(e) => problems.push(format!("cannot start {}: {e}", cordon.display())),
        }
    }
    let mut succeeded = 0;
    for (name, mut child, out, err) in children {
        let status = wait_deadline(&mut child, DEADLINE);
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        let json: Option<serde_json::Value> = serde_json::from_str(&stdout).ok();
        let text = json
            .as_ref()
            .and_then(|j| j["stdout"]["text"].as_str())
            .unwrap_or("");
        if status.is_some_and(|s| s.success()) && text == format!("probe-ok {name}") {
            succeeded += 1;
        } else {
            problems.push(format!(
                "concurrent start {name}: {}, stdout {:?}, stderr {:?}",
                status.map_or("hung, killed by the harness".into(), |s| s.to_string()),
                cut(&stdout, 300),
                cut(&stderr, 300)
            ));
        }
    }
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;

    let mut entries: Vec<String> = std::fs::read_dir(&cache_dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    // cordon's private toolchain caches (`tools`) and its runs' copy-on-write layers (`layers`,
    // with the layer probe's marker) live beside the probe cache, by design.
    entries.retain(|e| e != "tools" && e != "layers");
    let wanted = format!("probe-{euid}.json");
    if entries != [wanted.clone()] {
        problems.push(format!(
            "{} holds {entries:?} after {count} concurrent starts; expected exactly [{wanted:?}]",
            cache_dir.display()
        ));
    }
    for (path, mode) in [(&cache_dir, 0o700), (&cache_file, 0o600)] {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.permissions().mode() & 0o777 == mode => {}
            Ok(m) => problems.push(format!(
                "{} has mode {:o}, expected {mode:o}",
                path.display(),
                m.permissions().mode() & 0o777
            )),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    let cache_valid = cordon_launch::probe_cache_holds(&cache_file, Path::new(super::BWRAP));
    if !cache_valid {
        problems.push(format!(
            "{} does not read back as a valid cache entry for {} (unparsable, wrong key or not enforcing): {:?}",
            cache_file.display(),
            super::BWRAP,
            cut(&std::fs::read_to_string(&cache_file).unwrap_or_default(), 200)
        ));
    }
    (
        problems,
        CacheReport {
            processes: count,
            succeeded,
            wall_ms,
            cache_dir_entries: entries,
            cache_valid,
        },
    )
}

/// Waits for `child` at most `limit`; `None` when it is still running.
fn wait_deadline(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}
