//! The path rules, enforced while resolving a plan, one test per rule: writable roots, masks,
//! protected paths, the postures' base, roots inside roots, and cordon's own directories.

use std::path::{Path, PathBuf};

use cordon_policy::{
    ConfigLayer, EntryKind, FakeHost, GuardedPlan, Invocation, LayerKind, Overrides, PathSpec,
    Plan, Policy, PolicyBuilder, PolicyError, Posture, Profile, SkipReason, Source,
    effective_policy,
};

use super::shell;

fn with_writable(path: &str) -> Policy {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(PathSpec::parse(path).unwrap(), false, Source::Caller);
    b.build()
}

#[test]
fn workspace_is_the_canonical_cwd_and_the_only_root() {
    let host = FakeHost::typical().symlink("/home/u/link", "proj");
    let plan = Plan::resolve(&shell(), &Invocation::at("/home/u/link/src"), &host).unwrap();
    assert_eq!(plan.cwd, PathBuf::from("/home/u/proj/src"));
    assert_eq!(plan.writable, vec![PathBuf::from("/home/u/proj/src")]);
}

#[test]
fn broad_roots_are_refused_naming_path_and_rule() {
    let host = FakeHost::typical()
        .dir("/usr/local/bin")
        .dir("/opt")
        .dir("/var");
    for (cwd, rule) in [
        ("/", "home directory"),
        ("/home", "home directory"),
        ("/home/u", "home directory"),
        ("/usr", "system tree /usr"),
        ("/usr/local/bin", "system tree /usr"),
        ("/etc", "system tree /etc"),
        ("/bin", "system tree /usr"),
        ("/tmp", "shared top-level"),
        ("/var", "shared top-level"),
        ("/opt", "shared top-level"),
    ] {
        let err = Plan::resolve(&shell(), &Invocation::at(cwd), &host).unwrap_err();
        assert!(matches!(err, PolicyError::BroadRoot { .. }), "{cwd}: {err}");
        let text = err.to_string();
        assert!(text.contains(rule), "{cwd}: {text}");
    }
    let err =
        Plan::resolve(&with_writable("~"), &Invocation::at("/home/u/proj"), &host).unwrap_err();
    assert!(
        err.to_string().contains("writable root /home/u is refused"),
        "{err}"
    );
}

