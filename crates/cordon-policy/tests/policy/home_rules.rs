//! The home directory by allowlist, resolved: what the jail sees of a hidden home, the stores the
//! environment moved, the read grants, and the trees inside writable roots.

use std::path::{Path, PathBuf};

use cordon_policy::{
    FakeHost, Invocation, Plan, Policy, PolicyBuilder, PolicyError, Profile, SkipReason, Source,
};

use super::shell;

fn home_host() -> FakeHost {
    FakeHost::typical()
        .dir("/home/u/.local/bin")
        .dir("/home/u/.local/share/keyrings")
        .dir("/home/u/.config/gh")
        .file("/home/u/.config/rclone/rclone.conf", "")
        .dir("/home/u/.tools/bin")
        .file("/home/u/.tools/token", "")
        .file(
            "/home/u/.gitconfig",
            "[user]\n\tname = Ada\n\temail = ada@example.com\n[credential]\n\thelper = store\n",
        )
        .dir("/data/gnupg")
        .file("/data/aws/credentials", "")
        .dir("/data/proj-parent/proj")
}

fn hidden_plan(env: &[(&str, &str)], host: &FakeHost) -> Result<Plan, PolicyError> {
    Plan::resolve(
        &shell(),
        &Invocation::at("/home/u/proj").with_host_env(env.iter().map(|(k, v)| (*k, *v))),
        host,
    )
}

#[test]
fn the_host_posture_hides_the_home_but_for_vetted_and_path_trees() {
    let host = home_host();
    let plan = hidden_plan(
        &[("PATH", "/home/u/.tools/bin:/home/u/.local/bin:/usr/bin")],
        &host,
    )
    .unwrap();
    assert!(plan.private_dirs.contains(&PathBuf::from("/home/u")));
    let trees: Vec<&Path> = plan.home_trees.iter().map(|t| t.path.as_path()).collect();
    for t in [
        "/home/u/.rustup",
        "/home/u/.cargo/bin",
        "/home/u/.local/bin",
        "/home/u/.tools/bin",
    ] {
        assert!(trees.contains(&Path::new(t)), "{t} in {trees:?}");
        assert!(
            plan.read_only.iter().any(|b| b.dest == Path::new(t)),
            "{t} bound"
        );
    }
    // A PATH entry shows itself, not the tree above it (the token beside its `bin`).
    assert!(!trees.iter().any(|t| *t == Path::new("/home/u/.tools")));
    assert!(!trees.iter().any(|t| *t == Path::new("/home/u/.local")));
    assert!(
        !plan
            .read_only
            .iter()
            .any(|b| Path::new("/home/u/.tools/token").starts_with(&b.dest))
    );
    assert!(!trees.iter().any(|t| t.starts_with("/home/u/.config")));
    // No mask below the hidden home but in a visible tree; the ones outside it stay.
    assert!(plan.masks.iter().all(|m| !m.target.starts_with("/home/u")));
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/etc/shadow"))
    );
    for hidden in [".ssh", ".netrc", ".aws", ".cargo/credentials.toml"] {
        assert!(
            plan.skipped
                .iter()
                .any(|s| s.path == Path::new("/home/u").join(hidden)
                    && s.reason == SkipReason::HiddenWithHome),
            "{hidden}"
        );
    }
    // The git identity, and nothing else of the configuration.
    assert_eq!(
        plan.env.set.get("GIT_AUTHOR_NAME").map(String::as_str),
        Some("Ada")
    );
    assert_eq!(
        plan.env.set.get("GIT_COMMITTER_EMAIL").map(String::as_str),
        Some("ada@example.com")
    );
    assert!(!plan.env.set.keys().any(|k| k.contains("CONFIG")));
    // git reads no global configuration in the jail (the identity is in the variables).
    assert_eq!(plan.jail_env(), vec![("GIT_CONFIG_GLOBAL", "/dev/null")]);
}

