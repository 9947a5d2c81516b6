//! The profile and argument list of every named profile in both postures on the Mac-shaped fake
//! host, for a reviewer to read the way a firewall change is read: the rules with the reason for
//! each entry, then every parameter's value.

use crate::common::{
    MAC_TMPDIR, MAC_WORKSPACE, STAGE, build_with, mac_exec, mac_host, plan_at, policy,
};
use cordon_policy::{FakeHost, Network, PolicyBuilder, Posture, Profile, Source};
use cordon_seatbelt::{GlobRule, SeatbeltExtras};

#[test]
fn every_profile_in_both_postures() {
    for profile in Profile::ALL {
        for posture in [Posture::Host, Posture::Minimal] {
            let exec = mac_exec(profile, posture, &SeatbeltExtras::default());
            insta::assert_snapshot!(format!("{}-{posture}", profile.name()), exec.render());
        }
    }
}

#[test]
fn shell_with_network_allowed() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(Network::Allowed, Source::Caller);
    let host = mac_host();
    let plan = plan_at(&b.build(), &host, MAC_WORKSPACE);
    let exec = build_with(
        &plan,
        &host,
        MAC_TMPDIR,
        &SeatbeltExtras::default(),
        Some(STAGE),
    );
    insta::assert_snapshot!("shell-host-network-allowed", exec.render());
}

#[test]
fn shell_with_a_proxy_network() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(Network::Proxy, Source::Caller);
    b.allow_host("example.com", Source::Caller).unwrap();
    let host = mac_host();
    let plan = plan_at(&b.build(), &host, MAC_WORKSPACE);
    let extras = SeatbeltExtras {
        proxy_port: Some(3128),
        ..SeatbeltExtras::default()
    };
    let exec = build_with(&plan, &host, MAC_TMPDIR, &extras, Some(STAGE));
    let text = exec.render();
    // Outbound TCP to the proxy's loopback port only: no other address, no resolver, no bind.
    assert!(text.contains("(remote tcp \"localhost:3128\")"), "{text}");
    assert!(!text.contains("(remote ip \"*:*\")"), "{text}");
    assert!(!text.contains("network-bind"), "{text}");
    insta::assert_snapshot!("shell-host-network-proxy", text);
    // Without a port there is no proxy to reach: the profile allows no network at all.
    let closed = build_with(
        &plan,
        &host,
        MAC_TMPDIR,
        &SeatbeltExtras::default(),
        Some(STAGE),
    );
    assert!(
        !closed.render().contains("network-outbound"),
        "{}",
        closed.render()
    );
}

#[test]
fn shell_with_glob_rules() {
    let extras = SeatbeltExtras {
        deny_read: vec![
            GlobRule::new(MAC_WORKSPACE, "**/.env"),
            GlobRule::new(MAC_WORKSPACE, "**/*.pem"),
        ],
        deny_write: vec![GlobRule::new(MAC_WORKSPACE, "deploy/**")],
        proxy_port: None,
    };
    let exec = mac_exec(Profile::Shell, Posture::Host, &extras);
    insta::assert_snapshot!("shell-host-globs", exec.render());
}

#[test]
fn workspace_under_tmp_on_a_linux_shaped_host() {
    // What `cordon explain --platform macos` shows when run on Linux: the macOS spellings of
    // /tmp and /var are emitted beside the host's own.
    let host = FakeHost::typical().dir("/tmp/ws/src");
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, "/tmp/ws");
    let exec = build_with(
        &plan,
        &host,
        "/tmp/cordon-1",
        &SeatbeltExtras::default(),
        None,
    );
    insta::assert_snapshot!("shell-host-linux-host-workspace-under-tmp", exec.render());
}

#[test]
fn a_writable_parent_of_the_workspace_keeps_the_workspace_protected() {
    // `--write /Users/u/src` from /Users/u/src/proj: the workspace's protected paths are in the
    // profile's PROTECTED parameters (denied after the grant of the merged root).
    let host = mac_host()
        .dir("/Users/u/src/proj/.git/hooks")
        .file("/Users/u/src/proj/.git/config", "");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(
        cordon_policy::PathSpec::parse("/Users/u/src").unwrap(),
        false,
        Source::Caller,
    );
    let plan = plan_at(&b.build(), &host, "/Users/u/src/proj");
    let exec = build_with(
        &plan,
        &host,
        MAC_TMPDIR,
        &SeatbeltExtras::default(),
        Some(STAGE),
    );
    let rendered = exec.render();
    assert!(
        rendered.contains("-DWRITABLE_0=/Users/u/src\n"),
        "{rendered}"
    );
    for p in [".git/config", ".git/hooks", ".vscode", ".claude", ".envrc"] {
        let want = format!("=/Users/u/src/proj/{p}\n");
        assert!(
            rendered
                .lines()
                .any(|l| l.starts_with("-DPROTECTED_") && format!("{l}\n").ends_with(&want)),
            "{p} not protected:\n{rendered}"
        );
    }
}
