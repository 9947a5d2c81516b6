//! `Features::parse` on real and trimmed bubblewrap output. The 0.8.0 fixtures are the verbatim
//! output of `/usr/bin/bwrap --version` and `--help` on the development machine; the older ones
//! are that text with later options deleted (see tests/fixtures/README.md).

use cordon_bwrap::{FEATURE_USES, Features, Need};

fn fixture(version: &str, help: &str) -> Features {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    let read = |name: &str| std::fs::read_to_string(format!("{dir}{name}")).unwrap();
    Features::parse(&read(version), &read(help))
}

#[test]
fn bubblewrap_0_8_0_here_has_everything_cordon_uses() {
    let f = fixture("bwrap-0.8.0-version.txt", "bwrap-0.8.0-help.txt");
    assert_eq!(f.version, Some((0, 8, 0)));
    assert!(f.disable_userns);
    assert!(f.assert_userns_disabled);
    assert!(f.args_fd);
    assert!(f.seccomp_fd);
    assert!(f.add_seccomp_fd);
    assert!(f.clearenv);
    assert!(f.perms);
    assert!(f.size);
    assert!(f.cap_drop);
    assert!(f.die_with_parent);
    assert!(f.new_session);
    assert!(f.unshare_cgroup_try);
    assert!(f.bind_fd, "Debian's backport");
    assert!(!f.argv0);
    assert!(!f.overlay);
    assert!(f.missing_required().is_empty());
    assert!(f.degradations().is_empty());
}

#[test]
fn bubblewrap_without_disable_userns_degrades_but_still_enforces() {
    let f = fixture("bwrap-0.7.0-version.txt", "bwrap-0.7.0-trimmed-help.txt");
    assert_eq!(f.version, Some((0, 7, 0)));
    assert!(!f.disable_userns);
    assert!(f.missing_required().is_empty());
    assert_eq!(f.degradations(), ["--disable-userns"]);
}

#[test]
fn bubblewrap_before_0_5_does_not_enforce() {
    let f = fixture("bwrap-0.4.1-version.txt", "bwrap-0.4.1-trimmed-help.txt");
    assert_eq!(f.version, Some((0, 4, 1)));
    assert_eq!(f.missing_required(), ["--clearenv", "--perms"]);
    assert_eq!(f.degradations(), ["--disable-userns", "--size"]);
}

#[test]
fn unreadable_output_enforces_nothing() {
    let f = Features::parse("", "bwrap: error while loading shared libraries");
    assert_eq!(f.version, None);
    let required: Vec<&str> = FEATURE_USES
        .iter()
        .filter(|u| u.need == Need::Required)
        .map(|u| u.flag)
        .collect();
    assert_eq!(f.missing_required(), required);
}

#[test]
fn the_required_set_is_the_documented_one() {
    let of = |need: Need| -> Vec<&str> {
        FEATURE_USES
            .iter()
            .filter(|u| u.need == need)
            .map(|u| u.flag)
            .collect()
    };
    assert_eq!(
        of(Need::Required),
        [
            "--args",
            "--seccomp",
            "--clearenv",
            "--cap-drop",
            "--die-with-parent",
            "--new-session",
            "--perms"
        ]
    );
    assert_eq!(
        of(Need::BestEffort),
        ["--disable-userns", "--size", "--unshare-cgroup-try"]
    );
}
