//! The Seatbelt backend: `/usr/bin/sandbox-exec` running cordon's stage under a profile that
//! `cordon-seatbelt` generates from the plan.
//!
//! This module compiles and is unit-tested on every OS; only its *selection* is macOS-only
//! ([`SeatbeltBackend::is_platform_backend`]). It finds `sandbox-exec` at
//! [`cordon_seatbelt::SANDBOX_EXEC`] and nowhere else (root-owned, not writable by group or
//! others, checked like bubblewrap), and proves enforcement the way the bubblewrap backend does:
//! a throwaway sandbox whose stage writes a canary inside a writable root and tries a write
//! outside it, both judged on the host.
//!
//! Each command gets a private temporary directory (mode 0700, under the host's temporary
//! directory), writable in the profile and set as `TMPDIR`; the backend removes the directories it
//! made when it is dropped. The environment is passed as the process environment (sandbox-exec
//! keeps it), so nothing of it appears on the command line.
//!
//! Seatbelt reports denials to the system log, not to the command: [`recognise`] turns such lines
//! (and `sandbox-exec`'s own complaints) into the launcher's [`Violation`]s.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cordon_env::ChildEnv;
use cordon_policy::{HostFacts, Plan, RealHost};
use cordon_seatbelt::{Denial, DenialKind, GENERATOR_VERSION, SANDBOX_EXEC, SeatbeltExtras};

use crate::backend::probe::{self, ProbeKey};
use crate::backend::{Backend, BackendReport, JailSpec, Prepared, ProbeOutcome, locate};
use crate::error::LaunchError;
use crate::host::supervise::{self, Forward, Supervision};
use crate::host::sys;
use crate::host::token::nonce;
use crate::stage::{self, self_check};
use crate::violations::{self, Violation, ViolationKind};

/// The backend's name in results and reports.
pub const NAME: &str = "seatbelt";

/// What the Seatbelt backend needs.
#[derive(Debug, Clone)]
pub struct SeatbeltConfig {
    /// The binary that contains the stage (the cordon binary); run inside the sandbox.
    pub stage_binary: PathBuf,
    /// The home directory, for the probe's plan and for resolving paths.
    pub home: Option<OsString>,
    /// The per-user probe cache file, if any.
    pub cache_file: Option<PathBuf>,
    /// How long the probe may take.
    pub probe_timeout: Duration,
    /// Where the private temporary directories are made.
    pub temp_root: PathBuf,
    /// Glob rules added to every profile.
    pub extras: SeatbeltExtras,
}

impl SeatbeltConfig {
    /// The defaults for a launcher whose stage is `stage_binary`: the host's temporary directory,
    /// the same cache file as the bubblewrap backend, a ten-second probe.
    pub fn new(
        stage_binary: PathBuf,
        home: Option<OsString>,
        xdg_cache_home: Option<OsString>,
    ) -> SeatbeltConfig {
        SeatbeltConfig {
            stage_binary,
            cache_file: crate::dirs::CordonDirs::from_vars(
                home.as_deref(),
                None,
                xdg_cache_home.as_deref(),
            )
            .probe_cache(),
            home,
            probe_timeout: Duration::from_secs(10),
            temp_root: std::env::temp_dir(),
            extras: SeatbeltExtras::default(),
        }
    }
}

/// `sandbox-exec`, found at its one trusted location.
#[derive(Debug)]
pub struct SeatbeltBackend {
    config: SeatbeltConfig,
    found: Result<PathBuf, String>,
    outcome: OnceLock<ProbeOutcome>,
    made: Mutex<Vec<PathBuf>>,
}

impl SeatbeltBackend {
    /// Looks for `sandbox-exec` at [`SANDBOX_EXEC`] only.
    pub fn discover(config: SeatbeltConfig) -> SeatbeltBackend {
        let found = locate::check_trusted(Path::new(SANDBOX_EXEC))
            .map_err(|why| format!("no trusted sandbox-exec at {SANDBOX_EXEC}: {why}"));
        SeatbeltBackend {
            config,
            found,
            outcome: OnceLock::new(),
            made: Mutex::new(Vec::new()),
        }
    }

    /// True on the one OS where this backend is the one to use.
    pub fn is_platform_backend() -> bool {
        cfg!(target_os = "macos")
    }

    fn probe_key(path: &Path) -> ProbeKey {
        let base = ProbeKey::for_binary(path);
        ProbeKey(format!("{}-seatbelt-{GENERATOR_VERSION}", base.0))
    }

