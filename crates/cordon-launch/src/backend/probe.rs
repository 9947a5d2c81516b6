//! "Probe before claiming": a backend is enforcing only once a real jail has been started, a
//! canary written inside it has been seen on the host, and a write outside it has been seen *not*
//! to reach the host. The outcome is cached for the process, keyed by everything that would
//! change it, and (positive outcomes only) in a small per-user cache file with the same key, so a
//! one-shot CLI does not pay a second jail per command. Every jail still checks itself before its
//! payload runs (see `stage`), so a stale cache can never let a payload run in a jail that does not
//! hold.

use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::backend::ProbeOutcome;
use sha2::{Digest, Sha256};

/// Everything that would change a probe's outcome, hashed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProbeKey(pub String);

impl ProbeKey {
    /// The key for the helper `binary` (bubblewrap, `sandbox-exec`) run by this user on this
    /// kernel, with this cordon (and, on Linux, this seccomp filter).
    pub fn for_binary(bwrap: &Path) -> ProbeKey {
        let mut h = Sha256::new();
        #[cfg(linux_backends)]
        h.update(format!(
            "cordon {} seccomp {}\n",
            env!("CARGO_PKG_VERSION"),
            cordon_seccomp::FILTER_VERSION
        ));
        #[cfg(not(linux_backends))]
        h.update(format!("cordon {}\n", env!("CARGO_PKG_VERSION")));
        h.update(bwrap.as_os_str().as_encoded_bytes());
        if let Ok(m) = std::fs::metadata(bwrap) {
            h.update(format!(
                "\n{} {} {} {} {} {} {} {}\n",
                m.dev(),
                m.ino(),
                m.size(),
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.uid(),
                m.mode()
            ));
        }
        h.update(format!("euid {}\n", rustix::process::geteuid().as_raw()));
        h.update(confinement());
        let uts = rustix::system::uname();
        h.update(uts.release().to_bytes());
        h.update(uts.version().to_bytes());
        for knob in [
            "/proc/sys/user/max_user_namespaces",
            "/proc/sys/kernel/unprivileged_userns_clone",
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            "/proc/sys/kernel/seccomp/actions_avail",
        ] {
            h.update(knob.as_bytes());
            h.update(std::fs::read(knob).unwrap_or_default());
        }
        let digest = h.finalize();
        ProbeKey(digest.iter().map(|b| format!("{b:02x}")).collect())
    }
}