#[test]
fn a_mask_inside_a_visible_tree_stays() {
    let host = home_host()
        .file("/home/u/.cargo/bin/x", "")
        .file("/home/u/.cargo/config.toml", "");
    // A PATH entry inside a vetted tree is served by it: ~/.cargo (with its configuration) stays
    // hidden.
    let plan = hidden_plan(&[("PATH", "/home/u/.cargo/bin")], &host).unwrap();
    assert!(
        !plan
            .home_trees
            .iter()
            .any(|t| t.path == Path::new("/home/u/.cargo"))
    );
    // A granted tree that holds a mask keeps the mask.
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_read(
        cordon_policy::PathSpec::parse("~/.config").unwrap(),
        Source::Caller,
    )
    .unwrap();
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert!(
        plan.home_trees
            .iter()
            .any(|t| t.path == Path::new("/home/u/.config"))
    );
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/home/u/.config/gh"))
    );
}

#[test]
fn a_repository_identity_is_not_overridden() {
    let host = home_host().file(
        "/home/u/proj/.git/config",
        "[user]\n\temail = work@example.com\n",
    );
    let plan = hidden_plan(&[], &host).unwrap();
    assert_eq!(
        plan.env.set.get("GIT_AUTHOR_NAME").map(String::as_str),
        Some("Ada")
    );
    assert!(!plan.env.set.contains_key("GIT_AUTHOR_EMAIL"));
}

#[test]
fn home_visible_restores_the_real_home_and_its_masks() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_home(
        cordon_policy::HomeMode::Visible,
        Source::Global("g.toml".into()),
    );
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/proj"), &home_host()).unwrap();
    assert!(!plan.private_dirs.contains(&PathBuf::from("/home/u")));
    assert!(plan.home_trees.is_empty() && plan.read_only.is_empty());
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/home/u/.ssh"))
    );
    assert!(!plan.env.set.contains_key("GIT_AUTHOR_NAME"));
    assert!(plan.jail_env().is_empty());
}

#[test]
fn the_minimal_posture_is_unchanged_by_the_home_rule() {
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::DocumentParser),
        &Invocation::at("/home/u/proj").with_host_env([("PATH", "/home/u/.tools/bin")]),
        &home_host(),
    )
    .unwrap();
    assert!(plan.home_trees.is_empty());
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/home/u/.ssh"))
    );
    assert!(!plan.env.set.contains_key("GIT_AUTHOR_NAME"));
}

#[test]
fn stores_moved_by_the_environment_are_masked_wherever_they_are() {
    let host = home_host();
    let plan = hidden_plan(
        &[
            ("GNUPGHOME", "/data/gnupg"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/data/aws/credentials"),
            ("KUBECONFIG", "/data/k1:/data/k2"),
            ("XDG_CONFIG_HOME", "relative/ignored"),
            ("DOCKER_CONFIG", "/home/u/.tools"),
        ],
        &host,
    )
    .unwrap();
    for t in ["/data/gnupg", "/data/aws/credentials"] {
        assert!(plan.masks.iter().any(|m| m.target == Path::new(t)), "{t}");
    }
    let outcome = |var: &str, path: &str| {
        plan.relocated
            .iter()
            .find(|r| r.variable == var && r.path == Path::new(path))
            .map(|r| r.outcome.clone())
    };
    assert_eq!(
        outcome("GNUPGHOME", "/data/gnupg").as_deref(),
        Some("masked")
    );
    assert_eq!(
        outcome("KUBECONFIG", "/data/k2").as_deref(),
        Some("missing")
    );
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.path == Path::new("/data/k1") && s.reason == SkipReason::MaskMissing)
    );
    assert!(
        !plan
            .relocated
            .iter()
            .any(|r| r.variable == "XDG_CONFIG_HOME")
    );
    // Below the hidden home and outside every visible tree: hidden with it.
    assert_eq!(
        outcome("DOCKER_CONFIG", "/home/u/.tools").as_deref(),
        Some("hidden with the home")
    );
    // The home directory itself is never masked.
    let plan = hidden_plan(&[("XDG_DATA_HOME", "/home/u")], &host).unwrap();
    assert!(plan.relocated[0].outcome.starts_with("left alone"));
}

