//! The stage runs wherever the binary lives: a copy of this test binary (a stage binary) under
//! `/tmp`, which every jail hides, runs commands through the library under both backends —
//! bubblewrap binds the binary into the jail, the Landlock backend grants read and execute on
//! that one file. The CLI's side of it (`cordon run` and `cordon doctor` from `/tmp`, a binary
//! the jail could write) is the `cordon` package's `tests/cli/stage_placement.rs`.

use crate::common;

use std::ffi::OsString;

use cordon_launch::{BackendChoice, Forward, Launcher, RunRequest};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

pub fn a_stage_under_tmp_runs_through_the_library_under_both_backends() {
    let bin_dir = tempfile::Builder::new()
        .prefix("cordon-stage-")
        .tempdir_in("/tmp")
        .unwrap();
    let copy = bin_dir.path().join("launch");
    std::fs::copy(common::stage(), &copy).unwrap();
    let copy = std::fs::canonicalize(&copy).unwrap();
    // Home and workspace outside every private directory, so only the binary's place differs.
    let home = common::visible_dir("cordon-stage-home-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join("out")).unwrap();
    let host = RealHost::new(Some(home.path().as_os_str().to_owned()));
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(&work),
        &host,
    )
    .unwrap();
    let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), "echo ran > out/x".into()];
    for backend in [BackendChoice::Landlock, BackendChoice::Bwrap] {
        let _ = std::fs::remove_file(work.join("out/x"));
        let config =
            Launcher::default_config(copy.clone(), Some(home.path().as_os_str().to_owned()), None);
        let result = Launcher::linux_with(config, backend)
            .run(&RunRequest {
                plan: &plan,
                argv: &argv,
                host_env: &[("PATH".into(), "/usr/bin:/bin".into())],
                forward: Forward::No,
                inherit_stdin: false,
            })
            .unwrap();
        assert_eq!(result.exit_code, 0, "{backend:?}: {result:?}");
        assert_eq!(
            std::fs::read_to_string(work.join("out/x")).unwrap(),
            "ran\n",
            "{backend:?}"
        );
    }
}
