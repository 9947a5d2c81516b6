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

/// The namespace flags Docker's default profile refuses to `clone` and `unshare`.
const NAMESPACE_FLAGS: u32 = 0x7E02_0000;

/// One classic BPF instruction, as the kernel reads it (`struct sock_filter`).
fn ins(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..2].copy_from_slice(&code.to_ne_bytes());
    b[2] = jt;
    b[3] = jf;
    b[4..].copy_from_slice(&k.to_ne_bytes());
    b
}

/// The container's filter for this machine's architecture.
fn container_filter() -> Vec<u8> {
    // (audit arch, clone, unshare, clone3) per architecture.
    let (arch, clone, unshare, clone3) = if cfg!(target_arch = "x86_64") {
        (0xC000_003Eu32, 56u32, 272u32, 435u32)
    } else if cfg!(target_arch = "aarch64") {
        (0xC000_00B7, 220, 97, 435)
    } else {
        panic!("the container filter knows x86_64 and aarch64 only: add this architecture")
    };
    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JSET: u16 = 0x45;
    const RET: u16 = 0x06;
    const ALLOW: u32 = 0x7FFF_0000;
    const ERRNO: u32 = 0x0005_0000;
    let prog = [
        ins(LD_W_ABS, 0, 0, 4),           // 0: arch
        ins(JEQ, 0, 8, arch),             // 1: another arch: allow (10)
        ins(LD_W_ABS, 0, 0, 0),           // 2: nr
        ins(JEQ, 0, 1, clone3),           // 3
        ins(RET, 0, 0, ERRNO | 38),       // 4: clone3 → ENOSYS
        ins(JEQ, 1, 0, unshare),          // 5: unshare → 7
        ins(JEQ, 0, 3, clone),            // 6: clone → 7, else allow (10)
        ins(LD_W_ABS, 0, 0, 16),          // 7: args[0], low half
        ins(JSET, 0, 1, NAMESPACE_FLAGS), // 8
        ins(RET, 0, 0, ERRNO | 1),        // 9: EPERM
        ins(RET, 0, 0, ALLOW),            // 10
    ];
    prog.concat()
}

/// `args` run by cordon inside the container made of an outer bubblewrap and the filter.
fn in_container(j: &Jail, filter: &Path, args: &[&str]) -> Command {
    let mut outer = Command::new("/bin/sh");
    outer
        .arg("-c")
        .arg("exec /usr/bin/bwrap --dev-bind / / --seccomp 3 -- \"$@\" 3<\"$CORDON_TEST_FILTER\"")
        .arg("sh")
        .arg(common::cordon())
        .args(args)
        .current_dir(&j.work)
        .env_clear()
        .env("HOME", j.home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("CORDON_TEST_FILTER", filter)
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
