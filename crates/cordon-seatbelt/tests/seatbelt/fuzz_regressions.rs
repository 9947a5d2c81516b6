//! Inputs the fuzz target `fuzz/fuzz_targets/seatbelt_profile.rs` found, kept as ordinary tests.
//! Each test names the artifact it came from; its raw script is also a seed in
//! `fuzz/corpus/seatbelt_profile/`.

use std::path::PathBuf;

use crate::common::{
    Judge, MAC_TMPDIR, MAC_WORKSPACE, STAGE, build_with, mac_host, plan_at, policy,
};
use cordon_policy::{CredentialMask, EntryKind, Posture, Profile};
use cordon_seatbelt::SeatbeltExtras;

fn dir_mask(path: &str) -> CredentialMask {
    CredentialMask {
        target: PathBuf::from(path),
        requested: PathBuf::from(path),
        kind: EntryKind::Dir,
    }
}

/// crash-e97c72deed6a36f9bdcd7114190c4ab4420b5977: masks `//h` and `/h`. The two compare equal
/// component by component, so only the first spelling, `//h`, reached the profile, and Seatbelt,
/// which compares path strings, would have matched nothing: `/h` was readable. Paths are now
/// spelled canonically before anything else.
#[test]
fn a_non_canonical_spelling_does_not_hide_a_mask() {
    let host = mac_host();
    let mut plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, MAC_WORKSPACE);
    plan.masks.push(dir_mask("//h"));
    plan.masks.push(dir_mask("/h"));
    plan.masks.push(dir_mask("/Users/u/proj/./keys/"));
    let exec = build_with(
        &plan,
        &host,
        MAC_TMPDIR,
        &SeatbeltExtras::default(),
        Some(STAGE),
    );
    let judge = Judge::new(&exec);
    for path in ["/h", "/h/id", "/Users/u/proj/keys", "/Users/u/proj/keys/k"] {
        for op in ["file-read-data", "file-write-data"] {
            assert!(!judge.allows(op, path), "{op} {path} is allowed");
        }
    }
    assert!(
        exec.params().iter().all(|p| {
            let bytes = p.value.as_encoded_bytes();
            !bytes.windows(2).any(|w| w == b"//") && !bytes.windows(3).any(|w| w == b"/./")
        }),
        "{:?}",
        exec.params()
    );
}