#[test]
fn missing_roots_and_cwds_are_errors_naming_the_path() {
    let host = FakeHost::typical();
    let err = Plan::resolve(
        &with_writable("/srv/nope"),
        &Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap_err();
    assert!(matches!(err, PolicyError::RootMissing { .. }));
    assert!(err.to_string().contains("/srv/nope"), "{err}");
    let err = Plan::resolve(&shell(), &Invocation::at("/home/u/nope"), &host).unwrap_err();
    assert!(err.to_string().contains("/home/u/nope"), "{err}");
    let host = host.file("/home/u/file", "");
    let err = Plan::resolve(
        &with_writable("/home/u/file"),
        &Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap_err();
    assert!(matches!(err, PolicyError::RootNotDirectory { .. }), "{err}");
}

#[test]
fn nul_bytes_and_relative_paths_are_refused() {
    let host = FakeHost::typical();
    let err = Plan::resolve(&shell(), &Invocation::at("/home/u/pr\0oj"), &host).unwrap_err();
    assert!(matches!(err, PolicyError::NulByte { .. }), "{err}");
    let err = Plan::resolve(&shell(), &Invocation::at("proj"), &host).unwrap_err();
    assert!(
        matches!(err, PolicyError::RelativeInvocationPath { .. }),
        "{err}"
    );
    let err = effective_policy(
        None,
        None,
        &Overrides {
            writable: vec!["/a\0b".into()],
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, PolicyError::NulByte { .. }), "{err}");
}

#[test]
fn cwd_must_lie_inside_the_writable_set() {
    let host = FakeHost::typical().dir("/home/u/other");
    let inv = Invocation {
        cwd: "/home/u/other".into(),
        workspace: Some("/home/u/proj".into()),
        own_state: Vec::new(),
        env: Default::default(),
        caches: None,
        host_sockets: Vec::new(),
    };
    let err = Plan::resolve(&shell(), &inv, &host).unwrap_err();
    assert!(matches!(err, PolicyError::CwdOutsideWritable { .. }));
    assert_eq!(
        err.to_string(),
        "cwd /home/u/other is outside the writable set [/home/u/proj]"
    );
}

#[test]
fn a_root_inside_a_credential_mask_is_refused() {
    let host = FakeHost::typical()
        .dir("/home/u/.aws/sub")
        .symlink("/home/u/proj/keys", "/home/u/.ssh");
    let err = Plan::resolve(&shell(), &Invocation::at("/home/u/.aws/sub"), &host).unwrap_err();
    assert!(matches!(err, PolicyError::RootInsideMask { .. }), "{err}");
    let err = Plan::resolve(
        &with_writable("keys"),
        &Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("credential mask /home/u/.ssh"),
        "{err}"
    );
}

#[test]
fn a_project_root_may_not_escape_the_workspace_through_a_symlink() {
    let host = FakeHost::typical()
        .dir("/home/u/elsewhere")
        .symlink("/home/u/proj/out", "../elsewhere");
    let project = ConfigLayer::parse(
        "[filesystem]\nwritable = [\"out\"]\n",
        "/home/u/proj/.cordon.toml".as_ref(),
        LayerKind::Project,
    )
    .unwrap();
    let policy = effective_policy(None, Some(&project), &Overrides::default())
        .unwrap()
        .policy;
    let err = Plan::resolve(&policy, &Invocation::at("/home/u/proj"), &host).unwrap_err();
    assert!(
        matches!(err, PolicyError::RootOutsideWorkspace { .. }),
        "{err}"
    );
}

#[test]
fn nested_roots_collapse_into_their_parent() {
    let host = FakeHost::typical()
        .dir("/home/u/proj/sub")
        .dir("/home/u/scratch");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(PathSpec::parse("sub").unwrap(), false, Source::Caller);
    b.add_writable(PathSpec::parse("~/scratch").unwrap(), false, Source::Caller);
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert_eq!(
        plan.writable,
        vec![
            PathBuf::from("/home/u/proj"),
            PathBuf::from("/home/u/scratch")
        ]
    );
}

#[test]
fn masks_resolve_symlinks_and_record_missing_paths() {
    let host = FakeHost::typical()
        .dir("/data/gnupg")
        .symlink("/home/u/.gnupg", "/data/gnupg");
    let plan = Plan::resolve(&shell(), &Invocation::at("/home/u/proj"), &host).unwrap();
    let gnupg = plan
        .masks
        .iter()
        .find(|m| m.requested.ends_with(".gnupg"))
        .unwrap();
    assert_eq!(gnupg.target, PathBuf::from("/data/gnupg"));
    assert_eq!(gnupg.kind, EntryKind::Dir);
    // Below the hidden home and outside every visible tree: the private home hides it.
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.path.ends_with(".netrc") && s.reason == SkipReason::HiddenWithHome)
    );
    let mut visible = PolicyBuilder::new(Profile::Shell);
    visible.set_home(cordon_policy::HomeMode::Visible, Source::Caller);
    let shown = Plan::resolve(&visible.build(), &Invocation::at("/home/u/proj"), &host).unwrap();
    let netrc = shown
        .masks
        .iter()
        .find(|m| m.requested.ends_with(".netrc"))
        .unwrap();
    assert_eq!(netrc.kind, EntryKind::File);
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.path.ends_with(".kube") && s.reason == SkipReason::MaskMissing)
    );
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/etc/shadow"))
    );
}

