//! The rules of the generated list, each checked on the list itself.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::common::{
    FDS, argv, build_plan, env, features, line_of, plan_at, policy, read_options, typical_plan,
};
use cordon_bwrap::{BwrapError, Descriptors, Features, Request, STAGE_PATH, build};
use cordon_policy::PathSpec;
use cordon_policy::{
    CredentialMask, EntryKind, FakeHost, Network, Plan, PolicyBuilder, Posture, Profile,
    ProtectedPath, Source,
};

fn shell_host() -> Plan {
    typical_plan(Profile::Shell, Posture::Host)
}

fn run(plan: &Plan) -> cordon_bwrap::BwrapArgs {
    build_plan(plan, None, &argv(&["true"]))
}

fn try_build(plan: &Plan, stage: Option<&Path>, cmd: &[OsString]) -> Result<(), BwrapError> {
    let features = features();
    let env = env();
    build(&Request {
        plan: &plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &env,
        fds: FDS,
        stage,
        argv: cmd,
    })
    .map(|_| ())
}

// --- Namespaces and hardening -------------------------------------------------------------

#[test]
fn namespaces_and_hardening_are_named_one_by_one() {
    let args = run(&shell_host());
    let options = args.options();
    for flag in [
        "--new-session",
        "--die-with-parent",
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--unshare-net",
        "--clearenv",
    ] {
        assert_eq!(
            options.iter().filter(|o| *o == flag).count(),
            1,
            "{flag} once"
        );
    }
    assert!(!options.iter().any(|o| o == "--unshare-all"));
    assert!(!options.iter().any(|o| o == "--share-net"));
    line_of(&args, "--cap-drop ALL");
    line_of(&args, "--seccomp 4");
    line_of(&args, "--chdir /home/u/proj");
    // Every option this crate emits is one the reader knows, with its operands.
    read_options(&options);
}

#[test]
fn network_allowed_keeps_the_host_network_namespace() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(Network::Allowed, Source::Caller);
    let plan = plan_at(&b.build(), &FakeHost::typical(), "/home/u/proj");
    assert!(!run(&plan).options().iter().any(|o| o == "--unshare-net"));
    assert!(
        run(&shell_host())
            .options()
            .iter()
            .any(|o| o == "--unshare-net")
    );
}

#[test]
fn best_effort_options_are_left_out_when_bubblewrap_lacks_them() {
    let features = Features::parse(
        "bubblewrap 0.7.0",
        include_str!("../fixtures/bwrap-0.7.0-trimmed-help.txt"),
    );
    let env = env();
    let plan = shell_host();
    let cmd = argv(&["true"]);
    let args = build(&Request {
        plan: &plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &env,
        fds: FDS,
        stage: None,
        argv: &cmd,
    })
    .unwrap();
    assert!(!args.options().iter().any(|o| o == "--disable-userns"));
    assert!(args.options().iter().any(|o| o == "--unshare-user"));
}

#[test]
fn environment_is_cleared_then_set_in_sorted_order() {
    let args = run(&shell_host());
    let clear = line_of(&args, "--clearenv");
    let home = line_of(&args, "--setenv HOME /home/u");
    let lang = line_of(&args, "--setenv LANG C.UTF-8");
    let path = line_of(&args, "--setenv PATH /usr/bin:/bin");
    assert!(clear < home && home < lang && lang < path);
}

#[test]
fn the_command_goes_after_the_options_and_cannot_add_options() {
    let plan = shell_host();
    let hostile = argv(&["--bind", "/", "/", "--", "--setenv", "LD_PRELOAD", "x"]);
    let benign = run(&plan);
    let args = build_plan(&plan, None, &hostile);
    assert_eq!(args.options(), benign.options());
    assert_eq!(args.command(), hostile.as_slice());
    let list = args.to_list();
    let dashes = list.iter().position(|a| a == "--").unwrap();
    assert_eq!(&list[dashes + 1..], hostile.as_slice());
    assert_eq!(args.command_line(3)[..3], ["--args", "3", "--"]);
    assert_eq!(&args.command_line(3)[3..], hostile.as_slice());
}

