//! Paths, special files, modes, links out of the root.

use cordon_changes::{ChangeKind, Node, Special, Verdict};

use crate::support::Case;

#[test]
fn special_files_are_refused_whatever_their_name() {
    let mut case = Case::new();
    for (name, kind) in [
        ("fifo", Special::Fifo),
        ("sock", Special::Socket),
        ("tty", Special::CharDevice),
        ("sda", Special::BlockDevice),
    ] {
        case = case.change(name, ChangeKind::Added, Node::Special(kind));
    }
    let j = case.judge();
    for name in ["fifo", "sock", "tty", "sda"] {
        j.refused(name, "special-file");
    }
}

#[test]
fn set_id_and_world_writable_bits_are_stripped() {
    let j = Case::new()
        .change(
            "bin/tool",
            ChangeKind::Added,
            Node::File {
                mode: 0o4755,
                size: 1,
            },
        )
        .change("shared", ChangeKind::Added, Node::Dir { mode: 0o2777 })
        .change(
            "run.sh",
            ChangeKind::Modified,
            Node::File {
                mode: 0o755,
                size: 1,
            },
        )
        .judge();
    assert!(matches!(
        j.of("bin/tool"),
        Verdict::ApplyMode { mode: 0o755, .. }
    ));
    assert!(matches!(
        j.of("shared"),
        Verdict::ApplyMode { mode: 0o775, .. }
    ));
    j.applied("run.sh");
}

#[test]
fn a_path_that_is_not_plain_is_refused() {
    let j = Case::new()
        .change(
            "../outside",
            ChangeKind::Added,
            Node::File {
                mode: 0o644,
                size: 1,
            },
        )
        .change(
            "/etc/passwd",
            ChangeKind::Added,
            Node::File {
                mode: 0o644,
                size: 1,
            },
        )
        .change(
            "a/./b",
            ChangeKind::Added,
            Node::File {
                mode: 0o644,
                size: 1,
            },
        )
        .judge();
    j.refused("../outside", "path-not-plain");
    j.refused("/etc/passwd", "path-not-plain");
    // `Path` drops an inner `.` when comparing; the component list has none then: a plain path.
    assert!(j.of("a/./b").applies());
}

#[test]
fn links_are_applied_as_links_but_not_out_of_the_root_into_protected_places() {
    let j = Case::new()
        .link("hosts", "/etc/hosts")
        .link("lib/current", "v2")
        .link("up", "../../..")
        .link("e", "../other/.envrc")
        .link("c", "/home/u/other/.cargo/config.toml")
        .link("g", "/home/u/other/.git/config")
        .link("inside", "src/.envrc")
        .judge();
    j.applied("hosts");
    j.applied("lib/current");
    j.applied("up");
    assert_eq!(j.refused("e", "symlink-out-of-root").program, "direnv");
    assert_eq!(j.held("c", "symlink-out-of-root").program, "cargo");
    assert_eq!(j.refused("g", "symlink-out-of-root").program, "git");
    // Inside the root the link's own name decides; the target is judged where it is.
    j.applied("inside");
}

#[test]
fn a_link_climbing_out_through_the_root_is_outside() {
    // `a/b/../../../proj2/.envrc` climbs one level above the root: outside.
    let j = Case::new().link("a/b/l", "../../../proj2/.envrc").judge();
    j.refused("a/b/l", "symlink-out-of-root");
}
