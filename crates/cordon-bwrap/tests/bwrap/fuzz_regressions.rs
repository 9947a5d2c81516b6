//! Inputs the fuzz target `fuzz/fuzz_targets/bwrap_args.rs` found, kept as ordinary tests. Each
//! test names the artifact it came from; its raw script is also a seed in
//! `fuzz/corpus/bwrap_args/`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::common::{argv, build_plan, typical_plan};
use cordon_policy::{Bind, Posture, Profile};

fn path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

fn bind(bytes: &[u8]) -> Bind {
    Bind {
        source: path(bytes),
        dest: path(bytes),
    }
}

/// crash-b28ec21b205ce6b912efd31fe9f24d636ada8b5d: two spellings of one path (`//x/…` and
/// `/x/…`) compare equal component by component, so which one survived the dedup depended on
/// the order of `plan.read_only`. The arguments' bytes now break the tie.
#[test]
fn two_spellings_of_one_path_give_one_output_whatever_the_order() {
    let mut plan = typical_plan(Profile::Shell, Posture::Minimal);
    plan.read_only.extend([
        bind(b"/usrust[up"),
        bind(b"/\xec\x97\xdf/home/u/.?ust[up"),
        bind(b"//\xec\x97\xdf/home/u/.?ust[up"),
        Bind {
            source: path(b"/\xec\x97\xdf\xf5l //ssl"),
            dest: path(b"/etc/ssl"),
        },
    ]);
    let cmd = argv(&["true"]);
    let forward = build_plan(&plan, None, &cmd);
    let mut reversed = plan.clone();
    reversed.read_only.reverse();
    assert_eq!(build_plan(&reversed, None, &cmd), forward);

    let spelled: Vec<&[u8]> = forward
        .steps()
        .iter()
        .filter(|s| s[0] == "--ro-bind" && s[2].as_bytes().ends_with(b"/home/u/.?ust[up"))
        .map(|s| s[2].as_bytes())
        .collect();
    assert_eq!(
        spelled,
        [&b"//\xec\x97\xdf/home/u/.?ust[up"[..]],
        "one bind, the byte-smallest spelling"
    );
}

/// crash-8092951b870d782e8eea63af15d2b48a5652b138: the same workspace spelled `/home/u//proj` and
/// `/home/u/proj` among the writable roots. The plan's guard kept whichever spelling came first
/// (and counted protected paths in it), so the output depended on the order of
/// `plan.writable`. The guard now breaks the tie by the bytes, like the mounts do.
#[test]
fn two_spellings_of_a_writable_root_give_one_output_whatever_the_order() {
    let mut plan = typical_plan(Profile::Shell, Posture::Host);
    plan.writable.push(path(b"/home/u//proj"));
    let cmd = argv(&["true"]);
    let forward = build_plan(&plan, None, &cmd);
    let mut reversed = plan.clone();
    reversed.writable.reverse();
    reversed.protected.reverse();
    assert_eq!(build_plan(&reversed, None, &cmd), forward);
}