#[test]
fn nul_separated_bytes_are_the_options_each_terminated() {
    let args = run(&shell_host());
    let bytes = args.to_nul_separated().unwrap();
    assert_eq!(bytes.last(), Some(&0));
    let back: Vec<OsString> = bytes[..bytes.len() - 1]
        .split(|b| *b == 0)
        .map(|s| OsStr::from_bytes(s).to_os_string())
        .collect();
    assert_eq!(back, args.options());
    assert!(
        !back.iter().any(|a| a == "--"),
        "the command is not in the --args data"
    );
}

// --- Filesystem order -----------------------------------------------------------------------

#[test]
fn host_posture_starts_from_the_read_only_host_root() {
    let args = run(&shell_host());
    let first_mount = args
        .steps()
        .iter()
        .position(|s| s[0] == "--ro-bind" || s[0] == "--tmpfs" || s[0] == "--dev")
        .unwrap();
    assert_eq!(args.steps()[first_mount], ["--ro-bind", "/", "/"]);
    assert!(!args.options().iter().any(|o| o == "--symlink"));
}

#[test]
fn minimal_posture_starts_empty_and_seals_its_root_last() {
    let args = run(&typical_plan(Profile::Shell, Posture::Minimal));
    assert!(
        !args.steps().iter().any(|s| *s == ["--ro-bind", "/", "/"]),
        "no host root"
    );
    line_of(&args, "--symlink usr/bin /bin");
    line_of(&args, "--ro-bind /usr /usr");
    let seal = line_of(&args, "--remount-ro /");
    let rendered = args.render();
    let lines: Vec<&str> = rendered.lines().collect();
    let last_mount = lines
        .iter()
        .rposition(|l| {
            [
                "--ro-bind",
                "--bind",
                "--tmpfs",
                "--symlink",
                "--perms",
                "--dev",
                "--proc",
            ]
            .iter()
            .any(|f| l.starts_with(f))
        })
        .unwrap();
    assert!(seal > last_mount);
    assert!(
        !run(&shell_host())
            .steps()
            .iter()
            .any(|s| *s == ["--remount-ro", "/"])
    );
}

#[test]
fn private_tmp_comes_before_a_workspace_under_tmp() {
    let host = FakeHost::typical().dir("/tmp/ws");
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, "/tmp/ws");
    let args = run(&plan);
    assert!(line_of(&args, "--tmpfs /tmp") < line_of(&args, "--bind /tmp/ws /tmp/ws"));
    line_of(&args, "--chdir /tmp/ws");
}

#[test]
fn masks_inside_a_writable_root_come_after_its_bind() {
    let host = FakeHost::typical()
        .file("/home/u/proj/.env", "TOKEN=x")
        .dir("/home/u/proj/secrets");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_mask(PathSpec::parse(".env").unwrap(), Source::Caller)
        .unwrap();
    b.add_mask(PathSpec::parse("secrets").unwrap(), Source::Caller)
        .unwrap();
    let plan = plan_at(&b.build(), &host, "/home/u/proj");
    let args = run(&plan);
    let root = line_of(&args, "--bind /home/u/proj /home/u/proj");
    assert!(root < line_of(&args, "--ro-bind /dev/null /home/u/proj/.env"));
    assert!(
        root < line_of(
            &args,
            "--perms 0000 --tmpfs /home/u/proj/secrets --remount-ro /home/u/proj/secrets"
        )
    );
}

#[test]
fn protected_paths_come_after_their_writable_root() {
    let args = run(&shell_host());
    let root = line_of(&args, "--bind /home/u/proj /home/u/proj");
    assert!(
        root < line_of(
            &args,
            "--ro-bind /home/u/proj/.git/hooks /home/u/proj/.git/hooks"
        )
    );
    assert!(
        root < line_of(
            &args,
            "--ro-bind /home/u/proj/.git/config /home/u/proj/.git/config"
        )
    );
}

