//! The policy crate against the real filesystem: configuration files on disk, symlinks, and the
//! path rules as a harness would meet them.

use std::os::unix::fs::symlink;

use cordon_policy::{
    ConfigLayer, EntryKind, Invocation, LayerKind, Overrides, Plan, PolicyError, RealHost,
    effective_policy,
};

#[test]
fn a_project_file_on_disk_resolves_against_the_real_host() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("proj");
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(work.join("build")).unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(work.join(".env"), "TOKEN=x").unwrap();
    std::fs::write(
        work.join(".cordon.toml"),
        "[filesystem]\nwritable = [\"build\"]\ndeny_read = [\".env\"]\n",
    )
    .unwrap();

    let project = ConfigLayer::load(&work.join(".cordon.toml"), LayerKind::Project).unwrap();
    let policy = effective_policy(None, Some(&project), &Overrides::default())
        .unwrap()
        .policy;
    let host = RealHost::new(Some(home.path().as_os_str().to_owned()));
    let plan = Plan::resolve(&policy, &Invocation::at(&work), &host).unwrap();

    let work = work.canonicalize().unwrap();
    assert_eq!(
        plan.writable,
        vec![work.clone()],
        "build/ collapses into the workspace"
    );
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == work.join(".env") && m.kind == EntryKind::File)
    );
    // ~/.ssh lies in the hidden home, outside every visible tree: the private home hides it.
    assert!(
        plan.private_dirs
            .contains(&home.path().canonicalize().unwrap())
    );
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.path.ends_with(".ssh")
                && s.reason == cordon_policy::SkipReason::HiddenWithHome)
    );
    assert!(
        plan.protected
            .iter()
            .any(|p| p.path == work.join(".git/hooks"))
    );
}

#[test]
fn a_project_root_that_symlinks_out_of_the_workspace_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.path().join("outside")).unwrap();
    symlink("../outside", work.join("out")).unwrap();
    std::fs::write(
        work.join(".cordon.toml"),
        "[filesystem]\nwritable = [\"out\"]\n",
    )
    .unwrap();

    let project = ConfigLayer::load(&work.join(".cordon.toml"), LayerKind::Project).unwrap();
    let policy = effective_policy(None, Some(&project), &Overrides::default())
        .unwrap()
        .policy;
    let host = RealHost::new(Some(home.path().as_os_str().to_owned()));
    let err = Plan::resolve(&policy, &Invocation::at(&work), &host).unwrap_err();
    assert!(
        matches!(err, PolicyError::RootOutsideWorkspace { .. }),
        "{err}"
    );
}