#[test]
fn protected_paths_exist_inside_roots_or_are_reported() {
    let host = FakeHost::typical()
        .symlink("/home/u/proj/.vscode", "/home/u/shared-vscode")
        .dir("/home/u/shared-vscode");
    let plan = Plan::resolve(&shell(), &Invocation::at("/home/u/proj"), &host).unwrap();
    let paths: Vec<_> = plan
        .protected
        .iter()
        .map(|p| (p.path.clone(), p.kind))
        .collect();
    assert!(paths.contains(&(PathBuf::from("/home/u/proj/.git/hooks"), EntryKind::Dir)));
    assert!(paths.contains(&(PathBuf::from("/home/u/proj/.git/config"), EntryKind::File)));
    assert!(
        plan.skipped.iter().any(
            |s| s.path.ends_with(".vscode") && s.reason == SkipReason::ProtectedOutsideWritable
        )
    );
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.path.ends_with(".envrc") && s.reason == SkipReason::ProtectedMissing)
    );
}

#[test]
fn linked_worktree_admin_is_protected_and_writable_only_for_git_worktree() {
    let host = FakeHost::typical()
        .file(
            "/home/u/wt/.git",
            "gitdir: /home/u/proj/.git/worktrees/wt\n",
        )
        .file("/home/u/proj/.git/worktrees/wt/commondir", "../..\n")
        .file("/home/u/proj/.git/worktrees/wt/config.worktree", "")
        .dir("/home/u/proj/.git/objects")
        .dir("/home/u/proj/.git/refs");
    let shell_plan = Plan::resolve(&shell(), &Invocation::at("/home/u/wt"), &host).unwrap();
    assert_eq!(shell_plan.writable, vec![PathBuf::from("/home/u/wt")]);
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::GitWorktree),
        &Invocation::at("/home/u/wt"),
        &host,
    )
    .unwrap();
    assert_eq!(
        plan.writable,
        vec![
            PathBuf::from("/home/u/proj/.git/objects"),
            PathBuf::from("/home/u/proj/.git/refs"),
            PathBuf::from("/home/u/proj/.git/worktrees/wt"),
            PathBuf::from("/home/u/wt"),
        ]
    );
    assert!(
        plan.protected
            .iter()
            .any(|p| p.path == Path::new("/home/u/proj/.git/worktrees/wt/config.worktree"))
    );
}

#[test]
fn minimal_posture_binds_vetted_trees_and_recreates_merged_usr_links() {
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::DocumentParser),
        &Invocation::at("/home/u/proj"),
        &FakeHost::typical(),
    )
    .unwrap();
    assert_eq!(plan.posture, Posture::Minimal);
    assert!(
        plan.symlinks
            .iter()
            .any(|s| s.link == Path::new("/bin") && s.target == Path::new("usr/bin"))
    );
    let dests: Vec<_> = plan.read_only.iter().map(|b| b.dest.clone()).collect();
    assert!(dests.contains(&PathBuf::from("/usr")));
    assert!(dests.contains(&PathBuf::from("/home/u/.rustup")));
    assert!(
        !dests.contains(&PathBuf::from("/usr/bin")),
        "children of a bound tree are not bound again"
    );
    assert!(
        plan.private_dirs.contains(&PathBuf::from("/home/u")),
        "HOME is private"
    );
    assert!(!dests.iter().any(|d| d.starts_with("/etc/shadow")));
}

#[test]
fn host_posture_with_network_keeps_a_resolv_conf_that_points_into_run() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(cordon_policy::Network::Allowed, Source::Caller);
    let plan = Plan::resolve(
        &b.build(),
        &Invocation::at("/home/u/proj"),
        &FakeHost::typical(),
    )
    .unwrap();
    assert!(plan.private_dirs.contains(&PathBuf::from("/run")));
    assert!(
        plan.read_only
            .iter()
            .any(|r| r.dest == Path::new("/run/systemd/resolve/stub-resolv.conf"))
    );
    let denied = Plan::resolve(
        &shell(),
        &Invocation::at("/home/u/proj"),
        &FakeHost::typical(),
    )
    .unwrap();
    assert!(!denied.read_only.iter().any(|r| r.dest.starts_with("/run")));
}