impl ProbeKey {
    /// The key for the Landlock backend at ABI `abi`, run by this user on this kernel.
    #[cfg(linux_backends)]
    pub fn for_landlock(abi: u32) -> ProbeKey {
        let mut h = Sha256::new();
        h.update(format!(
            "cordon {} seccomp {} landlock {abi}\neuid {}\n",
            env!("CARGO_PKG_VERSION"),
            cordon_seccomp::FILTER_VERSION,
            rustix::process::geteuid().as_raw()
        ));
        h.update(confinement());
        let uts = rustix::system::uname();
        h.update(uts.release().to_bytes());
        h.update(uts.version().to_bytes());
        h.update(std::fs::read("/proc/sys/kernel/seccomp/actions_avail").unwrap_or_default());
        let digest = h.finalize();
        ProbeKey(digest.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// What confines this process itself, as text for a probe key: its seccomp mode and filter
/// count, no_new_privs, its AppArmor (or other LSM) label and its user namespace. A container
/// changes these and not the sysctls: a cache file written on the host (a home mounted into a
/// container, say) must not claim bubblewrap enforces inside a container whose seccomp profile
/// refuses user namespaces, where a jail would then fail to start instead of falling back.
pub(crate) fn confinement() -> Vec<u8> {
    let mut out = Vec::new();
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for line in status.lines() {
            if ["Seccomp:", "Seccomp_filters:", "NoNewPrivs:"]
                .iter()
                .any(|k| line.starts_with(k))
            {
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
        }
    }
    for file in [
        "/proc/self/attr/current",
        "/proc/self/attr/apparmor/current",
    ] {
        out.extend_from_slice(file.as_bytes());
        out.extend_from_slice(&std::fs::read(file).unwrap_or_default());
        out.push(b'\n');
    }
    if let Ok(ns) = std::fs::metadata("/proc/self/ns/user") {
        out.extend_from_slice(format!("userns {} {}\n", ns.dev(), ns.ino()).as_bytes());
    }
    out
}

fn process_cache() -> &'static Mutex<HashMap<ProbeKey, ProbeOutcome>> {
    static CACHE: OnceLock<Mutex<HashMap<ProbeKey, ProbeOutcome>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Looks a key up in the process cache.
pub fn cached(key: &ProbeKey) -> Option<ProbeOutcome> {
    let cache = process_cache().lock().ok()?;
    cache.get(key).cloned().map(|mut o| {
        o.source = "process-cache".into();
        o
    })
}

/// Stores an outcome in the process cache.
pub fn remember(key: &ProbeKey, outcome: &ProbeOutcome) {
    if let Ok(mut cache) = process_cache().lock() {
        cache.insert(key.clone(), outcome.clone());
    }
}

/// A per-user cache file of positive outcomes, plus bubblewrap's self-description so the
/// features need not be asked for again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCacheEntry {
    /// The probe key.
    pub key: String,
    /// The outcome (always enforcing).
    pub outcome: ProbeOutcome,
    /// `bwrap --version` output.
    pub version_output: String,
    /// `bwrap --help` output.
    pub help_output: String,
}

/// Reads the cache file when it is owned by this user and nobody else can write it or its
/// directory, and its key matches.
pub fn read_file_cache(path: &Path, key: &ProbeKey) -> Option<FileCacheEntry> {
    let euid = rustix::process::geteuid().as_raw();
    for p in [path, path.parent()?] {
        let m = std::fs::symlink_metadata(p).ok()?;
        if m.uid() != euid || m.mode() & 0o022 != 0 || m.file_type().is_symlink() {
            return None;
        }
    }
    let text = std::fs::read_to_string(path).ok()?;
    let entry: FileCacheEntry = serde_json::from_str(&text).ok()?;
    (entry.key == key.0 && entry.outcome.enforcing).then_some(entry)
}

/// Whether `cache_file` holds a valid, enforcing probe outcome for the bubblewrap at `bwrap`:
/// owned by this user, writable by nobody else, its key matching this host, user and binary.
#[cfg(linux_backends)]
pub fn probe_cache_holds(cache_file: &Path, bwrap: &Path) -> bool {
    read_file_cache(cache_file, &ProbeKey::for_binary(bwrap)).is_some()
}

/// An earlier outcome for `key`: the process cache first, then (enforcing only) the cache file,
/// which is remembered for the process.
pub(crate) fn lookup(key: &ProbeKey, cache_file: Option<&Path>) -> Option<ProbeOutcome> {
    if let Some(o) = cached(key) {
        return Some(o);
    }
    let entry = read_file_cache(cache_file?, key)?;
    let o = ProbeOutcome {
        source: "file-cache".into(),
        ..entry.outcome
    };
    remember(key, &o);
    Some(o)
}

/// Records a fresh outcome: always in the process cache, and in the cache file (when there is
/// one) only when it is enforcing, with the backend's self-description.
pub(crate) fn record(
    key: &ProbeKey,
    outcome: &ProbeOutcome,
    cache_file: Option<&Path>,
    version_output: &str,
    help_output: &str,
) {
    remember(key, outcome);
    if let (true, Some(file)) = (outcome.enforcing, cache_file) {
        write_file_cache(
            file,
            &FileCacheEntry {
                key: key.0.clone(),
                outcome: outcome.clone(),
                version_output: version_output.to_owned(),
                help_output: help_output.to_owned(),
            },
        );
    }
}

/// Writes the cache file (best effort: a read-only home just means probing every time).
pub fn write_file_cache(path: &Path, entry: &FileCacheEntry) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    let Ok(text) = serde_json::to_string(entry) else {
        return;
    };
    let tmp = dir.join(format!(
        ".probe-{}-{}.tmp",
        std::process::id(),
        crate::host::token::nonce()
    ));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600));
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Judges a finished probe run on the host: a write outside the writable root must not have
/// reached the host, the run must have finished in time, the canary the stage wrote inside must be
/// there with the expected token (no canary: the probe proves nothing), and the stage must have
/// reported `ok`. `what` names the sandbox in messages (`jail`, `sandbox`).
pub(crate) fn judge(
    supervised: &crate::host::supervise::Supervised,
    canary: &Path,
    token: &str,
    outside: &Path,
    timeout: std::time::Duration,
    what: &str,
) -> Result<String, String> {
    if std::fs::symlink_metadata(outside).is_ok() {
        return Err(format!(
            "a write outside the writable root reached the host ({})",
            outside.display()
        ));
    }
    if supervised.exit == crate::host::supervise::Exit::TimedOut {
        return Err(format!(
            "the probe {what} did not finish within {timeout:?}"
        ));
    }
    if std::fs::read_to_string(canary).unwrap_or_default() != token {
        let stderr = crate::host::token::first_line(&supervised.stderr.bytes);
        return Err(format!(
            "the probe {what} did not run (no canary; the probe proves nothing): exit {:?}, stderr: {}",
            supervised.exit,
            if stderr.is_empty() {
                "(empty)"
            } else {
                &stderr
            }
        ));
    }
    if supervised.status_line.trim() != "ok" {
        return Err(format!(
            "the probe stage reported: {}",
            supervised.status_line.trim()
        ));
    }
    Ok(format!(
        "canary written inside the {what} and seen on the host; write outside refused; {} ms",
        supervised.duration.as_millis()
    ))
}

/// A throwaway place to probe a backend: a writable root `rw` holding the canary, a sibling `ro`
/// that must stay unwritten, and the plan for a shell command at `rw`. Everything is removed when
/// the site is dropped.
#[derive(Debug)]
pub(crate) struct ProbeSite {
    /// The site's canonical directory.
    pub base: PathBuf,
    /// Where the canary is written (the writable root).
    pub canary: PathBuf,
    /// What the stage tries to create outside the writable root.
    pub outside: PathBuf,
    /// What the canary must contain.
    pub token: String,
    /// The probe jail's plan, guarded (a throwaway root needs no placeholders).
    pub plan: cordon_policy::GuardedPlan,
    /// The site's directory, registered with the session reaper from before it exists.
    tree: Option<crate::host::cleanup::Tree>,
}

