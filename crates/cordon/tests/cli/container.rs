//! cordon where namespaces are refused the way a container refuses them: an outer bubblewrap
//! with a seccomp filter that answers `unshare` and `clone` with a namespace flag `EPERM` and
//! `clone3` `ENOSYS`, as Docker's default profile does for a process without CAP_SYS_ADMIN.
//! Inside it, `--backend auto` must pick the Landlock backend, say why in the run's warnings,
//! and `cordon doctor` must name the seccomp profile as the layer that refuses; a probe cached
//! outside (the same home, unconfined) must not make cordon believe bubblewrap works inside.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::Path;
use std::process::Command;

use crate::cli_run::{Jail, text};
use crate::common;

/// The container's filter for this machine's architecture.
fn container_filter() -> Vec<u8> {
    cordon_test_support::container::filter()
        .expect("the container filter knows x86_64 and aarch64 only: add this architecture")
}

/// `args` run by cordon inside the container made of an outer bubblewrap and the filter.
fn in_container(j: &Jail, filter: &Path, args: &[&str]) -> Command {
    let mut outer = cordon_test_support::container::wrap(filter);
    outer
        .arg(common::cordon())
        .args(args)
        .current_dir(&j.work)
        .env_clear()
        .env("HOME", j.home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(std::process::Stdio::null());
    outer
}

#[test]
fn where_a_container_refuses_namespaces_auto_falls_back_to_landlock_and_says_why() {
    let j = Jail::new();
    let filter = j.home.path().join("container.bpf");
    std::fs::write(&filter, container_filter()).unwrap();

    // Outside the container, bubblewrap enforces and its probe is cached under this home.
    let outside = j.run(&["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&outside.stdout).unwrap();
    assert_eq!(v["backend"], "bubblewrap", "{v}");
    assert!(v["namespaces"].is_null(), "{v}");

    // The container is real: bubblewrap itself cannot make a user namespace in it.
    let bare = Command::new("/bin/sh")
        .arg("-c")
        .arg("exec /usr/bin/bwrap --dev-bind / / --seccomp 3 -- /usr/bin/bwrap --unshare-user --dev-bind / / /bin/true 3<\"$F\"")
        .env("F", &filter)
        .output()
        .unwrap();
    assert!(
        !bare.status.success(),
        "the container filter did not refuse a user namespace: {}",
        text(&bare.stderr)
    );

    let out = in_container(
        &j,
        &filter,
        &[
            "run",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "echo inside; cat $HOME/.ssh/id_test; grep '^Seccomp:' /proc/self/status",
        ],
    )
    .output()
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(v["backend"], "landlock", "auto did not fall back: {v}");
    assert_eq!(v["status"], "exited", "{v}");
    let stdout = v["stdout"]["text"].as_str().unwrap();
    assert!(stdout.starts_with("inside\n"), "{v}");
    assert!(!stdout.contains("SENTINEL"), "the fallback read a key: {v}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("bubblewrap") && warnings.contains("cordon doctor"),
        "the run does not say why it fell back: {v}"
    );

    let doctor = in_container(&j, &filter, &["doctor", "--json"])
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(d["backend"], "landlock", "{d}");
    // As root the outer bubblewrap makes no user namespace, and the first layer that refuses
    // is the container's seccomp profile. As an unprivileged user (CI's relocated step) the
    // outer bubblewrap itself runs in a user namespace that maps only the caller, so
    // /usr/bin/bwrap's owner shows as the overflow uid: cordon cannot trust it, and that is the
    // first layer the doctor must name.
    let (layer, change) = if rustix::process::geteuid().is_root() {
        ("seccomp-profile", "seccomp")
    } else {
        assert!(
            d["backends"].to_string().contains("owned by uid 65534"),
            "{d}"
        );
        ("bubblewrap-missing", "bubblewrap")
    };
    assert_eq!(d["namespaces"]["layer"], layer, "{d}");
    assert!(
        d["namespaces"]["change"].as_str().unwrap().contains(change),
        "{d}"
    );
    let text_doctor = text(
        &in_container(&j, &filter, &["doctor"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(
        text_doctor.contains(&format!("bubblewrap cannot start here: {layer}")),
        "{text_doctor}"
    );
}