#[test]
fn minimal_home_tmpfs_comes_before_the_toolchain_binds_in_it() {
    let args = run(&typical_plan(Profile::Shell, Posture::Minimal));
    let home = line_of(&args, "--tmpfs /home/u");
    assert!(home < line_of(&args, "--ro-bind /home/u/.rustup /home/u/.rustup"));
    assert!(home < line_of(&args, "--ro-bind /home/u/.cargo /home/u/.cargo"));
    assert!(home < line_of(&args, "--bind /home/u/proj /home/u/proj"));
    // The credential file inside the bound toolchain tree is masked after the tree.
    assert!(
        line_of(&args, "--ro-bind /home/u/.cargo /home/u/.cargo")
            < line_of(&args, "--ro-bind /dev/null /home/u/.cargo/credentials.toml")
    );
}

#[test]
fn same_path_ties_end_with_the_most_restrictive_operation() {
    // Constructed directly: a resolved plan never has these overlaps, but the order must still
    // be deliberate. At one path: blank < read-only < writable < protected < mask.
    let mut plan = shell_host();
    let p = PathBuf::from("/home/u/proj/data");
    plan.read_only.push(cordon_policy::Bind {
        source: p.clone(),
        dest: p.clone(),
    });
    plan.private_dirs.push(p.clone());
    plan.writable.push(p.clone());
    plan.protected.push(ProtectedPath {
        path: p.clone(),
        kind: EntryKind::Dir,
        root: p.clone(),
    });
    plan.masks.push(CredentialMask {
        target: p.clone(),
        requested: p.clone(),
        kind: EntryKind::File,
    });
    let args = run(&plan);
    let d = "/home/u/proj/data";
    let at = |l: String| line_of(&args, &l);
    let blank = at(format!("--tmpfs {d}"));
    let writable = at(format!("--bind {d} {d}"));
    let read_only: Vec<usize> = args
        .render()
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == format!("--ro-bind {d} {d}"))
        .map(|(i, _)| i)
        .collect();
    let mask = at(format!("--ro-bind /dev/null {d}"));
    assert_eq!(
        read_only.len(),
        2,
        "the read-only bind and the protected re-bind"
    );
    assert!(blank < read_only[0] && read_only[0] < writable && writable < read_only[1]);
    assert!(read_only[1] < mask);
}

// --- Masks ----------------------------------------------------------------------------------

#[test]
fn skipped_masks_yield_no_operation() {
    let plan = shell_host();
    assert!(
        plan.skipped.len() > 10,
        "the typical host lacks most masked paths"
    );
    let options = run(&plan).options();
    // A missing protected directory gets a placeholder (the guard), bound like an existing one.
    let guarded = plan.guard(&FakeHost::typical());
    let placeholders: Vec<&Path> = guarded
        .placeholders()
        .iter()
        .map(|p| p.path.as_path())
        .collect();
    for skipped in plan
        .skipped
        .iter()
        .filter(|s| !placeholders.contains(&s.path.as_path()))
    {
        assert!(
            !options.iter().any(|o| Path::new(o) == skipped.path),
            "{} is skipped but appears",
            skipped.path.display()
        );
    }
    assert!(!options.iter().any(|o| o == "/home/u/.gnupg"));
}

#[test]
fn a_mask_on_a_symlink_masks_its_target() {
    let host = FakeHost::typical()
        .dir("/srv/vault/azure")
        .symlink("/home/u/.azure", "/srv/vault/azure")
        .file("/srv/vault/npmrc", "//registry/:_authToken=x")
        .symlink("/home/u/.npmrc", "../../srv/vault/npmrc");
    let plan = plan_at(
        &policy(Profile::Shell, Posture::Host),
        &host,
        "/home/u/proj",
    );
    let args = run(&plan);
    line_of(
        &args,
        "--perms 0000 --tmpfs /srv/vault/azure --remount-ro /srv/vault/azure",
    );
    line_of(&args, "--ro-bind /dev/null /srv/vault/npmrc");
    let options = args.options();
    assert!(
        !options
            .iter()
            .any(|o| o == "/home/u/.azure" || o == "/home/u/.npmrc")
    );
}