/// A workspace with a repository one level below a directory the caller makes writable.
fn nested_workspace_host() -> FakeHost {
    FakeHost::typical()
        .dir("/home/u/src/proj/.git/hooks")
        .file("/home/u/src/proj/.git/config", "")
        .dir("/home/u/src/proj/.claude")
        .file("/home/u/src/proj/.envrc", "")
        .dir("/home/u/src/lib/.git/hooks")
        .file("/home/u/src/lib/.git/config", "")
}

fn protected_paths(plan: &Plan) -> Vec<PathBuf> {
    plan.protected.iter().map(|p| p.path.clone()).collect()
}

#[test]
fn a_root_holding_the_workspace_keeps_the_workspace_protected() {
    let host = nested_workspace_host();
    let from_caller = with_writable("/home/u/src");
    let global = ConfigLayer::parse(
        "[filesystem]\nwritable = [\"/home/u/src\"]\n",
        Path::new("/home/u/.config/cordon/config.toml"),
        LayerKind::Global,
    )
    .unwrap();
    let from_file = effective_policy(Some(&global), None, &Overrides::default())
        .unwrap()
        .policy;
    for policy in [from_caller, from_file] {
        let plan = Plan::resolve(&policy, &Invocation::at("/home/u/src/proj"), &host).unwrap();
        assert_eq!(plan.writable, vec![PathBuf::from("/home/u/src")]);
        assert_eq!(plan.inner_roots, vec![PathBuf::from("/home/u/src/proj")]);
        let protected = protected_paths(&plan);
        for p in [".git/config", ".git/hooks", ".claude", ".envrc"] {
            let p = Path::new("/home/u/src/proj").join(p);
            assert!(
                protected.contains(&p),
                "{} not in {protected:?}",
                p.display()
            );
            let entry = plan.protected.iter().find(|e| e.path == p).unwrap();
            assert_eq!(
                entry.root,
                Path::new("/home/u/src"),
                "counted in the merged root"
            );
        }
        // The outer root's own protected paths are still resolved (missing here: listed).
        assert!(
            plan.skipped
                .iter()
                .any(|s| s.path == Path::new("/home/u/src/.vscode")
                    && s.reason == SkipReason::ProtectedMissing)
        );
        // Another repository in the outer root is not the workspace: not protected.
        assert!(!protected.contains(&PathBuf::from("/home/u/src/lib/.git/config")));

        // The guard treats the workspace as a root: its `.git` and the workspace itself are
        // pinned (as in any plan not resolved to a layer: a layered root takes no pins), its
        // commondir gets a placeholder (missing auto-run names are looked for after the run:
        // listed, no placeholder).
        let g = plan.guard(&host);
        assert_eq!(
            g.pins(),
            [
                PathBuf::from("/home/u/src/proj"),
                PathBuf::from("/home/u/src/proj/.git")
            ]
        );
        let placeholders: Vec<&Path> = g.placeholders().iter().map(|p| p.path.as_path()).collect();
        assert_eq!(placeholders.len(), 1, "{placeholders:?}");
        assert!(
            plan.skipped
                .iter()
                .any(|s| s.path == Path::new("/home/u/src/proj/.vscode"))
        );
        {
            let p = Path::new("/home/u/src/proj").join(".git/commondir");
            assert!(
                placeholders.contains(&p.as_path()),
                "{}: {placeholders:?}",
                p.display()
            );
            assert!(g.protected.iter().any(|e| e.path == p));
        }
    }
}