#[test]
fn a_moved_store_that_holds_a_writable_root_is_left_alone_and_reported() {
    let host = home_host();
    let plan = Plan::resolve(
        &shell(),
        &Invocation::at("/data/proj-parent/proj")
            .with_host_env([("XDG_DATA_HOME", "/data/proj-parent")]),
        &host,
    )
    .unwrap();
    assert!(
        !plan
            .masks
            .iter()
            .any(|m| m.target == Path::new("/data/proj-parent"))
    );
    assert!(
        plan.relocated[0]
            .outcome
            .contains("holds the writable root /data/proj-parent/proj"),
        "{:?}",
        plan.relocated
    );
}

#[test]
fn read_grants_show_a_tree_and_refuse_the_home_root_and_masks() {
    let host = home_host();
    let grant = |text: &str| {
        let mut b = PolicyBuilder::new(Profile::Shell);
        b.add_read(
            cordon_policy::PathSpec::parse(text).unwrap(),
            Source::Caller,
        )
        .map(|()| b.build())
    };
    let plan = Plan::resolve(
        &grant("~/.config/rclone").unwrap(),
        &Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap();
    assert!(
        plan.read_only
            .iter()
            .any(|b| b.dest == Path::new("/home/u/.config/rclone"))
    );
    for (text, rule) in [("~", "whole home"), ("/", "whole filesystem")] {
        let err = grant(text).unwrap_err();
        assert!(
            err.to_string().contains("filesystem.read") && err.to_string().contains(rule),
            "{err}"
        );
    }
    for (text, rule) in [
        ("/home", "home directory or one of its ancestors"),
        ("~/.ssh/config", "credential mask"),
        ("~/.kube", "credential mask"),
        ("~/.cargo/credentials.toml", "credential mask"),
    ] {
        let err = Plan::resolve(
            &grant(text).unwrap(),
            &Invocation::at("/home/u/proj"),
            &host,
        )
        .unwrap_err();
        assert!(
            matches!(err, PolicyError::ReadGrantRefused { .. }),
            "{text}: {err}"
        );
        assert!(err.to_string().contains(rule), "{text}: {err}");
    }
}

#[test]
fn a_vetted_tree_inside_a_writable_root_stays_writable() {
    let host = home_host().dir("/home/u/go/bin").dir("/home/u/go/pkg/mod");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(
        cordon_policy::PathSpec::parse("~/go").unwrap(),
        false,
        Source::Caller,
    );
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert!(plan.writable.contains(&PathBuf::from("/home/u/go")));
    assert!(
        !plan
            .read_only
            .iter()
            .any(|r| r.dest.starts_with("/home/u/go")),
        "{:?}",
        plan.read_only
    );
    // Without the root, the vetted parts are shown read-only.
    let plan = Plan::resolve(&shell(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert!(
        plan.read_only
            .iter()
            .any(|r| r.dest == Path::new("/home/u/go/pkg/mod"))
    );
}

#[test]
fn a_symlink_on_the_way_to_a_vetted_tree_is_recreated_in_the_private_home() {
    let host = FakeHost::new()
        .with_home("/home/u")
        .dir("/usr/bin")
        .dir("/tmp")
        .dir("/home/u/proj/.git/hooks")
        .dir("/data/cargo/bin")
        .dir("/data/cargo/registry")
        .file("/data/cargo/credentials.toml", "")
        .symlink("/home/u/.cargo", "/data/cargo");
    let plan = Plan::resolve(&shell(), &Invocation::at("/home/u/proj"), &host).unwrap();
    assert!(
        plan.symlinks
            .iter()
            .any(|s| s.link == Path::new("/home/u/.cargo") && s.target == Path::new("/data/cargo")),
        "{:?}",
        plan.symlinks
    );
    for t in ["/data/cargo/bin", "/data/cargo/registry"] {
        assert!(
            plan.read_only.iter().any(|b| b.dest == Path::new(t)),
            "{t}: {:?}",
            plan.read_only
        );
    }
    // Outside the home: the credentials mask stays.
    assert!(
        plan.masks
            .iter()
            .any(|m| m.target == Path::new("/data/cargo/credentials.toml"))
    );
}
