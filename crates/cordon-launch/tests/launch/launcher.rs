//! The launcher's refusals, through its library API with the real stage (this test binary): no
//! trusted bubblewrap, an explicit `warn`, a bubblewrap that does not jail, and a backend that
//! claims enforcement it does not deliver.

use crate::common;

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cordon_launch::Forward;
use cordon_launch::{
    Backend, BackendChoice, BackendReport, BwrapBackend, LaunchError, Launcher, Prepared,
    ProbeOutcome, RunRequest, RunStatus,
};
use cordon_policy::{
    Invocation, Plan, Policy, PolicyBuilder, Profile, RealHost, Source, Unavailable,
};

struct Setup {
    home: tempfile::TempDir,
    work: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let home = common::visible_dir("cordon-test-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(&work).unwrap();
        Setup { home, work }
    }

    fn plan(&self, policy: &Policy) -> Plan {
        let host = RealHost::new(Some(self.home.path().as_os_str().to_owned()));
        Plan::resolve(policy, &Invocation::at(&self.work), &host).unwrap()
    }

    fn config(&self, candidates: &[&str]) -> cordon_launch::BwrapConfig {
        let mut c = Launcher::default_config(
            common::stage().to_path_buf(),
            Some(self.home.path().as_os_str().to_owned()),
            None,
        );
        c.candidates = candidates.iter().map(|s| (*s).to_owned()).collect();
        c
    }

    fn marker(&self) -> (PathBuf, Vec<OsString>) {
        let m = self.work.join("payload-ran");
        (
            m.clone(),
            vec![
                "/bin/sh".into(),
                "-c".into(),
                format!("touch {}", m.display()).into(),
            ],
        )
    }
}

fn request<'a>(
    plan: &'a Plan,
    argv: &'a [OsString],
    env: &'a [(OsString, OsString)],
) -> RunRequest<'a> {
    RunRequest {
        plan,
        argv,
        host_env: env,
        forward: Forward::No,
        inherit_stdin: false,
    }
}

pub fn no_trusted_bubblewrap_refuses_with_the_reason_and_the_ways_out() {
    let s = Setup::new();
    let launcher = Launcher::linux_with(
        s.config(&["/nonexistent/bwrap", "/tmp"]),
        BackendChoice::Bwrap,
    );
    let plan = s.plan(&Policy::for_profile(Profile::Shell));
    let (marker, argv) = s.marker();
    let result = launcher.run(&request(&plan, &argv, &[])).unwrap();
    assert_eq!(result.status, RunStatus::Refused);
    assert_eq!(result.exit_code, 126);
    let reason = result.refusal.unwrap();
    assert!(
        reason.contains("no trusted bubblewrap") && reason.contains("ways out"),
        "{reason}"
    );
    assert!(!marker.exists(), "the payload ran without a jail");
}

pub fn warn_runs_unsandboxed_only_when_set_and_says_so() {
    let s = Setup::new();
    let launcher = Launcher::linux_with(s.config(&["/nonexistent/bwrap"]), BackendChoice::Bwrap);
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_unavailable(Unavailable::Warn, Source::Caller);
    let plan = s.plan(&b.build());
    let (marker, argv) = s.marker();
    let result = launcher.run(&request(&plan, &argv, &[])).unwrap();
    assert_eq!(result.status, RunStatus::Exited);
    assert!(!result.sandboxed);
    assert!(
        result.warnings.iter().any(|w| w.contains("WITHOUT A JAIL")),
        "{:?}",
        result.warnings
    );
    assert!(marker.exists());
}

