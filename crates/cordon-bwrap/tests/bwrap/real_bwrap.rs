//! The generated list, handed to the real bubblewrap the way the launcher hands it (options
//! through `--args 3`, the seccomp program on descriptor 4, the command after `--`), is accepted
//! and means what the snapshots say. This is not the escape suite (the launcher's); it proves the
//! list is well-formed and that the order works for a workspace under /tmp on a real kernel.
//! It fails, never skips, when bubblewrap is missing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use cordon_bwrap::{Descriptors, Features, Request, build};
use cordon_policy::PathSpec;
use cordon_policy::{Invocation, Plan, PolicyBuilder, Posture, Profile, RealHost, Source};

const BWRAP: &str = "/usr/bin/bwrap";

/// A one-instruction classic BPF program, `ret SECCOMP_RET_ALLOW`: enough to prove bubblewrap
/// loads a program from the descriptor; the real filter is cordon-seccomp's.
const ALLOW_ALL_BPF: [u8; 8] = [0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x7f];

/// Checks run inside the jail; each failure exits with its own code.
const SCRIPT: &str = r#"
touch ./written-inside || exit 10
touch /etc/cordon-escape 2>/dev/null && exit 11
touch .git/hooks/pre-commit 2>/dev/null && exit 12
echo x >> .git/config 2>/dev/null && exit 13
[ -s secret.txt ] && exit 14
ls secretdir >/dev/null 2>&1 && exit 15
[ -z "${HOST_ONLY:-}" ] || exit 16
[ "$CORDON_TEST" = "a b'c" ] || exit 17
[ "$(pwd)" = "$1" ] || exit 18
touch /tmp/private-tmp-is-writable || exit 19
exit 0
"#;

fn features() -> Features {
    assert!(
        Path::new(BWRAP).exists(),
        "{BWRAP} is missing: install bubblewrap (apt-get install bubblewrap); this test does not skip"
    );
    let out = |flag: &str| {
        let o = Command::new(BWRAP).arg(flag).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    Features::parse(&out("--version"), &out("--help"))
}

fn run_in_jail(posture: Posture) {
    let features = features();
    assert!(features.missing_required().is_empty(), "{features:?}");

    let work = tempfile::Builder::new()
        .prefix("cordon-bwrap-")
        .tempdir_in("/tmp")
        .unwrap();
    let ws = work.path().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("secret.txt"), "s3cret").unwrap();
    std::fs::create_dir(ws.join("secretdir")).unwrap();
    std::fs::write(ws.join("secretdir/key"), "k").unwrap();
    let ws = ws.canonicalize().unwrap();

    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_posture(posture, Source::Caller);
    for m in ["secret.txt", "secretdir"] {
        b.add_mask(PathSpec::from_path(&ws.join(m)).unwrap(), Source::Caller)
            .unwrap();
    }
    let host = RealHost::new(std::env::var_os("HOME"));
    let plan = Plan::resolve(&b.build(), &Invocation::at(&ws), &host).unwrap();
    // What the launcher does before bubblewrap starts: make the guard's placeholders.
    let plan = plan.guard(&host);
    for p in plan.placeholders().iter().filter(|p| p.created_for_the_run) {
        match p.kind {
            cordon_policy::PlaceholderKind::Dir => std::fs::create_dir(&p.path).unwrap(),
            cordon_policy::PlaceholderKind::File(content) => {
                std::fs::write(&p.path, content).unwrap()
            }
        }
    }

    let env = BTreeMap::from([
        (OsString::from("PATH"), OsString::from("/usr/bin:/bin")),
        (OsString::from("CORDON_TEST"), OsString::from("a b'c")),
    ]);
    let argv: Vec<OsString> = vec![
        "/bin/sh".into(),
        "-c".into(),
        SCRIPT.into(),
        "sh".into(),
        ws.clone().into(),
    ];
    let args = build(&Request {
        plan: &plan,
        brokers: &[],
        features: &features,
        env: &env,
        fds: Descriptors { seccomp: 4 },
        stage: Some(Path::new("/usr/bin/env")),
        argv: &argv,
    })
    .unwrap();

    let args_file = work.path().join("args");
    let bpf_file = work.path().join("bpf");
    std::fs::write(&args_file, args.to_nul_separated().unwrap()).unwrap();
    std::fs::write(&bpf_file, ALLOW_ALL_BPF).unwrap();
    // The shell only opens the two descriptors and execs bubblewrap.
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "exec {BWRAP} \"$@\" 3<\"$ARGS_FILE\" 4<\"$BPF_FILE\""
        ))
        .arg("sh")
        .args(args.command_line(3))
        .env_clear()
        .env("ARGS_FILE", &args_file)
        .env("BPF_FILE", &bpf_file)
        .env("HOST_ONLY", "must not reach the jail")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{posture}: status {:?}\nstderr: {}\nrules:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        args.render()
    );
    assert!(
        ws.join("written-inside").exists(),
        "the workspace under /tmp is the host's"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!Path::new("/etc/cordon-escape").exists());
    assert!(!Path::new("/tmp/private-tmp-is-writable").exists());
}

