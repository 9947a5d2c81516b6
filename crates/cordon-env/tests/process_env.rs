//! Building a child environment never changes the calling process's own environment.
//!
//! Kept in a test binary of its own so that no other test runs in the same process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use cordon_env::{ChildEnv, EnvPolicy, host_snapshot};

const MARKER: &str = "ENV_TEST_MARKER_6b1f";

fn snapshot() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

#[test]
fn building_leaves_the_calling_process_environment_unchanged() {
    let before = snapshot();
    assert!(std::env::var_os(MARKER).is_none());

    let policy = EnvPolicy {
        pass: BTreeSet::from(["RUST_LOG".to_owned(), "CARGO_MANIFEST_DIR".to_owned()]),
        set: BTreeMap::from([
            ("PATH".to_owned(), "/jail/bin".to_owned()),
            ("HOME".to_owned(), "/jail/home".to_owned()),
            (MARKER.to_owned(), "set-inside-the-jail".to_owned()),
        ]),
        ..EnvPolicy::default()
    };
    let child = ChildEnv::from_current_process(&policy).unwrap();
    assert_eq!(
        child.get(MARKER).and_then(|v| v.to_str()),
        Some("set-inside-the-jail")
    );
    assert_eq!(
        child.get("PATH").and_then(|v| v.to_str()),
        Some("/jail/bin")
    );
    // The host snapshot reaches the builder: cargo sets this for every test binary.
    assert!(child.get("CARGO_MANIFEST_DIR").is_some());

    // A refused policy leaves it unchanged too.
    let mut refused = policy.clone();
    refused
        .set
        .insert("LD_PRELOAD".to_owned(), "/tmp/x.so".to_owned());
    assert!(ChildEnv::build(host_snapshot(), &refused).is_err());

    assert_eq!(snapshot(), before);
    assert!(std::env::var_os(MARKER).is_none());
    assert_ne!(std::env::var_os("PATH"), Some(OsString::from("/jail/bin")));
    assert_eq!(host_snapshot(), before);
}
