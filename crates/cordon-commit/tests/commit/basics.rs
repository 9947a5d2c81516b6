//! Adds, modifications, deletions and renames reach the host, and only them.

use std::path::Path;

use cordon_commit::{Mode, read_layer};

use crate::support::{Fixture, listing, paths, read};

#[test]
fn adds_modifies_and_deletes_reach_the_host_only_after_the_commit() {
    let f = Fixture::new(
        "echo old > a; echo gone > b; mkdir -p d/e; echo x > d/e/x; echo y > d/y; echo keep > k",
    );
    let before = listing(&f.ws());
    f.jail("echo new > a; rm b; rm -r d; echo c > c; mkdir -p n/m; echo deep > n/m/f; ln -s a lnk");
    // The jail is gone and nothing reached the host yet.
    assert_eq!(listing(&f.ws()), before);
    let report = f.commit(Mode::Apply);
    assert!(report.applied);
    assert_eq!(paths(&report.modified), ["a"]);
    let mut added = paths(&report.added);
    added.sort();
    assert_eq!(added, ["c", "lnk", "n", "n/m", "n/m/f"]);
    let mut deleted = paths(&report.deleted);
    deleted.sort();
    assert_eq!(deleted, ["b", "d", "d/e", "d/e/x", "d/y"]);
    let ws = f.ws();
    assert_eq!(read(ws.join("a")), "new\n");
    assert!(!ws.join("b").exists());
    assert!(!ws.join("d").exists());
    assert_eq!(read(ws.join("n/m/f")), "deep\n");
    assert_eq!(std::fs::read_link(ws.join("lnk")).unwrap(), Path::new("a"));
    assert_eq!(read(ws.join("k")), "keep\n");
    // Nothing kept: the run leaves no directory behind.
    assert_eq!(report.run_dir, None);
    assert_eq!(cordon_commit::list_runs(&f.state()).unwrap(), vec![]);
}

#[test]
fn a_file_rename_is_a_deletion_and_an_addition() {
    let f = Fixture::new("echo one > f; mkdir dir; echo two > dir/inner");
    f.jail("mv f g; mv dir dir2");
    let set = read_layer(&f.ws(), &f.upper()).unwrap();
    let mut seen: Vec<(String, String)> = set
        .changes
        .iter()
        .map(|c| (c.path.display().to_string(), format!("{:?}", c.kind)))
        .collect();
    seen.sort();
    // The directory rename is a copy in an overlay without redirect_dir: every entry is new.
    assert_eq!(
        seen,
        [
            ("dir".into(), "Deleted".into()),
            ("dir/inner".into(), "Deleted".into()),
            ("dir2".into(), "Added".into()),
            ("dir2/inner".into(), "Added".into()),
            ("f".into(), "Deleted".into()),
            ("g".into(), "Added".into()),
        ]
    );
    f.commit(Mode::Apply);
    let list = listing(&f.ws());
    let names: Vec<String> = list.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(names, ["dir2", "dir2/inner", "g"]);
    assert_eq!(read(f.ws().join("g")), "one\n");
    assert_eq!(read(f.ws().join("dir2/inner")), "two\n");
}

#[test]
fn a_directory_replaced_by_a_file_and_a_file_by_a_directory() {
    let f = Fixture::new("mkdir d; echo x > d/x; echo f > f");
    f.jail("rm -r d; echo now-a-file > d; rm f; mkdir f; echo in > f/in");
    let report = f.commit(Mode::Apply);
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(read(f.ws().join("d")), "now-a-file\n");
    assert_eq!(read(f.ws().join("f/in")), "in\n");
}

#[test]
fn an_opaque_directory_deletes_what_it_hides_and_an_unchanged_parent_is_no_change() {
    let f = Fixture::new("mkdir -p d p; echo 1 > d/one; echo 2 > d/two; echo q > p/q");
    f.jail("rm -r d; mkdir d; echo 3 > d/three; echo r > p/r");
    let report = f.commit(Mode::Apply);
    let mut deleted = paths(&report.deleted);
    deleted.sort();
    assert_eq!(deleted, ["d/one", "d/two"]);
    // `p` and `d` only hold changes: neither is one.
    let mut added = paths(&report.added);
    added.sort();
    assert_eq!(added, ["d/three", "p/r"]);
    assert!(report.modified.is_empty(), "{report:?}");
    let names: Vec<String> = listing(&f.ws())
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(names, ["d", "d/three", "p", "p/q", "p/r"]);
}

#[test]
fn a_directory_mode_change_is_a_change_and_its_mode_stays_within_the_rules() {
    let f = Fixture::new("mkdir d; chmod 755 d");
    f.jail("chmod 2777 d");
    let report = f.commit(Mode::Apply);
    assert_eq!(paths(&report.modified), ["d"]);
    let mode = std::fs::metadata(f.ws().join("d")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    // No set-id, no write for others.
    assert_eq!(mode.permissions().mode() & 0o7777, 0o775);
    assert_eq!(report.modified[0].finding, None);
}