    /// Makes a fresh private temporary directory and remembers it for removal.
    fn make_tmpdir(&self) -> Result<PathBuf, LaunchError> {
        let dir =
            self.config
                .temp_root
                .join(format!("cordon-tmp-{}-{}", std::process::id(), nonce()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(LaunchError::io(format!(
                "creating the private temporary directory {}",
                dir.display()
            )))?;
        let dir = std::fs::canonicalize(&dir).map_err(LaunchError::io(format!(
            "resolving the private temporary directory {}",
            dir.display()
        )))?;
        if let Ok(mut made) = self.made.lock() {
            made.push(dir.clone());
        }
        Ok(dir)
    }

    fn run_probe(&self, binary: &Path) -> ProbeOutcome {
        let outcome = |enforcing: bool, detail: String| ProbeOutcome {
            enforcing,
            backend: NAME.into(),
            detail,
            source: "probe".into(),
        };
        match probe_sandbox(self, binary) {
            Ok(detail) => outcome(true, detail),
            Err(detail) => outcome(false, detail),
        }
    }
}

impl Drop for SeatbeltBackend {
    fn drop(&mut self) {
        if let Ok(made) = self.made.get_mut() {
            for dir in made.drain(..) {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

fn seatbelt_error(e: cordon_seatbelt::SeatbeltError) -> LaunchError {
    LaunchError::Io {
        what: "building the Seatbelt profile".into(),
        source: std::io::Error::other(e),
    }
}

/// The `sandbox-exec` invocation for `plan`: the stage binary first, then `stage_argv`.
fn build(
    plan: &Plan,
    host: &dyn HostFacts,
    tmpdir: &Path,
    config: &SeatbeltConfig,
    stage_argv: &[OsString],
) -> Result<cordon_seatbelt::SandboxExec, LaunchError> {
    cordon_seatbelt::build(&cordon_seatbelt::Request {
        plan,
        host,
        tmpdir,
        extras: &config.extras,
        stage: Some(&config.stage_binary),
        argv: stage_argv,
    })
    .map_err(seatbelt_error)
}

impl Backend for SeatbeltBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn probe(&self) -> ProbeOutcome {
        self.outcome
            .get_or_init(|| {
                let binary = match &self.found {
                    Ok(b) => b,
                    Err(why) => {
                        return ProbeOutcome {
                            enforcing: false,
                            backend: NAME.into(),
                            detail: why.clone(),
                            source: "probe".into(),
                        };
                    }
                };
                let key = Self::probe_key(binary);
                if let Some(o) = probe::lookup(&key, self.config.cache_file.as_deref()) {
                    return o;
                }
                let outcome = self.run_probe(binary);
                probe::record(&key, &outcome, self.config.cache_file.as_deref(), "", "");
                outcome
            })
            .clone()
    }

    fn prepare(&self, spec: &JailSpec<'_>, status: Vec<OwnedFd>) -> Result<Prepared, LaunchError> {
        let (plan, env) = (spec.plan, spec.env);
        let stage_argv = &spec.stage.args(|_| {});
        let binary = self.found.as_ref().map_err(|why| LaunchError::Io {
            what: "sandbox-exec".into(),
            source: std::io::Error::other(why.clone()),
        })?;
        let tmpdir = self.make_tmpdir()?;
        let host = RealHost::new(self.config.home.clone());
        let exec = build(plan, &host, &tmpdir, &self.config, stage_argv)?;
        let mut command = Command::new(binary);
        command
            .args(exec.args())
            .env_clear()
            .envs(env)
            .env("TMPDIR", &tmpdir)
            .envs(plan.jail_env())
            .current_dir(&plan.cwd);
        for name in ["TMP", "TEMP"] {
            if env.contains_key(OsStr::new(name)) {
                command.env(name, &tmpdir);
            }
        }
        let hold: Vec<OwnedFd> = status.into_iter().collect();
        let keep: Vec<i32> = hold.iter().map(sys::raw).collect();
        sys::prepare_child(&mut command, &plan.limits, &keep);
        let mut shown: Vec<OsString> = vec![binary.clone().into_os_string()];
        shown.extend(exec.args());
        Ok(Prepared {
            command,
            hold,
            shown,
            scratch: None,
            startable: Ok(()),
            supervisor: None,
        })
    }

    fn runs_stage_in_place(&self) -> bool {
        true
    }

    fn stage_binary(&self) -> Option<&Path> {
        Some(&self.config.stage_binary)
    }

    fn report(&self) -> BackendReport {
        BackendReport {
            name: NAME,
            binary: self.found.as_ref().ok().map(|p| p.display().to_string()),
            version: None,
            features: vec![format!("profile generator {GENERATOR_VERSION}")],
            degradations: Vec::new(),
            unusable: self.found.as_ref().err().cloned(),
        }
    }
}

/// Runs the stage in probe mode in a throwaway sandbox and judges the result on the host.
fn probe_sandbox(backend: &SeatbeltBackend, binary: &Path) -> Result<String, String> {
    let site = probe::ProbeSite::create(
        &backend.config.temp_root,
        backend.config.home.clone(),
        "sandbox",
        Some(&backend.config.stage_binary),
    )?;
    let tmp = site.base.join("tmp");
    std::fs::create_dir_all(&tmp)
        .map_err(|e| format!("cannot create the probe directory {}: {e}", tmp.display()))?;
    let host = RealHost::new(backend.config.home.clone());
    let (status_read, status_write) =
        sys::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let argv = stage::probe_args(
        sys::raw(&status_write),
        &site.canary,
        &site.token,
        &site.outside,
    );
    let exec = build(&site.plan, &host, &tmp, &backend.config, &argv)
        .map_err(|e| format!("cannot prepare the probe sandbox: {e}"))?;
    let mut command = Command::new(binary);
    command
        .args(exec.args())
        .env_clear()
        .env("TMPDIR", &tmp)
        .current_dir(&site.plan.cwd);
    let keep = [sys::raw(&status_write)];
    sys::prepare_child(&mut command, &site.plan.limits, &keep);
    let supervised = supervise::supervise(
        command,
        Supervision {
            timeout: Some(backend.config.probe_timeout),
            output_cap: 4096,
            forward: Forward::No,
            status: Some(status_read),
            inherit_stdin: false,
            hold: vec![status_write],
            session: None,
            from_long_lived_thread: false,
            supervisor: None,
        },
    )
    .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    probe::judge(
        &supervised,
        &site.canary,
        &site.token,
        &site.outside,
        backend.config.probe_timeout,
        "sandbox",
    )
}

/// What `cordon explain --platform macos` prints: the profile, and the argument list with the
/// profile shown as `<the profile above>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// The profile text.
    pub profile: String,
    /// [`SANDBOX_EXEC`], then its arguments.
    pub args: Vec<OsString>,
}

/// The invocation `run` would use on macOS for `argv`, built without probing, running or making
/// anything, on any OS. The temporary directory is named as it would be, not created. Refuses
/// what `run` refuses (an empty command, environment names never passed).
pub fn explain(
    plan: &Plan,
    argv: &[OsString],
    host_env: &[(OsString, OsString)],
    host: &dyn HostFacts,
    config: &SeatbeltConfig,
) -> Result<Explained, LaunchError> {
    if argv.is_empty() {
        return Err(LaunchError::EmptyCommand);
    }
    ChildEnv::build(host_env.iter().cloned(), &plan.env)?;
    // The plan a run hands the backend: guarded, as the launcher guards it.
    let plan = &plan.guard(host);
    let tmpdir = config
        .temp_root
        .join(format!("cordon-tmp-{}", std::process::id()));
    let stage_argv = stage::check_args(&self_check(plan, -1), argv);
    let exec = build(plan, host, &tmpdir, config, &stage_argv)?;
    let mut args: Vec<OsString> = vec![SANDBOX_EXEC.into()];
    for (i, arg) in exec.args().into_iter().enumerate() {
        args.push(if i == 1 {
            "<the profile above>".into()
        } else {
            arg
        });
    }
    Ok(Explained {
        profile: exec.profile().to_owned(),
        args,
    })
}

/// The launcher's event for a parsed denial: the kinds correspond one for one.
pub fn to_violation(denial: &Denial) -> Violation {
    let kind = match denial.kind {
        DenialKind::WriteDenied => ViolationKind::WriteDenied,
        DenialKind::AccessDenied => ViolationKind::AccessDenied,
        DenialKind::NetworkDenied => ViolationKind::NetworkDenied,
        DenialKind::JailSetup => ViolationKind::JailSetup,
        _ => ViolationKind::OperationDenied,
    };
    Violation {
        kind,
        line: denial.line.clone(),
        path: None,
        rule: None,
        host: None,
        port: None,
        key: None,
        operation: None,
    }
}

/// Denials in `text` — Seatbelt's log lines and `sandbox-exec`'s messages, else the texts the
/// kernel's errors produce (`Operation not permitted`) — at most 64.
pub fn recognise(text: &[u8]) -> Vec<Violation> {
    let mut out = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        match cordon_seatbelt::parse_denial(&String::from_utf8_lossy(line)) {
            Some(denial) => out.push(to_violation(&denial)),
            None => out.extend(violations::recognise(line)),
        }
        if out.len() >= 64 {
            out.truncate(64);
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::FakeHost;
    use cordon_policy::{Invocation, Policy, Profile};

    fn config() -> SeatbeltConfig {
        SeatbeltConfig {
            stage_binary: PathBuf::from("/opt/cordon/bin/cordon"),
            home: Some("/home/u".into()),
            cache_file: None,
            probe_timeout: Duration::from_secs(1),
            temp_root: PathBuf::from("/tmp"),
            extras: SeatbeltExtras::default(),
        }
    }

    fn plan(host: &FakeHost) -> Plan {
        Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at("/home/u/proj"),
            host,
        )
        .unwrap()
    }

    #[test]
    fn looks_only_at_the_system_copy_and_says_why_it_is_unusable() {
        let backend = SeatbeltBackend::discover(config());
        let report = backend.report();
        assert_eq!(report.name, "seatbelt");
        if Path::new(SANDBOX_EXEC).exists() {
            return; // a Mac: the probe is a real one, exercised by the end-to-end tests there
        }
        let why = report.unusable.unwrap();
        assert!(why.contains("/usr/bin/sandbox-exec"), "{why}");
        let outcome = backend.probe();
        assert!(!outcome.enforcing);
        assert_eq!(outcome.backend, "seatbelt");
        assert!(outcome.detail.contains("/usr/bin/sandbox-exec"));
        let err = backend
            .prepare(
                &JailSpec {
                    plan: &plan(&FakeHost::typical()).guard(&FakeHost::typical()),
                    brokers: &[],
                    env: &std::collections::BTreeMap::new(),
                    stage: crate::backend::StageCall::Args(&["true".into()]),
                    layers: &[],
                    granted_sockets: &[],
                },
                Vec::new(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("sandbox-exec"), "{err}");
        assert_eq!(
            SeatbeltBackend::is_platform_backend(),
            cfg!(target_os = "macos")
        );
    }

    #[test]
    fn explain_shows_the_profile_and_every_argument_on_any_os() {
        let host = FakeHost::typical();
        let argv = [OsString::from("/bin/true")];
        let shown = explain(&plan(&host), &argv, &[], &host, &config()).unwrap();
        assert!(shown.profile.starts_with("; cordon Seatbelt profile"));
        assert!(shown.profile.contains("(deny default)"));
        assert_eq!(shown.args[0], "/usr/bin/sandbox-exec");
        assert_eq!(shown.args[1], "-p");
        assert_eq!(shown.args[2], "<the profile above>");
        assert!(shown.args.contains(&"-DWRITABLE_0=/home/u/proj".into()));
        let dashes = shown.args.iter().position(|a| a == "--").unwrap();
        assert_eq!(shown.args[dashes + 1], "/opt/cordon/bin/cordon");
        assert_eq!(shown.args[dashes + 2], stage::STAGE_ARG);
        assert_eq!(shown.args.last().unwrap(), "/bin/true");
        assert!(matches!(
            explain(&plan(&host), &[], &[], &host, &config()),
            Err(LaunchError::EmptyCommand)
        ));
    }

    #[test]
    fn denials_map_one_for_one_and_other_texts_still_count() {
        let text = b"kernel: (Sandbox) Sandbox: cat(7) deny(1) file-read-data /Users/u/.ssh/id\n\
Sandbox: touch(8) deny(1) file-write-create /etc/x\n\
Sandbox: curl(9) deny(1) network-outbound 1.2.3.4:443\n\
Sandbox: sh(10) deny(1) mach-lookup com.apple.pasteboard.1\n\
sandbox-exec: sandbox_apply: Operation not permitted\n\
rm: x: Operation not permitted\n\
fine\n";
        let kinds: Vec<ViolationKind> = recognise(text).into_iter().map(|v| v.kind).collect();
        assert_eq!(
            kinds,
            [
                ViolationKind::AccessDenied,
                ViolationKind::WriteDenied,
                ViolationKind::NetworkDenied,
                ViolationKind::OperationDenied,
                ViolationKind::JailSetup,
                ViolationKind::OperationDenied,
            ]
        );
        let v = recognise(b"Sandbox: cat(7) deny(1) file-read-data /x\n");
        assert_eq!(v[0].line, "Sandbox: cat(7) deny(1) file-read-data /x");
    }

    #[test]
    fn private_temporary_directories_are_made_private_and_removed_on_drop() {
        let root = std::env::temp_dir().join(format!("cordon-sb-test-{}", nonce()));
        std::fs::create_dir_all(&root).unwrap();
        let backend = SeatbeltBackend::discover(SeatbeltConfig {
            temp_root: root.clone(),
            ..config()
        });
        let dir = backend.make_tmpdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::fs::write(dir.join("f"), "x").unwrap();
        drop(backend);
        assert!(!dir.exists());
        std::fs::remove_dir_all(root).unwrap();
    }
}