#[test]
fn host_posture_is_accepted_by_real_bubblewrap() {
    run_in_jail(Posture::Host);
}

#[test]
fn minimal_posture_is_accepted_by_real_bubblewrap() {
    run_in_jail(Posture::Minimal);
}

/// Runs bubblewrap with `options` on descriptor 3 and the command line the launcher uses.
fn bwrap_with(options: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("args");
    let mut bytes = Vec::new();
    for o in options {
        bytes.extend_from_slice(o.as_bytes());
        bytes.push(0);
    }
    std::fs::write(&file, bytes).unwrap();
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("exec {BWRAP} \"$@\" 3<\"$ARGS_FILE\""))
        .arg("sh")
        .args(["--args", "3", "--", "/bin/true"])
        .env_clear()
        .env("ARGS_FILE", &file)
        .output()
        .unwrap()
}

#[test]
fn max_arguments_is_what_real_bubblewrap_takes() {
    let _ = features();
    let line = ["--args", "3", "--", "/bin/true"].len();
    let fill = |n: usize| -> Vec<&str> {
        let mut o = vec!["--ro-bind", "/", "/"];
        o.resize(n, "--unshare-ipc");
        o
    };
    let most = cordon_bwrap::MAX_ARGUMENTS - line;
    assert!(cordon_bwrap::check_argument_count(most, line).is_ok());
    let out = bwrap_with(&fill(most));
    assert!(
        out.status.success(),
        "{most} options: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = cordon_bwrap::check_argument_count(most + 1, line).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the jail needs 9001 bubblewrap arguments, and bubblewrap reads at most 9000: each masked \
         file takes 3 (about 2,900 masks fit); mask a directory instead of its files"
    );
    let out = bwrap_with(&fill(most + 1));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Exceeded maximum number of arguments"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A directory whose path is exactly `total` bytes long, made below `base`.
fn dir_of_length(base: &Path, total: usize) -> std::path::PathBuf {
    let mut path = base.to_path_buf();
    while path.as_os_str().len() < total {
        let part = (total - path.as_os_str().len() - 1).min(200);
        path.push("p".repeat(part));
    }
    assert_eq!(path.as_os_str().len(), total);
    std::fs::create_dir_all(&path).unwrap();
    path
}

#[test]
fn max_mount_path_is_what_real_bubblewrap_mounts() {
    let _ = features();
    let base = tempfile::tempdir().unwrap();
    let bind = |dir: &Path| {
        Command::new(BWRAP)
            .args(["--ro-bind", "/", "/", "--bind"])
            .arg(dir)
            .arg(dir)
            .args(["--", "/bin/true"])
            .output()
            .unwrap()
    };
    let step = |dir: &Path| {
        vec![vec![
            "--bind".into(),
            dir.into(),
            dir.as_os_str().to_owned(),
        ]]
    };
    let most = dir_of_length(base.path(), cordon_bwrap::MAX_MOUNT_PATH);
    let out = bind(&most);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cordon_bwrap::check_mount_paths(&step(&most)).is_ok());
    let over = dir_of_length(&base.path().join("o"), cordon_bwrap::MAX_MOUNT_PATH + 1);
    let out = bind(&over);
    assert!(!out.status.success(), "bubblewrap mounted a longer path");
    assert!(matches!(
        cordon_bwrap::check_mount_paths(&step(&over)),
        Err(cordon_bwrap::BwrapError::PathTooLong { len, .. }) if len == cordon_bwrap::MAX_MOUNT_PATH + 1
    ));
}
