//! A stage that cannot run is a refusal that names it: a cordon binary under `/tmp` (which the
//! jail replaces with a private one) cannot be executed in place by the Landlock backend, so
//! `cordon run --backend landlock` refuses with 126 naming the path and the rule, while the
//! bubblewrap backend, which binds the binary into the jail, runs the command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

#[test]
fn a_cordon_under_tmp_is_refused_by_the_landlock_backend_naming_the_path_and_the_rule() {
    let bin_dir = tempfile::Builder::new()
        .prefix("cordon-stage-")
        .tempdir_in("/tmp")
        .unwrap();
    let copy = bin_dir.path().join("cordon");
    std::fs::copy(env!("CARGO_BIN_EXE_cordon"), &copy).unwrap();
    let copy = std::fs::canonicalize(&copy).unwrap();
    // Home and workspace outside /tmp, so only the binary's place differs.
    let home = tempfile::Builder::new()
        .prefix("cordon-stage-home-")
        .tempdir_in(std::env::current_dir().unwrap())
        .unwrap();
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join("out")).unwrap();
    let run = |backend: &str| {
        Command::new(&copy)
            .args([
                "run",
                "--backend",
                backend,
                "--",
                "/bin/sh",
                "-c",
                "echo ran > out/x",
            ])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home.path())
            .current_dir(&work)
            .output()
            .unwrap()
    };
    let out = run("landlock");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{stderr}");
    assert!(stderr.contains(&copy.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("/tmp is replaced by a private, empty directory in the jail"),
        "{stderr}"
    );
    assert!(!work.join("out/x").exists(), "the command ran");

    // The library says the same: a refused result naming the path and the rule, nothing run.
    let host = cordon_policy::RealHost::new(Some(home.path().as_os_str().to_owned()));
    let plan = cordon_policy::Plan::resolve(
        &cordon_policy::Policy::for_profile(cordon_policy::Profile::Shell),
        &cordon_policy::Invocation::at(&work),
        &host,
    )
    .unwrap();
    let config = cordon_launch::Launcher::default_config(
        copy.clone(),
        Some(home.path().as_os_str().to_owned()),
        None,
    );
    let launcher =
        cordon_launch::Launcher::linux_with(config, cordon_launch::BackendChoice::Landlock);
    let argv: Vec<std::ffi::OsString> =
        vec!["/bin/sh".into(), "-c".into(), "echo ran > out/x".into()];
    let result = launcher
        .run(&cordon_launch::RunRequest {
            plan: &plan,
            argv: &argv,
            host_env: &[("PATH".into(), "/usr/bin:/bin".into())],
            forward: cordon_launch::Forward::No,
            inherit_stdin: false,
        })
        .unwrap();
    assert_eq!(result.exit_code, 126, "{result:?}");
    let why = result.refusal.unwrap_or_default();
    assert!(why.contains(&copy.display().to_string()), "{why}");
    assert!(
        why.contains("/tmp is replaced by a private, empty directory"),
        "{why}"
    );
    assert!(!work.join("out/x").exists(), "the command ran");

    let out = run("bwrap");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(work.join("out/x")).unwrap(),
        "ran\n"
    );
}
