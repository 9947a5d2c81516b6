//! The argument list of every profile in both postures on the typical fake host, one step per
//! line, for a reviewer to read like a firewall rule list.

use std::path::Path;

use crate::common::{self, argv, build_plan, plan_at, policy, typical_plan};
use cordon_policy::{FakeHost, Network, PolicyBuilder, Posture, Profile, Source};
use serde::Serialize;

#[derive(Serialize)]
struct Snapshot {
    profile: &'static str,
    posture: String,
    network: String,
    stage: Option<&'static str>,
    rules: Vec<String>,
}

const STAGE: &str = "/opt/cordon/bin/cordon";

fn snapshot(plan: &cordon_policy::Plan, stage: Option<&'static str>) -> Snapshot {
    let args = build_plan(
        plan,
        stage.map(Path::new),
        &argv(&["/bin/sh", "-c", "cargo test"]),
    );
    Snapshot {
        profile: plan.profile.name(),
        posture: plan.posture.to_string(),
        network: plan.network.to_string(),
        stage,
        rules: args.render().lines().map(str::to_owned).collect(),
    }
}

#[test]
fn every_profile_in_both_postures() {
    for profile in Profile::ALL {
        for posture in [Posture::Host, Posture::Minimal] {
            let plan = typical_plan(profile, posture);
            let name = format!("{}-{posture}", profile.name());
            insta::assert_yaml_snapshot!(name, snapshot(&plan, Some(STAGE)));
        }
    }
}

#[test]
fn shell_with_network_allowed_keeps_resolv_conf_under_the_private_run() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(Network::Allowed, Source::Caller);
    let plan = plan_at(&b.build(), &FakeHost::typical(), "/home/u/proj");
    insta::assert_yaml_snapshot!("shell-host-network-allowed", snapshot(&plan, Some(STAGE)));
}

#[test]
fn shell_without_stage() {
    let plan = typical_plan(Profile::Shell, Posture::Host);
    insta::assert_yaml_snapshot!("shell-host-no-stage", snapshot(&plan, None));
}

#[test]
fn workspace_under_tmp() {
    let host = FakeHost::typical().dir("/tmp/ws/src");
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, "/tmp/ws");
    insta::assert_yaml_snapshot!("shell-host-workspace-under-tmp", snapshot(&plan, None));
}

#[test]
fn a_writable_parent_of_the_workspace() {
    // `--write /home/u/src` from /home/u/src/proj: the workspace's .git stays re-bound read-only
    // inside the merged root, the workspace and its .git are pinned, placeholders are bound.
    let host = FakeHost::typical()
        .dir("/home/u/src/proj/.git/hooks")
        .file("/home/u/src/proj/.git/config", "");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(
        cordon_policy::PathSpec::parse("/home/u/src").unwrap(),
        false,
        Source::Caller,
    );
    let plan = plan_at(&b.build(), &host, "/home/u/src/proj");
    let features = common::features();
    let env = common::env();
    let args = cordon_bwrap::build(&cordon_bwrap::Request {
        plan: &plan.guard(&host),
        brokers: &[],
        features: &features,
        env: &env,
        fds: common::FDS,
        stage: None,
        argv: &argv(&["/bin/sh"]),
    })
    .unwrap();
    let rendered = args.render();
    for line in [
        "--bind /home/u/src /home/u/src",
        "--bind /home/u/src/proj /home/u/src/proj",
        "--bind /home/u/src/proj/.git /home/u/src/proj/.git",
        "--ro-bind /home/u/src/proj/.git/config /home/u/src/proj/.git/config",
        "--ro-bind /home/u/src/proj/.git/hooks /home/u/src/proj/.git/hooks",
        "--ro-bind /home/u/src/proj/.git/commondir /home/u/src/proj/.git/commondir",
    ] {
        assert!(
            rendered.lines().any(|l| l == line),
            "{line} missing:\n{rendered}"
        );
    }
    insta::assert_yaml_snapshot!(
        "shell-host-writable-parent-of-workspace",
        Snapshot {
            profile: plan.profile.name(),
            posture: plan.posture.to_string(),
            network: plan.network.to_string(),
            stage: None,
            rules: rendered.lines().map(str::to_owned).collect(),
        }
    );
}

/// A plan with the workspace's private cache and home, as the launcher makes them.
fn plan_with_private_home(host: FakeHost, home: cordon_policy::HomeMode) -> cordon_policy::Plan {
    let base = "/home/u/.cache/cordon/tools";
    let key = cordon_policy::CacheLayout::workspace_key(Path::new("/home/u/proj"));
    let host = host
        .dir(&format!("{base}/{key}"))
        .dir(&format!("{base}/{key}.home"));
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_home(home, Source::Caller);
    cordon_policy::Plan::resolve(
        &b.build(),
        &cordon_policy::Invocation::at("/home/u/proj").with_caches(base),
        &host,
    )
    .unwrap()
}

#[test]
fn the_private_home_is_bound_writable_at_the_home_and_never_sealed() {
    let plan = plan_with_private_home(
        FakeHost::typical().dir("/home/u/.rustup"),
        cordon_policy::HomeMode::Hidden,
    );
    let source = plan.private_home().expect("a private home").to_path_buf();
    let args = build_plan(&plan, Some(Path::new(STAGE)), &argv(&["/bin/true"]));
    let rendered = args.render();
    let bind = format!("--bind {} /home/u", source.display());
    let home_line = common::line_of(&args, &bind);
    // Every tree shown below the home is bound after (into) the private home.
    assert!(home_line < common::line_of(&args, "--ro-bind /home/u/.rustup /home/u/.rustup"));
    assert!(home_line < common::line_of(&args, "--bind /home/u/proj /home/u/proj"));
    assert!(!rendered.contains("--tmpfs /home/u\n"), "{rendered}");
    assert!(!rendered.contains("--remount-ro /home/u"), "{rendered}");
    // Bound at the home's path only, not at its own (which lies below the home).
    let own = format!("--bind {0} {0}", source.display());
    assert!(!rendered.lines().any(|l| l == own), "{rendered}");
    insta::assert_yaml_snapshot!("shell-host-private-home", snapshot(&plan, Some(STAGE)));
}

#[test]
fn a_visible_home_gets_no_private_home() {
    let plan = plan_with_private_home(FakeHost::typical(), cordon_policy::HomeMode::Visible);
    assert_eq!(plan.private_home(), None);
    assert!(plan.caches.as_ref().is_some_and(|c| c.home.is_none()));
    let rendered = build_plan(&plan, None, &argv(&["/bin/true"])).render();
    assert!(!rendered.contains(".home /home/u"), "{rendered}");
}
