//! Large inputs through the libraries, on the real filesystem: ten thousand credential masks from
//! a configuration file (policy resolution, bubblewrap arguments, Seatbelt profile), megabyte
//! command lines (the floor), and 4,000-byte paths (as workspace, as a mask, in configuration).
//! Each test asserts the exact result, or the exact error and the rule it names; nothing panics.
//!
//! The same sizes through the `cordon` binary, and a 100 MB output flood through `cordon run`,
//! are in `crates/cordon/tests/cli/large_inputs.rs` and `crates/cordon/tests/cli/large_inputs.rs`.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_bwrap::{Descriptors, FEATURE_USES, Features, Request};
use cordon_floor::{Floor, FloorConfig, Rule, Verdict};
use cordon_policy::{
    ConfigLayer, EntryKind, Invocation, LayerKind, Overrides, Plan, PolicyError, RealHost,
    SkipReason, effective_policy,
};
use cordon_seatbelt::{GlobRule, SeatbeltError, SeatbeltExtras};

/// Masks named by the project file; every other one exists.
const MASKS: usize = 10_000;

/// A temporary home holding a workspace `proj`.
struct Home {
    dir: tempfile::TempDir,
    work: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.path().join(".ssh")).unwrap();
        let work = work.canonicalize().unwrap();
        Home { dir, work }
    }

    fn host(&self) -> RealHost {
        RealHost::new(Some(self.dir.path().as_os_str().to_owned()))
    }

    /// The plan for the workspace with `project` as its `.cordon.toml` text.
    fn plan(&self, project: &str) -> Result<Plan, PolicyError> {
        self.plan_at(&self.work, project)
    }

    fn plan_at(&self, cwd: &Path, project: &str) -> Result<Plan, PolicyError> {
        let layer =
            ConfigLayer::parse(project, &self.work.join(".cordon.toml"), LayerKind::Project)?;
        let policy = effective_policy(None, Some(&layer), &Overrides::default())?.policy;
        Plan::resolve(&policy, &Invocation::at(cwd), &self.host())
    }
}

fn features() -> Features {
    let help: Vec<&str> = FEATURE_USES.iter().map(|f| f.flag).collect();
    Features::parse("bubblewrap 0.8.0", &help.join("\n"))
}

fn bwrap(plan: &Plan) -> Result<cordon_bwrap::BwrapArgs, cordon_bwrap::BwrapError> {
    let features = features();
    let env = BTreeMap::from([(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))]);
    let argv = [OsString::from("true")];
    cordon_bwrap::build(&Request {
        plan: &plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &env,
        fds: Descriptors { seccomp: 4 },
        stage: None,
        argv: &argv,
    })
}

fn seatbelt(
    plan: &Plan,
    host: &RealHost,
    extras: &SeatbeltExtras,
) -> Result<cordon_seatbelt::SandboxExec, SeatbeltError> {
    let argv = [OsString::from("true")];
    cordon_seatbelt::build(&cordon_seatbelt::Request {
        plan,
        host,
        tmpdir: Path::new("/tmp/cordon-large-inputs"),
        extras,
        stage: None,
        argv: &argv,
    })
}

fn mask_name(i: usize) -> String {
    format!("d{:02}/k{i:05}", i / 100)
}