#[test]
fn nothing_is_mounted_below_a_mask() {
    // A protected path inside a masked directory: the mask hides it, and bubblewrap could not
    // create a mount point inside the read-only empty tmpfs anyway.
    let mut plan = shell_host();
    plan.masks.push(CredentialMask {
        target: "/home/u/proj/.git".into(),
        requested: "/home/u/proj/.git".into(),
        kind: EntryKind::Dir,
    });
    let args = run(&plan);
    line_of(
        &args,
        "--perms 0000 --tmpfs /home/u/proj/.git --remount-ro /home/u/proj/.git",
    );
    assert!(
        !args
            .options()
            .iter()
            .any(|o| Path::new(o).starts_with("/home/u/proj/.git") && o != "/home/u/proj/.git")
    );
}

// --- The stage ------------------------------------------------------------------------------

#[test]
fn the_stage_is_bound_read_only_in_the_private_run_and_prefixes_the_command() {
    for posture in [Posture::Host, Posture::Minimal] {
        let plan = typical_plan(Profile::Shell, posture);
        let stage = Path::new("/opt/cordon/bin/cordon");
        let cmd = argv(&["--check", "--", "/bin/sh", "-c", "make"]);
        let args = build_plan(&plan, Some(stage), &cmd);
        let bind = line_of(&args, "--ro-bind /opt/cordon/bin/cordon /run/cordon/stage");
        assert!(line_of(&args, "--tmpfs /run") < bind, "{posture}");
        assert_eq!(args.command()[0], STAGE_PATH);
        assert_eq!(&args.command()[1..], cmd.as_slice());

        let without = build_plan(&plan, None, &cmd);
        assert_eq!(without.command(), cmd.as_slice());
        assert!(!without.options().iter().any(|o| o == STAGE_PATH));
    }
}

#[test]
fn the_stage_is_refused_where_its_mount_point_would_land_on_the_host() {
    let stage = Some(Path::new("/opt/cordon/bin/cordon"));
    let cmd = argv(&["true"]);
    // A host without /run: the host posture has no private /run.
    let mut plan = shell_host();
    plan.private_dirs.retain(|d| d != Path::new("/run"));
    let err = try_build(&plan, stage, &cmd).unwrap_err();
    assert!(
        matches!(&err, BwrapError::StageNotPrivate { covering } if covering == "--ro-bind / /"),
        "{err}"
    );
    // Without a stage the same plan is fine.
    try_build(&plan, None, &cmd).unwrap();

    // A mask over /run would hide the stage.
    let mut plan = shell_host();
    plan.masks.push(CredentialMask {
        target: "/run".into(),
        requested: "/run".into(),
        kind: EntryKind::Dir,
    });
    let err = try_build(&plan, stage, &cmd).unwrap_err();
    assert!(matches!(err, BwrapError::StageNotPrivate { .. }), "{err}");
}

#[test]
fn the_stage_directory_is_reserved() {
    let mut plan = shell_host();
    plan.writable.push("/run/cordon/x".into());
    let err = try_build(&plan, None, &argv(&["true"])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/run/cordon/x lies in /run/cordon, which cordon reserves for its in-jail stage"
    );
}

// --- Refusals -------------------------------------------------------------------------------

#[test]
fn missing_required_features_are_refused_by_name() {
    let features = Features::parse(
        include_str!("../fixtures/bwrap-0.4.1-version.txt"),
        include_str!("../fixtures/bwrap-0.4.1-trimmed-help.txt"),
    );
    let env = env();
    let plan = shell_host();
    let cmd = argv(&["true"]);
    let err = build(&Request {
        plan: &plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &env,
        fds: FDS,
        stage: None,
        argv: &cmd,
    })
    .unwrap_err();
    assert_eq!(
        err,
        BwrapError::MissingFeatures {
            found: "0.4.1".into(),
            missing: vec!["--clearenv", "--perms"],
        }
    );
    assert_eq!(
        err.to_string(),
        "bubblewrap 0.4.1 lacks --clearenv, --perms, which cordon needs to enforce a policy; \
         install bubblewrap 0.5.0 or newer"
    );
}