#[test]
fn a_root_inside_the_workspace_keeps_its_own_protections() {
    let host = FakeHost::typical()
        .dir("/home/u/proj/vendor/dep/.git/hooks")
        .file("/home/u/proj/vendor/dep/.git/config", "");
    let plan = Plan::resolve(
        &with_writable("/home/u/proj/vendor/dep"),
        &Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap();
    assert_eq!(plan.writable, vec![PathBuf::from("/home/u/proj")]);
    assert_eq!(
        plan.inner_roots,
        vec![PathBuf::from("/home/u/proj/vendor/dep")]
    );
    let protected = protected_paths(&plan);
    for p in [
        "/home/u/proj/.git/config",
        "/home/u/proj/.git/hooks",
        "/home/u/proj/vendor/dep/.git/config",
        "/home/u/proj/vendor/dep/.git/hooks",
    ] {
        assert!(protected.contains(&PathBuf::from(p)), "{p}: {protected:?}");
    }
}

#[test]
fn cordon_config_and_cache_stay_protected_inside_a_writable_parent() {
    let host = FakeHost::typical()
        .file("/home/u/.config/cordon/config.toml", "")
        .dir("/home/u/.cache/cordon");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(PathSpec::parse("~/.config").unwrap(), false, Source::Caller);
    b.add_writable(PathSpec::parse("~/.cache").unwrap(), false, Source::Caller);
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/proj"), &host).unwrap();
    for (dir, root) in [
        ("/home/u/.config/cordon", "/home/u/.config"),
        ("/home/u/.cache/cordon", "/home/u/.cache"),
    ] {
        let entry = plan
            .protected
            .iter()
            .find(|p| p.path == Path::new(dir))
            .unwrap_or_else(|| panic!("{dir} not protected: {:?}", plan.protected));
        assert_eq!(entry.kind, EntryKind::Dir);
        assert_eq!(entry.root, Path::new(root));
    }
    // Outside every writable root they are read-only already, and not listed.
    let plain = Plan::resolve(&shell(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert!(
        !protected_paths(&plain)
            .iter()
            .any(|p| p.ends_with("cordon"))
    );
    assert!(!plain.skipped.iter().any(|s| s.path.ends_with("cordon")));
}

#[test]
fn missing_cordon_directories_inside_a_writable_root_get_placeholders() {
    let host = FakeHost::typical()
        .dir("/home/u/.config/git")
        .dir("/home/u/.cache/pip")
        .dir("/home/u/xdg-cache");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(PathSpec::parse("~/.config").unwrap(), false, Source::Caller);
    b.add_writable(PathSpec::parse("~/.cache").unwrap(), false, Source::Caller);
    b.add_writable(
        PathSpec::parse("~/xdg-cache").unwrap(),
        false,
        Source::Caller,
    );
    // XDG_CONFIG_HOME inside the workspace, not yet there; XDG_CACHE_HOME in a writable root.
    let inv = Invocation::at("/home/u/proj").with_own_state(Invocation::xdg_own_state(
        Some("/home/u/proj/cfg".as_ref()),
        Some("/home/u/xdg-cache".as_ref()),
    ));
    let plan = Plan::resolve(&b.build(), &inv, &host).unwrap();
    let g = plan.guard(&host);
    for (placeholder, root) in [
        ("/home/u/.config/cordon", "/home/u/.config"),
        ("/home/u/.cache/cordon", "/home/u/.cache"),
        ("/home/u/xdg-cache/cordon", "/home/u/xdg-cache"),
        // The first missing component: nothing below it can be created either.
        ("/home/u/proj/cfg", "/home/u/proj"),
    ] {
        let p = g
            .placeholders()
            .iter()
            .find(|p| p.path == Path::new(placeholder))
            .unwrap_or_else(|| panic!("no placeholder {placeholder}: {:?}", g.placeholders()));
        assert_eq!(p.kind, cordon_policy::PlaceholderKind::Dir);
        assert!(p.created_for_the_run);
        let entry = g
            .protected
            .iter()
            .find(|e| e.path == Path::new(placeholder))
            .unwrap();
        assert_eq!(entry.root, Path::new(root));
    }
    let err = Plan::resolve(
        &shell(),
        &Invocation::at("/home/u/proj").with_own_state([PathBuf::from("rel/cordon")]),
        &host,
    )
    .unwrap_err();
    assert!(
        matches!(err, PolicyError::RelativeInvocationPath { .. }),
        "{err}"
    );
}

/// Roots under the copy-on-write layer: left to the commit, but cordon's own state.
#[test]
fn a_root_under_the_layer_is_left_to_the_commit_but_cordon_s_own_state_and_the_user_s() {
    // A repository with auto-run files, a second root inside an enclosing repository, and
    // cordon's configuration directory (missing) inside the workspace.
    let host = FakeHost::typical()
        .file("/home/u/proj/.git/config.worktree", "")
        .file("/home/u/proj/.envrc", "")
        .dir("/home/u/proj/secrets")
        .dir("/home/u/proj/.git/modules/m")
        .file("/home/u/proj/.git/modules/m/config", "")
        .dir("/home/u/mono/.git")
        .file("/home/u/mono/.git/HEAD", "x\n")
        .dir("/home/u/mono/pkg");
    let w = Path::new("/home/u/proj");
    let mut b = PolicyBuilder::new(Profile::Shell);
    // A path the configuration protects beyond git's and the registry's.
    b.add_protected(PathSpec::parse("secrets").unwrap(), Source::Caller)
        .unwrap();
    b.add_writable(
        PathSpec::parse("/home/u/mono/pkg").unwrap(),
        false,
        Source::Caller,
    );
    let plan = Plan::resolve(
        &b.build(),
        &Invocation::at("/home/u/proj").with_own_state([PathBuf::from("/home/u/proj/.cfg/cordon")]),
        &host,
    )
    .unwrap();
    let live = plan.guard(&host);
    let has = |g: &GuardedPlan, p: &Path| g.protected.iter().any(|x| x.path == p);
    for p in [".git/config", ".git/hooks", ".git/commondir", ".envrc"] {
        assert!(has(&live, &w.join(p)), "{p}");
    }
    assert!(!live.placeholders().is_empty());
    // Every root under the layer: no git, registry or placeholder guard, no pins; only
    // cordon's own state keeps its guard.
    let layered: Vec<PathBuf> = plan.writable.clone();
    let g = plan.guard_beside_layer(&host, &layered);
    assert!(g.pins().is_empty(), "{:?}", g.pins());
    assert_eq!(g.protected.len(), 2, "{:?}", g.protected);
    assert!(
        has(&g, &w.join("secrets")),
        "the user's protected path is left out"
    );
    let own = Path::new("/home/u/proj/.cfg");
    assert_eq!(
        g.placeholders()
            .iter()
            .map(|p| p.path.as_path())
            .collect::<Vec<_>>(),
        [own],
    );
    assert!(has(&g, own));
    // A root not under the layer keeps its guard.
    let part = plan.guard_beside_layer(&host, &[PathBuf::from("/home/u/mono/pkg")]);
    for p in [".git/config", ".git/hooks", ".envrc"] {
        assert!(has(&part, &w.join(p)), "{p}");
    }
    assert!(
        !part
            .placeholders()
            .iter()
            .any(|p| p.path == Path::new("/home/u/mono/pkg/.git"))
    );
    assert!(
        live.placeholders()
            .iter()
            .any(|p| p.path == Path::new("/home/u/mono/pkg/.git"))
    );
    // The plan's own resolution to a layer says the same for its roots.
    let mut resolved = plan.clone();
    resolved.workspace_mode = cordon_policy::WorkspaceMode::Layer;
    assert_eq!(resolved.roots_under_a_layer(), plan.writable);
    assert!(plan.roots_under_a_layer().is_empty());
}