#[test]
fn ten_thousand_masks_resolve_and_generate() {
    let home = Home::new();
    for i in (0..MASKS).step_by(2) {
        let path = home.work.join(mask_name(i));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "SENTINEL").unwrap();
    }
    let list: Vec<String> = (0..MASKS).map(|i| format!("{:?}", mask_name(i))).collect();
    let project = format!("[filesystem]\ndeny_read = [{}]\n", list.join(", "));
    assert!(project.len() > 100_000, "{} bytes", project.len());

    // Policy resolution: every existing mask is in force, every missing one is listed as skipped.
    let plan = home.plan(&project).unwrap();
    let in_work: Vec<_> = plan
        .masks
        .iter()
        .filter(|m| m.target.starts_with(&home.work))
        .collect();
    assert_eq!(in_work.len(), MASKS / 2);
    assert!(in_work.iter().all(|m| m.kind == EntryKind::File));
    let skipped = plan
        .skipped
        .iter()
        .filter(|s| s.path.starts_with(&home.work) && s.reason == SkipReason::MaskMissing)
        .count();
    assert_eq!(skipped, MASKS / 2);

    // bubblewrap: one `--ro-bind /dev/null P` per existing mask, all through the descriptor.
    let args = bwrap(&plan).unwrap();
    let mask_steps: HashSet<PathBuf> = args
        .steps()
        .iter()
        .filter(|s| s.len() == 3 && s[0] == "--ro-bind" && s[1] == "/dev/null")
        .map(|s| PathBuf::from(&s[2]))
        .filter(|p| p.starts_with(&home.work))
        .collect();
    for i in 0..MASKS {
        let path = home.work.join(mask_name(i));
        assert_eq!(mask_steps.contains(&path), i % 2 == 0, "{}", path.display());
    }
    let bytes = args.to_nul_separated().unwrap();
    assert!(bytes.len() < 4 << 20, "{} bytes of options", bytes.len());

    // Seatbelt: every mask, existing or not, is a parameter the mask rule names.
    let exec = seatbelt(&plan, &home.host(), &SeatbeltExtras::default()).unwrap();
    let masked: HashSet<PathBuf> = exec
        .params()
        .iter()
        .filter(|p| p.name.starts_with("MASK_"))
        .map(|p| PathBuf::from(&p.value))
        .collect();
    for i in 0..MASKS {
        let path = home.work.join(mask_name(i));
        assert!(masked.contains(&path), "{} is not masked", path.display());
    }
    assert!(
        exec.profile()
            .contains(&format!("(param \"MASK_{}\")", masked.len() - 1))
    );
}