#[test]
fn bad_inputs_are_refused_naming_the_value() {
    let plan = shell_host();
    let features = features();
    let base_env = env();
    let ok_cmd = argv(&["true"]);
    let attempt = |env: &std::collections::BTreeMap<OsString, OsString>,
                   fds: Descriptors,
                   cmd: &[OsString],
                   plan: &Plan| {
        build(&Request {
            plan: &plan.guard(&cordon_policy::FakeHost::typical()),
            brokers: &[],
            features: &features,
            env,
            fds,
            stage: None,
            argv: cmd,
        })
        .unwrap_err()
    };

    assert_eq!(
        attempt(&base_env, FDS, &[], &plan),
        BwrapError::EmptyCommand
    );
    assert_eq!(
        attempt(&base_env, FDS, &argv(&[""]), &plan),
        BwrapError::EmptyCommand
    );

    let err = attempt(&base_env, FDS, &argv(&["sh", "-c", "a\0b"]), &plan);
    assert!(
        matches!(
            err,
            BwrapError::NulByte {
                what: "command argument",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(r"a\x00b"), "{err}");

    let mut env = base_env.clone();
    env.insert("A=B".into(), "x".into());
    let err = attempt(&env, FDS, &ok_cmd, &plan);
    assert!(matches!(err, BwrapError::InvalidEnvName { .. }), "{err}");

    let mut env = base_env.clone();
    env.insert("TERM".into(), "x\0y".into());
    let err = attempt(&env, FDS, &ok_cmd, &plan);
    assert!(
        matches!(
            err,
            BwrapError::NulByte {
                what: "environment value",
                ..
            }
        ),
        "{err}"
    );

    for fd in [-1, 0, 1, 2] {
        let err = attempt(&base_env, Descriptors { seccomp: fd }, &ok_cmd, &plan);
        assert_eq!(
            err,
            BwrapError::InvalidDescriptor {
                what: "seccomp program",
                fd
            }
        );
    }

    let mut bad = plan.clone();
    bad.writable.push("relative/root".into());
    let err = attempt(&base_env, FDS, &ok_cmd, &bad);
    assert_eq!(
        err.to_string(),
        "writable root relative/root is not an absolute canonical path"
    );

    let mut bad = plan.clone();
    bad.writable.push("/home/u/proj/../../etc".into());
    assert!(matches!(
        attempt(&base_env, FDS, &ok_cmd, &bad),
        BwrapError::NotCanonical { .. }
    ));

    let mut bad = plan.clone();
    bad.masks.push(CredentialMask {
        target: PathBuf::from(OsString::from("/home/u/a\0b")),
        requested: "/home/u/a".into(),
        kind: EntryKind::File,
    });
    assert!(matches!(
        attempt(&base_env, FDS, &ok_cmd, &bad),
        BwrapError::NulByte {
            what: "credential mask",
            ..
        }
    ));
}

#[test]
fn host_sockets_are_masked_after_the_trees_that_show_them() {
    let mut plan = shell_host();
    plan.host_sockets = vec![
        PathBuf::from("/home/u/proj/srv.sock"),
        PathBuf::from("/var/lib/db/db.sock"),
    ];
    let args = run(&plan);
    let steps = args.steps();
    let at = |step: &[&str]| {
        steps
            .iter()
            .position(|s| s == step)
            .unwrap_or_else(|| panic!("{step:?} missing from {steps:?}"))
    };
    let db = at(&["--ro-bind", "/dev/null", "/var/lib/db/db.sock"]);
    let srv = at(&["--ro-bind", "/dev/null", "/home/u/proj/srv.sock"]);
    assert!(at(&["--ro-bind", "/", "/"]) < db);
    assert!(at(&["--bind", "/home/u/proj", "/home/u/proj"]) < srv);
}