impl ProbeSite {
    /// Creates the site below `temp_root`; `what` names the sandbox in messages.
    pub(crate) fn create(
        temp_root: &Path,
        home: Option<std::ffi::OsString>,
        what: &str,
        binary: Option<&Path>,
    ) -> Result<ProbeSite, String> {
        use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};
        let made = temp_root.join(format!(
            "cordon-probe-{}-{}",
            std::process::id(),
            crate::host::token::nonce()
        ));
        let build = || -> Result<ProbeSite, String> {
            let tree =
                crate::host::cleanup::Tree::make(&made, binary, |d| std::fs::create_dir_all(d))
                    .map_err(|e| {
                        format!("cannot create the probe directory {}: {e}", made.display())
                    })?;
            let base = std::fs::canonicalize(&made)
                .map_err(|e| format!("cannot resolve {}: {e}", made.display()))?;
            let (rw, ro) = (base.join("rw"), base.join("ro"));
            for dir in [&rw, &ro] {
                std::fs::create_dir_all(dir).map_err(|e| {
                    format!("cannot create the probe directory {}: {e}", dir.display())
                })?;
            }
            let mut plan = Plan::resolve(
                &Policy::for_profile(Profile::Shell),
                &Invocation::at(&rw),
                &RealHost::new(home),
            )
            .map_err(|e| format!("cannot plan the probe {what}: {e}"))?;
            // Keep the directory holding `ro` visible (read-only) so the write outside lands on a
            // host-backed path: a sandbox that did not hold would leave the file where the host
            // can see it.
            plan.private_dirs.retain(|d| !ro.starts_with(d));
            // Nothing to protect in a directory made for the probe: no placeholders to make.
            plan.skipped
                .retain(|s| s.reason != cordon_policy::SkipReason::ProtectedMissing);
            let plan = plan.guard(&RealHost::new(None));
            Ok(ProbeSite {
                tree: Some(tree),
                canary: rw.join("canary"),
                outside: ro.join("escape"),
                token: crate::host::token::nonce(),
                plan,
                base,
            })
        };
        build().inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&made);
        })
    }
}

impl Drop for ProbeSite {
    fn drop(&mut self) {
        // The tree removes `made`; `base` is its canonical spelling (the same directory).
        let _ = std::fs::remove_dir_all(&self.base);
        drop(self.tree.take());
    }
}

/// Runs the stage in probe mode through `backend` at a fresh site below `temp_root`, and judges
/// the result on the host (`what` names the sandbox in messages: `jail`, `sandbox`).
pub(crate) fn run_at(
    backend: &dyn crate::backend::Backend,
    temp_root: &Path,
    home: Option<std::ffi::OsString>,
    timeout: std::time::Duration,
    what: &str,
) -> Result<String, String> {
    use crate::host::supervise::{Forward, Supervision};
    let site = ProbeSite::create(temp_root, home, what, backend.stage_binary())?;
    // A stage that could not start in this jail: said, not tried.
    if let Some(refusal) = crate::backend::stage_refusal(backend, &site.plan) {
        return Err(refusal.to_string());
    }
    let (status_read, status_write) =
        crate::host::sys::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let argv = crate::stage::probe_args(
        crate::host::sys::raw(&status_write),
        &site.canary,
        &site.token,
        &site.outside,
    );
    let prepared = backend
        .prepare(
            &crate::backend::JailSpec {
                plan: &site.plan,
                brokers: &[],
                env: &std::collections::BTreeMap::new(),
                stage: crate::backend::StageCall::Args(&argv),
                layers: &[],
                granted_sockets: &[],
            },
            vec![status_write],
        )
        .map_err(|e| format!("cannot prepare the probe {what}: {e}"))?;
    // Ended with a killed launcher like any jail: spawned into a process group of the session
    // reaper's, and known to it by the site's unique path in its command line until it runs,
    // for the moment before bubblewrap arms its namespace's parent-death signal.
    let session = crate::host::reaper::session(backend.stage_binary());
    let _marked = crate::host::reaper::register(
        session,
        crate::host::reaper::Item::Marked(site.canary.as_os_str().as_encoded_bytes().to_vec()),
    );
    let supervised = crate::host::supervise::supervise(
        prepared.command,
        Supervision {
            timeout: Some(timeout),
            output_cap: 4096,
            forward: Forward::No,
            status: Some(status_read),
            inherit_stdin: false,
            hold: prepared.hold,
            session,
            from_long_lived_thread: false,
            supervisor: prepared.supervisor,
        },
    )
    .map_err(|e| format!("cannot start the probe {what}: {e}"))?;
    drop(prepared.scratch);
    judge(
        &supervised,
        &site.canary,
        &site.token,
        &site.outside,
        timeout,
        what,
    )
}