#[test]
fn a_megabyte_command_line_gets_its_verdict() {
    let floor = Floor::new(FloorConfig {
        home: Some("/home/u".into()),
        ..FloorConfig::default()
    });
    let filler = "echo build-step-output; ".repeat(1 << 20 >> 5);
    assert!(filler.len() >= 700_000);

    assert_eq!(floor.check(&filler), Verdict::Allow);
    assert_eq!(
        floor.check(&format!("{filler}rm -rf ~")).rule(),
        Some(Rule::RecursiveDelete)
    );
    assert_eq!(
        floor.check(&format!("rm -rf / ; {filler}")).rule(),
        Some(Rule::RecursiveDelete)
    );
    // One megabyte in a single word, and as arguments the way `cordon run` passes them.
    let word = "a".repeat(1 << 20);
    assert_eq!(floor.check(&format!("ls {word}")), Verdict::Allow);
    let sixteen: Vec<String> = (0..16).map(|_| "x".repeat(1 << 16)).collect();
    let mut argv: Vec<&str> = vec!["rm", "-rf"];
    argv.extend(sixteen.iter().map(String::as_str));
    assert_eq!(floor.check_argv(&argv), Verdict::Allow);
    argv.push("/");
    assert_eq!(floor.check_argv(&argv).rule(), Some(Rule::RecursiveDelete));
    // A megabyte of colour codes and invisible characters around a refused command.
    let noise = "\u{1b}[0m\u{200b}".repeat(1 << 20 >> 4);
    assert_eq!(
        floor.check(&format!("{noise}rm -rf /{noise}")).rule(),
        Some(Rule::RecursiveDelete)
    );
    // Escape sequences that could each hide a command: past the number the floor examines, the
    // line is refused.
    let hiding = format!("{filler}{}", "\u{1b}[1;echo x\u{7}".repeat(100));
    assert_eq!(floor.check(&hiding).rule(), Some(Rule::TooComplex));
    // Each one the floor examines is judged with the rest of the line glued to it: a few placed
    // before a megabyte would make it read the megabyte again for each. Past eight megabytes
    // of such reading in all, the line is refused before any of it is read.
    let first = format!("{}{filler}", "\u{1b}[1;echo x\u{7}".repeat(40));
    match floor.check(&first) {
        Verdict::Refuse {
            rule: Rule::TooComplex,
            reason,
            ..
        } => assert!(reason.contains("characters to judge in all"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let two = format!("{}{filler}", "\u{1b}[1;echo x\u{7}".repeat(2));
    assert_eq!(floor.check(&two), Verdict::Allow);
}

/// A directory below `base` whose path is exactly `total` bytes long, in components of at most
/// 200 bytes (NAME_MAX is 255).
fn long_dir(base: &Path, total: usize) -> PathBuf {
    let mut path = base.to_path_buf();
    let mut len = path.as_os_str().len();
    assert!(len + 2 <= total);
    while len < total {
        let part = (total - len - 1).min(200);
        path.push("p".repeat(part));
        len += part + 1;
    }
    assert_eq!(path.as_os_str().len(), total);
    std::fs::create_dir_all(&path).unwrap();
    path
}

#[test]
fn a_4000_byte_workspace_resolves_and_generates() {
    let home = Home::new();
    let deep = long_dir(&home.work, 4000);

    let plan = home.plan_at(&deep, "").unwrap();
    assert_eq!(plan.cwd, deep);
    assert_eq!(plan.writable, vec![deep.clone()]);

    let args = bwrap(&plan).unwrap();
    let bind = [
        "--bind".into(),
        deep.clone().into_os_string(),
        deep.clone().into(),
    ];
    assert!(args.steps().iter().any(|s| s[..] == bind[..]));
    assert!(
        args.steps()
            .iter()
            .any(|s| s[0] == "--chdir" && s[1] == deep)
    );

    let exec = seatbelt(&plan, &home.host(), &SeatbeltExtras::default()).unwrap();
    assert!(
        exec.params()
            .iter()
            .any(|p| p.name.starts_with("WRITABLE_") && p.value == deep.as_os_str())
    );
    // Paths travel as parameters, so the profile's own strings stay short.
    assert!(exec.profile().len() < 64 << 10);
}

#[test]
fn a_4000_byte_path_as_mask_and_in_configuration() {
    let home = Home::new();
    let deep = long_dir(&home.work, 4000);
    let relative = deep.strip_prefix(&home.work).unwrap().to_str().unwrap();

    // As a mask: in force when it exists, and both generators carry it.
    let plan = home
        .plan(&format!("[filesystem]\ndeny_read = [{relative:?}]\n"))
        .unwrap();
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == deep && m.kind == EntryKind::Dir)
    );
    let args = bwrap(&plan).unwrap();
    assert!(
        args.steps()
            .iter()
            .any(|s| s.len() == 6 && s[2] == "--tmpfs" && s[3] == deep)
    );
    let exec = seatbelt(&plan, &home.host(), &SeatbeltExtras::default()).unwrap();
    assert!(exec.params().iter().any(|p| p.value == deep.as_os_str()));

    // As a writable root in the project file: it resolves inside the workspace and collapses.
    let plan = home
        .plan(&format!("[filesystem]\nwritable = [{relative:?}]\n"))
        .unwrap();
    assert_eq!(plan.writable, vec![home.work.clone()]);

    // A 4,000-byte root that does not exist is refused, naming the rule.
    let missing = format!("{}x", &relative[..relative.len() - 1]);
    let err = home
        .plan(&format!("[filesystem]\nwritable = [{missing:?}]\n"))
        .unwrap_err();
    assert!(matches!(err, PolicyError::RootMissing { .. }), "{err:?}");
    assert!(
        err.to_string()
            .ends_with("x does not exist (rule: roots must exist; cordon never creates them)"),
        "{err}"
    );

    // A 4,000-byte glob base gives a regular expression too long for a Seatbelt string: refused.
    let extras = SeatbeltExtras {
        deny_read: vec![GlobRule::new(deep.clone(), "**/.env")],
        deny_write: Vec::new(),
        proxy_port: None,
    };
    let plan = home.plan("").unwrap();
    let err = seatbelt(&plan, &home.host(), &extras).unwrap_err();
    assert!(
        matches!(err, SeatbeltError::RegexTooLong { max: 1000, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("a Seatbelt string literal holds at most 1000"),
        "{err}"
    );
}

/// A directory below `base` whose path is longer than PATH_MAX (4096), made one component at a
/// time relative to its parent's descriptor, since no single call can name it.
fn past_path_max(base: &Path) -> PathBuf {
    use rustix::fs::{Mode, OFlags, mkdirat, openat};
    let mut dir = openat(
        rustix::fs::CWD,
        base,
        OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let mut path = base.to_path_buf();
    while path.as_os_str().len() <= 4200 {
        let name = "q".repeat(200);
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(
            &dir,
            name.as_str(),
            OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        path.push(name);
    }
    path
}

#[test]
fn a_cwd_past_path_max_is_refused_naming_it() {
    let home = Home::new();
    let long = past_path_max(&home.work);
    assert_eq!(
        std::fs::metadata(&long).unwrap_err().raw_os_error(),
        Some(36),
        "the kernel refuses the whole path (ENAMETOOLONG)"
    );
    let err = home.plan_at(&long, "").unwrap_err();
    assert!(matches!(err, PolicyError::PathTooLong { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cwd {} is {} bytes long, past the kernel's PATH_MAX (at most 4095 bytes): no system call can name it",
            long.display(),
            long.as_os_str().len()
        )
    );
}