/// A root-owned directory that is not writable by others, with no such ancestor either (the
/// checkout may live under `/tmp`), for a fake bubblewrap that passes the location checks (tests
/// run as root in CI).
fn trusted_dir() -> PathBuf {
    let dir = Path::new("/var/lib").join(format!("cordon-test-fake-bwrap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub fn a_bubblewrap_that_does_not_jail_fails_the_probe_and_nothing_runs() {
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "this test plants a root-owned fake bubblewrap and must run as root"
    );
    let s = Setup::new();
    let dir = trusted_dir();
    let fake = dir.join("bwrap");
    // Describes itself like the real one, then runs the stage (this test binary) with no jail.
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in --version|--help) exec /usr/bin/bwrap \"$@\";; esac\nshift 4\nexec {} \"$@\"\n",
        common::stage().display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let backend = BwrapBackend::discover(s.config(&[fake.to_str().unwrap()]));
    let outcome = backend.probe();
    assert!(!outcome.enforcing, "{outcome:?}");
    assert!(outcome.detail.contains("outside"), "{}", outcome.detail);
    let launcher = Launcher::new(vec![Box::new(backend)]);
    let plan = s.plan(&Policy::for_profile(Profile::Shell));
    let (marker, argv) = s.marker();
    let result = launcher.run(&request(&plan, &argv, &[])).unwrap();
    assert_eq!(result.status, RunStatus::Refused);
    assert!(!marker.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// Claims enforcement, then runs the stage with no jail at all.
struct Liar;

impl Backend for Liar {
    fn name(&self) -> &'static str {
        "liar"
    }
    fn probe(&self) -> ProbeOutcome {
        ProbeOutcome {
            enforcing: true,
            backend: "liar".into(),
            detail: "trust me".into(),
            source: "probe".into(),
        }
    }
    fn prepare(
        &self,
        spec: &cordon_launch::JailSpec<'_>,
        status: Vec<OwnedFd>,
    ) -> Result<Prepared, LaunchError> {
        let (plan, env) = (spec.plan, spec.env);
        let stage_argv = spec.stage.args(|_| {});
        let mut command = Command::new(common::stage());
        command
            .args(&stage_argv)
            .env_clear()
            .envs(env)
            .current_dir(&plan.cwd);
        let hold: Vec<OwnedFd> = status.into_iter().collect();
        let keep: Vec<i32> = hold.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
        cordon_launch::prepare_child(&mut command, &plan.limits, &keep);
        Ok(Prepared {
            command,
            hold,
            shown: Vec::new(),
            scratch: None,
            startable: Ok(()),
            supervisor: None,
        })
    }
    fn stage_binary(&self) -> Option<&Path> {
        Some(common::stage())
    }
    fn report(&self) -> BackendReport {
        BackendReport {
            name: "liar",
            binary: None,
            version: None,
            features: Vec::new(),
            degradations: Vec::new(),
            unusable: None,
        }
    }
}

pub fn the_in_jail_self_check_stops_a_backend_that_claims_too_much() {
    let s = Setup::new();
    std::fs::create_dir_all(s.home.path().join(".ssh")).unwrap();
    std::fs::write(s.home.path().join(".ssh/id"), "SENTINEL").unwrap();
    let launcher = Launcher::new(vec![Box::new(Liar)]);
    let plan = s.plan(&Policy::for_profile(Profile::Shell));
    let (marker, argv) = s.marker();
    let result = launcher.run(&request(&plan, &argv, &[])).unwrap();
    assert_eq!(result.status, RunStatus::Refused, "{result:?}");
    assert_eq!(result.exit_code, 126);
    assert!(
        result.refusal.as_deref().unwrap().contains("self-check"),
        "{:?}",
        result.refusal
    );
    assert!(
        !marker.exists(),
        "the payload ran although the self-check failed"
    );
    let leftovers: Vec<_> = std::fs::read_dir(s.home.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".cordon-selfcheck")
        })
        .collect();
    assert!(leftovers.is_empty(), "self-check file left on the host");
}

pub fn every_backend_refuses_a_writable_root_that_holds_the_stage_binary() {
    let s = Setup::new();
    let exe = std::fs::canonicalize(common::stage()).unwrap();
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(
        cordon_policy::PathSpec::from_path(exe.parent().unwrap()).unwrap(),
        false,
        Source::Caller,
    );
    let plan = s.plan(&b.build());
    let (marker, argv) = s.marker();
    let result = Launcher::new(vec![Box::new(Liar)])
        .run(&request(&plan, &argv, &[]))
        .unwrap();
    assert_eq!(result.status, RunStatus::Refused, "{result:?}");
    assert!(
        result
            .refusal
            .as_deref()
            .unwrap()
            .contains("could replace it"),
        "{:?}",
        result.refusal
    );
    assert!(!marker.exists());
}

pub fn preparation_walks_once_refuses_what_reaches_outside_and_runs_check_only_identity() {
    let s = Setup::new();
    let launcher = Launcher::linux_with(
        s.config(cordon_launch::TRUSTED_BWRAP_PATHS),
        BackendChoice::Bwrap,
    );
    let plan = s.plan(&Policy::for_profile(Profile::Shell));
    std::fs::create_dir_all(s.work.join("src/deep")).unwrap();
    std::fs::write(s.work.join("src/deep/a.rs"), "fn main() {}\n").unwrap();

    // A clean workspace prepares, and runs.
    let prep = launcher.prepare(&plan).unwrap();
    assert!(prep.findings().is_empty());
    assert_eq!(prep.report().counts.files, 1, "{:?}", prep.report());
    let (marker, argv) = s.marker();
    let env: Vec<(OsString, OsString)> = Vec::new();
    let r = launcher
        .run_prepared(&request(&plan, &argv, &env), &prep)
        .unwrap();
    assert_eq!(r.status, RunStatus::Exited, "{r:?}");
    assert!(marker.exists());

    // The root replaced behind the session's back: refused, nothing runs.
    std::fs::remove_file(&marker).unwrap();
    std::fs::rename(&s.work, s.home.path().join("moved")).unwrap();
    std::fs::create_dir_all(&s.work).unwrap();
    let r = launcher
        .run_prepared(&request(&plan, &argv, &env), &prep)
        .unwrap();
    assert_eq!(r.status, RunStatus::Refused, "{r:?}");
    assert!(
        r.refusal.as_deref().unwrap_or("").contains("prepare again"),
        "{r:?}"
    );
    assert!(!marker.exists(), "the payload ran");

    // A hard link to a file outside the workspace and a FIFO: the preparation refuses both,
    // naming each path and its rule.
    let outside = s.home.path().join("outside.txt");
    std::fs::write(&outside, "host file").unwrap();
    std::fs::hard_link(&outside, s.work.join("link.txt")).unwrap();
    let fifo = s.work.join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    let err = launcher.prepare(&plan).unwrap_err().to_string();
    assert!(err.contains("link.txt") && err.contains("pipe"), "{err}");
}
